"""Row helpers: positions, values put back at their rows, rows counted per value."""

from __future__ import annotations

import polars as pl

from rag_compare.core.rows import count_by, row_index, spread_by_row


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
