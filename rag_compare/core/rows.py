"""Rows of a whole frame: each row's position, values put back at their rows (one each, or a list each), rows
counted per value."""

from __future__ import annotations

import polars as pl
import pyarrow as pa

__all__ = ["count_by", "lists_by_row", "row_index", "spread_by_row"]


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


def lists_by_row(height: int, values: pl.DataFrame, *columns: str, row: str = "row") -> pl.DataFrame:
    """For each of ``height`` rows, the ``values[columns]`` of its position in ``values[row]`` as lists, in their
    order in ``values``; an empty list for a row without any. Many results per row (a long frame) go back to
    every row without a grouping: the values sorted by row are cut at each row's offset."""
    ordered = values.select(row, *columns).sort(row, maintain_order=True)
    starts = pl.int_range(height + 1, dtype=pl.Int64, eager=True)
    offsets = ordered.get_column(row).cast(pl.Int64).search_sorted(starts, side="left").cast(pl.Int64).to_arrow()
    return pl.DataFrame(
        pl.Series(name, pa.LargeListArray.from_arrays(offsets, ordered.get_column(name).to_arrow())).cast(
            pl.List(values.schema[name])
        )
        for name in columns
    )
