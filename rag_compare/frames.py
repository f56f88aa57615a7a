"""Small whole-frame helpers shared by the corpus and run modules."""

from __future__ import annotations

import hashlib

import polars as pl

__all__ = ["content_fingerprint", "count_by"]


def count_by(frame: pl.DataFrame, column: str, order: tuple[str, ...] = ()) -> dict[str, int]:
    """Rows per value of ``column``: values of ``order`` first (zeros kept), then the rest by name.

    A null value is counted under ``(none)``.
    """
    counts = frame.get_column(column).fill_null("(none)").value_counts()
    found = dict(zip(counts[column].to_list(), counts["count"].to_list(), strict=True))
    ordered = {value: int(found.pop(value, 0)) for value in order}
    return ordered | {value: int(found[value]) for value in sorted(found)}


def content_fingerprint(frame: pl.DataFrame, key: str) -> str:
    """SHA-256 of the frame's rows as JSON lines, sorted by ``key``: the same content, the same hash."""
    return hashlib.sha256(frame.sort(key).write_ndjson().encode()).hexdigest()
