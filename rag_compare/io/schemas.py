"""The rules of the file contracts of DESIGN.md as Pandera models (the column specs are ``core.contract``).

Reading (``columns.coerce_columns``) gives each contract column its type; the models then check the
values, lazily, so every broken rule of a file is reported in one pass by ``contract_problems``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandera.polars as pa
import polars as pl

from rag_compare.core.contract import ANSWERABILITY, LANGUAGE_TAG, ORIGINS, STATUSES
from rag_compare.core.errors import Problem, show_value, sorted_problems
from rag_compare.io.verdicts import LABELS, PREFERENCES, VERDICT_SIDES

__all__ = [
    "CorpusSchema",
    "LabelsSchema",
    "PassagesSchema",
    "RecordsSchema",
    "contract_problems",
]


def _not_blank(*columns: str) -> Any:
    """The model check that each of ``columns`` holds a non-blank value."""

    def not_blank(cls: type[pa.DataFrameModel], data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col(data.key).str.strip_chars().str.len_chars() > 0)

    return pa.check(*columns, error="a non-blank value")(not_blank)


def _not_negative(data: pa.PolarsData) -> pl.LazyFrame:
    return data.lazyframe.select(pl.col(data.key).is_null() | (pl.col(data.key) >= 0))


def _is_one_of(data: pa.PolarsData, values: tuple[str, ...]) -> pl.LazyFrame:
    return data.lazyframe.select(pl.col(data.key).is_in(values))


def _list_is_clean(column: str) -> pl.Expr:
    """No blank id and no id twice in a list (null lists pass)."""
    ids = pl.col(column)
    no_blank = ~ids.list.eval(pl.element().str.len_chars() == 0).list.any()
    no_repeat = ids.list.n_unique() == ids.list.len()
    return ids.is_null() | (no_blank & no_repeat)


class _ContractModel(pa.DataFrameModel):
    """Columns beyond a contract are kept as user metadata."""

    class Config:
        strict = False


class CorpusSchema(_ContractModel):
    """A labelled question corpus: one row per case; extra columns are user metadata."""

    case_id: str = pa.Field(unique=True)
    question: str
    answerability: str
    source_version: str
    required_passage_ids: pl.List(pl.String)  # type: ignore[valid-type]
    acceptance_note: str = pa.Field(nullable=True)
    category: str = pa.Field(nullable=True)
    origin: str
    reviewed: bool
    language: str | None = pa.Field(nullable=True)

    not_blank = _not_blank("case_id", "question", "source_version")

    @pa.check("answerability", error=f"one of: {', '.join(ANSWERABILITY)}")
    def answerability_known(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return _is_one_of(data, ANSWERABILITY)

    @pa.check("language", error="a BCP 47 language tag such as en, de or pt-BR (or an empty cell)")
    def language_is_a_tag(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col(data.key).is_null() | pl.col(data.key).str.contains(f"^{LANGUAGE_TAG}$"))

    @pa.check("origin", error=f"one of: {', '.join(ORIGINS)}")
    def origin_known(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return _is_one_of(data, ORIGINS)

    @pa.dataframe_check(error="required_passage_ids: at least one passage id for an answerable or conflict case")
    def answerable_lists_passages(cls, data: pa.PolarsData) -> pl.LazyFrame:
        ids = pl.col("required_passage_ids")
        return data.lazyframe.select((pl.col("answerability") == "unanswerable") | (ids.list.len() > 0))

    @pa.dataframe_check(error="required_passage_ids: no passage ids for an unanswerable case")
    def unanswerable_lists_none(cls, data: pa.PolarsData) -> pl.LazyFrame:
        ids = pl.col("required_passage_ids")
        return data.lazyframe.select((pl.col("answerability") != "unanswerable") | (ids.list.len() == 0))

    @pa.dataframe_check(error="required_passage_ids: each passage id once, none blank")
    def passage_ids_clean(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(_list_is_clean("required_passage_ids"))


class PassagesSchema(_ContractModel):
    """The knowledge base: one row per passage, ids unique across versions."""

    passage_id: str = pa.Field(unique=True)
    source_version: str
    text: str

    not_blank = _not_blank("passage_id", "source_version", "text")


class RecordsSchema(_ContractModel):
    """What a pipeline did: one row per sample of a case attempted; extra columns are user metadata.

    ``repeat`` may be absent (one sample per case); the uniqueness of ``case_id`` (or of each
    ``(case_id, repeat)`` pair) is checked by ``records.join_labels``, which names the rows that share one.
    """

    case_id: str
    repeat: int | None
    status: str
    error: str = pa.Field(nullable=True)
    retrieved_passage_ids: pl.List(pl.String) = pa.Field(nullable=True)  # type: ignore[valid-type]
    retrieved_scores: pl.List(pl.Float64) = pa.Field(nullable=True)  # type: ignore[valid-type]
    context: str = pa.Field(nullable=True)
    context_passage_ids: pl.List(pl.String) = pa.Field(nullable=True)  # type: ignore[valid-type]
    answer: str = pa.Field(nullable=True)
    latency_ms: float = pa.Field(nullable=True)
    prompt_tokens: int = pa.Field(nullable=True)
    completion_tokens: int = pa.Field(nullable=True)

    not_blank = _not_blank("case_id")

    @pa.check("status", error=f"one of: {', '.join(STATUSES)}")
    def status_known(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return _is_one_of(data, STATUSES)

    @pa.check("repeat", error="a sample number: a whole number of 0 or more")
    def repeat_not_negative(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return _not_negative(data)

    @pa.check("latency_ms", "prompt_tokens", "completion_tokens", error="a number of 0 or more")
    def not_negative(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return _not_negative(data)

    @pa.dataframe_check(error="retrieved_scores: as many scores as retrieved_passage_ids")
    def scores_match_ids(cls, data: pa.PolarsData) -> pl.LazyFrame:
        scores, ids = pl.col("retrieved_scores"), pl.col("retrieved_passage_ids")
        return data.lazyframe.select(scores.is_null() | (scores.list.len() == ids.list.len()).fill_null(False))

    @pa.dataframe_check(error="retrieved_passage_ids: no blank passage id")
    def retrieved_ids_clean(cls, data: pa.PolarsData) -> pl.LazyFrame:
        ids = pl.col("retrieved_passage_ids")
        return data.lazyframe.select(ids.is_null() | ~ids.list.eval(pl.element().str.len_chars() == 0).list.any())


class LabelsSchema(_ContractModel):
    """People's labels of a run's answers: one row per case (and side, and repeat, when given); every label is
    optional, and blank where not given. Extra columns are kept (breakdowns read ``category``, ``answerability``
    and ``language`` from them)."""

    case_id: str
    side: str | None = pa.Field(nullable=True)
    repeat: int | None = pa.Field(nullable=True)
    answer_correct: str | None = pa.Field(nullable=True)
    grounded: str | None = pa.Field(nullable=True)
    abstention_correct: str | None = pa.Field(nullable=True)
    retrieval_ok: str | None = pa.Field(nullable=True)
    preferred: str | None = pa.Field(nullable=True)
    comment: str | None = pa.Field(nullable=True)

    not_blank = _not_blank("case_id")

    @pa.check("side", error=f"one of: {', '.join(VERDICT_SIDES)} (or an empty cell)")
    def side_known(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return _null_or_one_of(data, VERDICT_SIDES)

    @pa.check("repeat", error="a sample number: a whole number of 0 or more")
    def repeat_not_negative(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return _not_negative(data)

    @pa.check("answer_correct", "abstention_correct", "retrieval_ok", error="yes or no (or an empty cell)")
    def yes_or_no(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return _null_or_one_of(data, ("yes", "no"))

    @pa.check("grounded", error="yes, partly or no (or an empty cell)")
    def grounded_known(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return _null_or_one_of(data, LABELS["grounded"])

    @pa.check("preferred", error=f"one of: {', '.join(PREFERENCES)} (or an empty cell)")
    def preference_known(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return _null_or_one_of(data, PREFERENCES)

    @pa.dataframe_check(error="case_id: one row per case, side and repeat")
    def one_row_per_answer(cls, data: pa.PolarsData) -> pl.LazyFrame:
        keys = [name for name in ("case_id", "side", "repeat") if name in data.lazyframe.collect_schema()]
        return data.lazyframe.select(~pl.struct(keys).is_duplicated())


def _null_or_one_of(data: pa.PolarsData, values: tuple[str, ...]) -> pl.LazyFrame:
    return data.lazyframe.select(pl.col(data.key).is_null() | pl.col(data.key).is_in(values))


_BUILTIN_EXPECTED = {
    "field_uniqueness": "a value that appears only once in the column",
    "not_nullable": "a value (this column may not be empty)",
}


def contract_problems(
    frame: pl.DataFrame,
    schema: type[pa.DataFrameModel],
    row_column: str,
    already: Sequence[Problem] = (),
) -> list[Problem]:
    """``already`` plus every rule of ``schema`` that ``frame`` breaks, with 1-based row numbers.

    A cell that ``already`` reports (it could not be read) is not reported again.
    """
    try:
        schema.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as errors:
        reported = {(problem.row, problem.column) for problem in already}
        found = _to_problems(frame, errors.failure_cases, row_column)
        return sorted_problems([*already, *(p for p in found if (p.row, p.column) not in reported)])
    return list(already)


def _to_problems(frame: pl.DataFrame, failures: pl.DataFrame, row_column: str) -> list[Problem]:
    problems = []
    for context, failing_column, check, index, case in failures.select(
        "schema_context", "column", "check", "index", "failure_case"
    ).iter_rows():
        column = failing_column
        if context == "DataFrameSchema" and ": " in check:
            column, expected = check.split(": ", 1)
        else:
            expected = _BUILTIN_EXPECTED.get(check, check)
        if expected.startswith("dtype("):
            expected = f"values of type {expected[len('dtype(') : -1]}"
        if index is None or column not in frame.columns:
            problems.append(Problem(column=column, value=None if case is None else show_value(case), expected=expected))
            continue
        problems.append(
            Problem(
                row=int(frame[row_column][index]),
                column=column,
                value=show_value(frame.get_column(column).slice(index, 1).to_list()[0]),
                expected=expected,
            )
        )
    return sorted_problems(problems)
