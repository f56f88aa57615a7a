"""How well one judge agrees with people on one label: the measures of ``Agreement``, from the paired calls.

The paired frame holds, per labelled answer both people and the judge called, people's
class and the judge's (``human_class``, ``judge_class``: a label's values, ``CLASSES``), the judge's score
where its signal is a number, and the breakdown attributes. A yes/no label's positive class is ``yes``:
sensitivity is the share of people's ``yes`` the judge also calls ``yes``, specificity the share of their
``no`` it calls ``no``, each with its exact (Clopper-Pearson) interval. Cohen's kappa, over the label's classes, comes
with the analytic interval (Fleiss, Cohen and Everitt's large-sample standard error); on an ordinal label
(``grounded``: yes, partly, no; ``preferred``: baseline, tie, candidate) weighted kappa, linear and
quadratic, too. A numeric
signal adds its ROC AUC (DeLong's interval) and its precision and recall at each threshold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from rag_compare.compute.agreement_stats import (
    Auc,
    Kappa,
    Threshold,
    cohen_kappa,
    roc_auc,
    threshold_for,
    threshold_table,
)
from rag_compare.compute.case_anchors import anchors
from rag_compare.compute.stats import binomial_ci
from rag_compare.io.verdicts import LABELS, PREFERENCES

__all__ = [
    "BREAKDOWNS",
    "CLASSES",
    "ORDINAL",
    "GroupAgreement",
    "LabelAgreement",
    "Proportion",
    "Target",
    "measure_label",
]

CLASSES: Mapping[str, tuple[str, ...]] = {**LABELS, "preferred": PREFERENCES}
"""Each label's classes (``yes`` first where it has one); an ordinal one's in order."""
ORDINAL = ("grounded", "preferred")
BREAKDOWNS = ("category", "answerability", "language")
SWEEP = tuple(round(step * 0.05, 2) for step in range(21))
"""The thresholds of the table a numeric signal gets: 0, 0.05, ..., 1."""


@dataclass(frozen=True)
class Proportion:
    """``hits`` of ``trials``, its value and exact (Clopper-Pearson) 95% interval; all None without trials."""

    hits: int
    trials: int
    value: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(cls, hits: int, trials: int) -> Proportion:
        interval = binomial_ci(hits, trials)
        if interval is None:
            return cls(hits, trials, None, None, None)
        return cls(hits, trials, hits / trials, *interval)

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "low": self.low, "high": self.high, "hits": self.hits, "of": self.trials}


@dataclass(frozen=True)
class Target:
    """The threshold asked for (``measure`` ``precision`` or ``recall`` at least ``at_least``), as found."""

    measure: str
    at_least: float
    found: Threshold | None


@dataclass(frozen=True)
class GroupAgreement:
    """The agreement within the cases of one ``value`` of a breakdown attribute."""

    value: str | None
    n: int
    accuracy: Proportion
    kappa: Kappa
    sensitivity: Proportion | None
    specificity: Proportion | None

    def to_dict(self) -> dict[str, Any]:
        binary = {
            name: None if measured is None else measured.to_dict()
            for name, measured in (("sensitivity", self.sensitivity), ("specificity", self.specificity))
        }
        return {
            "value": self.value,
            "n": self.n,
            "accuracy": self.accuracy.to_dict(),
            "kappa": _kappa_dict(self.kappa),
            **binary,
        }


@dataclass(frozen=True)
class LabelAgreement:
    """One judge against people on one label: counts, the confusion matrix (rows people, columns the judge,
    in ``classes`` order), and each measure; a measure that cannot be computed is None with the reason."""

    judge: str
    label: str
    signal: str
    threshold: float | None
    """Where the judge's signal is a number: it says ``yes`` at this score or above."""
    n: int
    not_comparable: Mapping[str, int]
    classes: tuple[str, ...]
    confusion: tuple[tuple[int, ...], ...]
    accuracy: Proportion
    """The share of answers on which the judge's class is people's, with its exact interval."""
    base_rate: float | None
    """The share of people's calls in the positive class (``yes``), None for a preference."""
    kappa: Kappa
    weighted_kappa: Mapping[str, Kappa]
    sensitivity: Proportion | None
    specificity: Proportion | None
    auc: Auc | None
    thresholds: tuple[Mapping[str, Any], ...]
    target: Target | None
    breakdowns: Mapping[str, tuple[GroupAgreement, ...]]
    disagreements: pl.DataFrame = field(repr=False)
    """The answers people and the judge called differently: ``case_id`` (and ``repeat``), ``side``, ``human``
    and ``judge`` (their calls), ``judge_value`` (its signal's value) and ``comment``."""

    def listed(self, limit: int | None = None) -> pl.DataFrame:
        """The disagreements (the first ``limit``, else all), each with its case's ``anchor`` on the review page."""
        shown = self.disagreements if limit is None else self.disagreements.head(limit)
        return shown.with_columns(anchors(shown.get_column("case_id")))

    def measure(self, name: str) -> float | None:
        """A gate's measure: ``kappa``, ``linear_kappa``, ``quadratic_kappa``, ``accuracy``, ``sensitivity``,
        ``specificity`` or ``auc``; None where it is undefined or does not apply."""
        measured: Mapping[str, Any] = {
            "kappa": self.kappa,
            "linear_kappa": self.weighted_kappa.get("linear"),
            "quadratic_kappa": self.weighted_kappa.get("quadratic"),
            "sensitivity": self.sensitivity,
            "specificity": self.specificity,
            "auc": self.auc,
        }
        found = self.accuracy if name == "accuracy" else measured[name]
        return None if found is None else found.value

    def to_dict(self) -> dict[str, Any]:
        target = self.target
        return {
            "judge": self.judge,
            "label": self.label,
            "signal": self.signal,
            "threshold": self.threshold,
            "n": self.n,
            "not_comparable": dict(self.not_comparable),
            "classes": list(self.classes),
            "confusion": [list(row) for row in self.confusion],
            "accuracy": self.accuracy.to_dict(),
            "base_rate": self.base_rate,
            "kappa": _kappa_dict(self.kappa),
            "weighted_kappa": {name: _kappa_dict(kappa) for name, kappa in self.weighted_kappa.items()},
            "sensitivity": None if self.sensitivity is None else self.sensitivity.to_dict(),
            "specificity": None if self.specificity is None else self.specificity.to_dict(),
            "auc": None if self.auc is None else _auc_dict(self.auc),
            "thresholds": [dict(row) for row in self.thresholds],
            "target": None
            if target is None
            else {"measure": target.measure, "at_least": target.at_least, "found": _threshold_dict(target.found)},
            "breakdowns": {name: [group.to_dict() for group in groups] for name, groups in self.breakdowns.items()},
            "disagreements": self.disagreements.height,
        }


def measure_label(
    judge: str,
    label: str,
    signal: str,
    paired: pl.DataFrame,
    *,
    threshold: float | None,
    not_comparable: Mapping[str, int],
    disagreements: pl.DataFrame,
    target: tuple[str, float] | None = None,
) -> LabelAgreement:
    """The agreement of ``judge`` with people on ``label`` from ``paired`` (one row per answer both called:
    ``human_class``, ``judge_class``, ``score`` for a numeric signal, and any of ``BREAKDOWNS``); ``target``:
    the threshold to find (``precision`` or ``recall``, at least)."""
    classes = CLASSES[label]
    attributes = [
        name for name in BREAKDOWNS if name in paired.columns and paired.get_column(name).null_count() < paired.height
    ]
    counts = paired.group_by(*attributes, "human_class", "judge_class").len("count")
    table = _tables(counts, classes, [])[()]
    binary = label != "preferred"
    overall = _group(None, table, binary)
    scored = paired.filter(pl.col("score").is_not_null()) if "score" in paired.columns else paired.clear()
    numeric = binary and threshold is not None and scored.height > 0
    scores = _scores(scored) if numeric else None
    return LabelAgreement(
        judge=judge,
        label=label,
        signal=signal,
        threshold=threshold,
        n=overall.n,
        not_comparable=dict(not_comparable),
        classes=classes,
        confusion=tuple(tuple(int(count) for count in row) for row in table),
        accuracy=overall.accuracy,
        base_rate=float(table[0].sum() / overall.n) if binary and overall.n else None,
        kappa=overall.kappa,
        weighted_kappa=_weighted(table) if label in ORDINAL else {},
        sensitivity=overall.sensitivity,
        specificity=overall.specificity,
        auc=None if scores is None else roc_auc(*scores),
        thresholds=() if scores is None else tuple(threshold_table(*scores, SWEEP).rows()),
        target=None if scores is None or target is None else _target(scores, target),
        breakdowns={name: _groups(counts, classes, name, binary) for name in attributes},
        disagreements=disagreements,
    )


_Table = np.ndarray[Any, np.dtype[np.int64]]


def _tables(counts: pl.DataFrame, classes: Sequence[str], by: list[str]) -> dict[tuple[Any, ...], _Table]:
    """The k x k tables (rows people's class, columns the judge's, in ``classes`` order) of each group of ``by``,
    from ``counts`` (a ``count`` per combination of values); with no ``by``, the one table under ``()``."""
    index = {name: position for position, name in enumerate(classes)}
    summed = counts.group_by(*by, "human_class", "judge_class").agg(pl.col("count").sum())
    tables: dict[tuple[Any, ...], _Table] = {} if by else {(): np.zeros((len(classes),) * 2, dtype=np.int64)}
    for *group, human, judged, count in summed.iter_rows():
        table = tables.setdefault(tuple(group), np.zeros((len(classes),) * 2, dtype=np.int64))
        table[index[human], index[judged]] += count
    return tables


def _rates(table: _Table, binary: bool) -> dict[str, Proportion | None]:
    """Sensitivity and specificity of the judge's calls, ``yes`` (the first class) against the rest; None for a
    preference."""
    if not binary:
        return {"sensitivity": None, "specificity": None}
    return {
        "sensitivity": Proportion.of(int(table[0, 0]), int(table[0].sum())),
        "specificity": Proportion.of(int(table[1:, 1:].sum()), int(table[1:].sum())),
    }


def _weighted(table: _Table) -> dict[str, Kappa]:
    return {weights: cohen_kappa(table, weights=weights) for weights in ("linear", "quadratic")}


_Scores = tuple[np.ndarray[Any, np.dtype[np.float64]], np.ndarray[Any, np.dtype[np.bool_]]]
"""The judge's scores and whether people said yes, answer by answer."""


def _scores(scored: pl.DataFrame) -> _Scores:
    return scored.get_column("score").cast(pl.Float64).to_numpy(), (
        scored.get_column("human_class") == "yes"
    ).to_numpy()


def _target(scores: _Scores, target: tuple[str, float]) -> Target:
    measure, at_least = target
    return Target(measure, at_least, threshold_for(*scores, **{measure: at_least}))


def _groups(counts: pl.DataFrame, classes: Sequence[str], name: str, binary: bool) -> tuple[GroupAgreement, ...]:
    """The agreement within each value of the breakdown attribute ``name`` (null last)."""
    tables = _tables(counts, classes, [name])
    ordered = sorted(tables, key=lambda key: (key[0] is None, str(key[0])))
    return tuple(_group(key[0], tables[key], binary) for key in ordered)


def _group(value: Any, table: _Table, binary: bool) -> GroupAgreement:
    n = int(table.sum())
    return GroupAgreement(
        value=None if value is None else str(value),
        n=n,
        accuracy=Proportion.of(int(np.trace(table)), n),
        kappa=cohen_kappa(table),
        **_rates(table, binary),
    )


def _kappa_dict(kappa: Kappa) -> dict[str, Any]:
    return {
        "value": kappa.value,
        "low": kappa.low,
        "high": kappa.high,
        "se": kappa.se,
        "method": "analytic",
        "undefined": kappa.undefined,
        "interval_undefined": kappa.interval_undefined,
    }


def _auc_dict(auc: Auc) -> dict[str, Any]:
    return {
        "value": auc.value,
        "low": auc.low,
        "high": auc.high,
        "se": auc.se,
        "method": "DeLong",
        "undefined": auc.undefined,
    }


def _threshold_dict(found: Threshold | None) -> dict[str, Any] | None:
    if found is None:
        return None
    return {
        "threshold": found.threshold,
        "precision": found.precision,
        "recall": found.recall,
        "flagged": found.flagged,
    }
