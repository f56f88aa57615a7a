"""Tables given in parts (a folder or a glob of CSV, Parquet or JSONL files), read one part at a time and
spilled by bucket, so that a run directory is frozen without holding a whole run in memory.

Each part is read and its cells checked as one table is (``columns``); its rows are numbered across the
parts in order, and a problem is reported at its part's path and row there. ``spill_parts`` writes each
part's rows into one file per bucket; ``bucket_frame`` reads one bucket back, in the columns and types of
every part together.
"""

from __future__ import annotations

import bisect
import glob
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from rag_compare.core.contract import ColumnSpec
from rag_compare.core.errors import ContractError, InputFileError, Problem
from rag_compare.core.progress import progress_bar
from rag_compare.io.columns import coerce_columns
from rag_compare.io.run_directory import bucket_of
from rag_compare.io.tables import ROW, TABLE_SUFFIXES, read_source

__all__ = ["Spilled", "bucket_frame", "input_parts", "refuse_part_problems", "spill_parts"]

_GLOB = ("*", "?", "[")


def input_parts(source: str | Path | pl.DataFrame, what: str) -> list[Path] | None:
    """The part files of ``source`` when it is a folder (its table files, by name) or a glob pattern (the
    paths it matches but folders, by name: reading refuses any that is not a regular file); ``None`` for one
    file or a frame. ``InputFileError`` when none are found."""
    if isinstance(source, pl.DataFrame):
        return None
    text = str(source)
    if Path(text).is_dir():
        found = sorted(path for path in Path(text).iterdir() if path.suffix.lower() in TABLE_SUFFIXES)
        where = f"{text}: is a folder without {what} files ({', '.join(sorted(TABLE_SUFFIXES))})"
    elif any(mark in text for mark in _GLOB) and not Path(text).exists():
        found = sorted(Path(match) for match in glob.glob(text) if not Path(match).is_dir())
        where = f"{text}: matches no {what} files"
    else:
        return None
    if not found:
        raise InputFileError(f"{where}. Check the path or pattern.")
    return found


@dataclass
class Spilled:
    """Where the parts of one table went: each bucket's files, the parts' names and first rows, and what
    their checks found."""

    folder: Path
    sources: list[str] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    """Rows before each part: part ``i``'s row ``r`` is row ``starts[i] + r`` of all the parts."""
    template: pl.DataFrame = field(default_factory=pl.DataFrame)
    """No rows, in the columns and types of every part together."""
    problems: list[Problem] = field(default_factory=list)
    """Cells that could not be read, at their row of all the parts."""

    def places(self) -> pl.Expr:
        """``row 3 of PART`` for each ``ROW`` of all the parts."""
        starts, names = pl.lit(pl.Series(self.starts, dtype=pl.Int64)), pl.lit(pl.Series(self.sources))
        part = starts.search_sorted(pl.col(ROW) - 1, side="right") - 1
        return pl.format("row {} of {}", pl.col(ROW) - starts.gather(part), names.gather(part))

    def located(self, problems: Iterable[Problem]) -> dict[int, list[Problem]]:
        """``problems`` (at rows of all the parts) by part, each at its row in that part; one about a whole
        column goes to the first part."""
        found: dict[int, dict[Problem, None]] = {}
        for problem in problems:
            part, local = 0, problem
            if problem.row is not None:
                part = bisect.bisect_left(self.starts, problem.row) - 1
                local = Problem(problem.expected, problem.row - self.starts[part], problem.column, problem.value)
            found.setdefault(part, {})[local] = None
        return {part: list(listed) for part, listed in found.items()}


def spill_parts(
    sources: Sequence[Path | pl.DataFrame], specs: Sequence[ColumnSpec], what: str, folder: Path, buckets: int
) -> Spilled:
    """Read each of ``sources`` (``what`` names them: "run records", "corpus"), check its cells against
    ``specs`` and write its rows by bucket into ``folder``; a part missing a required column is refused at
    once (``ContractError`` naming it). Optional contract columns no part has are left out."""
    spilled = Spilled(folder)
    optional_seen: set[str] = set()
    total = 0
    with progress_bar(f"reading {what} parts" if len(sources) > 1 else None, len(sources)) as advance:
        for index, source in enumerate(sources):
            name, raw = read_source(source, what)
            frame, problems = coerce_columns(raw, specs)
            if any(problem.row is None for problem in problems):
                raise ContractError(name, f"{what} file", problems)
            optional_seen |= {spec.name for spec in specs if spec.name in raw.columns}
            frame = frame.drop(spec.name for spec in specs if not spec.required and spec.name not in raw.columns)
            frame = frame.with_columns(pl.col(ROW).cast(pl.Int64) + total)
            spilled.problems += [
                Problem(problem.expected, (problem.row or 0) + total, problem.column, problem.value)
                for problem in problems
            ]
            spilled.sources.append(name)
            spilled.starts.append(total)
            total += frame.height
            spilled.template = pl.concat([spilled.template, frame.clear()], how="diagonal_relaxed")
            keyed = frame.with_columns(bucket_of(frame.get_column("case_id"), buckets).fill_null(0))
            for (bucket,), piece in keyed.partition_by("bucket", as_dict=True, include_key=False).items():
                target = folder / f"{bucket:05d}"
                target.mkdir(exist_ok=True)
                piece.write_ipc(target / f"{index:06d}.arrow", compression="lz4")
            advance()
    unseen = [spec.name for spec in specs if not spec.required and spec.name not in optional_seen]
    spilled.template = spilled.template.drop(name for name in unseen if name in spilled.template.columns)
    return spilled


def bucket_frame(spilled: Spilled, bucket: int) -> pl.DataFrame:
    """The rows of ``bucket`` from every part, in part order, in the template's columns and types."""
    pieces = sorted((spilled.folder / f"{bucket:05d}").glob("*.arrow"))
    return pl.concat([spilled.template, *(pl.read_ipc(piece) for piece in pieces)], how="diagonal_relaxed")


def refuse_part_problems(spilled: Spilled, problems: dict[int, list[Problem]], what: str) -> None:
    """Raise the ``ContractError`` of the first part with problems (``what`` names the table), saying how
    many other parts have some too."""
    if not problems:
        return
    first, *others = sorted(problems)
    listed = list(problems[first])
    if others:
        names = ", ".join(spilled.sources[index] for index in others[:5])
        listed.append(
            Problem(
                f"the other parts valid too: {len(others)} more have problems ({names}); they are listed once "
                "this part is fixed"
            )
        )
    raise ContractError(spilled.sources[first], what, listed)
