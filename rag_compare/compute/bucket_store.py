"""Where a comparison keeps each side's narrow frames by bucket, and then the joined cases by bucket: in
memory as one bucket (the ``memory`` engine), or spilled as Arrow IPC files into a temporary folder (the
``streaming`` engine), so a bucket at a time is all that is ever held.

A case is in bucket ``case_hash(case_id) % buckets``, the bucket rule of run directories: the parts of run
directories of as many buckets are taken as they are, without hashing.
"""

from __future__ import annotations

import tempfile
import weakref
from collections import defaultdict
from pathlib import Path

import polars as pl

from rag_compare.compute.case_table import CaseTable, range_bounds, range_of
from rag_compare.core.temporaries import register_temporary, release_temporary
from rag_compare.io.run_directory import bucket_of

__all__ = ["BucketStore", "split_by_bucket"]

_BUCKET = "bucket"


def split_by_bucket(frame: pl.DataFrame, buckets: int) -> list[pl.DataFrame]:
    """``frame`` (with ``case_id``) as one frame per bucket, in bucket order (an empty frame for a bucket it
    has no case of)."""
    if buckets == 1:
        return [frame]
    split = frame.with_columns(bucket_of(frame.get_column("case_id"), buckets))
    parts = split.partition_by(_BUCKET, as_dict=True, include_key=False)
    empty = frame.clear()
    return [parts.get((bucket,), empty) for bucket in range(buckets)]


class BucketStore:
    """Each side's narrow frames (``add``, then ``side`` per bucket) and the joined cases (``keep``, then
    ``cases`` per bucket and ``table``), in memory when ``spill`` is false (one bucket), else in Arrow IPC
    files in a folder of the system's temporary one (``$TMPDIR``), removed with the last table made from it."""

    def __init__(self, buckets: int, *, spill: bool) -> None:
        if not spill and buckets != 1:
            raise ValueError("a store held in memory has one bucket")
        self.buckets = buckets
        self._folder = tempfile.TemporaryDirectory(prefix="rag-compare-") if spill else None
        if self._folder is not None:
            register_temporary(self._folder.name)
            weakref.finalize(self._folder, release_temporary, self._folder.name)
        self._held: dict[tuple[int, int], list[pl.DataFrame]] = defaultdict(list)
        self._files: dict[tuple[int, int], list[Path]] = defaultdict(list)
        self._schemas: dict[int, pl.Schema] = {}
        self._held_cases: dict[int, pl.DataFrame] = {}
        self._bounds: pl.Series | None = None
        self._pieces: dict[int, list[Path]] = defaultdict(list)
        self._ranges: dict[int, list[Path]] = defaultdict(list)

    @property
    def spilled(self) -> bool:
        return self._folder is not None

    def add(self, side: int, frame: pl.DataFrame, bucket: int | None = None) -> None:
        """Keep ``frame``, narrow samples of ``side`` (0: baseline), all of ``bucket`` when given (a run
        directory's part), else split by bucket here."""
        self._schemas.setdefault(side, frame.schema)
        if self._folder is None:
            self._held[side, 0].append(frame)
            return
        if bucket is not None:
            self._write(side, bucket, frame)
            return
        for number, part in enumerate(split_by_bucket(frame, self.buckets)):
            if part.height:
                self._write(side, number, part)

    def side_schema(self, side: int) -> pl.Schema:
        """The schema of ``side``'s narrow samples."""
        return self._schemas[side]

    def side(self, side: int, bucket: int, columns: list[str] | None = None) -> pl.DataFrame:
        """The narrow samples of ``side`` in ``bucket`` (``columns``: only those)."""
        schema = self._schemas[side]
        if self._folder is None:
            frames = self._held[side, bucket]
        else:
            frames = [pl.read_ipc(path, columns=columns) for path in self._files[side, bucket]]
        if not frames:
            empty = pl.DataFrame(schema=schema)
            return empty if columns is None else empty.select(columns)
        joined = pl.concat(frames, rechunk=True)
        if self._folder is None:
            self._held[side, bucket] = [joined]
        return joined if columns is None else joined.select(columns)

    def drop_side(self, side: int, bucket: int) -> None:
        """Let ``side``'s samples of ``bucket`` go (once it is joined)."""
        self._held.pop((side, bucket), None)
        for path in self._files.pop((side, bucket), []):
            path.unlink()

    def keep(self, bucket: int, cases: pl.DataFrame) -> None:
        """Keep ``bucket``'s joined cases (sorted by ``case_id``); spilled, cut by range of ids (see
        ``case_table``), the ranges' bounds taken from the first bucket with cases."""
        if self._folder is None or cases.is_empty():
            self._held_cases[bucket] = cases
            return
        if self._bounds is None:
            self._bounds = range_bounds(cases.get_column("case_id"), self.buckets)
        cut = cases.with_columns(range_of(cases.get_column("case_id"), self._bounds))
        for (number, *_), piece in cut.partition_by("range", as_dict=True, include_key=False).items():
            path = Path(self._folder.name) / f"cases-{bucket:05d}-{number:05d}.arrow"
            piece.write_ipc(path, compression="lz4")
            self._pieces[bucket].append(path)
            self._ranges[int(number)].append(path)

    def cases(self, bucket: int) -> pl.DataFrame:
        """``bucket``'s joined cases."""
        if bucket in self._held_cases:
            return self._held_cases[bucket]
        return pl.concat([pl.read_ipc(path) for path in self._pieces[bucket]])

    def table(self, schema: pl.Schema, counts: dict[str, int]) -> CaseTable:
        """Every bucket's cases as one table (``schema``: theirs, ``counts``: per status)."""
        if self._folder is None:
            return CaseTable.held(self._held_cases.get(0, pl.DataFrame(schema=schema)), counts)
        ranges = [self._ranges[number] for number in range(max(self._ranges, default=-1) + 1)]
        return CaseTable.spilled(ranges, schema, counts, self._folder)

    def _write(self, side: int, bucket: int, frame: pl.DataFrame) -> None:
        assert self._folder is not None
        files = self._files[side, bucket]
        path = Path(self._folder.name) / f"side{side}-{bucket:05d}-{len(files):05d}.arrow"
        frame.write_ipc(path, compression="lz4")
        files.append(path)
