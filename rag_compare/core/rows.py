"""Rows of a whole frame: each row's position, values put back at their rows, rows counted per value."""

from __future__ import annotations

import polars as pl

__all__ = ["count_by", "row_index", "spread_by_row"]


def count_by(frame: pl.DataFrame, column: str, order: tuple[str, ...] = ()) -> dict[str, int]:
    """Rows per value of ``column``: values of ``order`` first (zeros kept), then the rest by name.

    A null value is counted under ``(none)``.
    """
    counts = frame.get_column(column).fill_null("(none)").value_counts()
    found = dict(zip(counts[column].to_list(), counts["count"].to_list(), strict=True))
    ordered = {value: int(found.pop(value, 0)) for value in order}
    return ordered | {value: int(found[value]) for value in sorted(found)}


def row_index(name: str = "row") -> pl.Expr:
    """Each row's position, from 0, as a column called ``name``."""
    return pl.int_range(pl.len(), dtype=pl.UInt32).alias(name)


def spread_by_row(height: int, values: pl.DataFrame, *columns: str, row: str = "row") -> pl.DataFrame:
    """``values[columns]`` placed at the positions in ``values[row]`` of a frame of ``height`` rows; null at the
    others. Results computed on some rows (exploded, filtered, grouped) go back to every row."""
    rows = pl.DataFrame({row: pl.int_range(height, dtype=pl.UInt32, eager=True)})
    return rows.join(values.select(row, *columns), on=row, how="left", maintain_order="left").drop(row)
