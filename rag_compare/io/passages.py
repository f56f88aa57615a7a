"""The knowledge base (passages file), and checking a corpus' required passages against it."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from rag_compare.core.contract import PASSAGE_COLUMNS
from rag_compare.core.errors import ContractError, Problem
from rag_compare.io.columns import coerce_columns, contract_first
from rag_compare.io.tables import ROW, read_source

__all__ = ["load_passages", "required_passage_problems"]


def load_passages(source: str | Path | pl.DataFrame) -> pl.DataFrame:
    """Read and validate a passages file (or frame): contract columns first, then metadata.

    Raises ``InputFileError`` or ``ContractError`` listing every problem.
    """
    name, raw = read_source(source, "passages")
    frame, problems = coerce_columns(raw, PASSAGE_COLUMNS)
    if not any(problem.row is None for problem in problems):
        from rag_compare.io.schemas import PassagesSchema, contract_problems  # Pandera loads on first validation

        problems = contract_problems(frame, PassagesSchema, ROW, already=problems)
    if problems:
        raise ContractError(name, "passages file", problems)
    return contract_first(frame, PASSAGE_COLUMNS)


def required_passage_problems(corpus: pl.DataFrame, passages: pl.DataFrame) -> tuple[list[Problem], list[Problem]]:
    """Errors (a required passage id the knowledge base lacks) and warnings (a passage of another
    source version than its case), one per corpus row, for a corpus frame that still has ``ROW``."""
    required = corpus.select(ROW, "source_version", pl.col("required_passage_ids").alias("passage_id")).explode(
        "passage_id"
    )
    known = required.join(
        passages.select("passage_id", pl.col("source_version").alias("passage_version")), on="passage_id", how="left"
    )
    unknown = known.filter(pl.col("passage_id").is_not_null() & pl.col("passage_version").is_null())
    other_version = known.filter(pl.col("passage_version") != pl.col("source_version"))
    return (
        _per_row(corpus, unknown, "a passage id of the passages file (not found: {ids})"),
        _per_row(corpus, other_version, "passages of the case's source_version (other version: {ids})"),
    )


def _per_row(corpus: pl.DataFrame, found: pl.DataFrame, expected: str) -> list[Problem]:
    """One problem per corpus row in ``found``, naming that row's offending passage ids."""
    ids_by_row = found.group_by(ROW).agg(pl.col("passage_id").str.join(", ").alias("ids"))
    failing = corpus.join(ids_by_row, on=ROW).select(ROW, "required_passage_ids", "ids").sort(ROW)
    return [
        Problem.at(row, "required_passage_ids", ids, expected.format(ids=names))
        for row, ids, names in failing.iter_rows()
    ]
