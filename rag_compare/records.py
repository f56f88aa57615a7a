"""Run records: what a pipeline did per case, validated against the corpus and joined with its labels."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from rag_compare.columns import coerce_columns
from rag_compare.corpus import Corpus
from rag_compare.credentials import credential_values, rows_containing
from rag_compare.errors import ContractError, Problem, show_value
from rag_compare.frames import lookalike_key
from rag_compare.schemas import RECORD_COLUMNS, RecordsSchema, contract_problems
from rag_compare.tables import ROW, read_source

__all__ = ["RECORD_NAMES", "join_labels"]

RECORD_NAMES = tuple(spec.name for spec in RECORD_COLUMNS)


def join_labels(
    records: str | Path | pl.DataFrame,
    corpus: Corpus,
    environ: Mapping[str, str] | None = None,
) -> pl.DataFrame:
    """Validate ``records`` against the contract and ``corpus``; return them with the case labels.

    Columns: the record contract columns, the corpus columns, then the records' own metadata.
    Every problem is collected first and raised at once as a ``ContractError``; credentials from
    ``environ`` (default ``os.environ``) found in any text column are problems too.
    """
    source, raw = read_source(records, "run records")
    frame, problems = coerce_columns(raw, RECORD_COLUMNS)
    if any(problem.row is None for problem in problems):
        raise ContractError(source, "run records file", problems)
    frame = frame.with_columns(pl.col("status").fill_null("ok"))
    metadata = [name for name in frame.columns if name not in RECORD_NAMES and name != ROW]
    problems += [
        Problem(
            column=name,
            expected="a column name the corpus does not use (labels come from the corpus); rename it",
        )
        for name in metadata
        if name in corpus.frame.columns
    ]
    problems += _unknown_case_problems(frame, corpus)
    problems += _credential_problems(frame, credential_values(os.environ if environ is None else environ))
    problems = contract_problems(frame, RecordsSchema, ROW, already=problems)
    if problems:
        raise ContractError(source, "run records file", problems)
    return (
        frame.select(*RECORD_NAMES, *metadata)
        .join(corpus.frame, on="case_id", how="left")
        .select(*RECORD_NAMES, *corpus.frame.drop("case_id").columns, *metadata)
    )


def _unknown_case_problems(frame: pl.DataFrame, corpus: Corpus) -> list[Problem]:
    """A problem for each record whose case id the corpus lacks, naming the corpus id it only looks like."""
    known = corpus.frame.select(pl.col("case_id").alias("corpus_id"), lookalike_key("case_id").alias("key"))
    unknown = (
        frame.filter(~pl.col("case_id").is_in(known.get_column("corpus_id").implode()))
        .select(ROW, "case_id", lookalike_key("case_id").alias("key"))
        .join(known.unique("key", keep="first", maintain_order=True), on="key", how="left", maintain_order="left")
    )
    expected = f"a case id of the corpus {corpus.source}"
    return [
        Problem(
            row=int(row),
            column="case_id",
            value=show_value(case_id),
            expected=expected
            if match is None
            else (
                f"{expected}: it matches {show_value(match)} only after Unicode normalisation (NFKC, invisible "
                f"characters removed; {case_id!a} here, {match!a} there); write the id as the corpus does"
            ),
        )
        for row, case_id, _, match in unknown.iter_rows()
    ]


def _credential_problems(frame: pl.DataFrame, secrets: Mapping[str, str]) -> list[Problem]:
    text_columns = [name for name, dtype in frame.schema.items() if dtype == pl.String]
    return [
        Problem(
            row=row,
            column=column,
            expected=f"no credential (this cell holds the value of {name}); remove it before freezing",
        )
        for name, secret in secrets.items()
        for column in text_columns
        for row in rows_containing(frame, column, secret, ROW)
    ]
