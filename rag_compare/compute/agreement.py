"""Can the judges be trusted? Every judge measured against people's labels: ``agreement(human, judges)``.

People's labels (``io.labels``: a reviews file or a labels table) are paired with what each judge said of
the same answers (``judge_records``: a frozen run's offline judge, a scores file, a pairs file). A label maps
to a signal by ``DEFAULT_SIGNALS`` (the first the judge holds), or as ``mapping`` says:

=====================  ===========================================  ==================================
label                  signal                                       the judge's call
=====================  ===========================================  ==================================
``abstention_correct``  ``abstention_correct``                       its true or false
``grounded``           ``grounded``                                 yes at the threshold (1) or above,
                                                                    no at 0, partly between
``answer_correct``     ``correctness``, ``response``, ``helpfulness``  yes at the threshold (0.5) or above
``retrieval_ok``       ``full_coverage``                            its true or false
``preferred``          a pairs file's debiased ``verdict``           baseline, tie or candidate
=====================  ===========================================  ==================================

A label given where the judge has no call is *not comparable*, counted apart by reason and never as a
disagreement: the judge has no record of the case (``no record``), the record failed (``not answered``),
judging failed (``judge failed``), the signal does not apply to the case (``does not apply``, e.g.
``abstention_correct`` on an answerable case), or a pairwise judge's two orders disagreed
(``inconsistent``). A reviews file's labels are paired with the judges of its own runs only (by
fingerprint), each with the labels of its side; a labels table's with any judge, ``side`` choosing its rows
when it has that column. Judges of the same answers are compared with each other on each label by the exact
McNemar test over the answers both called.
"""

from __future__ import annotations

import io
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import polars as pl

from rag_compare.compute.judge_records import JudgeRecords, JudgeSource, judge_records
from rag_compare.compute.label_agreement import BREAKDOWNS, LabelAgreement, measure_label
from rag_compare.compute.stats import mcnemar_counts_p
from rag_compare.core.contract import REPEAT
from rag_compare.core.errors import AgreementError
from rag_compare.core.input_paths import check_input
from rag_compare.core.listing import truncated
from rag_compare.core.nesting import load_json
from rag_compare.core.result import Report, to_json
from rag_compare.core.signals import SIGNALS_BY_NAME
from rag_compare.io.corpus import Corpus, load_corpus
from rag_compare.io.labels import HUMAN_LABELS, HumanLabels, load_labels
from rag_compare.io.reviews import Reviews
from rag_compare.io.verdicts import LABELS, PREFERENCES, VERDICT_SIDES

__all__ = [
    "DEFAULT_SIGNALS",
    "DEFAULT_THRESHOLDS",
    "MIN_N",
    "Agreement",
    "JudgeTest",
    "Unmeasured",
    "agreement",
    "anchors",
    "found_threshold",
]

DEFAULT_SIGNALS: Mapping[str, tuple[str, ...]] = {
    "answer_correct": ("correctness", "response", "helpfulness"),
    "grounded": ("grounded",),
    "abstention_correct": ("abstention_correct",),
    "retrieval_ok": ("full_coverage",),
}
"""The signals each label maps to, the first a judge holds; ``preferred`` maps to a pairs file's verdict."""
DEFAULT_THRESHOLDS: Mapping[str, float] = {"grounded": 1.0, "answer_correct": 0.5}
"""The score at or above which a numeric signal's call is ``yes``: ``grounded`` yes means every claim is
supported, as people's yes does."""
MIN_N = 20
"""Fewer comparable answers than this leave a gate's agreement condition not evaluated: too few to decide."""
VERDICT = "verdict"
_URI_SAFE = "-_.!~*'()"
"""What JavaScript's encodeURIComponent leaves as it is: the review page reads its anchors so."""
_ESCAPED_ASCII = ' "#$&+,/:;<=>?@[\\]^`{|}'
"""The printable ASCII characters but ``%`` that encodeURIComponent escapes."""


@dataclass(frozen=True)
class Unmeasured:
    """A label a judge cannot be measured on, and why."""

    judge: str
    label: str
    reason: str


@dataclass(frozen=True)
class JudgeTest:
    """Two judges of the same answers on one label: over the ``n`` answers both called, how often each was
    right where the other was wrong, and the exact McNemar p of those two counts."""

    label: str
    first: str
    second: str
    n: int
    first_only_right: int
    second_only_right: int
    p: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "first": self.first,
            "second": self.second,
            "n": self.n,
            "first_only_right": self.first_only_right,
            "second_only_right": self.second_only_right,
            "p": self.p,
            "test": "exact McNemar",
        }


@dataclass(frozen=True)
class Agreement(Report):
    """Each judge against people's labels: a ``LabelAgreement`` per judge and label (``rows``), the labels a
    judge cannot be measured on (``unmeasured``), and the judges compared with each other (``tests``)."""

    human: Mapping[str, Any]
    judges: tuple[Mapping[str, Any], ...]
    rows: tuple[LabelAgreement, ...]
    unmeasured: tuple[Unmeasured, ...]
    tests: tuple[JudgeTest, ...]
    min_n: int = MIN_N

    def __repr__(self) -> str:
        return (
            f"<Agreement of {len(self.judges)} judge{'s' * (len(self.judges) != 1)} with people "
            f"({self.human['source']}): {len(self.rows)} label{'s' * (len(self.rows) != 1)} measured>"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain data; ``disagreements`` lists every one, of each judge and label (``to_json`` writes the same
        quicker)."""
        listed = [item for row in self.rows for item in _disagreement_objects(row).to_dicts()]
        return self._summary() | {"disagreements": listed}

    def to_json(self) -> str:
        stream = io.StringIO()
        self.write_json(stream)
        return stream.getvalue()

    def write_json(self, stream: TextIO) -> None:
        """Write the JSON of ``to_dict`` to ``stream``, the disagreements one a line, serialised by Polars."""
        head = to_json(self._summary() | {"disagreements": []})
        encoded = [
            objects.select(pl.struct(objects.columns).struct.json_encode().str.join(",\n    ")).item()
            for row in self.rows
            if row.disagreements.height
            for objects in (_disagreement_objects(row),)
        ]
        if not encoded:
            stream.write(head)
            return
        stream.write(head.removesuffix('  "disagreements": []\n}\n') + '  "disagreements": [\n    ')
        stream.write(",\n    ".join(encoded))
        stream.write("\n  ]\n}\n")

    def _summary(self) -> dict[str, Any]:
        return {
            "human": dict(self.human),
            "judges": [dict(judge) for judge in self.judges],
            "min_n": self.min_n,
            "agreement": [row.to_dict() for row in self.rows],
            "unmeasured": [
                {"judge": item.judge, "label": item.label, "reason": item.reason} for item in self.unmeasured
            ],
            "judge_tests": [test.to_dict() for test in self.tests],
        }


def _disagreement_objects(row: LabelAgreement) -> pl.DataFrame:
    """A row's disagreements as the JSON lists them: the judge and the label first; the judge's call as
    ``judge_call``."""
    return row.disagreements.rename({"judge": "judge_call"}).select(
        pl.lit(row.judge).alias("judge"), pl.lit(row.label).alias("label"), pl.all()
    )


def agreement(
    human: str | Path | Reviews | HumanLabels | pl.DataFrame,
    judges: Sequence[JudgeSource],
    *,
    corpus: str | Path | Corpus | None = None,
    mapping: Mapping[str, str] | None = None,
    thresholds: Mapping[str, float] | None = None,
    side: str | None = None,
    target: tuple[str, float] | None = None,
) -> Agreement:
    """Measure each of ``judges`` (frozen runs, scores or pairs, or their paths) against ``human`` (a reviews
    file or a labels table, see ``io.labels``), as the module says.

    ``corpus`` gives the cases' category, answerability and language for the breakdowns (else the runs judged
    do, else the labels table). ``mapping`` maps a label to another signal (``{'answer_correct':
    'helpfulness'}``), ``thresholds`` a label to the score its numeric signal says yes at. ``side``
    (``baseline`` or ``candidate``) picks a labels table's rows when it has a ``side`` column holding both.
    ``target``: the threshold to find for each numeric signal, ``('precision', 0.9)`` or ``('recall', 0.8)``.
    Raises ``AgreementError`` when nothing can be measured, or the labels are of other runs."""
    if isinstance(judges, str | Path) or not judges:
        raise AgreementError("give at least one judge: a frozen run, a scores file or a pairs file, in a list.")
    labels = human if isinstance(human, HumanLabels) else load_labels(human)
    signals, cutoffs = _checked_mapping(mapping), _checked_thresholds(thresholds)
    _check_target(target)
    records = _named([judge_records(judge) for judge in judges])
    attributes = _attributes(labels, records, corpus)
    rows: list[LabelAgreement] = []
    unmeasured: list[Unmeasured] = []
    calls: Calls = {}
    for judge in records:
        answers = _answers_for(labels, judge, side)
        for label in _labels_of(judge, labels):
            measured = _measure(judge, label, answers, attributes, (signals, cutoffs, target))
            if isinstance(measured, Unmeasured):
                unmeasured.append(measured)
            else:
                rows.append(measured[0])
                calls[judge.name, label] = measured[1]
    if not rows:
        reasons = "; ".join(f"{item.judge}: {item.label}: {item.reason}" for item in unmeasured)
        raise AgreementError(f"no label can be compared with any judge: {reasons}.")
    return Agreement(
        human=labels.describe(),
        judges=tuple(judge.describe() for judge in records),
        rows=tuple(rows),
        unmeasured=tuple(unmeasured),
        tests=tuple(_judge_tests(calls, records)),
    )


Calls = dict[tuple[str, str], pl.DataFrame]
"""Per judge and label, each answer both called and whether the judge was right (``right``)."""


def _checked_mapping(mapping: Mapping[str, str] | None) -> dict[str, tuple[str, ...]]:
    """``DEFAULT_SIGNALS`` with each label ``mapping`` names mapped to its signal alone."""
    chosen = dict(DEFAULT_SIGNALS)
    for label, signal in (mapping or {}).items():
        if label not in LABELS:
            raise AgreementError(
                f"`mapping`: unknown label {label!r}; map any of {', '.join(LABELS)} (a pairs file's verdict is "
                "compared with `preferred`)."
            )
        if signal not in SIGNALS_BY_NAME:
            raise AgreementError(
                f"`mapping`: {label} maps to unknown signal {signal!r}; use any of {', '.join(SIGNALS_BY_NAME)}."
            )
        chosen[label] = (signal,)
    return chosen


def _checked_thresholds(thresholds: Mapping[str, float] | None) -> dict[str, float]:
    chosen = {label: DEFAULT_THRESHOLDS.get(label, 0.5) for label in LABELS}
    for label, value in (thresholds or {}).items():
        if label not in LABELS:
            raise AgreementError(f"`thresholds`: unknown label {label!r}; give any of {', '.join(LABELS)}.")
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise AgreementError(f"`thresholds`: {label}'s threshold must be a number from 0 to 1, not {value!r}.")
        chosen[label] = float(value)
    return chosen


def _check_target(target: tuple[str, float] | None) -> None:
    if target is None:
        return
    measure, at_least = target
    if measure not in ("precision", "recall") or isinstance(at_least, bool) or not 0 < at_least <= 1:
        raise AgreementError(
            f"`target` is ('precision', P) or ('recall', R) with P or R above 0 and at most 1, not {target!r}."
        )


def _named(records: list[JudgeRecords]) -> list[JudgeRecords]:
    """``records``, refused when one judge is given twice (the same name: the same judge of the same runs)."""
    names = [judge.name for judge in records]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise AgreementError(f"the judge {twice[0]} is given twice; give each judge once.")
    return records


def _attributes(
    labels: HumanLabels, records: Sequence[JudgeRecords], corpus: str | Path | Corpus | None
) -> pl.DataFrame:
    """Each labelled case's breakdown attributes: the corpus', else the labels table's, else the runs'."""
    sources = []
    if corpus is not None:
        frame = (corpus if isinstance(corpus, Corpus) else load_corpus(corpus)).frame
        sources.append(frame.select("case_id", *(name for name in BREAKDOWNS if name in frame.columns)))
    sources.append(labels.frame.select("case_id", *(name for name in BREAKDOWNS if name in labels.frame.columns)))
    sources += [judge.attributes for judge in records if judge.attributes is not None]
    found = labels.frame.select("case_id").unique()
    for index, source in enumerate(sources):
        named = source.unique("case_id", keep="first").rename(
            {name: f"{name}.{index}" for name in source.columns if name != "case_id"}
        )
        found = found.join(named, on="case_id", how="left")
    return found.select(
        "case_id",
        *(
            pl.coalesce(
                pl.lit(None, pl.String), *(pl.col(column) for column in found.columns if column.startswith(f"{name}."))
            )
            .cast(pl.String)
            .alias(name)
            for name in BREAKDOWNS
        ),
    )


def _answers_for(labels: HumanLabels, judge: JudgeRecords, side: str | None) -> pl.DataFrame:
    """People's rows about the answers ``judge`` judged (see the module), checked to share its cases."""
    frame = labels.frame if labels.runs is None else _reviewed_side(labels, judge)
    held = frame.get_column("side").drop_nulls().unique().sort().to_list()
    if side is not None:
        if side not in VERDICT_SIDES:
            raise AgreementError(f"`side` is baseline or candidate, not {side!r}.")
        frame = frame.filter(pl.col("side").is_null() | (pl.col("side") == side))
    elif labels.runs is None and len(held) > 1 and judge.kind != "pairs":
        raise AgreementError(
            f"{labels.source}: labels of both sides' answers (baseline and candidate), and a labels table does not "
            "say which runs those are: give `side`, or measure against a reviews file."
        )
    _check_repeats(frame, judge)
    shared = frame.select("case_id").join(judge.frame.select("case_id"), on="case_id", how="semi")
    if shared.is_empty():
        ids = frame.get_column("case_id").unique(maintain_order=True)
        raise AgreementError(
            f"none of the {ids.len():,} labelled cases of {labels.source} is one {judge.name} judged (labelled: "
            f"{truncated(ids)}): are these labels of other runs?"
        )
    return frame


def _reviewed_side(labels: HumanLabels, judge: JudgeRecords) -> pl.DataFrame:
    """A reviews file's rows about the answers of ``judge``'s run (a pairs file: of both), refused for a
    judge of other runs."""
    runs = labels.runs or {}
    reviewed = tuple(str(runs[name]["fingerprint"]) for name in VERDICT_SIDES)
    judged = tuple(str(run["fingerprint"]) for run in judge.runs)
    sides = [name for name, fingerprint in zip(VERDICT_SIDES, reviewed, strict=True) if fingerprint in judged]
    if judged == reviewed:
        return labels.frame
    if judge.kind != "pairs" and sides:
        return labels.frame.filter(pl.col("side") == sides[0])
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


def _labels_of(judge: JudgeRecords, labels: HumanLabels) -> tuple[str, ...]:
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


def _measure(
    judge: JudgeRecords,
    label: str,
    answers: pl.DataFrame,
    attributes: pl.DataFrame,
    settings: tuple[Mapping[str, tuple[str, ...]], Mapping[str, float], tuple[str, float] | None],
) -> tuple[LabelAgreement, pl.DataFrame] | Unmeasured:
    """``judge`` against people on ``label``, with its calls (for the tests between judges)."""
    signals, cutoffs, target = settings
    signal = _signal_of(judge, label, signals)
    if isinstance(signal, Unmeasured):
        return signal
    if answers.get_column(label).is_null().all():
        return Unmeasured(judge.name, label, "people gave no preference (a `preferred` label)")
    key = ["case_id", *([REPEAT] if REPEAT in judge.frame.columns else [])]
    given = _given(answers, label, judge)
    dtype = judge.frame.schema[signal]
    threshold = cutoffs[label] if dtype.is_numeric() else None
    value = pl.col("value").fill_nan(None) if dtype.is_float() else pl.col("value")
    joined = given.join(
        judge.frame.select(*key, "judge_status", pl.col(signal).alias("value")), on=key, how="left"
    ).with_columns(value.alias("value"))
    framed = joined.with_columns(human_class=pl.col(label), judge_class=_call(label, dtype, threshold)).with_columns(
        reason=_reason(dtype)
    )
    reasons = framed.filter(pl.col("reason").is_not_null()).get_column("reason").value_counts(sort=True)
    paired = framed.filter(pl.col("reason").is_null()).join(attributes, on="case_id", how="left")
    if threshold is not None:
        paired = paired.with_columns(score=pl.col("value").cast(pl.Float64))
    measured = measure_label(
        judge.name,
        label,
        signal,
        paired,
        threshold=threshold,
        not_comparable=dict(zip(reasons["reason"].to_list(), reasons["count"].to_list(), strict=True)),
        disagreements=_disagreements(paired, label, key),
        target=target if threshold is not None else None,
    )
    calls = paired.select(*key, right=pl.col("human_class") == pl.col("judge_class"))
    return measured, calls


def _given(answers: pl.DataFrame, label: str, judge: JudgeRecords) -> pl.DataFrame:
    """The rows that give ``label``; for a pairwise judge one per case, refused when a case's rows differ."""
    given = answers.filter(pl.col(label).is_not_null())
    if judge.kind != "pairs":
        return given
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
    status = pl.col("judge_status")
    reason = (
        pl.when(status.is_null())
        .then(pl.lit("no record"))
        .when(status == "not_judged")
        .then(pl.lit("not answered"))
        .when(status == "judge_failed")
        .then(pl.lit("judge failed"))
    )
    if dtype == pl.String:
        reason = reason.when(pl.col("value") == "inconsistent").then(pl.lit("inconsistent"))
    return reason.when(pl.col("judge_class").is_null()).then(pl.lit("does not apply"))


def _disagreements(paired: pl.DataFrame, label: str, key: Sequence[str]) -> pl.DataFrame:
    """The answers people and the judge called differently: both calls, the judge's value, the comment, and
    the case's anchor on the review page."""
    differ = paired.filter(pl.col("human_class") != pl.col("judge_class"))
    return differ.select(
        *key,
        "side",
        pl.col(label).alias("human"),
        pl.col("judge_class").alias("judge"),
        pl.col("value").alias("judge_value"),
        "comment",
        anchors(differ.get_column("case_id")),
    )


def anchors(case_ids: pl.Series) -> pl.Series:
    """Each case's anchor on the review page, ``#case=`` and its id as JavaScript's ``encodeURIComponent``
    writes it: the ASCII characters it escapes replaced column-wide, an id with other characters by Python."""
    encoded = pl.col("case_id").str.replace_all("%", "%25", literal=True)
    for character in _ESCAPED_ASCII:
        encoded = encoded.str.replace_all(character, f"%{ord(character):02X}", literal=True)
    ascii_only = pl.col("case_id").str.contains(r"^[\x20-\x7e]*$")
    frame = case_ids.to_frame("case_id").select(pl.when(ascii_only).then(encoded).alias("encoded"), "case_id")
    others = frame.filter(pl.col("encoded").is_null()).get_column("case_id")
    quoted = dict(zip(others, (urllib.parse.quote(case_id, safe=_URI_SAFE) for case_id in others), strict=True))
    filled = frame.select(pl.coalesce("encoded", pl.col("case_id").replace_strict(quoted, default=None)))
    return ("#case=" + filled.to_series()).alias("anchor")


def _judge_tests(calls: Calls, records: Sequence[JudgeRecords]) -> list[JudgeTest]:
    """Each two judges of the same answers, on each label both were measured on: exact McNemar."""
    runs = {judge.name: tuple(str(run["fingerprint"]) for run in judge.runs) for judge in records}
    tests = []
    for label in HUMAN_LABELS:
        measured = [judge.name for judge in records if (judge.name, label) in calls]
        for index, first in enumerate(measured):
            for second in measured[index + 1 :]:
                if runs[first] == runs[second]:
                    tests.append(_mcnemar(label, first, second, calls[first, label], calls[second, label]))
    return tests


def _mcnemar(label: str, first: str, second: str, ones: pl.DataFrame, others: pl.DataFrame) -> JudgeTest:
    key = [name for name in ones.columns if name != "right" and name in others.columns]
    both = ones.join(others, on=key, how="inner", suffix="_other")
    first_only = int((both["right"] & ~both["right_other"]).sum())
    second_only = int((~both["right"] & both["right_other"]).sum())
    p = mcnemar_counts_p(first_only, second_only) if both.height else None
    return JudgeTest(label, first, second, both.height, first_only, second_only, p)


def found_threshold(path: str | Path, signal: str, judge_fingerprint: str) -> float:
    """The threshold of ``signal`` that an agreement's JSON (``rag-compare agreement --target-precision`` or
    ``--target-recall``, written to ``path``) found for the judge of ``judge_fingerprint``."""
    path = Path(path)
    check_input(path, "agreement file", AgreementError)
    try:
        document = load_json(path.read_text(encoding="utf-8"), str(path))
    except (UnicodeDecodeError, ValueError):
        raise AgreementError(f"{path}: is not an agreement's JSON (rag-compare agreement --format json).") from None
    if not isinstance(document, dict) or not isinstance(document.get("agreement"), list):
        raise AgreementError(f"{path}: is not an agreement's JSON (rag-compare agreement --format json).")
    judges = {judge.get("name"): judge.get("fingerprint") for judge in document.get("judges", [])}
    for row in document["agreement"]:
        found = (row.get("target") or {}).get("found")
        if row.get("signal") == signal and judges.get(row.get("judge")) == judge_fingerprint and found:
            return float(found["threshold"])
    raise AgreementError(
        f"{path}: holds no threshold found for {signal} by this judge ({judge_fingerprint[:12]}). Measure it with "
        "`rag-compare agreement HUMAN SCORES --target-precision P` (or --target-recall R) and --format json."
    )
