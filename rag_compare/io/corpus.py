"""Loading and validating a labelled question corpus (CSV, Parquet or JSONL)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare.core.contract import ANSWERABILITY, CORPUS_COLUMNS, LANGUAGE, ORIGINS, lookalike_key
from rag_compare.core.digest import content_fingerprint
from rag_compare.core.errors import ContractError, Problem, show_value, sorted_problems
from rag_compare.core.listing import counted
from rag_compare.core.result import Report, labelled
from rag_compare.core.rows import count_by
from rag_compare.io.columns import coerce_columns, contract_first, problems_where
from rag_compare.io.passages import load_passages, required_passage_problems
from rag_compare.io.tables import ROW, read_source

__all__ = [
    "UNREVIEWED_WHAT",
    "Corpus",
    "corpus_content_fingerprint",
    "corpus_of_table",
    "load_corpus",
    "refuse_unreviewed",
    "unreviewed_problem",
    "unreviewed_where",
]

_CONTRACT = [spec.name for spec in CORPUS_COLUMNS]


@dataclass(frozen=True)
class Corpus(Report):
    """A validated corpus: one row per case, contract columns first, then user metadata.

    ``warnings`` are problems that do not make the labels untrustworthy (a case id that does not
    name its source version, synthetic cases not yet reviewed); ``strict=True`` turns them into errors.
    """

    frame: pl.DataFrame = field(repr=False)
    source: str
    fingerprint: str
    warnings: tuple[Problem, ...] = ()

    def __repr__(self) -> str:
        warned = f", {counted(len(self.warnings), 'warning')}" if self.warnings else ""
        return f"<Corpus {labelled(self.source, self.fingerprint)}: {counted(self.frame.height, 'case')}{warned}>"

    @property
    def metadata_columns(self) -> list[str]:
        return [name for name in self.frame.columns if name not in _CONTRACT]

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "valid": True,
            "cases": self.frame.height,
            "fingerprint": self.fingerprint,
            "counts": {
                "answerability": count_by(self.frame, "answerability", ANSWERABILITY),
                "source_version": count_by(self.frame, "source_version"),
                "category": count_by(self.frame, "category"),
                "origin": count_by(self.frame, "origin", ORIGINS),
                "unreviewed": int((~self.frame["reviewed"]).sum()),
            },
            "metadata_columns": self.metadata_columns,
            "warnings": [warning.to_dict() for warning in self.warnings],
            "problems": [],
        }


def load_corpus(
    source: str | Path | pl.DataFrame,
    *,
    strict: bool = False,
    passages: str | Path | pl.DataFrame | None = None,
) -> Corpus:
    """Read and validate a corpus; refuse it whole, with every problem listed, if it breaks the contract.

    ``source`` is a CSV, Parquet or JSONL path, or a Polars frame (not modified). With ``passages``
    (the knowledge base), every required passage id must be in it; one of another source version
    than its case is a warning. With ``strict``, warnings are refused too. Raises
    ``InputFileError`` or ``ContractError``.
    """
    name, raw = read_source(source, "corpus")
    return corpus_of_table(name, raw, strict=strict, passages=passages)


def corpus_of_table(
    name: str,
    raw: pl.DataFrame,
    *,
    strict: bool = False,
    passages: str | Path | pl.DataFrame | None = None,
    fingerprint: str | None = None,
) -> Corpus:
    """``load_corpus`` of a table already read (``raw``, with its ``ROW`` column) and named ``name`` in
    messages; ``fingerprint`` replaces the corpus' own (the digest of its contract columns)."""
    frame, problems = coerce_columns(raw, CORPUS_COLUMNS)
    if any(problem.row is None for problem in problems):
        raise ContractError(name, "corpus", problems)
    if LANGUAGE not in raw.columns:
        frame = frame.drop(LANGUAGE)
    frame = _fill_defaults(frame)
    from rag_compare.io.schemas import CorpusSchema, contract_problems  # Pandera loads on first validation

    problems = contract_problems(frame, CorpusSchema, ROW, already=problems)
    if problems:
        raise ContractError(name, "corpus", problems)
    warnings = _warnings(frame)
    if passages is not None:
        unknown, other_version = required_passage_problems(frame, load_passages(passages))
        if unknown:
            raise ContractError(name, "corpus for these passages", unknown)
        warnings = sorted_problems([*warnings, *other_version])
    if strict and warnings:
        raise ContractError(name, "corpus (`strict=True` turns warnings into errors)", warnings)
    frame = contract_first(frame, CORPUS_COLUMNS)
    return Corpus(
        frame=frame,
        source=name,
        fingerprint=fingerprint or corpus_content_fingerprint(frame),
        warnings=tuple(warnings),
    )


def corpus_content_fingerprint(frame: pl.DataFrame) -> str:
    """The digest of a corpus frame's contract columns, whatever its row order."""
    return content_fingerprint(frame.select(name for name in _CONTRACT if name in frame.columns), "case_id")


def _fill_defaults(frame: pl.DataFrame) -> pl.DataFrame:
    """``origin`` defaults to manual; ``reviewed`` to true for manual cases, false for synthetic."""
    origin = pl.col("origin").fill_null("manual")
    return frame.with_columns(
        origin.alias("origin"),
        pl.col("reviewed").fill_null(origin == "manual").alias("reviewed"),
        pl.col("required_passage_ids").fill_null(pl.lit([], dtype=pl.List(pl.String))),
    )


def _warnings(frame: pl.DataFrame) -> list[Problem]:
    unnamed_version = ~pl.col("case_id").str.contains(pl.col("source_version"), literal=True)
    unreviewed = ~pl.col("reviewed")
    return sorted_problems(
        problems_where(
            frame,
            unnamed_version,
            "case_id",
            "a case id that names its source_version, by convention <question-key>@<source_version>",
        )
        + problems_where(
            frame,
            unreviewed,
            "reviewed",
            "a reviewed case: this one is a synthetic candidate, not gold, until a person sets reviewed=true",
        )
        + _lookalike_ids(frame)
    )


def _lookalike_ids(frame: pl.DataFrame) -> list[Problem]:
    """A problem for each case id that differs from another only by Unicode normalisation or invisible characters."""
    if not frame.get_column("case_id").str.contains(r"[^\x00-\x7f]").any():
        return []  # ASCII is its own NFKC form and holds no invisible characters: nothing can look alike
    keyed = frame.select(ROW, "case_id", lookalike_key("case_id").alias("key")).filter(pl.col("key").is_duplicated())
    pairs = (
        keyed.join(keyed, on="key", suffix="_other")
        .filter(pl.col("case_id") != pl.col("case_id_other"))
        .group_by(ROW)
        .agg(
            pl.col("case_id").first(),
            pl.col("case_id_other").sort_by(f"{ROW}_other").first(),
            pl.col(f"{ROW}_other").min(),
        )
        .sort(ROW)
    )
    return [
        Problem.at(
            row,
            "case_id",
            case_id,
            f"a case id unlike the others: it differs from {show_value(other)} (row {other_row}) only by "
            f"Unicode normalisation or invisible characters ({case_id!a} here, {other!a} there); "
            "write both alike, or rename one",
        )
        for row, case_id, other, other_row in pairs.iter_rows()
    ]


def refuse_unreviewed(corpus: Corpus, case_ids: pl.Series | None = None) -> None:
    """Refuse synthetic cases not yet reviewed (``reviewed=false``): they are drafts, not gold.

    With ``case_ids`` (the cases actually used, e.g. a run's records), only those count. Raises
    ``ContractError`` with one problem per such case, at its corpus row, naming its id and the fix.
    """
    found = corpus.frame.with_row_index(ROW, offset=1).filter(unreviewed_where(case_ids)).select(ROW, "case_id")
    if found.is_empty():
        return
    # Corpus rows are the file's data rows in order, so the row number is the case's position.
    problems = [unreviewed_problem(row, case_id, corpus.source) for row, case_id in found.iter_rows()]
    raise ContractError(corpus.source, UNREVIEWED_WHAT, problems)


UNREVIEWED_WHAT = "set of cases to run (unreviewed synthetic cases are not gold)"
"""What ``refuse_unreviewed``'s error says was not valid."""


def unreviewed_where(case_ids: pl.Series | None = None) -> pl.Expr:
    """True for a corpus row of an unreviewed synthetic case (among ``case_ids`` when given)."""
    unreviewed = (pl.col("origin") == "synthetic") & ~pl.col("reviewed")
    if case_ids is not None:
        unreviewed &= pl.col("case_id").is_in(case_ids.cast(pl.String).implode())
    return unreviewed.fill_null(False)


def unreviewed_problem(row: int, case_id: str, source: str) -> Problem:
    """The problem of the unreviewed synthetic case ``case_id`` at ``row`` of the corpus ``source``."""
    file = source if source != "<frame>" else "DRAFTS"
    return Problem.at(
        row,
        "case_id",
        case_id,
        f"a reviewed case, not a synthetic draft: review it, then `admit_cases({file!r}, ids=[{case_id!r}])` "
        "(or pass `include_unreviewed=True` to use drafts anyway)",
    )
