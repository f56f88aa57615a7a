"""How well a judge agrees with people's labels: analytic statistics, numpy and the standard library only.

- ``cohen_kappa``: Cohen's kappa of a k x k table (rows people, columns the judge), unweighted or with linear or
  quadratic disagreement weights, with Fleiss, Cohen and Everitt's (1969) large-sample standard error and its Wald
  interval.
- ``roc_auc``: the area under the ROC curve of the judge's scores against people's yes and no, P(a yes case scores
  higher than a no case) + P(tie) / 2, with DeLong, DeLong and Clarke-Pearson's (1988) variance, computed from
  midranks in O(n log n) as in Sun and Xu (2014), and its Wald interval.
- ``threshold_table`` and ``threshold_for``: the judge's precision, recall and share of cases left below a
  threshold when it says yes at score >= threshold, for given thresholds or for a target precision or recall.

A value that cannot be computed is None, with the reason in the result's ``undefined``; never NaN. Malformed
arguments (wrong shapes or types, NaN scores) raise ValueError.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "Auc",
    "Kappa",
    "KappaWeights",
    "Threshold",
    "ThresholdRows",
    "cohen_kappa",
    "roc_auc",
    "threshold_for",
    "threshold_table",
]

Floats = NDArray[np.float64]
Counts = NDArray[np.int64]
KappaWeights = Literal["linear", "quadratic"]
"""Kappa's weighting schemes besides the unweighted one (None)."""

_SINGLE_CLASS = "people and the judge each used a single class, so chance agreement is 1 and kappa is 0/0"
_NO_CASES = "no cases"
_NO_VARIANCE = 1e-12
"""A per-answer variance of kappa below this is 0 but for rounding (a true 0 comes out as noise of 1e-14)."""
_NO_SPREAD = (
    "the analytic standard error is 0 (every answer agrees, or each side used one class), which would claim a "
    "certainty these answers do not give: no interval; label more answers, among them ones the judge may miss"
)


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa with its standard error and Wald interval."""

    value: float | None
    se: float | None
    low: float | None
    high: float | None
    n: int
    """Cases in the table."""
    undefined: str | None = None
    """Why the value is None; None when it was computed."""
    interval_undefined: str | None = None
    """Why there is a value but no interval: its standard error is 0."""


@dataclass(frozen=True)
class Auc:
    """The area under the ROC curve with DeLong's standard error and Wald interval."""

    value: float | None
    low: float | None
    high: float | None
    se: float | None
    positives: int
    """Cases people said yes to."""
    negatives: int
    """Cases people said no to."""
    undefined: str | None = None


@dataclass(frozen=True)
class ThresholdRows:
    """The judge's agreement with people at each threshold, as columns of equal length (JSON-friendly tuples)."""

    thresholds: tuple[float, ...]
    tp: tuple[int, ...]
    """Cases people said yes to and the judge scored at or above the threshold."""
    fp: tuple[int, ...]
    """Cases people said no to and the judge scored at or above the threshold."""
    fn: tuple[int, ...]
    """Cases people said yes to and the judge scored below the threshold."""
    tn: tuple[int, ...]
    """Cases people said no to and the judge scored below the threshold."""
    precision: tuple[float | None, ...]
    """tp / (tp + fp): None where the judge says yes to nothing."""
    recall: tuple[float | None, ...]
    """tp / (tp + fn): None where people said yes to nothing."""
    flagged: tuple[float | None, ...]
    """(fn + tn) / all cases, the share a fallback at the threshold would replace: None without cases."""

    def rows(self) -> list[dict[str, Any]]:
        """One dict per threshold, with the columns' names as keys."""
        columns = {field.name: getattr(self, field.name) for field in fields(self)}
        return [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]


@dataclass(frozen=True)
class Threshold:
    """A threshold that meets a target, with the precision, recall and flagged share there."""

    threshold: float
    precision: float
    recall: float
    flagged: float


def cohen_kappa(
    table: NDArray[np.integer[Any]], *, weights: KappaWeights | None = None, confidence: float = 0.95
) -> Kappa:
    """Cohen's kappa of a k x k table of counts, rows people's classes and columns the judge's, in the same
    (ordinal) order: 1 - sum(v * observed) / sum(v * chance) for disagreement weights v = [i != j], or
    |i - j| / (k - 1) (``"linear"``) or ((i - j) / (k - 1))**2 (``"quadratic"``), as scikit-learn's
    ``cohen_kappa_score``.

    Analytic: Fleiss, Cohen and Everitt's asymptotic standard error (statsmodels' ``std_kappa``, with agreement
    weights 1 - v); Wald interval, value -+ z se, clipped to [-1, 1]. Where that standard error is 0 (every
    answer agrees, or each side used one class) the interval is None, with the reason: [1, 1] from six answers
    would claim a certainty they do not give.
    """
    counts = _as_counts(table)
    z = _z(confidence)
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    n = int(counts.sum())
    if n == 0:
        return Kappa(None, None, None, None, n, _NO_CASES)
    rows, columns = counts.sum(axis=1), counts.sum(axis=0)
    if np.count_nonzero(rows) == 1 and np.array_equal(rows > 0, columns > 0):
        return Kappa(None, None, None, None, n, _SINGLE_CLASS)
    disagreement = _disagreement_weights(counts.shape[0], weights)
    observed, row_shares, column_shares = counts / n, rows / n, columns / n
    chance_disagreement = float(row_shares @ disagreement @ column_shares)
    kappa = 1 - float((disagreement * observed).sum()) / chance_disagreement
    variance = _kappa_variance(observed, row_shares, column_shares, disagreement, kappa)
    se = math.sqrt(variance / n)
    if variance < _NO_VARIANCE:
        return Kappa(kappa, se, None, None, n, interval_undefined=_NO_SPREAD)
    return Kappa(kappa, se, max(-1.0, kappa - z * se), min(1.0, kappa + z * se), n)


def _disagreement_weights(k: int, weights: KappaWeights | None) -> Floats:
    """The k x k disagreement weights, k >= 2: 0 on the diagonal, at most 1 off it."""
    distance = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(np.float64)
    if weights is None:
        return np.minimum(distance, 1.0)
    scaled: Floats = distance / (k - 1)
    return scaled if weights == "linear" else scaled**2


def _kappa_variance(
    observed: Floats, row_shares: Floats, column_shares: Floats, disagreement: Floats, kappa: float
) -> float:
    """Fleiss, Cohen and Everitt's (1969) large-sample variance of kappa, times n: with agreement weights
    w = 1 - v and chance agreement e, [sum p_ij (w_ij - (wr_i + wc_j)(1 - kappa))**2 - (kappa - e (1 - kappa))**2]
    / (1 - e)**2, where wr_i = sum_j p_.j w_ij and wc_j = sum_i p_i. w_ij; clipped at 0 against rounding."""
    agreement = 1 - disagreement
    chance_disagreement = float(row_shares @ disagreement @ column_shares)  # 1 - e, without cancelling
    row_means, column_means = agreement @ column_shares, row_shares @ agreement
    spread = (agreement - np.add.outer(row_means, column_means) * (1 - kappa)) ** 2
    excess = kappa - (1 - chance_disagreement) * (1 - kappa)
    return max((float((observed * spread).sum()) - excess**2) / chance_disagreement**2, 0.0)


def roc_auc(scores: NDArray[np.floating[Any]], positive: NDArray[np.bool_], *, confidence: float = 0.95) -> Auc:
    """The area under the ROC curve of the judge's ``scores`` against people's ``positive`` labels:
    P(score of a yes case > score of a no case) + P(tie) / 2, as scikit-learn's ``roc_auc_score``.

    Analytic: DeLong, DeLong and Clarke-Pearson's variance, var(V10) / m + var(V01) / n over the m yes and n no
    cases' structural components, each a count of the other class's scores below (or above) plus half the ties,
    found by binary search in the other class's sorted scores (Sun and Xu's midrank algorithm): O(n log n).
    Wald interval, value -+ z se, clipped to [0, 1].
    """
    values, labels = _scores_and_labels(scores, positive)
    z = _z(confidence)
    yes, no = np.sort(values[labels]), np.sort(values[~labels])
    m, n = yes.size, no.size
    if m == 0 or n == 0:
        reason = _NO_CASES if m + n == 0 else f"people said only '{'no' if m == 0 else 'yes'}': AUC needs both classes"
        return Auc(None, None, None, None, m, n, reason)
    twice_no_below = np.searchsorted(no, yes, "left") + np.searchsorted(no, yes, "right")
    twice_yes_below = np.searchsorted(yes, no, "left") + np.searchsorted(yes, no, "right")
    value = int(twice_no_below.sum()) / (2 * m * n)
    if m < 2 or n < 2:
        reason = "DeLong's variance needs at least two cases people said yes to and two they said no to"
        return Auc(value, None, None, None, m, n, reason)
    yes_components = twice_no_below / (2 * n)  # V10: share of no cases a yes case outscores
    no_components = 1 - twice_yes_below / (2 * m)  # V01: share of yes cases that outscore a no case
    variance = float(yes_components.var(ddof=1)) / m + float(no_components.var(ddof=1)) / n
    se = math.sqrt(max(variance, 0.0))
    return Auc(value, max(0.0, value - z * se), min(1.0, value + z * se), se, m, n)


def threshold_table(
    scores: NDArray[np.floating[Any]], positive: NDArray[np.bool_], thresholds: Sequence[float] | Floats
) -> ThresholdRows:
    """Precision, recall, flagged share and counts where the judge says yes at score >= each of ``thresholds``:
    one sort of each class's scores and a binary search per threshold."""
    values, labels = _scores_and_labels(scores, positive)
    cuts = np.asarray(thresholds, dtype=np.float64)
    if cuts.ndim != 1 or np.isnan(cuts).any():
        raise ValueError("thresholds must be a one-dimensional array of numbers, none NaN")
    yes, no = np.sort(values[labels]), np.sort(values[~labels])
    tp, fp = _said_yes(yes, cuts), _said_yes(no, cuts)
    fn, tn = yes.size - tp, no.size - fp
    total = values.size
    return ThresholdRows(
        thresholds=tuple(cuts.tolist()),
        tp=tuple(tp.tolist()),
        fp=tuple(fp.tolist()),
        fn=tuple(fn.tolist()),
        tn=tuple(tn.tolist()),
        precision=tuple(t / (t + f) if t + f else None for t, f in zip(tp.tolist(), fp.tolist(), strict=True)),
        recall=tuple(t / yes.size if yes.size else None for t in tp.tolist()),
        flagged=tuple((below / total if total else None) for below in (fn + tn).tolist()),
    )


def threshold_for(
    scores: NDArray[np.floating[Any]],
    positive: NDArray[np.bool_],
    /,
    *,
    precision: float | None = None,
    recall: float | None = None,
) -> Threshold | None:
    """The threshold, among the distinct scores, that meets exactly one target: with ``precision``, the lowest
    at which precision >= the target (the most recall at that precision); with ``recall``, the highest at which
    recall >= the target (the least flagged at that recall). None when no threshold meets it."""
    if (precision is None) == (recall is None):
        raise ValueError("give exactly one of precision and recall")
    target = precision if precision is not None else recall
    if target is None or not 0 < target <= 1:
        raise ValueError(f"the target must be in (0, 1], got {target}")
    values, labels = _scores_and_labels(scores, positive)
    yes, no = np.sort(values[labels]), np.sort(values[~labels])
    if yes.size == 0:
        return None
    cuts = np.unique(values)
    tp, fp = _said_yes(yes, cuts), _said_yes(no, cuts)
    precisions, recalls = tp / (tp + fp), tp / yes.size
    meets = np.flatnonzero((precisions if precision is not None else recalls) >= target)
    if meets.size == 0:
        return None
    at = int(meets[0] if precision is not None else meets[-1])
    flagged = (values.size - int(tp[at]) - int(fp[at])) / values.size
    return Threshold(float(cuts[at]), float(precisions[at]), float(recalls[at]), flagged)


def _said_yes(sorted_scores: Floats, thresholds: Floats) -> Counts:
    """How many of ``sorted_scores`` are at or above each threshold."""
    below: Counts = np.searchsorted(sorted_scores, thresholds, "left").astype(np.int64)
    return sorted_scores.size - below


def _as_counts(table: NDArray[np.integer[Any]]) -> Counts:
    counts = np.asarray(table)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1] or counts.shape[0] == 0:
        raise ValueError(f"the table must be a square k x k array with k >= 1, got shape {counts.shape}")
    if not np.issubdtype(counts.dtype, np.integer) or (counts < 0).any():
        raise ValueError("the table must hold counts: integers of 0 or more")
    return counts.astype(np.int64)


def _scores_and_labels(
    scores: NDArray[np.floating[Any]], positive: NDArray[np.bool_]
) -> tuple[Floats, NDArray[np.bool_]]:
    values, labels = np.asarray(scores, dtype=np.float64), np.asarray(positive)
    if values.ndim != 1 or labels.shape != values.shape:
        raise ValueError("scores and positive must be one-dimensional arrays of the same length")
    if labels.dtype != np.bool_ and labels.size:
        raise ValueError(f"positive must be a boolean array, got dtype {labels.dtype}")
    if np.isnan(values).any():
        raise ValueError("scores must not be NaN")
    return values, labels.astype(np.bool_)


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    return NormalDist().inv_cdf((1 + confidence) / 2)
