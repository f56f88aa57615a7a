"""A comparison's cases, in ``case_id`` order: one frame in memory, or sorted bucket parts on disk that are
read back merged, a slice at a time, so a comparison of tens of millions of cases never holds them all."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

__all__ = ["CaseTable"]


@dataclass(frozen=True)
class CaseTable:
    """The cases (``frame`` in memory, or ``parts``, each sorted by ``case_id``, in a folder ``spill`` owns
    and removes when the table is collected), their ``schema`` and how many there are per status."""

    schema: Mapping[str, pl.DataType]
    counts: Mapping[str, int]
    frame: pl.DataFrame | None = field(default=None, repr=False)
    parts: tuple[Path, ...] = ()
    spill: tempfile.TemporaryDirectory[str] | None = field(default=None, repr=False)

    @classmethod
    def held(cls, frame: pl.DataFrame, counts: Mapping[str, int] | None = None) -> CaseTable:
        """Cases held in memory, sorted by ``case_id`` (``counts``: theirs per status, counted when not given)."""
        if counts is None:
            counts = dict(frame.get_column("status").cast(pl.String).value_counts().iter_rows())
        return cls(dict(frame.schema), counts, frame=frame)

    @classmethod
    def spilled(
        cls,
        parts: Sequence[Path],
        schema: Mapping[str, pl.DataType],
        counts: Mapping[str, int],
        spill: tempfile.TemporaryDirectory[str],
    ) -> CaseTable:
        """Cases in Arrow IPC ``parts`` (each sorted by ``case_id``; together each case once) in ``spill``."""
        return cls(dict(schema), counts, parts=tuple(parts), spill=spill)

    @property
    def columns(self) -> list[str]:
        return list(self.schema)

    @property
    def height(self) -> int:
        return sum(self.counts.values())

    def lazy(self) -> pl.LazyFrame:
        """Every case in ``case_id`` order, as a lazy frame (parts merged as they are read)."""
        if self.frame is not None:
            return self.frame.lazy()
        if not self.parts:
            return pl.LazyFrame(schema=dict(self.schema))
        return _merged([pl.scan_ipc(part) for part in self.parts])

    def collect(self) -> pl.DataFrame:
        """Every case in one frame."""
        return self.frame if self.frame is not None else self.lazy().collect()

    def slices(self, rows: int) -> Iterator[pl.DataFrame]:
        """The cases ``rows`` at a time, in ``case_id`` order."""
        if self.frame is not None:
            for start in range(0, self.frame.height, rows):
                yield self.frame.slice(start, rows)
            return
        held: list[pl.DataFrame] = []
        for batch in self.lazy().collect_batches(chunk_size=rows, engine="streaming") if self.height else ():
            held.append(batch)
            while sum(part.height for part in held) >= rows:
                joined = pl.concat(held)
                yield joined.head(rows)
                held = [joined.slice(rows)]
        rest = pl.concat(held) if held else None
        if rest is not None and rest.height:
            yield rest


def _merged(scans: list[pl.LazyFrame]) -> pl.LazyFrame:
    """``scans`` (each sorted by ``case_id``) merged in a balanced tree of sorted merges."""
    if len(scans) == 1:
        return scans[0]
    middle = len(scans) // 2
    return _merged(scans[:middle]).merge_sorted(_merged(scans[middle:]), "case_id")
