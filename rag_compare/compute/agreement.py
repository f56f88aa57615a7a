"""Can the judges be trusted? Every judge measured against people's labels: ``agreement(human, judges)``.

People's labels (``io.labels``: a reviews file or a labels table) are paired with what each judge said of
the same answers (``judge_records``: a frozen run's offline judge, a scores file, a pairs file). A label maps
to a signal by ``DEFAULT_SIGNALS`` (the first the judge holds), or as ``mapping`` says:

- ``abstention_correct``: ``abstention_correct``, its true or false;
- ``grounded``: ``grounded``, yes at the threshold (1) or above, no at 0, partly between;
- ``answer_correct``: ``correctness``, ``response`` or ``helpfulness``, yes at the threshold (0.5) or above;
- ``retrieval_ok``: ``full_coverage``, its true or false;
- ``preferred``: a pairs file's debiased ``verdict``: baseline, tie or candidate.

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
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import polars as pl

from rag_compare.compute.judge_records import JudgeRecords, JudgeSource, judge_records
from rag_compare.compute.label_agreement import LabelAgreement
from rag_compare.compute.label_pairing import (
    RecordRows,
    Settings,
    Unmeasured,
    judged_answers,
    labels_of,
    pair_label,
    with_attributes,
)
from rag_compare.compute.stats import mcnemar_counts_p
from rag_compare.core.errors import AgreementError
from rag_compare.core.input_paths import check_input
from rag_compare.core.listing import counted
from rag_compare.core.nesting import load_json
from rag_compare.core.result import Report, to_json
from rag_compare.core.signals import SIGNALS_BY_NAME
from rag_compare.io.corpus import Corpus
from rag_compare.io.labels import HUMAN_LABELS, HumanLabels, load_labels
from rag_compare.io.reviews import Reviews
from rag_compare.io.verdicts import LABELS

__all__ = [
    "DEFAULT_SIGNALS",
    "DEFAULT_THRESHOLDS",
    "MIN_N",
    "Agreement",
    "JudgeTest",
    "agreement",
    "found_threshold",
]

DEFAULT_SIGNALS: Mapping[str, tuple[str, ...]] = {
    "answer_correct": ("correctness", "response", "helpfulness"),
    "grounded": ("grounded",),
    "abstention_correct": ("abstention_correct",),
    "retrieval_ok": ("full_coverage",),
}
"""The signals each label maps to, the first a judge holds; ``preferred`` maps to a pairs file's verdict."""
DEFAULT_THRESHOLDS: Mapping[str, float] = {
    "answer_correct": 0.5,
    "grounded": 1.0,
    "abstention_correct": 0.5,
    "retrieval_ok": 0.5,
}
"""The score at or above which a numeric signal's call is ``yes``: ``grounded`` yes means every claim is
supported, as people's yes does."""
MIN_N = 20
"""Fewer comparable answers than this leave a gate's agreement condition not evaluated: too few to decide."""


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
        judges, labels = counted(len(self.judges), "judge"), counted(len(self.rows), "label")
        return f"<Agreement of {judges} with people ({self.human['source']}): {labels} measured>"

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
    return (
        row.listed()
        .rename({"judge": "judge_call"})
        .select(pl.lit(row.judge).alias("judge"), pl.lit(row.label).alias("label"), pl.all())
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
    settings = Settings(_checked_mapping(mapping), _checked_thresholds(thresholds), _checked_target(target))
    labels, records = _loaded(human, judges)
    labels = with_attributes(labels, records, corpus)
    rows: list[LabelAgreement] = []
    unmeasured: list[Unmeasured] = []
    calls: Calls = {}
    rows_of = RecordRows()
    for judge in records:
        judged = judged_answers(labels, judge, side, rows_of)
        for label in labels_of(judge, labels):
            paired = pair_label(judge, label, judged, settings)
            if isinstance(paired, Unmeasured):
                unmeasured.append(paired)
            else:
                rows.append(paired.measured)
                calls[judge.name, label] = paired.calls
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


Calls = dict[tuple[str, str], pl.Series]
"""Per judge and label, whether the judge called each of its judged answers as people did (``Paired.calls``)."""


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
    chosen = dict(DEFAULT_THRESHOLDS)
    for label, value in (thresholds or {}).items():
        if label not in LABELS:
            raise AgreementError(f"`thresholds`: unknown label {label!r}; give any of {', '.join(LABELS)}.")
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise AgreementError(f"`thresholds`: {label}'s threshold must be a number from 0 to 1, not {value!r}.")
        chosen[label] = float(value)
    return chosen


def _checked_target(target: tuple[str, float] | None) -> tuple[str, float] | None:
    if target is None:
        return None
    measure, at_least = target
    if measure not in ("precision", "recall") or isinstance(at_least, bool) or not 0 < at_least <= 1:
        raise AgreementError(
            f"`target` is ('precision', P) or ('recall', R) with P or R above 0 and at most 1, not {target!r}."
        )
    return target


def _loaded(
    human: str | Path | Reviews | HumanLabels | pl.DataFrame, judges: Sequence[JudgeSource]
) -> tuple[HumanLabels, list[JudgeRecords]]:
    """People's labels and each judge's records, read on two threads (each read is mostly Polars and hashing,
    which let go of the interpreter); the labels' errors first, then the judges' in order."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        labels = pool.submit(lambda: human if isinstance(human, HumanLabels) else load_labels(human))
        records = [pool.submit(judge_records, judge) for judge in judges]
        return labels.result(), _named([record.result() for record in records])


def _named(records: list[JudgeRecords]) -> list[JudgeRecords]:
    """``records``, refused when one judge is given twice (the same name: the same judge of the same runs)."""
    names = [judge.name for judge in records]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise AgreementError(f"the judge {twice[0]} is given twice; give each judge once.")
    return records


def _judge_tests(calls: Calls, records: Sequence[JudgeRecords]) -> list[JudgeTest]:
    """Each two judges of the same answers, on each label both were measured on: exact McNemar."""
    runs = {judge.name: tuple(str(run["fingerprint"]) for run in judge.runs) for judge in records}
    tests = []
    for label in HUMAN_LABELS:
        measured = [judge.name for judge in records if (judge.name, label) in calls]
        for index, first in enumerate(measured):
            for second in measured[index + 1 :]:
                if runs[first] == runs[second] and calls[first, label].len() == calls[second, label].len():
                    tests.append(_mcnemar(label, first, second, calls[first, label], calls[second, label]))
    return tests


def _mcnemar(label: str, first: str, second: str, ones: pl.Series, others: pl.Series) -> JudgeTest:
    """The two judges' calls, row by row of the same judged answers, over the rows both called."""
    both = pl.DataFrame({"first": ones, "second": others}).drop_nulls()
    first_only = int((both["first"] & ~both["second"]).sum())
    second_only = int((~both["first"] & both["second"]).sum())
    p = mcnemar_counts_p(first_only, second_only) if both.height else None
    return JudgeTest(label, first, second, both.height, first_only, second_only, p)


def found_threshold(path: str | Path, signal: str, judge_fingerprint: str) -> float:
    """The threshold of ``signal`` that an agreement's JSON (``Agreement.to_json`` of ``agreement(...,
    target=...)``, written to ``path``) found for the judge of ``judge_fingerprint``."""
    path = Path(path)
    check_input(path, "agreement file", AgreementError)
    try:
        document = load_json(path.read_text(encoding="utf-8"), str(path))
    except (UnicodeDecodeError, ValueError):
        raise AgreementError(f"{path}: is not an agreement's JSON (`Agreement.to_json`).") from None
    if not isinstance(document, dict) or not isinstance(document.get("agreement"), list):
        raise AgreementError(f"{path}: is not an agreement's JSON (`Agreement.to_json`).")
    judges = {judge.get("name"): judge.get("fingerprint") for judge in document.get("judges", [])}
    for row in document["agreement"]:
        found = (row.get("target") or {}).get("found")
        if row.get("signal") == signal and judges.get(row.get("judge")) == judge_fingerprint and found:
            return float(found["threshold"])
    raise AgreementError(
        f"{path}: holds no threshold found for {signal} by this judge ({judge_fingerprint[:12]}). Measure it with "
        "`agreement(human, [scores], target=('precision', P))` (or `('recall', R)`) and write its `to_json()`."
    )
