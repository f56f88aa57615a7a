"""People's labels paired with one judge's calls: the rows about the answers it judged, and per label the
answers both called, those that cannot be compared (and why), and the disagreements.

The labels are joined once with the breakdown attributes and once with each judge's records (its columns
under ``JUDGE_PREFIX``); every label is then read off that one frame, in its row order, so the calls of two
judges of the same answers line up row by row (``Paired.calls``) for the test between them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import polars as pl

from rag_compare.compute.judge_records import JudgeRecords
from rag_compare.compute.label_agreement import BREAKDOWNS, LabelAgreement, measure_label
from rag_compare.core.contract import REPEAT
from rag_compare.core.errors import AgreementError
from rag_compare.core.listing import truncated
from rag_compare.core.signals import JUDGE_FAILED
from rag_compare.io.corpus import Corpus, load_corpus
from rag_compare.io.labels import HumanLabels
from rag_compare.io.verdicts import PREFERENCES, VERDICT_SIDES

__all__ = [
    "JUDGE_PREFIX",
    "Paired",
    "RecordRows",
    "Settings",
    "Unmeasured",
    "judged_answers",
    "labels_of",
    "pair_label",
    "with_attributes",
]

JUDGE_PREFIX = "judge."
"""The judge's columns in the frame of judged answers, apart from people's labels of the same names."""
VERDICT = "verdict"


@dataclass(frozen=True)
class Settings:
    """How labels are measured: each label's signals (the first a judge holds), the score each numeric
    signal says yes at, and the threshold to find (``('precision', 0.9)``), if any."""

    signals: Mapping[str, tuple[str, ...]]
    thresholds: Mapping[str, float]
    target: tuple[str, float] | None


@dataclass(frozen=True)
class Unmeasured:
    """A label a judge cannot be measured on, and why."""

    judge: str
    label: str
    reason: str


@dataclass(frozen=True)
class Paired:
    """A judge against people on a label (``measured``), and ``calls``: for each row of the judged answers,
    whether the judge called it as people did (null where they cannot be compared)."""

    measured: LabelAgreement
    calls: pl.Series = field(repr=False)


def with_attributes(
    labels: HumanLabels, records: Sequence[JudgeRecords], corpus: str | Path | Corpus | None
) -> HumanLabels:
    """``labels`` with each row's breakdown attributes (``BREAKDOWNS``): the corpus', else the labels table's own,
    else those of the runs judged, each other source joined once."""
    own = [name for name in BREAKDOWNS if name in labels.frame.columns]
    found = labels.frame.rename({name: f"{name}.1" for name in own})
    sources: dict[int, pl.DataFrame] = {}
    if corpus is not None:
        frame = (corpus if isinstance(corpus, Corpus) else load_corpus(corpus)).frame
        sources[0] = frame.select("case_id", *(name for name in BREAKDOWNS if name in frame.columns))
    attributed = [judge.attributes for judge in records if judge.attributes is not None]
    for index, held in enumerate(attributed, start=2):
        sources[index] = held.drop(REPEAT).unique("case_id", keep="first") if REPEAT in held.columns else held
    for index, source in sources.items():
        named = source.rename({name: f"{name}.{index}" for name in source.columns if name != "case_id"})
        found = found.join(named, on="case_id", how="left", maintain_order="left")
    numbered = [column for column in found.columns if column.partition(".")[0] in BREAKDOWNS and "." in column]
    return replace(labels, frame=found.with_columns(_first_given(numbered, name) for name in BREAKDOWNS).drop(numbered))


def _first_given(columns: Sequence[str], name: str) -> pl.Expr:
    """The attribute ``name`` from the first source that gives it (the sources' columns ``name.0``, ``name.1``...)."""
    given = sorted((column for column in columns if column.startswith(f"{name}.")), key=lambda c: int(c.split(".")[1]))
    return pl.coalesce(pl.lit(None, pl.String), *(pl.col(column).cast(pl.String) for column in given)).alias(name)


def judged_answers(labels: HumanLabels, judge: JudgeRecords, side: str | None, rows: RecordRows) -> pl.DataFrame:
    """People's rows about the answers ``judge`` judged (see ``agreement``), each with the judge's record
    (columns under ``JUDGE_PREFIX``, null where it has none); refused when they share no case. ``rows`` keeps
    which record each row is, reused for a judge of the same runs whose records are in the same order (a run
    and its scores files)."""
    frame = labels.frame if labels.runs is None else _reviewed_side(labels, judge)
    if side is not None:
        if side not in VERDICT_SIDES:
            raise AgreementError(f"`side` is baseline or candidate, not {side!r}.")
        frame = frame.filter(pl.col("side").is_null() | (pl.col("side") == side))
    elif labels.runs is None and len(labels.sides) > 1 and judge.kind != "pairs":
        raise AgreementError(
            f"{labels.source}: labels of both sides' answers (baseline and candidate), and a labels table does not "
            "say which runs those are: give `side`, or measure against a reviews file."
        )
    _check_repeats(frame, judge)
    key = _key(judge)
    records = judge.frame.drop(key)
    picked = records.select(pl.all().gather(rows.of(frame, judge, side)).name.prefix(JUDGE_PREFIX))
    judged = frame.hstack(picked)
    if judged.get_column(JUDGE_PREFIX + "judge_status").is_null().all():
        ids = frame.get_column("case_id").unique(maintain_order=True)
        raise AgreementError(
            f"none of the {ids.len():,} labelled cases of {labels.source} is one {judge.name} judged (labelled: "
            f"{truncated(ids)}): are these labels of other runs?"
        )
    return judged


class RecordRows:
    """For the labels' rows, the row of each judge's records they are about, remembered per runs and side."""

    def __init__(self) -> None:
        self._held: dict[tuple[str, ...], tuple[pl.DataFrame, pl.Series]] = {}

    def of(self, frame: pl.DataFrame, judge: JudgeRecords, side: str | None) -> pl.Series:
        """The row of ``judge``'s records each row of ``frame`` is about (null where none is)."""
        key = _key(judge)
        keys = judge.frame.select(key)
        runs = (*(str(run["fingerprint"]) for run in judge.runs), side or "", *key)
        held = self._held.get(runs)
        if held is not None and held[0].equals(keys):
            return held[1]
        indexed = keys.with_row_index("record_row")
        rows = frame.select(key).join(indexed, on=key, how="left", maintain_order="left").get_column("record_row")
        self._held[runs] = (keys, rows)
        return rows


def _key(judge: JudgeRecords) -> list[str]:
    return ["case_id", *([REPEAT] if REPEAT in judge.frame.columns else [])]


def _reviewed_side(labels: HumanLabels, judge: JudgeRecords) -> pl.DataFrame:
    """A reviews file's rows about the answers of ``judge``'s run (a pairs file: of both), refused for a
    judge of other runs."""
    runs = labels.runs or {}
    reviewed = tuple(str(runs[name]["fingerprint"]) for name in VERDICT_SIDES)
    judged = tuple(str(run["fingerprint"]) for run in judge.runs)
    if judged == reviewed:
        return labels.frame
    side = labels.side_of(judged[0])
    if judge.kind != "pairs" and side is not None:
        return labels.frame.filter(pl.col("side") == side)
    shown = " → ".join(f"'{runs[name]['name']}' ({reviewed[index][:12]})" for index, name in enumerate(VERDICT_SIDES))
    of = " and ".join(f"'{run['name']}' ({str(run['fingerprint'])[:12]})" for run in judge.runs)
    raise AgreementError(
        f"{labels.source}: reviews of the runs {shown}, but {judge.name} judged {of}. Measure judges of the "
        "reviewed runs, or give labels of these."
    )


def _check_repeats(frame: pl.DataFrame, judge: JudgeRecords) -> None:
    labelled = frame.get_column(REPEAT).is_not_null().any()
    if REPEAT in judge.frame.columns and not labelled:
        raise AgreementError(
            f"{judge.name} judged a run with repeats (several samples a case): label each sample, with a "
            f"`{REPEAT}` column beside case_id."
        )
    if labelled and REPEAT not in judge.frame.columns:
        raise AgreementError(
            f"the labels give a `{REPEAT}`, but {judge.name} judged one sample a case: leave the column out."
        )


def labels_of(judge: JudgeRecords, labels: HumanLabels) -> tuple[str, ...]:
    """The labels ``judge`` is measured on: a pairwise judge on people's preference (given or not), any other on
    the labels of an answer people gave."""
    if judge.kind == "pairs":
        return ("preferred",)
    return tuple(label for label in labels.given if label != "preferred")


def _signal_of(judge: JudgeRecords, label: str, signals: Mapping[str, tuple[str, ...]]) -> str | Unmeasured:
    """The signal ``judge`` is measured by on ``label``, or why it cannot be."""
    if judge.kind == "pairs":
        return VERDICT
    found = next((signal for signal in signals[label] if signal in judge.signals), None)
    if found is None:
        return Unmeasured(judge.name, label, f"it has no signal {' or '.join(signals[label])}")
    return found


def pair_label(judge: JudgeRecords, label: str, judged: pl.DataFrame, settings: Settings) -> Paired | Unmeasured:
    """``judge`` against people on ``label``, from its ``judged_answers``."""
    signal = _signal_of(judge, label, settings.signals)
    if isinstance(signal, Unmeasured):
        return signal
    given = _given(judged, label, judge)
    if given.is_empty():
        return Unmeasured(judge.name, label, "people gave no preference (a `preferred` label)")
    dtype = judge.frame.schema[signal]
    threshold = settings.thresholds[label] if dtype.is_numeric() else None
    value = pl.col(JUDGE_PREFIX + signal)
    kept = [*_key(judge), "side", "comment", *(name for name in BREAKDOWNS if name in given.columns)]
    comparable = pl.col("reason").is_null() & pl.col("human_class").is_not_null()
    framed = (
        given.lazy()
        .select(
            *kept,
            JUDGE_PREFIX + "judge_status",
            (value.fill_nan(None) if dtype.is_float() else value).alias("value"),
            human_class=pl.col(label),
        )
        .with_columns(judge_class=_call(label, dtype, threshold))
        .with_columns(reason=_reason(dtype))
        .with_columns(comparable=comparable)
        .collect()
    )
    reasons = framed.filter(pl.col("human_class").is_not_null()).get_column("reason").drop_nulls().value_counts()
    paired = framed.filter("comparable")
    if threshold is not None:
        paired = paired.with_columns(score=pl.col("value").cast(pl.Float64))
    measured = measure_label(
        judge.name,
        label,
        signal,
        paired,
        threshold=threshold,
        not_comparable=dict(sorted(zip(reasons["reason"], reasons["count"], strict=True), key=lambda item: -item[1])),
        disagreements=_disagreements(paired, _key(judge)),
        target=settings.target if threshold is not None else None,
    )
    calls = framed.select(pl.when("comparable").then(pl.col("human_class") == pl.col("judge_class"))).to_series()
    return Paired(measured, calls)


def _given(judged: pl.DataFrame, label: str, judge: JudgeRecords) -> pl.DataFrame:
    """The rows to read ``label`` off: all of them (a label not given is neither compared nor counted), or for a
    pairwise judge one per case that gives it, refused when a case's rows differ."""
    if judge.kind != "pairs":
        return judged
    given = judged.filter(pl.col(label).is_not_null())
    differing = given.group_by("case_id").agg(pl.col(label).n_unique()).filter(pl.col(label) > 1)
    if differing.height:
        raise AgreementError(
            f"the labels prefer different sides for one case in different rows ({truncated(differing['case_id'])}); "
            "give each case one `preferred`."
        )
    return given.unique("case_id", keep="first", maintain_order=True)


def _call(label: str, dtype: pl.DataType, threshold: float | None) -> pl.Expr:
    """The judge's class from its value: a verdict, true or false, or a score against ``threshold``."""
    value = pl.col("value")
    if label == "preferred":
        return pl.when(value.is_in(PREFERENCES)).then(value)
    if threshold is None:
        return (
            pl.when(value.is_null())
            .then(pl.lit(None, pl.String))
            .when(value)
            .then(pl.lit("yes"))
            .otherwise(pl.lit("no"))
        )
    called = pl.when(value.is_null()).then(pl.lit(None, pl.String)).when(value >= threshold).then(pl.lit("yes"))
    if label == "grounded":
        return called.when(value <= 0).then(pl.lit("no")).otherwise(pl.lit("partly"))
    return called.otherwise(pl.lit("no"))


def _reason(dtype: pl.DataType) -> pl.Expr:
    """Why a given label has no call of the judge to compare with (null: it has one)."""
    status = pl.col(JUDGE_PREFIX + "judge_status")
    reason = (
        pl.when(status.is_null())
        .then(pl.lit("no record"))
        .when(status == "not_judged")
        .then(pl.lit("not answered"))
        .when(status == JUDGE_FAILED)
        .then(pl.lit("judge failed"))
    )
    if dtype == pl.String:
        reason = reason.when(pl.col("value") == "inconsistent").then(pl.lit("inconsistent"))
    return reason.when(pl.col("judge_class").is_null()).then(pl.lit("does not apply"))


def _disagreements(paired: pl.DataFrame, key: Sequence[str]) -> pl.DataFrame:
    """The answers people and the judge called differently: both calls, the judge's value and the comment
    (``LabelAgreement.listed`` adds each case's anchor on the review page)."""
    differ = paired.filter(pl.col("human_class") != pl.col("judge_class"))
    return differ.select(
        *key,
        "side",
        pl.col("human_class").alias("human"),
        pl.col("judge_class").alias("judge"),
        pl.col("value").alias("judge_value"),
        "comment",
    )
