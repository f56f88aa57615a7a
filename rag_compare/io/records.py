"""Run records: what a pipeline did per case, validated against the corpus and joined with its labels."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from rag_compare.core.contract import RECORD_COLUMNS, REPEAT, STORED_CLAIMS, STORED_SIGNALS, lookalike_key, sample_key
from rag_compare.core.credentials import credential_values
from rag_compare.core.errors import ContractError, Problem, show_value
from rag_compare.io.columns import coerce_columns
from rag_compare.io.corpus import Corpus
from rag_compare.io.credential_scan import credential_cells
from rag_compare.io.tables import ROW, read_source

__all__ = ["RECORD_NAMES", "join_labels", "labelled_records"]

RECORD_NAMES = tuple(spec.name for spec in RECORD_COLUMNS)
_FROM_CORPUS = " (from the corpus)"


def join_labels(
    records: str | Path | pl.DataFrame,
    corpus: Corpus,
    environ: Mapping[str, str] | None = None,
) -> pl.DataFrame:
    """Validate ``records`` against the contract and ``corpus``; return them with the case labels.

    Columns: the record contract columns (``repeat`` only when the records have it), the corpus columns,
    then the records' own metadata. ``case_id`` is unique, or with ``repeat`` each ``(case_id, repeat)``
    pair; every record sharing one is a problem naming the rows that share it. Every problem is
    collected first and raised at once as a ``ContractError``; a credential (see ``credentials``; the
    values of the credential variables of ``environ``, default ``os.environ``) in any column of the
    records, or of the corpus columns joined to them, is a problem too.
    """
    source, raw = read_source(records, "run records")
    joined, problems = labelled_records(raw, corpus, environ)
    if problems:
        raise ContractError(source, "run records file", problems)
    return joined


def labelled_records(
    raw: pl.DataFrame,
    corpus: Corpus,
    environ: Mapping[str, str] | None = None,
    places: pl.Expr | None = None,
) -> tuple[pl.DataFrame, list[Problem]]:
    """``join_labels`` of records already read (``raw``, with its ``ROW`` column): the joined frame and
    every problem found, raising nothing. ``places`` renders the rows that share a case id in a
    duplicate's message (default ``rows 3, 7`` from ``ROW``); once a file-level problem is found (a
    missing column), only those are returned. With problems the frame is not the run's."""
    frame, problems = coerce_columns(raw, RECORD_COLUMNS)
    if any(problem.row is None for problem in problems):
        return frame, problems
    frame = frame.with_columns(pl.col("status").fill_null("ok"))
    if REPEAT not in raw.columns:
        frame = frame.drop(REPEAT)
    metadata = [name for name in frame.columns if name not in RECORD_NAMES and name != ROW]
    problems += [
        Problem(
            column=name,
            expected="a column name the corpus does not use (labels come from the corpus); rename it",
        )
        for name in metadata
        if name in corpus.frame.columns
    ]
    problems += [
        Problem(column=name, expected=f"another column name (rag-compare stores a run's {what} under this one)")
        for name, what in ((STORED_SIGNALS, "signals"), (STORED_CLAIMS, "claim verdicts"))
        if name in metadata
    ]
    problems += _duplicate_problems(frame, places)
    problems += _unknown_case_problems(frame, corpus)
    joined = frame.join(corpus.frame, on="case_id", how="left", suffix=_FROM_CORPUS)
    secrets = credential_values(os.environ if environ is None else environ)
    problems += _credential_problems(joined, frame.columns, secrets)
    from rag_compare.io.schemas import RecordsSchema, contract_problems  # Pandera loads on first validation

    problems = contract_problems(frame, RecordsSchema, ROW, already=problems)
    if problems:
        return joined, problems
    contract = [name for name in RECORD_NAMES if name in frame.columns]
    return joined.select(*contract, *corpus.frame.drop("case_id").columns, *metadata), problems


def _duplicate_problems(frame: pl.DataFrame, places: pl.Expr | None = None) -> list[Problem]:
    """A problem for each record whose case id (with ``repeat``: case id and repeat) another record has too,
    naming the rows that share it (each rendered by ``places``, default its ``ROW``)."""
    keys = sample_key(frame.columns)
    if places is None:
        rows = pl.format("rows {}", pl.col(ROW).cast(pl.String).str.join(", ").over(keys))
    else:
        rows = places.str.join(", ").over(keys)
    expected = (
        pl.format("a (case_id, repeat) pair given once: repeat {} of this case is in {}", pl.col(REPEAT), rows)
        if REPEAT in keys
        else pl.format(
            "a case id given once: it is in {} (number the samples of a case run several times in a 'repeat' column)",
            rows,
        )
    )
    named = pl.all_horizontal(pl.col(key).is_not_null() for key in keys) & (pl.col("case_id") != "")
    shared = frame.filter(named).filter(pl.struct(keys).is_duplicated())
    found = shared.select(ROW, "case_id", expected.alias("expected"))
    return [Problem.at(row, "case_id", case_id, text) for row, case_id, text in found.iter_rows()]


def _unknown_case_problems(frame: pl.DataFrame, corpus: Corpus) -> list[Problem]:
    """A problem for each record whose case id the corpus lacks, naming the corpus id it only looks like."""
    unknown = frame.filter(~pl.col("case_id").is_in(corpus.frame.get_column("case_id").implode()))
    if unknown.is_empty():
        return []
    known = corpus.frame.select(pl.col("case_id").alias("corpus_id"), lookalike_key("case_id").alias("key"))
    unknown = unknown.select(ROW, "case_id", lookalike_key("case_id").alias("key")).join(
        known.unique("key", keep="first", maintain_order=True), on="key", how="left", maintain_order="left"
    )
    expected = f"a case id of the corpus {corpus.source}"
    return [
        Problem.at(
            row,
            "case_id",
            case_id,
            expected
            if match is None
            else (
                f"{expected}: it matches {show_value(match)} only after Unicode normalisation (NFKC, invisible "
                f"characters removed; {case_id!a} here, {match!a} there); write the id as the corpus does"
            ),
        )
        for row, case_id, _, match in unknown.iter_rows()
    ]


def _credential_problems(joined: pl.DataFrame, record_columns: list[str], secrets: Mapping[str, str]) -> list[Problem]:
    """A problem per cell of the records joined with their labels that holds a credential."""
    return [
        Problem(
            row=row,
            column=column if column in record_columns or column.endswith(_FROM_CORPUS) else column + _FROM_CORPUS,
            expected=f"no credential, but this cell holds {what}; remove it before freezing",
        )
        for row, column, what in credential_cells(joined, secrets, ROW)
    ]
