"""Simulate a fallback rule on a frozen run and its scores, before deploying it.

The rule: when the judge's score of ``signal`` for an answer is below a threshold T, show a fallback
text instead of the answer. ``simulate_fallback`` reports which answers it would replace and, where the
truth is known, how many bad answers it catches and how many good ones it hides, per threshold.

A record is *replaced* when its status is ``ok``, its score is not null and the score is below T (a
score equal to T is kept). A record without a score (judging failed, or the scores lack the case) is
never replaced and is counted as ``unscored``: a real deployment must decide what to do when scoring
fails; the simulation shows how many such cases there are. A record whose status is not ``ok`` has no
answer to replace and is counted as ``not_answered``.

Truth ("is this answer bad?"). By default it is derived from the corpus labels with the offline judge
(``LexicalJudge``): an ``unanswerable`` case is bad when the chatbot did not abstain; an ``answerable``
or ``conflict`` case is bad when it abstained or when a required passage never reached the context sent
(``context_coverage < 1``), and unknown when it answered but the context coverage cannot be told. This is
label-derived evidence about retrieval and abstention, not a verdict on the answer's wording: a fluent
but wrong answer built on full context counts as good. With ``truth="COLUMN"`` a Boolean column of the
run's records (true: the answer is good, e.g. a human review) is the truth instead; null is unknown. With
``people`` (a reviews file or a labels table, ``io.labels``), people's ``people_label`` of each answer is the
truth (``answer_correct`` by default: yes is good, no is bad, blank unknown): a reviews file's labels of this
run's side (refused for a reviews file of other runs), a table's rows of every side (refused when it has two).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import polars as pl

from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.compute.metrics import context_signals
from rag_compare.core.contract import REPEAT, record_ok
from rag_compare.core.errors import ScoresError
from rag_compare.core.listing import counted, truncated
from rag_compare.core.result import Report, labelled
from rag_compare.io.labels import HumanLabels, load_labels
from rag_compare.io.outputs import check_output
from rag_compare.io.runfile import atomic_output
from rag_compare.io.runs import Run
from rag_compare.io.tables import TABLE_SUFFIXES
from rag_compare.io.verdicts import LABELS

__all__ = ["DEFAULT_FALLBACK_TEXT", "SWEEP_THRESHOLDS", "FallbackSimulation", "simulate_fallback"]

DEFAULT_FALLBACK_TEXT = "I can't answer that reliably. Please contact the team responsible for this topic."
SWEEP_THRESHOLDS: tuple[float, ...] = tuple(round(step * 0.05, 2) for step in range(21))
"""0.0, 0.05, ..., 1.0: the thresholds of a sweep."""

_CASE_COLUMNS = ("case_id", "question", "answerability", "category")


@dataclass(frozen=True)
class FallbackSimulation(Report):
    """What a fallback rule would have done to one run: counts per threshold, decisions per case.

    ``thresholds``: one row per threshold, in the order given. ``cases``: one row per run record, in run
    order, with the decision at the first threshold; ``original_answer`` is always kept, for audit.
    ``truth`` is the Boolean column used as truth, ``people`` where people's labels are (``source``, ``label``),
    both None for the label-derived default.
    """

    run_name: str
    run_fingerprint: str
    signal: str
    fallback_text: str
    evaluator: Mapping[str, Any] | None
    thresholds: pl.DataFrame = field(repr=False)
    cases: pl.DataFrame = field(repr=False)
    truth: str | None = None
    people: Mapping[str, Any] | None = None

    def __repr__(self) -> str:
        run = labelled(self.run_name, self.run_fingerprint)
        thresholds = counted(self.thresholds.height, "threshold")
        return f"<FallbackSimulation of {run}: the answer replaced when {self.signal} < T, at {thresholds}>"

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": {"name": self.run_name, "fingerprint": self.run_fingerprint},
            "signal": self.signal,
            "evaluator": None if self.evaluator is None else dict(self.evaluator),
            "truth": self._truth(),
            "fallback_text": self.fallback_text,
            "thresholds": self.thresholds.to_dicts(),
            "cases": self.cases.to_dicts(),
        }

    def _truth(self) -> dict[str, Any]:
        if self.people is not None:
            return {"source": "people", **self.people}
        return {"source": "labels"} if self.truth is None else {"source": "column", "column": self.truth}

    def write_cases(self, path: str | Path) -> None:
        """Write ``cases`` as CSV, Parquet or JSONL (by suffix) atomically; an existing file is refused."""
        path = check_output(path, "fallback table", parameter="path")
        kind = TABLE_SUFFIXES.get(path.suffix.lower())
        if kind is None:
            raise ScoresError(f"{path}: unknown file type '{path.suffix}'. Use one of: {', '.join(TABLE_SUFFIXES)}.")
        with atomic_output(path, what="fallback table") as stream:
            if kind == "csv":
                self.cases.write_csv(stream)
            elif kind == "parquet":
                self.cases.write_parquet(stream)
            else:
                self.cases.write_ndjson(stream)


def simulate_fallback(
    run: Run,
    scores: pl.DataFrame,
    signal: str,
    thresholds: Sequence[float],
    *,
    fallback_text: str = DEFAULT_FALLBACK_TEXT,
    truth: str | None = None,
    people: str | Path | HumanLabels | None = None,
    people_label: str = "answer_correct",
    evaluator: Mapping[str, Any] | None = None,
) -> FallbackSimulation:
    """Simulate "show ``fallback_text`` when ``signal`` < T" on ``run`` for each of ``thresholds``.

    ``scores`` (not modified) holds ``case_id``, ``judge_status`` and ``signal``, a numeric column; every
    case id must be one of the run's. The cases frame holds the decisions at the first threshold. See the
    module for the truth and the decision rules. Raises ``ScoresError`` on unusable input.
    """
    _check_signal(scores, signal)
    checked = _check_thresholds(thresholds)
    _check_ids(run, scores)
    if truth is not None and people is not None:
        raise ScoresError("give `truth` (a column of the run) or `people` (people's labels), not both.")
    labels = None if people is None else (people if isinstance(people, HumanLabels) else load_labels(people))
    if labels is not None:
        bad = _bad_by_people(run, labels, people_label)
    else:
        bad = _bad_by_labels(run.records) if truth is None else _truth_column(run.records, truth)
    cases = _cases(run.records, scores, signal, bad, checked[0], fallback_text)
    return FallbackSimulation(
        run_name=run.name,
        run_fingerprint=run.fingerprint,
        signal=signal,
        fallback_text=fallback_text,
        evaluator=None if evaluator is None else MappingProxyType(dict(evaluator)),
        thresholds=_counts(cases, checked),
        cases=cases,
        truth=truth,
        people=None if labels is None else {"labels": labels.source, "label": people_label},
    )


def _check_signal(scores: pl.DataFrame, signal: str) -> None:
    if "case_id" not in scores.columns:
        raise ScoresError("the scores have no 'case_id' column. Pass a scores frame made for this run.")
    numeric = [name for name, dtype in scores.schema.items() if dtype.is_numeric()]
    if signal not in numeric:
        found = "not a column of the scores" if signal not in scores.columns else f"a {scores.schema[signal]} column"
        available = ", ".join(numeric) or "none"
        raise ScoresError(f"signal '{signal}' is {found}; use a numeric column of the scores: {available}.")


def _check_thresholds(thresholds: Sequence[float]) -> list[float]:
    if isinstance(thresholds, str) or not thresholds:
        raise ScoresError("give at least one threshold between 0 and 1.")
    wrong = [value for value in thresholds if isinstance(value, bool) or not 0.0 <= value <= 1.0]
    if wrong:
        raise ScoresError(f"thresholds must be between 0 and 1; got {', '.join(map(repr, wrong))}.")
    return [float(value) for value in thresholds]


def _check_ids(run: Run, scores: pl.DataFrame) -> None:
    ids = scores.get_column("case_id").cast(pl.String)
    if ids.is_duplicated().any():
        twice = ids.filter(ids.is_duplicated()).unique(maintain_order=True)
        raise ScoresError(f"the scores hold some case ids more than once: {truncated(twice)}. Give one row per case.")
    known = run.records.select(pl.col("case_id").cast(pl.String))
    unknown = ids.to_frame().join(known, on="case_id", how="anti", maintain_order="left").to_series()
    if unknown.len():
        raise ScoresError(
            f"the scores hold {unknown.len()} case ids that run '{run.name}' lacks: {truncated(unknown)}. "
            "Pass the scores made for this run."
        )


def _bad_by_labels(records: pl.DataFrame) -> pl.Series:
    """The label-derived truth (see the module): true when the answer is bad, null when unknown."""
    verdicts = LexicalJudge().abstentions(records)
    signals = pl.concat([verdicts, context_signals(records).select("context_coverage")], how="horizontal")
    unanswerable = pl.lit(records.get_column("answerability")) == "unanswerable"
    coverage_short = pl.col("context_coverage") < 1
    return signals.select(
        pl.when(~pl.lit(records.select(record_ok()).to_series()))
        .then(pl.lit(None, pl.Boolean))
        .when(unanswerable)
        .then(~pl.col("abstention_correct"))
        .otherwise(pl.col("abstained") | coverage_short)
        .alias("bad")
    ).to_series()


def _truth_column(records: pl.DataFrame, column: str) -> pl.Series:
    """The negation of a Boolean column (true: good), null for records that are not ``ok``."""
    if records.schema.get(column) != pl.Boolean:
        boolean = [name for name, dtype in records.schema.items() if dtype == pl.Boolean]
        found = "not a column of the run" if column not in records.columns else f"a {records.schema[column]} column"
        raise ScoresError(
            f"truth column '{column}' is {found}; give a Boolean column of the run's records where true means "
            f"the answer is good (Boolean columns: {', '.join(boolean) or 'none'})."
        )
    return records.select(pl.when(record_ok()).then(~pl.col(column)).alias("bad")).to_series()


def _bad_by_people(run: Run, labels: HumanLabels, label: str) -> pl.Series:
    """People's ``label`` of each of ``run``'s answers as the truth: ``no`` bad, ``yes`` good, else unknown."""
    if label not in LABELS or len(LABELS[label]) != 2:
        raise ScoresError(
            f"people's truth is a yes/no label: one of {', '.join(n for n, v in LABELS.items() if len(v) == 2)}."
        )
    frame = labels.frame
    if labels.runs is not None:
        side = labels.side_of(run.fingerprint)
        if side is None:
            raise ScoresError(
                f"{labels.source}: reviews of other runs than '{run.name}' ({run.fingerprint[:12]}); give people's "
                "labels of this run."
            )
        frame = frame.filter(pl.col("side") == side)
    elif len(labels.sides) > 1:
        raise ScoresError(f"{labels.source}: labels of two sides' answers; give the labels of this run's only.")
    key = ["case_id", *([REPEAT] if frame.get_column(REPEAT).is_not_null().any() else [])]
    given = frame.filter(pl.col(label).is_not_null()).select(*key, (pl.col(label) == "no").alias("bad"))
    records = run.records.select(*key, ok=record_ok())
    joined = records.join(given, on=key, how="left", maintain_order="left")
    return joined.select(pl.when("ok").then(pl.col("bad"))).to_series().alias("bad")


def _cases(
    records: pl.DataFrame, scores: pl.DataFrame, signal: str, bad: pl.Series, threshold: float, fallback: str
) -> pl.DataFrame:
    """One row per record, in run order, with its score, truth and decision at ``threshold``."""
    judged = scores.select(
        pl.col("case_id").cast(pl.String),
        (pl.col("judge_status") if "judge_status" in scores.columns else pl.lit(None, pl.String)).alias("judge_status"),
        pl.col(signal).cast(pl.Float64).fill_nan(None).alias("score"),
    )
    answer = _column_or_null(records, "answer")
    replaced = (record_ok("record_status") & (pl.col("score") < threshold)).fill_null(False)
    return (
        records.select(
            *(_column_or_null(records, name) for name in _CASE_COLUMNS),
            record_status=pl.col("status"),
            original_answer=answer,
        )
        .join(judged, on="case_id", how="left", maintain_order="left")
        .with_columns(bad=bad, replaced=replaced)
        .select(
            *_CASE_COLUMNS,
            "record_status",
            "judge_status",
            "score",
            "bad",
            "replaced",
            "original_answer",
            shown_answer=pl.when("replaced").then(pl.lit(fallback)).otherwise("original_answer"),
        )
    )


def _column_or_null(records: pl.DataFrame, name: str) -> pl.Expr:
    return pl.col(name) if name in records.columns else pl.lit(None, pl.String).alias(name)


def _counts(cases: pl.DataFrame, thresholds: Sequence[float]) -> pl.DataFrame:
    """One row of counts and rates per threshold, in the order given (each a pass over the cases)."""
    frame = cases.lazy().select(ok=record_ok("record_status"), score="score", bad="bad")
    counts = pl.concat([frame.select(_count_exprs(threshold)) for threshold in thresholds]).collect()
    return counts.with_columns(
        catch_rate=_rate("bad_caught", "bad_shown"), hide_rate=_rate("good_hidden", "good_shown")
    )


def _count_exprs(threshold: float) -> list[pl.Expr]:
    ok, score = pl.col("ok").fill_null(False), pl.col("score")
    bad, good = pl.col("bad").fill_null(False), (~pl.col("bad")).fill_null(False)
    replaced = ok & (score < threshold).fill_null(False)
    shown = ok & ~replaced
    counts = {
        "replaced": replaced,
        "shown": shown,
        "unscored": ok & score.is_null(),
        "bad_caught": replaced & bad,
        "good_hidden": replaced & good,
        "bad_shown": shown & bad,
        "good_shown": shown & good,
        "unknown": ok & pl.col("bad").is_null(),
        "not_answered": ~ok,
    }
    return [
        pl.lit(threshold, pl.Float64).alias("threshold"),
        *(flag.sum().cast(pl.Int64).alias(name) for name, flag in counts.items()),
    ]


def _rate(hit: str, miss: str) -> pl.Expr:
    """``hit / (hit + miss)``, null when both are 0."""
    total = pl.col(hit) + pl.col(miss)
    return pl.when(total > 0).then(pl.col(hit) / total)
