"""The agreement statistics equal scikit-learn's, statsmodels' and scipy's, and a quadratic DeLong written from
its definition; degenerate data give None with a reason, never NaN."""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import astuple
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from sklearn.metrics import cohen_kappa_score, precision_recall_curve, roc_auc_score
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import cohens_kappa

from rag_compare.compute.agreement_stats import (
    Auc,
    Kappa,
    KappaWeights,
    Threshold,
    cohen_kappa,
    roc_auc,
    threshold_for,
    threshold_table,
)
from rag_compare.compute.stats import binomial_ci, mcnemar_counts_p

Z95 = 1.959963984540054  # the 97.5% quantile of the standard normal

WEIGHTS: list[KappaWeights | None] = [None, "linear", "quadratic"]
_SINGLE_CLASS = "people and the judge each used a single class, so chance agreement is 1 and kappa is 0/0"


def _floats_of(value: Any) -> list[float]:
    """Every float in a result, its dataclass fields and tuples walked through."""
    if isinstance(value, float):
        return [value]
    if isinstance(value, Kappa | Auc | Threshold):
        return _floats_of(astuple(value))
    if isinstance(value, tuple | list):
        return [found for item in value for found in _floats_of(item)]
    if isinstance(value, dict):
        return _floats_of(list(value.values()))
    return []


def _assert_no_nan(value: Any) -> None:
    assert not any(math.isnan(number) for number in _floats_of(value)), value


def _labels_of(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """People's and the judge's label per case, from a confusion table (rows people, columns the judge)."""
    rows, columns = np.indices(table.shape)
    return np.repeat(rows.ravel(), table.ravel()), np.repeat(columns.ravel(), table.ravel())


def _random_table(rng: np.random.Generator, k: int, n: int) -> np.ndarray:
    """A k x k table of n cases where the judge copies people's class 60% of the time."""
    people = rng.integers(0, k, n)
    judge = np.where(rng.random(n) < 0.6, people, rng.integers(0, k, n))
    table = np.zeros((k, k), dtype=np.int64)
    np.add.at(table, (people, judge), 1)
    return table


def _statsmodels_kappa(table: np.ndarray, weights: KappaWeights | None) -> Any:
    with warnings.catch_warnings():  # its z statistic divides by a null variance that may be 0
        warnings.simplefilter("ignore", RuntimeWarning)
        return cohens_kappa(table) if weights is None else cohens_kappa(table, wt=weights)


def _sklearn_kappa(table: np.ndarray, weights: KappaWeights | None) -> float:
    people, judge = _labels_of(table)
    return float(cohen_kappa_score(people, judge, weights=weights, labels=list(range(table.shape[0]))))


def _delong_by_pairs(scores: np.ndarray, positive: np.ndarray) -> tuple[float, float]:
    """AUC and DeLong's standard error from the definition, over all m x n (yes, no) pairs: psi = 1 where the yes
    case scores higher, 1/2 on a tie; V10_i = mean_j psi_ij, V01_j = mean_i psi_ij; var = S10 / m + S01 / n."""
    yes, no = scores[positive], scores[~positive]
    psi = (yes[:, None] > no[None, :]) + 0.5 * (yes[:, None] == no[None, :])
    variance = psi.mean(axis=1).var(ddof=1) / yes.size + psi.mean(axis=0).var(ddof=1) / no.size
    return float(psi.mean()), math.sqrt(variance)


def _scored(rng: np.random.Generator, n: int, levels: int) -> tuple[np.ndarray, np.ndarray]:
    """n scores on a grid of ``levels`` values (so with ties), people's yes more likely at higher scores."""
    scores = rng.integers(0, levels, n) / max(levels - 1, 1)
    positive = rng.random(n) < 0.2 + 0.6 * scores
    return scores, positive


# --- a hand-worked 2 x 2 table ------------------------------------------------------------------------------------


def test_a_two_by_two_table_worked_by_hand() -> None:
    # Rows people (yes, no), columns the judge (yes, no); n = 50.
    table = np.array([[20, 5], [10, 15]])
    # Observed agreement po = (20 + 15) / 50 = 0.7. People's shares: yes 25/50 = 0.5, no 0.5; the judge's:
    # yes 30/50 = 0.6, no 0.4. Chance agreement pe = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, so kappa = (0.7 - 0.5) / 0.5 = 0.4.
    # Fleiss, Cohen and Everitt's variance, with 1 - kappa = 0.6:
    #   A = sum_i p_ii (1 - (p_i. + p_.i)(1 - kappa))**2 = 0.4 (1 - 1.1 * 0.6)**2 + 0.3 (1 - 0.9 * 0.6)**2
    #     = 0.4 * 0.34**2 + 0.3 * 0.46**2 = 0.04624 + 0.06348 = 0.10972
    #   B = (1 - kappa)**2 sum_(i != j) p_ij (p_.i + p_j.)**2 = 0.36 (0.1 * (0.6 + 0.5)**2 + 0.2 * (0.4 + 0.5)**2)
    #     = 0.36 (0.121 + 0.162) = 0.10188
    #   C = (kappa - pe (1 - kappa))**2 = (0.4 - 0.5 * 0.6)**2 = 0.01
    #   var = (A + B - C) / ((1 - pe)**2 n) = 0.2016 / (0.25 * 50) = 0.016128, se = 0.1269961
    # Wald 95%: 0.4 -+ 1.959964 * 0.1269961 = 0.4 -+ 0.2489077 = [0.1510923, 0.6489077].
    kappa = cohen_kappa(table)
    assert kappa.value == pytest.approx(0.4, abs=1e-12)
    assert kappa.se == pytest.approx(math.sqrt(0.016128), rel=1e-12)
    assert kappa.se == pytest.approx(0.1269961, abs=1e-7)
    assert (kappa.low, kappa.high) == pytest.approx((0.1510923, 0.6489077), abs=1e-7)
    assert (kappa.n, kappa.undefined) == (50, None)
    assert kappa.value == pytest.approx(_statsmodels_kappa(table, None).kappa, abs=1e-12)
    assert kappa.se == pytest.approx(_statsmodels_kappa(table, None).std_kappa, rel=1e-12)


def test_sensitivity_and_specificity_of_the_hand_worked_table() -> None:
    # Sensitivity = 20 / 25 = 0.8 (people's yes the judge calls yes), specificity = 15 / 25 = 0.6 (their no it calls
    # no). The exact 95% interval of x of 25 is [pl, ph] with P(X >= x | pl) = 0.025 = P(X <= x | ph), X ~ Bin(25, p).
    # Sensitivity, x = 20, C(25, i) for i = 20..25: 53130, 12650, 2300, 300, 25, 1.
    #   pl = 0.592963: the terms C(25, i) pl**i (1 - pl)**(25 - i), i = 20..25, are
    #   0.01714 + 0.00595 + 0.00157 + 0.00030 + 0.00004 + 0.00000 = 0.02500.
    #   ph = 0.931689: P(X >= 21) = 0.06234 + 0.15458 + 0.27500 + 0.31256 + 0.17052 = 0.97500, so P(X <= 20) = 0.025.
    # Specificity, x = 15:
    #   pl = 0.386653: P(X >= 15) = 0.01590 + 0.00626 + 0.00209 + 0.00059 + 0.00014 + 0.00003 + ... = 0.02501.
    #   ph = 0.788745: P(X >= 16) = 0.03842 + 0.07593 + 0.12600 + 0.17332 + 0.19414 + 0.17258 + 0.11715
    #   + 0.05705 + 0.01775 + 0.00265 = 0.97499, so P(X <= 15) = 0.025.
    expected = {(20, 25): (0.592963, 0.931689), (15, 25): (0.386653, 0.788745)}
    for (hits, trials), (low, high) in expected.items():
        interval = binomial_ci(hits, trials)
        assert interval == pytest.approx((low, high), abs=1e-6)
        # The defining tail sums, in exact binomial coefficients, at the computed bounds.
        assert interval is not None
        upper = sum(
            math.comb(trials, i) * interval[0] ** i * (1 - interval[0]) ** (trials - i) for i in range(hits, trials + 1)
        )
        lower = sum(
            math.comb(trials, i) * interval[1] ** i * (1 - interval[1]) ** (trials - i) for i in range(hits + 1)
        )
        assert (upper, lower) == pytest.approx((0.025, 0.025), rel=1e-9)
        reference = scipy_stats.binomtest(hits, trials).proportion_ci(0.95, method="exact")
        assert interval == pytest.approx((reference.low, reference.high), rel=1e-9)


# --- cohen_kappa --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize(
    ("k", "n", "seed"), [(2, 8, 1), (2, 300, 2), (3, 12, 3), (3, 500, 4), (4, 60, 5), (6, 2000, 6)]
)
def test_kappa_equals_sklearn_and_statsmodels(weights: KappaWeights | None, k: int, n: int, seed: int) -> None:
    table = _random_table(np.random.default_rng(seed), k, n)
    kappa = cohen_kappa(table, weights=weights)
    reference = _statsmodels_kappa(table, weights)
    assert kappa.value == pytest.approx(_sklearn_kappa(table, weights), abs=1e-12)
    assert kappa.value == pytest.approx(float(reference.kappa), abs=1e-12)
    assert kappa.se == pytest.approx(float(reference.std_kappa), rel=1e-9)
    assert kappa.value is not None
    assert kappa.se is not None
    assert kappa.low == pytest.approx(max(-1.0, kappa.value - Z95 * kappa.se), abs=1e-12)
    assert kappa.high == pytest.approx(min(1.0, kappa.value + Z95 * kappa.se), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(2, 4).flatmap(lambda k: st.lists(st.integers(0, 6), min_size=k * k, max_size=k * k)),
    st.sampled_from(WEIGHTS),
)
def test_kappa_of_tiny_tables_equals_the_references_or_says_why_not(
    cells: list[int], weights: KappaWeights | None
) -> None:
    k = math.isqrt(len(cells))
    table = np.array(cells, dtype=np.int64).reshape(k, k)
    kappa = cohen_kappa(table, weights=weights)
    _assert_no_nan(kappa)
    rows, columns = table.sum(axis=1), table.sum(axis=0)
    single_class = np.count_nonzero(rows) == 1 and np.array_equal(rows > 0, columns > 0)
    if table.sum() == 0 or single_class:
        assert kappa.value is kappa.se is kappa.low is kappa.high is None
        assert kappa.undefined in {"no cases", _SINGLE_CLASS}
        return
    reference = _statsmodels_kappa(table, weights)
    assert kappa.undefined is None
    assert kappa.value == pytest.approx(_sklearn_kappa(table, weights), abs=1e-12)
    assert kappa.value == pytest.approx(float(reference.kappa), abs=1e-12)
    # Compared as variances: a true variance of 0 comes out of statsmodels as rounding noise (up to 2e-14 seen, of
    # either sign), out of cohen_kappa as 0 or noise clipped at 0.
    assert kappa.se is not None
    assert kappa.se**2 == pytest.approx(float(reference.var_kappa), rel=1e-9, abs=1e-12)
    if kappa.se**2 * table.sum() < 1e-12:  # no spread: no interval, and why
        assert (kappa.low, kappa.high) == (None, None)
        assert kappa.interval_undefined is not None
        return
    assert kappa.low is not None
    assert kappa.high is not None
    assert -1.0 <= kappa.low <= kappa.high <= 1.0


@pytest.mark.parametrize("weights", WEIGHTS)
def test_kappa_undefined_cases(weights: KappaWeights | None) -> None:
    for table in (np.zeros((3, 3), dtype=np.int64), np.zeros((1, 1), dtype=np.int64)):
        assert cohen_kappa(table, weights=weights) == Kappa(None, None, None, None, 0, "no cases")
    for table in (np.array([[7, 0], [0, 0]]), np.array([[0, 0, 0], [0, 4, 0], [0, 0, 0]]), np.array([[5]])):
        kappa = cohen_kappa(table, weights=weights)
        assert kappa == Kappa(None, None, None, None, int(table.sum()), _SINGLE_CLASS)


@pytest.mark.parametrize("weights", WEIGHTS)
def test_kappa_when_people_and_the_judge_each_used_a_different_single_class(weights: KappaWeights | None) -> None:
    # People always said class 0, the judge always class 1: no agreement, no chance agreement, kappa = 0 / 1 = 0.
    table = np.array([[0, 5, 0], [0, 0, 0], [0, 0, 0]])
    kappa = cohen_kappa(table, weights=weights)
    assert kappa.value == _sklearn_kappa(table, weights) == 0.0
    # The large-sample variance is 0: every term of the sum vanishes; statsmodels says so too.
    assert kappa.se == _statsmodels_kappa(table, weights).std_kappa == 0.0
    # An interval of [0, 0] would claim certainty: there is none, and the reason says why.
    assert (kappa.low, kappa.high, kappa.undefined) == (None, None, None)
    assert "standard error is 0" in (kappa.interval_undefined or "")


@pytest.mark.parametrize("weights", WEIGHTS)
def test_kappa_of_perfect_agreement_is_one_with_no_spread(weights: KappaWeights | None) -> None:
    kappa = cohen_kappa(np.diag([5, 3, 9]), weights=weights)
    assert kappa.value == pytest.approx(1.0, abs=1e-15)
    assert kappa.se is not None
    assert kappa.se == pytest.approx(0.0, abs=1e-7)
    assert (kappa.low, kappa.high) == (None, None)
    assert "every answer agrees" in (kappa.interval_undefined or "")
    _assert_no_nan(kappa)


def test_kappa_interval_widens_with_confidence_and_is_clipped() -> None:
    table = np.array([[20, 5], [10, 15]])
    narrow, wide = cohen_kappa(table, confidence=0.8), cohen_kappa(table, confidence=0.99)
    assert narrow.low is not None
    assert wide.low is not None
    assert narrow.high is not None
    assert wide.high is not None
    assert wide.low < narrow.low < narrow.high < wide.high
    tiny = cohen_kappa(np.array([[5, 1], [0, 2]]), confidence=0.999)  # 0.714 + 3.29 * 0.256 would pass 1
    assert tiny.value == pytest.approx(5 / 7)
    assert tiny.high == 1.0


def test_kappa_rejects_malformed_tables_and_settings() -> None:
    with pytest.raises(ValueError, match="square"):
        cohen_kappa(np.zeros((2, 3), dtype=np.int64))
    with pytest.raises(ValueError, match="square"):
        cohen_kappa(np.zeros(4, dtype=np.int64))
    with pytest.raises(ValueError, match="counts"):
        cohen_kappa(np.array([[1, -1], [0, 2]]))
    with pytest.raises(ValueError, match="counts"):
        cohen_kappa(np.array([[1.5, 0.0], [0.0, 2.0]]))
    with pytest.raises(ValueError, match="weights"):
        cohen_kappa(np.eye(2, dtype=np.int64), weights="cubic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="confidence"):
        cohen_kappa(np.eye(2, dtype=np.int64), confidence=1.0)


# --- roc_auc ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "levels", "seed"), [(5, 3, 1), (12, 2, 2), (40, 5, 3), (300, 11, 4), (800, 1000, 5)])
def test_auc_and_delong_se_equal_sklearn_and_the_pairwise_definition(n: int, levels: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    scores, positive = _scored(rng, n, levels)
    positive[:2], positive[2:4] = True, False  # two of each class at least
    auc = roc_auc(scores, positive)
    value, se = _delong_by_pairs(scores, positive)
    assert auc.value == pytest.approx(roc_auc_score(positive, scores), abs=1e-12)
    assert auc.value == pytest.approx(value, abs=1e-12)
    assert auc.se == pytest.approx(se, rel=1e-9, abs=1e-15)
    assert (auc.positives, auc.negatives) == (int(positive.sum()), int((~positive).sum()))
    assert auc.low == pytest.approx(max(0.0, value - Z95 * se), abs=1e-12)
    assert auc.high == pytest.approx(min(1.0, value + Z95 * se), abs=1e-12)
    assert auc.undefined is None


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.booleans()), min_size=0, max_size=30))
def test_auc_of_small_samples_with_ties_equals_the_references_or_says_why_not(cases: list[tuple[int, bool]]) -> None:
    scores = np.array([score / 4 for score, _ in cases], dtype=np.float64)
    positive = np.array([said for _, said in cases], dtype=np.bool_)
    auc = roc_auc(scores, positive)
    _assert_no_nan(auc)
    m, n = int(positive.sum()), int((~positive).sum())
    assert (auc.positives, auc.negatives) == (m, n)
    if m == 0 or n == 0:
        assert auc.value is auc.se is auc.low is auc.high is None
        assert auc.undefined is not None
        return
    assert auc.value == pytest.approx(roc_auc_score(positive, scores), abs=1e-12)
    if m < 2 or n < 2:
        assert auc.se is auc.low is auc.high is None
        assert auc.undefined is not None
        assert "DeLong" in auc.undefined
        return
    assert auc.se == pytest.approx(_delong_by_pairs(scores, positive)[1], rel=1e-9, abs=1e-15)
    assert auc.low is not None
    assert auc.high is not None
    assert auc.value is not None
    assert 0.0 <= auc.low <= auc.value <= auc.high <= 1.0


def test_auc_undefined_without_both_classes() -> None:
    scores = np.array([0.1, 0.5, 0.9])
    assert roc_auc(scores, np.zeros(3, dtype=bool)) == Auc(
        None, None, None, None, 0, 3, "people said only 'no': AUC needs both classes"
    )
    assert roc_auc(scores, np.ones(3, dtype=bool)) == Auc(
        None, None, None, None, 3, 0, "people said only 'yes': AUC needs both classes"
    )
    assert roc_auc(np.array([]), np.array([], dtype=bool)) == Auc(None, None, None, None, 0, 0, "no cases")


def test_auc_with_one_case_of_a_class_has_a_value_but_no_delong_interval() -> None:
    auc = roc_auc(np.array([0.9, 0.2, 0.4, 0.95]), np.array([True, False, False, False]))
    assert auc.value == pytest.approx(2 / 3)
    assert auc.se is auc.low is auc.high is None
    assert auc.undefined is not None
    assert "two" in auc.undefined


def test_auc_of_perfectly_separated_and_all_tied_scores() -> None:
    perfect = roc_auc(np.array([0.1, 0.2, 0.8, 0.9]), np.array([False, False, True, True]))
    assert (perfect.value, perfect.se, perfect.low, perfect.high) == (1.0, 0.0, 1.0, 1.0)
    tied = roc_auc(np.full(6, 0.5), np.array([True, False] * 3))
    assert (tied.value, tied.se, tied.low, tied.high) == (0.5, 0.0, 0.5, 0.5)


def test_auc_accepts_infinite_scores_and_rejects_malformed_input() -> None:
    auc = roc_auc(np.array([-np.inf, 0.0, 1.0, np.inf]), np.array([False, True, False, True]))
    assert auc.value == pytest.approx(0.75)
    with pytest.raises(ValueError, match="NaN"):
        roc_auc(np.array([0.1, np.nan]), np.array([True, False]))
    with pytest.raises(ValueError, match="same length"):
        roc_auc(np.array([0.1, 0.2]), np.array([True]))
    with pytest.raises(ValueError, match="boolean"):
        roc_auc(np.array([0.1, 0.2]), np.array([1, 0]))
    with pytest.raises(ValueError, match="confidence"):
        roc_auc(np.array([0.1, 0.2]), np.array([True, False]), confidence=0.0)


# --- threshold_table and threshold_for ----------------------------------------------------------------------------


def _counted(scores: np.ndarray, positive: np.ndarray, threshold: float) -> dict[str, Any]:
    """One row written out case by case: the judge says yes at score >= threshold."""
    said = scores >= threshold
    tp, fp = int((said & positive).sum()), int((said & ~positive).sum())
    fn, tn = int((~said & positive).sum()), int((~said & ~positive).sum())
    return {
        "thresholds": float(threshold),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
        "flagged": (fn + tn) / scores.size if scores.size else None,
    }


@pytest.mark.parametrize(("n", "levels", "seed"), [(0, 3, 0), (1, 3, 1), (25, 4, 2), (400, 21, 3), (1000, 10**6, 4)])
def test_threshold_table_equals_counting_case_by_case(n: int, levels: int, seed: int) -> None:
    scores, positive = _scored(np.random.default_rng(seed), n, levels)
    sweep = [-np.inf, *(step * 0.05 for step in range(21)), 1.5]
    table = threshold_table(scores, positive, sweep)
    assert table.rows() == [_counted(scores, positive, threshold) for threshold in sweep]
    assert json.loads(json.dumps(table.rows()[1:-1])) == table.rows()[1:-1]
    _assert_no_nan(table.rows())


@pytest.mark.parametrize(("n", "levels", "seed"), [(30, 4, 5), (500, 50, 6), (3000, 10**6, 7)])
def test_threshold_table_at_the_distinct_scores_equals_sklearns_precision_recall_curve(
    n: int, levels: int, seed: int
) -> None:
    scores, positive = _scored(np.random.default_rng(seed), n, levels)
    positive[0] = True
    precision, recall, thresholds = precision_recall_curve(positive, scores)
    np.testing.assert_array_equal(thresholds, np.unique(scores))  # every distinct score, increasing
    table = threshold_table(scores, positive, thresholds)
    np.testing.assert_allclose(np.array(table.precision, dtype=float), precision[:-1], rtol=1e-15)
    np.testing.assert_allclose(np.array(table.recall, dtype=float), recall[:-1], rtol=1e-15)


def test_threshold_table_says_none_where_a_share_has_no_cases() -> None:
    table = threshold_table(np.array([0.2, 0.6]), np.array([False, False]), (0.5, 0.9))
    assert table.precision == (0.0, None)  # at 0.9 the judge says yes to nothing
    assert table.recall == (None, None)  # people said yes to nothing
    assert table.flagged == (0.5, 1.0)
    empty = threshold_table(np.array([]), np.array([], dtype=bool), (0.5,))
    assert (empty.tp, empty.precision, empty.recall, empty.flagged) == ((0,), (None,), (None,), (None,))
    with pytest.raises(ValueError, match="thresholds"):
        threshold_table(np.array([0.2]), np.array([True]), (np.nan,))


def _sklearn_threshold(scores: np.ndarray, positive: np.ndarray, measure: str, target: float) -> float | None:
    """The reference: lowest distinct score with precision >= target, or highest with recall >= target."""
    precision, recall, thresholds = precision_recall_curve(positive, scores)
    values = (precision if measure == "precision" else recall)[:-1]
    meets = thresholds[values >= target]
    if meets.size == 0:
        return None
    return float(meets.min() if measure == "precision" else meets.max())


@pytest.mark.parametrize("measure", ["precision", "recall"])
@pytest.mark.parametrize("target", [0.05, 0.5, 0.7, 0.8, 0.9, 0.99, 1.0])
@pytest.mark.parametrize(("n", "levels", "seed"), [(20, 3, 8), (300, 30, 9), (2000, 10**6, 10)])
def test_threshold_for_equals_the_choice_from_sklearns_curve(
    measure: str, target: float, n: int, levels: int, seed: int
) -> None:
    scores, positive = _scored(np.random.default_rng(seed), n, levels)
    positive[0] = True
    found = threshold_for(scores, positive, **{measure: target})
    expected = _sklearn_threshold(scores, positive, measure, target)
    if expected is None:
        assert found is None
        return
    assert found is not None
    assert found.threshold == expected
    row = _counted(scores, positive, expected)
    assert (found.precision, found.recall, found.flagged) == (row["precision"], row["recall"], row["flagged"])
    assert getattr(found, measure) >= target


def test_threshold_for_hand_made() -> None:
    scores = np.array([0.1, 0.3, 0.3, 0.6, 0.8, 0.9])
    positive = np.array([False, True, False, False, True, True])
    # At 0.8: yes to {0.8, 0.9}, both people's yes: precision 1, recall 2/3, flagged 4/6; lower thresholds add a no.
    assert threshold_for(scores, positive, precision=1.0) == Threshold(0.8, 1.0, 2 / 3, 4 / 6)
    # Recall 1 needs the 0.3 yes: the highest such threshold is 0.3, with precision 3/5 and 1/6 flagged.
    assert threshold_for(scores, positive, recall=1.0) == Threshold(0.3, 3 / 5, 1.0, 1 / 6)
    assert threshold_for(scores, np.zeros(6, dtype=bool), precision=0.5) is None  # no yes to find
    assert threshold_for(scores, np.zeros(6, dtype=bool), recall=0.5) is None
    assert threshold_for(np.array([0.5, 0.5]), np.array([True, False]), precision=0.9) is None  # tied: 1/2 at best
    assert threshold_for(np.array([]), np.array([], dtype=bool), recall=0.5) is None


def test_threshold_for_takes_exactly_one_target_in_range() -> None:
    scores, positive = np.array([0.1, 0.9]), np.array([False, True])
    with pytest.raises(ValueError, match="exactly one"):
        threshold_for(scores, positive)
    with pytest.raises(ValueError, match="exactly one"):
        threshold_for(scores, positive, precision=0.5, recall=0.5)
    for bad in (0.0, -0.1, 1.01):
        with pytest.raises(ValueError, match=r"\(0, 1\]"):
            threshold_for(scores, positive, recall=bad)


# --- the judge-against-judge test and the intervals the agreement report reuses -----------------------------------


@pytest.mark.parametrize(("first_only", "second_only"), [(0, 0), (0, 3), (9, 3), (4, 4), (40, 61), (1200, 1100)])
def test_mcnemar_of_two_judges_equals_statsmodels_exact(first_only: int, second_only: int) -> None:
    # Rows: the first judge agrees with people or not; columns: the second judge does or not.
    table = [[50, first_only], [second_only, 7]]
    expected = mcnemar(table, exact=True).pvalue
    assert mcnemar_counts_p(first_only, second_only) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize(("hits", "trials"), [(0, 12), (12, 12), (1, 1_000_000), (731_402, 1_000_000)])
def test_sensitivity_intervals_at_scale_equal_scipys(hits: int, trials: int) -> None:
    expected = scipy_stats.binomtest(hits, trials).proportion_ci(0.95, method="exact")
    interval = binomial_ci(hits, trials)
    # scipy finds the bounds by brentq to an absolute 2e-12.
    assert interval == pytest.approx((expected.low, expected.high), rel=1e-9, abs=2e-12)
