"""The contract's readings of its columns: the one "record is ok" mask, the key of ids that look alike."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from rag_compare.core.contract import lookalike_key, record_ok

PACKAGE = Path(__file__).resolve().parents[2] / "rag_compare"


def test_only_an_ok_status_is_ok_a_null_one_is_not() -> None:
    frame = pl.DataFrame({"status": ["ok", "failed", "timeout", None], "baseline_status": [None, "ok", "ok", "x"]})
    assert frame.select(record_ok()).to_series().to_list() == [True, False, False, False]
    assert frame.select(record_ok("baseline_status")).to_series().to_list() == [False, True, True, False]


def test_no_module_writes_its_own_ok_mask() -> None:
    own = re.compile(r"""(pl\.col\([^)]*status[^)]*\)|get_column\("status"\))\s*(==|!=)\s*"ok\"""")
    found = [str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py") if own.search(path.read_text("utf-8"))]
    assert found == []


def test_ids_that_differ_only_by_normalisation_or_invisible_characters_share_a_key() -> None:
    frame = pl.DataFrame({"case_id": ["caf\u00e9@v1", "cafe\u0301@v1", "ca\u200bf\u00e9@v1", "\ufb01le@v1", "cafe@v1"]})
    keys = frame.select(lookalike_key("case_id")).to_series().to_list()
    assert keys[0] == keys[1] == keys[2] == "caf\u00e9@v1"
    assert keys[3] == "file@v1"
    assert keys[4] == "cafe@v1"
