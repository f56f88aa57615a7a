"""Freezing a run directory bucket by bucket, never holding the whole run in memory.

Phase 1 reads each records part (and each corpus part, for a corpus given in parts), checks its cells and
spills its rows by bucket into a temporary folder. Phase 2 takes one bucket at a time: its corpus cases
are checked as a corpus is, its records as ``records.join_labels`` checks them (a case id given twice can
only be twice within its bucket, an unknown one is unknown to its bucket's corpus), unreviewed synthetic
cases are refused, and the bucket's part is written with its digest. Problems are collected over every
bucket and refused as one error naming the first part with any, at its path and row. The directory is
written in a temporary folder beside the output and renamed into place only once whole.

A corpus given in parts has for fingerprint the SHA-256 of its buckets' content fingerprints (each the
digest of the bucket's contract columns, see ``corpus``), one per line in bucket order: it depends on
the cases and the bucket count, not on how the cases were split into files. A corpus in one file (or a
``Corpus``) keeps its own fingerprint, so a run file and a run directory of it record the same one.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare.core.contract import CORPUS_COLUMNS, RECORD_COLUMNS
from rag_compare.core.digest import text_digest
from rag_compare.core.errors import ContractError, Problem
from rag_compare.core.progress import progress_bar
from rag_compare.core.temporaries import registered
from rag_compare.io.corpus import (
    UNREVIEWED_WHAT,
    Corpus,
    corpus_of_table,
    unreviewed_problem,
    unreviewed_where,
)
from rag_compare.io.record_parts import Spilled, bucket_frame, input_parts, refuse_part_problems, spill_parts
from rag_compare.io.records import labelled_records
from rag_compare.io.run_directory import (
    RUN_DIRECTORY,
    Part,
    RunDirectory,
    bucket_of,
    read_run_directory,
    write_manifest,
    write_part,
)
from rag_compare.io.runfile import atomic_directory
from rag_compare.io.tables import ROW

__all__ = ["CorpusSummary", "freeze_directory"]

CorpusSummary = Mapping[str, Any]
"""What a run config records of its corpus: ``path``, ``fingerprint``, ``cases``."""


@dataclass
class _Found:
    """The problems of every bucket, by the table they are in."""

    corpus: list[Problem]
    records: list[Problem]
    unreviewed: list[tuple[int, str]]
    """Row (across the corpus) and id of each unreviewed synthetic case the records use."""


def freeze_directory(
    records: str | Path | pl.DataFrame,
    corpus: str | Path | pl.DataFrame | Corpus,
    config_of: Callable[[CorpusSummary], Mapping[str, Any]],
    output: Path,
    buckets: int,
    environ: Mapping[str, str],
    finished: Callable[[pl.DataFrame], pl.DataFrame],
    *,
    include_unreviewed: bool = False,
) -> RunDirectory:
    """Freeze ``records`` (one table, or a folder or glob of parts) against ``corpus`` (a ``Corpus``, one
    table, or parts) into the run directory ``output`` of ``buckets`` parts; ``config_of`` gives the run
    config from what is found of the corpus, ``finished`` each part's records from its valid records
    joined with their labels. See the module for how."""
    with (
        atomic_directory(output, what=RUN_DIRECTORY) as staged,
        tempfile.TemporaryDirectory(prefix=f".{output.name}.", suffix=".spill", dir=output.parent) as work,
        registered(work),
    ):
        spill = Path(work)
        for folder in (spill / "records", spill / "corpus"):
            folder.mkdir(parents=True)
        sources = _record_sources(records)
        spilled = spill_parts(
            sources,
            RECORD_COLUMNS,
            "run records",
            spill / "records",
            buckets,
        )
        corpus_parts = _corpus_parts(corpus, spill / "corpus", buckets)
        written, summary = _write_buckets(spilled, corpus_parts, staged, buckets, environ, finished, include_unreviewed)
        write_manifest(staged, config_of({"path": corpus_parts.name, **summary}), written)
    return read_run_directory(output)


def _record_sources(records: str | Path | pl.DataFrame) -> list[Path | pl.DataFrame]:
    """The parts of ``records``: its files when it is a folder or a glob, else itself."""
    parts = input_parts(records, "run records")
    if parts is not None:
        return list(parts)
    return [records if isinstance(records, pl.DataFrame) else Path(records)]


class _CorpusBuckets:
    """A corpus bucket by bucket: cut from a loaded ``Corpus``, or checked from spilled parts."""

    def __init__(self, name: str, loaded: Corpus | None, spilled: Spilled | None, buckets: int) -> None:
        self.name, self.loaded, self.spilled = name, loaded, spilled
        if loaded is not None:
            numbered = loaded.frame.with_row_index(ROW, offset=1)
            self._keyed = numbered.with_columns(bucket_of(numbered.get_column("case_id"), buckets))

    def bucket(self, bucket: int) -> tuple[Corpus, pl.Series, list[Problem]]:
        """The bucket's corpus, the rows of its cases (``ROW``, numbered across the corpus) and its problems."""
        if self.loaded is not None:
            rows = self._keyed.filter(pl.col("bucket") == bucket).drop("bucket")
            return Corpus(frame=rows.drop(ROW), source=self.loaded.source, fingerprint=""), rows.get_column(ROW), []
        assert self.spilled is not None
        rows = bucket_frame(self.spilled, bucket)
        try:
            checked = corpus_of_table(self.name, rows)
        except ContractError as error:
            failed = Corpus(frame=rows.drop(ROW), source=self.name, fingerprint="")
            return failed, rows.get_column(ROW), list(error.problems)
        return checked, rows.get_column(ROW), []


def _corpus_parts(corpus: str | Path | pl.DataFrame | Corpus, folder: Path, buckets: int) -> _CorpusBuckets:
    from rag_compare.io.corpus import load_corpus

    if isinstance(corpus, Corpus):
        return _CorpusBuckets(corpus.source, corpus, None, buckets)
    parts = input_parts(corpus, "corpus")
    if parts is None:
        loaded = load_corpus(corpus)
        return _CorpusBuckets(loaded.source, loaded, None, buckets)
    return _CorpusBuckets(str(corpus), None, spill_parts(parts, CORPUS_COLUMNS, "corpus", folder, buckets), buckets)


def _write_buckets(
    spilled: Spilled,
    corpus: _CorpusBuckets,
    staged: Path,
    buckets: int,
    environ: Mapping[str, str],
    finished: Callable[[pl.DataFrame], pl.DataFrame],
    include_unreviewed: bool,
) -> tuple[tuple[Part, ...], dict[str, Any]]:
    """Check and write each bucket's part; the parts and what the config records of the corpus."""
    found = _Found(list(corpus.spilled.problems) if corpus.spilled else [], list(spilled.problems), [])
    places = spilled.places() if len(spilled.sources) > 1 else None
    parts, fingerprints, cases = [], [], 0
    with progress_bar("freezing buckets", buckets) as advance:
        for bucket in range(buckets):
            bucket_corpus, corpus_rows, corpus_problems = corpus.bucket(bucket)
            found.corpus += corpus_problems
            cases += corpus_rows.len()
            fingerprints.append(bucket_corpus.fingerprint)
            if corpus_problems:
                advance()
                continue
            joined, problems = labelled_records(bucket_frame(spilled, bucket), bucket_corpus, environ, places)
            found.records += problems
            if not include_unreviewed and not problems:
                numbered = bucket_corpus.frame.with_columns(corpus_rows)
                unreviewed = numbered.filter(unreviewed_where(joined.get_column("case_id")))
                found.unreviewed += unreviewed.select(ROW, "case_id").rows()
            if not (found.corpus or found.records or found.unreviewed):
                parts.append(write_part(finished(joined), staged, bucket))
            advance()
    _refuse(found, spilled, corpus)
    fingerprint = corpus.loaded.fingerprint if corpus.loaded is not None else text_digest("\n".join(fingerprints))
    return tuple(parts), {"fingerprint": fingerprint, "cases": cases}


def _refuse(found: _Found, spilled: Spilled, corpus: _CorpusBuckets) -> None:
    """Raise the first error found: the corpus', then the records', then the unreviewed cases'."""
    if corpus.spilled is not None:
        refuse_part_problems(corpus.spilled, corpus.spilled.located(found.corpus), "corpus")
    refuse_part_problems(spilled, spilled.located(found.records), "run records file")
    if not found.unreviewed:
        return
    rows = [Problem("", row=row, value=case_id) for row, case_id in sorted(found.unreviewed)]
    if corpus.spilled is None:
        source, located = corpus.name, rows
    else:
        by_part = corpus.spilled.located(rows)
        first = min(by_part)
        source, located = corpus.spilled.sources[first], by_part[first]
    problems = [unreviewed_problem(problem.row or 0, str(problem.value), source) for problem in located]
    raise ContractError(source, UNREVIEWED_WHAT, problems)
