"""Row helpers: positions, values put back at their rows (one each or a list each), rows counted per value."""

from __future__ import annotations

import polars as pl

from rag_compare.core.rows import count_by, lists_by_row, row_index, spread_by_row


def test_count_by_puts_the_given_order_first_keeps_its_zeros_and_counts_nulls() -> None:
    frame = pl.DataFrame({"status": ["failed", "ok", None, "ok", "odd"]})
    assert list(count_by(frame, "status", ("ok", "timeout", "failed")).items()) == [
        ("ok", 2),
        ("timeout", 0),
        ("failed", 1),
        ("(none)", 1),
        ("odd", 1),
    ]


def test_values_of_some_rows_go_back_to_their_positions() -> None:
    frame = pl.DataFrame({"x": ["a", "b", "c", "d"]}).with_columns(row_index())
    some = frame.filter(pl.col("x").is_in(["b", "d"])).with_columns(pl.col("x").str.to_uppercase())
    assert frame.get_column("row").to_list() == [0, 1, 2, 3]
    assert spread_by_row(frame.height, some, "x").to_series().to_list() == [None, "B", None, "D"]
    both = spread_by_row(frame.height, some.with_columns(pl.col("x").str.len_chars().alias("n")), "x", "n")
    assert both.rows() == [(None, None), ("B", 1), (None, None), ("D", 1)]


def test_many_values_of_a_row_go_back_to_it_as_a_list_in_their_order() -> None:
    stage = pl.Enum(["early", "late"])
    long = pl.DataFrame(
        {"row": [3, 0, 3, 1, 3], "why": ["d1", "a", "d2", "b", "d3"], "when": ["late", "early", None, "late", "early"]},
        schema={"row": pl.UInt32, "why": pl.String, "when": stage},
    )
    lists = lists_by_row(5, long, "why", "when")
    assert lists.schema == pl.Schema({"why": pl.List(pl.String), "when": pl.List(stage)})
    assert lists.get_column("why").to_list() == [["a"], ["b"], [], ["d1", "d2", "d3"], []]
    assert lists.get_column("when").to_list() == [["early"], ["late"], [], ["late", None, "early"], []]


def test_no_values_give_every_row_an_empty_list() -> None:
    empty = pl.DataFrame(schema={"row": pl.UInt32, "why": pl.String})
    assert lists_by_row(2, empty, "why").get_column("why").to_list() == [[], []]
    assert lists_by_row(0, empty, "why").height == 0
