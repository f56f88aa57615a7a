"""The comparison's JSON document (``Comparison.to_json``) of the hand-made runs, against its golden file."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from click.testing import Result

from rag_compare import compare
from tests.helpers.data import ROOT
from tests.helpers.golden import HANDMADE_COMPARISON


def test_json_of_the_handmade_runs_is_to_json_and_matches_the_golden_file(
    cli: Callable[..., Result], golden: Callable[[str, str], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the document names the run files by the paths they were opened with
    result = cli(*HANDMADE_COMPARISON, "--format", "json")
    assert (result.exit_code, result.stderr) == (0, "")
    baseline, candidate, _, passages = HANDMADE_COMPARISON
    assert result.stdout == compare(baseline, candidate, passages=passages).to_json()
    # The only version in the document is the one each run was frozen with, read from its file (its config's
    # rag_compare_version): the library's own version is not written, so a release leaves the golden file as it is.
    document = json.loads(result.stdout)
    assert [document[side]["config"]["rag_compare_version"] for side in ("baseline", "candidate")] == ["0.5.0"] * 2
    golden("handmade.json", result.stdout)
