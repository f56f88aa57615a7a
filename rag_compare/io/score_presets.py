"""Presets of ``import_scores``: another tool's results read with a documented metric -> signal map.

``ragas``: the table of ``EvaluationResult.to_pandas()`` (saved as CSV, JSON lines or Parquet): the dataset's
columns, then one column per metric. Each metric named below becomes the signal beside it; when a table
holds several for one signal, the first listed wins and the others are not imported. Every other column
that is not the dataset's is listed as not imported.

- ``grounded`` <- ``faithfulness``, ``faithfulness_with_hhem``, ``response_groundedness``: the share of the
  response's claims that the retrieved contexts support;
- ``response`` <- ``answer_relevancy``, ``response_relevancy``: whether the response addresses the question;
- ``context_sufficiency`` <- ``context_recall``, ``non_llm_context_recall``, ``id_based_context_recall``,
  ``context_entity_recall``: how much of what the reference needs the retrieved contexts hold;
- ``correctness`` <- ``answer_correctness``, ``factual_correctness``, ``answer_accuracy``,
  ``string_present`` (the reference appears in the response), ``exact_match`` (it is the response): the
  response's agreement with the reference answer.

Not imported, on purpose: the context precision family (``context_precision``, ``id_based_context_precision``,
``context_utilization``, ...) ranks relevant contexts, which the run's own retrieval metrics measure from
ids; ``noise_sensitivity`` is better when lower; lexical overlaps (``bleu_score``, ``rouge_score``,
``chrf_score``, ``non_llm_string_similarity``, ``semantic_similarity``) are not correctness; rubric scores
are 1-5, not [0, 1].

``deepeval``: a DeepEval test run file (``.deepeval/.latest_test_run.json``): each test case's
``metricsData`` by metric name, a metric that errored as no score; the case id from the test case's
``metadata`` (``additional_metadata``) under the id column. ``Faithfulness`` -> ``grounded``, ``Answer
Relevancy`` -> ``response``, ``Contextual Recall`` -> ``context_sufficiency``, ``Correctness [GEval]``,
``Correctness`` (a GEval named so), ``Exact Match`` -> ``correctness``, for the same reasons; not
``Contextual Precision`` (ranking), ``Contextual Relevancy`` (relevance is not sufficiency), nor
``Hallucination``, ``Bias``, ``Toxicity`` (lower is better).

``promptfoo``: a promptfoo results file (``promptfoo eval -o results.json``, one run: one prompt with one
provider), one row per result (``results.results[]``), the case id from its ``vars`` under the id column,
the question from its ``question``, ``query`` or ``input`` var. Each assertion's grade
(``gradingResult.componentResults[]``) is a metric named by the assertion's ``metric`` when set (what
promptfoo's ``namedScores`` holds), else by its ``type``; assertions of one test sharing a name give their
mean weighted by ``weight``, as ``namedScores`` does. The RAG assertions map by type: ``context-faithfulness``
-> ``grounded`` (the share of the answer's statements the context supports), ``answer-relevance`` ->
``response`` (how close the questions the answer answers are to the query), ``context-recall`` ->
``context_sufficiency`` (the share of the reference's sentences the context supports), ``factuality`` and
its alias ``model-graded-factuality`` -> ``correctness`` (the answer's agreement with the reference). Not
imported unless mapped: ``context-relevance`` (relevance is not sufficiency), the ``not-`` types (inverted),
``similar`` and the other overlaps (``bleu``, ``rouge-n``, ``levenshtein``: not correctness), and
``llm-rubric``, ``g-eval``, ``model-graded-closedqa`` and the plain checks (``contains``, ``equals``,
``regex``, ...), which mean what the test's own criterion means; a metric named with ``metric`` is a column
of that name (map it). A result that errored (``failureReason`` 2: its provider failed, or its grading
raised) has no score on any metric, nor has an assertion whose grader failed (``metadata.graderError``):
no score, never promptfoo's 0 (``judge_failed``, or ``not_judged`` where the run's record failed). An
``assert-set``'s own grade is not read; its members are.

A NaN (what Ragas gives a metric that failed on a row) is no score, like an empty value: the case is
``judge_failed``, never a low score and never dropped. Rows join the run by the id column when the table has
it (Ragas' samples carry none: add one to ``to_pandas()``), else by the question (``user_input`` / ``input`` /
promptfoo's question var against the run's ``question``, whitespace and case folded); a question that matches
no case of the run, or several, is refused with the list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare.core.contract import REPEAT, question_key
from rag_compare.core.errors import ContractError, Problem, ScoresError
from rag_compare.io.runs import Run
from rag_compare.io.sources.deepeval import load_test_run
from rag_compare.io.sources.promptfoo import QUESTION_VARS, load_results
from rag_compare.io.sources.values import key_text, mapping, number, text
from rag_compare.io.tables import ROW, read_table

__all__ = ["PRESETS", "PresetImport", "ScorePreset", "apply_preset", "require_repeat_column"]


@dataclass(frozen=True)
class ScorePreset:
    """How one tool's results table becomes scores: its metrics by signal, its dataset columns, its question."""

    name: str
    metrics: tuple[tuple[str, str], ...]
    """(metric column, signal) pairs; for one signal, the first column the table holds wins."""
    data_columns: frozenset[str]
    """The table's columns that are the dataset, not metrics (never listed as not imported)."""
    question_column: str
    read: Callable[[Path, str], pl.DataFrame]
    """The table of a file (given the id column), with a ``ROW`` column."""


@dataclass(frozen=True)
class PresetImport:
    """A table made ready for ``import_scores``: it has the id column, the mapping to use, what is left out."""

    table: pl.DataFrame
    mapping: dict[str, str]
    not_imported: dict[str, str]
    """Column -> why it is not imported."""


RAGAS = ScorePreset(
    name="ragas",
    metrics=(
        *(("faithfulness", "grounded"), ("faithfulness_with_hhem", "grounded"), ("response_groundedness", "grounded")),
        *(("answer_relevancy", "response"), ("response_relevancy", "response")),
        ("context_recall", "context_sufficiency"),
        ("non_llm_context_recall", "context_sufficiency"),
        ("id_based_context_recall", "context_sufficiency"),
        ("context_entity_recall", "context_sufficiency"),
        ("answer_correctness", "correctness"),
        ("factual_correctness", "correctness"),
        ("answer_accuracy", "correctness"),
        ("string_present", "correctness"),
        ("exact_match", "correctness"),
    ),
    data_columns=frozenset(
        {
            "user_input",
            "retrieved_contexts",
            "reference_contexts",
            "retrieved_context_ids",
            "reference_context_ids",
            "response",
            "multi_responses",
            "reference",
            "rubrics",
            "persona_name",
            "query_style",
            "query_length",
            "reference_tool_calls",
            "reference_topics",
        }
    ),
    question_column="user_input",
    read=lambda path, id_column: read_table(path, "Ragas results table"),
)


def _metric_table(path: Path, id_column: str) -> pl.DataFrame:
    """A DeepEval test run as a table: ``ROW`` (the test case's position), ``input``, ``id_column`` (from the
    test cases' metadata, when any has it) and one column per metric name with its score, null where the
    metric errored."""
    rows: list[dict[str, Any]] = []
    problems: list[Problem] = []
    for position, case in enumerate(load_test_run(path)["testCases"], start=1):
        metrics = case.get("metricsData") if isinstance(case, dict) else None
        if not isinstance(case, dict) or not isinstance(metrics, list | None) or not all(map(_is_dict, metrics or [])):
            problems.append(Problem("a test case with a `metricsData` list", row=position))
            continue
        metadata, question = case.get("metadata"), case.get("input")
        row = {ROW: position, "input": question if isinstance(question, str) else None}
        key = key_text(metadata.get(id_column)) if isinstance(metadata, dict) else None
        row.update({} if key is None else {id_column: key})
        for metric in metrics or []:
            score = metric.get("score")
            if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
                problems.append(Problem.at(position, str(metric.get("name")), score, "a score (a number)"))
            row[str(metric.get("name"))] = None if metric.get("error") else score
        rows.append(row)
    if problems:
        raise ContractError(str(path), "DeepEval test run", problems)
    names = list(dict.fromkeys([ROW, "input", *(name for row in rows for name in row)]))
    texts = (id_column, "input")
    schema = {name: pl.Int64 if name == ROW else pl.String if name in texts else pl.Float64 for name in names}
    return pl.DataFrame([{name: row.get(name) for name in names} for row in rows], schema=schema, orient="row")


def _is_dict(value: Any) -> bool:
    return isinstance(value, dict)


DEEPEVAL = ScorePreset(
    name="deepeval",
    metrics=(
        ("Faithfulness", "grounded"),
        ("Answer Relevancy", "response"),
        ("Contextual Recall", "context_sufficiency"),
        ("Correctness [GEval]", "correctness"),
        ("Correctness", "correctness"),
        ("Exact Match", "correctness"),
    ),
    data_columns=frozenset({"input"}),
    question_column="input",
    read=_metric_table,
)
_ERRORED = 2
"""promptfoo's ``ResultFailureReason.ERROR``: the provider failed or the grading raised (1 is a failed assertion)."""
_QUESTION = "question"


def _graded_table(path: Path, id_column: str) -> pl.DataFrame:
    """A promptfoo results file as a table: ``ROW`` (the result's position), ``question``, ``id_column`` (from the
    vars, when any result has it) and one column per metric with its score, null where the result errored."""
    rows: list[dict[str, Any]] = []
    problems: list[Problem] = []
    for position, result in enumerate(load_results(path), start=1):
        grading = mapping(result).get("gradingResult")
        components = mapping(grading).get("componentResults", [])
        if not isinstance(result, dict) or not isinstance(grading, dict | None) or not isinstance(components, list):
            problems.append(Problem("a result whose `gradingResult` has a `componentResults` list", row=position))
            continue
        variables = mapping(result.get("vars"))
        row: dict[str, Any] = {
            ROW: position,
            _QUESTION: next(filter(None, map(text, map(variables.get, QUESTION_VARS))), None),
        }
        key = key_text(variables.get(id_column))
        row.update({} if key is None else {id_column: key})
        scores, wrong = _metric_scores(position, components, (_QUESTION, id_column))
        errored = result.get("failureReason") == _ERRORED
        row.update({name: None if errored else score for name, score in scores.items()})
        rows.append(row)
        problems += wrong
    if problems:
        raise ContractError(str(path), "promptfoo results file", problems)
    names = list(dict.fromkeys([ROW, _QUESTION, *(name for row in rows for name in row)]))
    texts = (id_column, _QUESTION)
    schema = {name: pl.Int64 if name == ROW else pl.String if name in texts else pl.Float64 for name in names}
    return pl.DataFrame([{name: row.get(name) for name in names} for row in rows], schema=schema, orient="row")


def _metric_scores(
    position: int, components: list[Any], taken: tuple[str, ...]
) -> tuple[dict[str, float | None], list[Problem]]:
    """Each metric's score in one result's ``componentResults`` (named by ``metric``, else ``type``): the mean
    by ``weight`` of the assertions sharing the name, none when a grader failed on one; and what is wrong."""
    graded: dict[str, list[tuple[float, float]]] = {}
    failed: set[str] = set()
    problems: list[Problem] = []
    for component in map(mapping, components):
        assertion = mapping(component.get("assertion"))
        name = text(assertion.get("metric")) or text(assertion.get("type"))
        if name is None:  # an assert-set's own grade: its members are read
            continue
        score, weight = number(component.get("score")), number(assertion.get("weight"))
        if score is None or name in taken:
            expected = "a score (a number)" if score is None else f"a metric name other than {', '.join(taken)}"
            problems.append(Problem.at(position, name, component.get("score"), expected))
            continue
        if mapping(component.get("metadata")).get("graderError") is True:
            failed.add(name)
        graded.setdefault(name, []).append((score, 1.0 if weight is None else weight))
    return {name: None if name in failed else _weighted_mean(graded[name]) for name in graded}, problems


def _weighted_mean(scores: list[tuple[float, float]]) -> float:
    """The mean of (score, weight) pairs by weight, or the plain mean when the weights sum to 0."""
    total = sum(weight for _, weight in scores)
    if not total:
        return sum(score for score, _ in scores) / len(scores)
    return sum(score * weight for score, weight in scores) / total


PROMPTFOO = ScorePreset(
    name="promptfoo",
    metrics=(
        ("context-faithfulness", "grounded"),
        ("answer-relevance", "response"),
        ("context-recall", "context_sufficiency"),
        ("factuality", "correctness"),
        ("model-graded-factuality", "correctness"),
    ),
    data_columns=frozenset({_QUESTION}),
    question_column=_QUESTION,
    read=_graded_table,
)
PRESETS = {preset.name: preset for preset in (RAGAS, DEEPEVAL, PROMPTFOO)}
"""Every preset, by name."""


def apply_preset(
    name: str, source: Path, mapping: Mapping[str, str], id_column: str, run: Run, repeat_column: str = REPEAT
) -> PresetImport:
    """The table of ``source`` under preset ``name``: the preset's mapping for the metrics it holds, ``mapping``
    adding or overriding; case ids from ``id_column``, else matched by question with ``run``'s; NaN scores
    made empty. A run with repeats needs the table's ``repeat_column`` (see ``require_repeat_column``)."""
    preset = PRESETS.get(name)
    if preset is None:
        raise ScoresError(f"unknown preset {name!r}; use one of: {', '.join(PRESETS)}.")
    table = preset.read(source, id_column)
    repeats = REPEAT in run.records.columns
    if repeats:
        require_repeat_column(table, repeat_column, run, str(source))
    chosen = dict(mapping)
    not_imported: dict[str, str] = {}
    for column, signal in preset.metrics:
        if column not in table.columns or column in chosen:
            continue
        taken = next((other for other, mapped in chosen.items() if mapped == signal), None)
        if taken is None:
            chosen[column] = signal
        else:
            not_imported[column] = f"{signal} comes from {taken}"
    skip = {ROW, id_column, *([repeat_column] if repeats else []), *preset.data_columns, *chosen, *not_imported}
    not_imported.update(
        {column: f"no signal in preset {preset.name}" for column in table.columns if column not in skip}
    )
    if id_column not in table.columns:
        table = _by_question(
            table, str(source), preset.question_column, id_column, run, repeat_column if repeats else None
        )
    scores = [column for column in chosen if column in table.columns and table.schema[column].is_float()]
    table = table.with_columns(pl.col(scores).fill_nan(None))  # a metric that failed: no score, never a low one
    return PresetImport(table, chosen, dict(sorted(not_imported.items())))


def require_repeat_column(table: pl.DataFrame, repeat_column: str, run: Run, source: str) -> None:
    """Refuse scores for a run with repeats (scores are per sample) from a table without ``repeat_column``."""
    if repeat_column not in table.columns:
        raise ScoresError(
            f"{source}: run '{run.name}' holds several samples of a case (a '{REPEAT}' column), so its scores are "
            f"per sample: the table needs a column '{repeat_column}' numbering the samples as the run does (name "
            "another column with `repeat_column`), one row per case id and repeat."
        )


def _by_question(
    table: pl.DataFrame, source: str, question: str, id_column: str, run: Run, repeat: str | None
) -> pl.DataFrame:
    """``table`` with ``id_column``: the one case of ``run`` each row's question is; refused with every row that
    matches none or several, or a case another row matched already (with ``repeat``, the table's repeat
    column: in the same repeat)."""
    if question not in table.columns:
        raise ContractError(
            source,
            "scores file",
            [Problem(f"a column '{id_column}', or the question column '{question}' to match the run's questions")],
        )
    cases = run.records.select("case_id", key=question_key("question")).unique(maintain_order=True)
    numbered = [repeat] if repeat else []
    matched = (
        table.select(ROW, question, *numbered, key=question_key(question))
        .join(cases, on="key", how="left")
        .group_by(ROW, maintain_order=True)
        .agg(pl.col(question).first(), pl.col("case_id").drop_nulls(), pl.col(numbered).first())
    )
    problems = [
        _unmatched(row, question, text, ids, run.name) for row, text, ids, *_ in matched.rows() if len(ids) != 1
    ]
    once = matched.filter(pl.col("case_id").list.len() == 1).with_columns(pl.col("case_id").list.first())
    other = "no other row of its repeat" if repeat else "no other row"
    shared = pl.struct("case_id", *numbered).is_duplicated()
    problems += [
        Problem.at(row, question, text, f"the question of a case {other} has (it is {case_id}'s)")
        for row, text, case_id, *_ in once.filter(shared).rows()
    ]
    if problems:
        raise ContractError(source, "scores file", problems)
    ids = once.select(ROW, pl.col("case_id").alias(id_column))
    return table.join(ids, on=ROW, how="left", maintain_order="left")


def _unmatched(row: int, question: str, text: Any, ids: list[str], run: str) -> Problem:
    if ids:
        several = f"it is the question of {', '.join(ids)}: add a case id column"
        return Problem.at(row, question, text, f"the question of one case of run '{run}' ({several})")
    return Problem.at(row, question, text, f"the question of a case of run '{run}'")
