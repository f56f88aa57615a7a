"""The contract's readings of its columns: the one "record is ok" mask."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from rag_compare.core.contract import record_ok

PACKAGE = Path(__file__).resolve().parents[2] / "rag_compare"


def test_only_an_ok_status_is_ok_a_null_one_is_not() -> None:
    frame = pl.DataFrame({"status": ["ok", "failed", "timeout", None], "baseline_status": [None, "ok", "ok", "x"]})
    assert frame.select(record_ok()).to_series().to_list() == [True, False, False, False]
    assert frame.select(record_ok("baseline_status")).to_series().to_list() == [False, True, True, False]


def test_no_module_writes_its_own_ok_mask() -> None:
    own = re.compile(r"""(pl\.col\([^)]*status[^)]*\)|get_column\("status"\))\s*(==|!=)\s*"ok\"""")
    found = [str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py") if own.search(path.read_text("utf-8"))]
    assert found == []
