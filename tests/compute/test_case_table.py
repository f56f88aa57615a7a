"""A case table's derived columns: made from each case's own row when first read, never by a query that reads none
of them, and the same however the cases are read; a comparison's reasons are such columns."""

from __future__ import annotations

from typing import ClassVar

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from rag_compare import compare
from rag_compare.compute.case_table import CaseTable
from tests.helpers.data import HANDMADE_RUNS


class Doubling:
    """Adds ``double`` (twice ``x``) before ``x``, counting the rows it was given."""

    schema: ClassVar[dict[str, pl.DataType]] = {"case_id": pl.String(), "double": pl.Int64(), "x": pl.Int64()}

    def __init__(self) -> None:
        self.rows: list[int] = []

    def __call__(self, cases: pl.DataFrame) -> pl.DataFrame:
        self.rows.append(cases.height)
        return cases.select("case_id", (pl.col("x") * 2).alias("double"), "x")


@pytest.fixture
def cases() -> pl.DataFrame:
    return pl.DataFrame({"case_id": ["a", "b", "c"], "x": [1, 2, 3]})


def test_derived_columns_take_their_place_and_are_made_once_for_every_read(cases: pl.DataFrame) -> None:
    derive = Doubling()
    table = CaseTable.held(cases, {"ok": 3}).derived(derive, Doubling.schema)
    assert table.columns == ["case_id", "double", "x"]
    assert derive.rows == []
    expected = pl.DataFrame({"case_id": ["a", "b", "c"], "double": [2, 4, 6], "x": [1, 2, 3]})
    assert_frame_equal(table.collect(), expected)
    assert_frame_equal(table.collect(), expected)
    assert_frame_equal(next(table.slices(10)), expected)
    assert derive.rows == [3]
    assert_frame_equal(table.lazy().collect(), expected)
    assert_frame_equal(table.lazy().filter(pl.col("x") > 1).select("double").collect(), expected.select("double")[1:])


def test_a_query_that_reads_no_derived_column_never_makes_them(cases: pl.DataFrame) -> None:
    derive = Doubling()
    table = CaseTable.held(cases, {"ok": 3}).derived(derive, Doubling.schema)
    assert table.lazy().select("case_id", "x").collect().rows() == [("a", 1), ("b", 2), ("c", 3)]
    assert table.slice_bounds(2).to_list() == ["c"]
    assert derive.rows == []


def test_only_cases_in_memory_have_derived_columns() -> None:
    spilled = CaseTable.spilled([], {"case_id": pl.String}, {}, None)
    with pytest.raises(ValueError, match="only cases held in memory"):
        spilled.derived(Doubling(), Doubling.schema)


def test_a_comparison_in_memory_reads_the_reasons_the_streaming_engine_writes() -> None:
    runs = [HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow"]
    memory, streaming = compare(*runs), compare(*runs, engine="streaming", buckets=3)
    assert memory.case_table.derive is not None
    assert streaming.case_table.derive is None
    assert memory.cases.get_column("reasons").list.len().sum() > 0
    assert memory.case_table.schema == memory.case_table.collect().schema
    assert_frame_equal(memory.cases, streaming.cases)
    assert_frame_equal(memory.scan_cases().select("reasons").collect(), streaming.cases.select("reasons"))
