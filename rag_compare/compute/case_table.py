"""A comparison's cases, in ``case_id`` order: one frame in memory, or pieces on disk read back a range of
ids at a time, so a comparison of tens of millions of cases never holds them all.

In memory, the columns each case's own row gives (its reasons) may be left to the first read that asks for
them (``derived``): a comparison read only for its statuses and aggregates never makes them.

On disk, each bucket's cases are cut at the same ids (``range_bounds``, taken from the first bucket: its
ids are a hash sample of all of them) into one piece per range of ids; the pieces of a range, one per
bucket, are put together and sorted when read, a range holding about as many cases as a bucket.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from rag_compare.core.rows import count_by

__all__ = ["CaseTable", "range_bounds", "range_of"]

_DERIVED = "_derived"


@dataclass(frozen=True)
class CaseTable:
    """The cases (``frame`` in memory, or ``ranges``: per range of ids, in order, the Arrow IPC pieces that
    hold its cases, in a folder ``spill`` owns and removes when the table is collected), their ``schema``
    and how many there are per status; in memory, ``derive`` gives ``frame`` (or any of its slices) the
    columns it lacks, in the order of ``schema``, when they are first read."""

    schema: Mapping[str, pl.DataType]
    counts: Mapping[str, int]
    frame: pl.DataFrame | None = field(default=None, repr=False)
    ranges: tuple[tuple[Path, ...], ...] = ()
    spill: tempfile.TemporaryDirectory[str] | None = field(default=None, repr=False)
    derive: Callable[[pl.DataFrame], pl.DataFrame] | None = field(default=None, repr=False)

    @classmethod
    def held(cls, frame: pl.DataFrame, counts: Mapping[str, int] | None = None) -> CaseTable:
        """Cases held in memory, sorted by ``case_id`` (``counts``: theirs per status, counted when not given)."""
        if counts is None:
            counts = count_by(frame.select(pl.col("status").cast(pl.String)), "status")
        return cls(dict(frame.schema), counts, frame=frame)

    @classmethod
    def spilled(
        cls,
        ranges: Sequence[Sequence[Path]],
        schema: Mapping[str, pl.DataType],
        counts: Mapping[str, int],
        spill: tempfile.TemporaryDirectory[str] | None,
    ) -> CaseTable:
        """Cases in Arrow IPC pieces, by range of ids (each case in one piece), kept in ``spill``."""
        return cls(dict(schema), counts, ranges=tuple(tuple(pieces) for pieces in ranges), spill=spill)

    def derived(self, derive: Callable[[pl.DataFrame], pl.DataFrame], schema: Mapping[str, pl.DataType]) -> CaseTable:
        """These cases in memory, with the columns ``derive`` gives a frame of them (from each case's own row)
        made when they are first read; ``schema`` is what it gives."""
        if self.frame is None:
            raise ValueError("only cases held in memory have derived columns")
        return CaseTable(dict(schema), self.counts, frame=self.frame, derive=derive)

    @property
    def columns(self) -> list[str]:
        return list(self.schema)

    @property
    def height(self) -> int:
        return sum(self.counts.values())

    def lazy(self) -> pl.LazyFrame:
        """Every case in ``case_id`` order, as a lazy frame (a filter is applied to each piece as it is read)."""
        if self.frame is not None:
            held = self.frame.lazy()
            return held if self.derive is None else _with_derived(held, self.derive, self.frame.schema, self.schema)
        ranges = [pl.scan_ipc(list(pieces)).sort("case_id") for pieces in self.ranges if pieces]
        return pl.concat(ranges) if ranges else pl.LazyFrame(schema=dict(self.schema))

    def collect(self) -> pl.DataFrame:
        """Every case in one frame."""
        return self.lazy().collect() if self.frame is None else self._held

    @functools.cached_property
    def _held(self) -> pl.DataFrame:
        """The frame in memory, with its derived columns (made once)."""
        assert self.frame is not None
        return self.frame if self.derive is None else self.derive(self.frame)

    def slices(self, rows: int) -> Iterator[pl.DataFrame]:
        """The cases ``rows`` at a time, in ``case_id`` order (on disk: a range of ids read at a time)."""
        held = pl.DataFrame(schema=dict(self.schema))
        for frame in self._range_frames():
            held = pl.concat([held, frame])
            while held.height >= rows:
                yield held.head(rows)
                held = held.slice(rows)
        if held.height:
            yield held

    def slice_bounds(self, rows: int) -> pl.Series:
        """The first id of each slice of ``slices(rows)`` but the first: ``range_of`` a case's id is its slice."""
        bounds = self.lazy().select("case_id").gather_every(rows, offset=rows).collect()
        return bounds.get_column("case_id")

    def _range_frames(self) -> Iterator[pl.DataFrame]:
        if self.frame is not None:
            yield self._held
            return
        for pieces in self.ranges:
            if pieces:
                yield pl.concat([pl.read_ipc(piece) for piece in pieces]).sort("case_id")


def range_bounds(case_ids: pl.Series, ranges: int) -> pl.Series:
    """The ids that cut ``case_ids`` (sorted) into ``ranges`` ranges of about as many (fewer when there are
    fewer distinct ids): a case belongs to the range ``range_of`` gives."""
    if case_ids.is_empty() or ranges < 2:
        return pl.Series("case_id", [], dtype=pl.String)
    positions = [case_ids.len() * number // ranges for number in range(1, ranges)]
    return case_ids.gather(positions).unique(maintain_order=True)


def range_of(case_ids: pl.Series, bounds: pl.Series) -> pl.Series:
    """The range of each id: how many of ``bounds`` are at or before it."""
    return bounds.search_sorted(case_ids, side="right").alias("range")


def _with_derived(
    cases: pl.LazyFrame,
    derive: Callable[[pl.DataFrame], pl.DataFrame],
    held: Mapping[str, pl.DataType],
    schema: Mapping[str, pl.DataType],
) -> pl.LazyFrame:
    """``cases`` (of the ``held`` columns) with the columns ``derive`` gives them, as one column a query that
    reads none of them drops unmade; in the order of ``schema``."""
    added = [name for name in schema if name not in held]

    def columns(rows: pl.Series) -> pl.Series:
        return derive(rows.struct.unnest()).select(added).to_struct(_DERIVED)

    made = pl.struct(pl.all()).map_batches(columns, return_dtype=pl.Struct({name: schema[name] for name in added}))
    unnested = [pl.col(_DERIVED).struct.field(name) for name in added]
    return cases.with_columns(made.alias(_DERIVED)).with_columns(unnested).select(list(schema))
