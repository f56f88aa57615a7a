"""The comparison the report tests render: the hand-made runs (every status) with the example passages."""

from __future__ import annotations

import pytest

from rag_compare import Comparison, compare
from tests.helpers.data import HANDMADE_RUNS, ROOT


@pytest.fixture(scope="session")
def examples() -> Comparison:
    return compare(
        HANDMADE_RUNS / "baseline.arrow",
        HANDMADE_RUNS / "candidate.arrow",
        passages=ROOT / "corpora" / "handbook_passages.csv",
    )
