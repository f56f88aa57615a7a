"""The paired statistics agree with scipy, are reproducible, and handle empty and degenerate samples."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from rag_compare.compute import stats
from rag_compare.compute.delta_histogram import DeltaHistogram
from rag_compare.compute.stats import bootstrap_ci, holm, mcnemar_exact_p, permutation_p_value

# Forcing each resampling path: 1 groups any sample by distinct value, 10**9 never does; 20 groups the often
# repeated values of _mixed and draws its rarer deltas one by one.
GROUPED, PER_DELTA, SPLIT = 1, 10**9, 20
# Chunks of 1000 random numbers split every Monte Carlo run below into many chunks.
SMALL_CHUNKS = 1000


def _ternary(n: int, seed: int) -> np.ndarray:
    """Boolean outcomes as deltas: candidate - baseline in {-1, 0, 1}."""
    return np.random.default_rng(seed).choice([-1.0, 0.0, 1.0], size=n, p=[0.25, 0.45, 0.30])


def _normal(n: int, seed: int, shift: float = 0.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(shift, 1.0, size=n)


def _mixed(n: int, seed: int, z: float) -> np.ndarray:
    """Half the deltas from five values repeated about 20 times each, half distinct, moved z standard errors up."""
    rng = np.random.default_rng(seed)
    repeated = rng.choice([-1.0, -0.5, 0.25, 0.5, 1.0], size=n // 2)
    deltas = np.concatenate([repeated, rng.normal(0.0, 1.0, size=n - n // 2)])
    return _centred(deltas, z)


def _scipy_permutation_p(x: np.ndarray, y: np.ndarray, resamples: int, seed: int = 0) -> float:
    return float(
        scipy_stats.permutation_test(
            (x, y),
            lambda a, b, axis: np.mean(a - b, axis=axis),
            permutation_type="samples",
            alternative="two-sided",
            vectorized=True,
            n_resamples=resamples,
            rng=np.random.default_rng(seed),
        ).pvalue
    )


# --- bootstrap_ci -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("chunk_cells", [stats._CHUNK_CELLS, SMALL_CHUNKS])
@pytest.mark.parametrize("min_repeats", [GROUPED, PER_DELTA])
@pytest.mark.parametrize(("kind", "deltas"), [("ternary", _ternary(400, 1)), ("normal", _normal(400, 2, 0.1))])
def test_bootstrap_ci_matches_scipy(
    monkeypatch: pytest.MonkeyPatch, chunk_cells: int, min_repeats: int, kind: str, deltas: np.ndarray
) -> None:
    monkeypatch.setattr(stats, "_MIN_REPEATS", min_repeats)
    monkeypatch.setattr(stats, "_CHUNK_CELLS", chunk_cells)
    resamples = 20_000
    ci = bootstrap_ci(deltas, resamples=resamples)
    ref = scipy_stats.bootstrap(
        (deltas,), np.mean, method="percentile", n_resamples=resamples, rng=np.random.default_rng(99)
    ).confidence_interval
    # Each endpoint is a 2.5% / 97.5% quantile of R resampled means, roughly Normal with sd s = sd(d) / sqrt(n).
    # Its Monte Carlo standard error is sqrt(q (1 - q) / R) / density = sqrt(0.025 * 0.975 / R) / (phi(1.96) / s)
    # = 0.019 s for R = 20000, so two independent estimates differ with sd 0.027 s; 0.15 s is 5.6 of those sds.
    # Ternary means live on a lattice of step 1 / n, and two estimates may straddle one step of it.
    s = deltas.std() / math.sqrt(deltas.size)
    tolerance = 0.15 * s + (1 / deltas.size if kind == "ternary" else 0.0)
    assert ci is not None
    assert ci[0] == pytest.approx(ref.low, abs=tolerance)
    assert ci[1] == pytest.approx(ref.high, abs=tolerance)


@pytest.mark.parametrize("min_repeats", [GROUPED, PER_DELTA])
def test_bootstrap_ci_is_reproducible_and_seeded(monkeypatch: pytest.MonkeyPatch, min_repeats: int) -> None:
    monkeypatch.setattr(stats, "_MIN_REPEATS", min_repeats)
    deltas = _normal(300, 3)
    assert bootstrap_ci(deltas) == bootstrap_ci(deltas.copy())
    assert bootstrap_ci(deltas, seed=1) == bootstrap_ci(deltas, seed=1)
    assert bootstrap_ci(deltas, seed=1) != bootstrap_ci(deltas, seed=2)


def test_bootstrap_ci_width_matches_the_standard_error() -> None:
    # Ternary deltas repeat far more than _MIN_REPEATS times, so they take the grouped multinomial path, and
    # continuous ones the per-delta path; both must give a proper interval around the sample mean.
    for deltas in (_ternary(5_000, 4), _normal(5_000, 5)):
        ci = bootstrap_ci(deltas)
        assert ci is not None
        assert ci[0] < deltas.mean() < ci[1]
        assert ci[1] - ci[0] == pytest.approx(2 * 1.96 * deltas.std() / math.sqrt(deltas.size), rel=0.1)


def test_bootstrap_ci_quantiles_are_precise_on_a_large_sample() -> None:
    # For n = 100000 ternary deltas the bootstrap mean is Normal(mean, s = std / sqrt(n)) up to a lattice step of
    # 0.004 s and a skewness correction near 1e-4 s, so the 95% interval is mean -+ 1.96 s. With 10**6 grouped
    # resamples each endpoint has Monte Carlo sd 2.67 s / 1000 = 0.0027 s; 0.02 s allows 5 of those plus the step.
    deltas = _ternary(100_000, 6)
    s = deltas.std() / math.sqrt(deltas.size)
    ci = bootstrap_ci(deltas, resamples=1_000_000)
    assert ci is not None
    assert ci[0] == pytest.approx(deltas.mean() - 1.959964 * s, abs=0.02 * s)
    assert ci[1] == pytest.approx(deltas.mean() + 1.959964 * s, abs=0.02 * s)


def test_bootstrap_ci_empty_and_degenerate() -> None:
    assert bootstrap_ci(np.array([])) is None
    assert bootstrap_ci(np.full(50, 0.1)) == (0.1, 0.1)
    assert bootstrap_ci(np.array([-2.0])) == (-2.0, -2.0)


@pytest.mark.parametrize("bad", [np.array([1.0, np.nan]), np.array([np.inf]), np.zeros((2, 2))])
def test_bootstrap_ci_rejects_bad_deltas(bad: np.ndarray) -> None:
    with pytest.raises(ValueError, match="finite"):
        bootstrap_ci(bad)


def test_bootstrap_ci_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci(np.ones(3), confidence=1.0)
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_ci(np.ones(3), resamples=0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=60))
def test_bootstrap_ci_contains_the_sample_mean(values: list[float]) -> None:
    deltas = np.array(values)
    ci = bootstrap_ci(deltas, resamples=400)
    assert ci is not None
    slack = 1e-9 * (1 + np.abs(deltas).max())  # the resampled means are rounded differently from np.mean
    assert ci[0] - slack <= deltas.mean() <= ci[1] + slack


def test_bootstrap_ci_covers_the_true_mean_at_about_the_nominal_rate() -> None:
    # 200 samples of 60 from Normal(0.3, 1); the percentile interval covers 0.3 about 94% of the time at this n.
    # With 200 trials the observed rate has sd 0.017, so [0.87, 0.99] is a band of about 3.5 sds.
    covered = 0
    for seed in range(200):
        ci = bootstrap_ci(_normal(60, 1000 + seed, 0.3), resamples=500)
        assert ci is not None
        covered += ci[0] <= 0.3 <= ci[1]
    assert 0.87 <= covered / 200 <= 0.99


# --- permutation_p_value ----------------------------------------------------------------------------------------

_SMALL_PAIRS = [
    (np.array([1.0, 2.0]), np.array([0.0, 0.5])),
    (np.array([3.0, 1.0, 2.0, 2.0, 0.0]), np.array([1.0, 1.0, 0.0, 2.0, 2.0])),  # zeros and tied |deltas|
    (np.array([0.5, 0.5, 0.5, 0.25, 1.0, 1.0]), np.array([0.25, 0.75, 0.5, 0.5, 0.75, 0.0])),
    (np.array([1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0]), np.array([0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0])),  # booleans
    (np.zeros(4), np.zeros(4)),
    *[(_normal(n, 10 + n), _normal(n, 20 + n, 0.4)) for n in (3, 6, 8, 10)],
    *[
        (rng.integers(0, 3, n).astype(float), rng.integers(0, 3, n).astype(float))
        for n, rng in ((9, np.random.default_rng(30)), (10, np.random.default_rng(31)))
    ],
]


@pytest.mark.parametrize(("x", "y"), _SMALL_PAIRS)
def test_permutation_p_value_is_exact_like_scipy_on_small_samples(
    monkeypatch: pytest.MonkeyPatch, x: np.ndarray, y: np.ndarray
) -> None:
    # 2**n <= resamples: both enumerate every sign vector, so the p-values are the same fraction.
    expected = _scipy_permutation_p(x, y, resamples=10_000)
    assert permutation_p_value(x - y) == pytest.approx(expected, abs=1e-12)
    assert permutation_p_value(x - y, seed=123) == pytest.approx(expected, abs=1e-12)
    monkeypatch.setattr(stats, "_CHUNK_CELLS", 7)  # enumerating in many chunks changes nothing
    assert permutation_p_value(x - y) == pytest.approx(expected, abs=1e-12)


def test_permutation_p_value_switches_to_exact_at_two_to_the_n() -> None:
    x, y = _normal(6, 40), _normal(6, 41, 0.8)
    (exact,) = {permutation_p_value(x - y, resamples=64, seed=seed) for seed in range(10)}
    assert exact == pytest.approx(_scipy_permutation_p(x, y, 64), abs=1e-12)
    # One resample short of 2**6 the p-value is a Monte Carlo estimate, which depends on the seed.
    assert len({permutation_p_value(x - y, resamples=63, seed=seed) for seed in range(10)}) > 1


def _centred(deltas: np.ndarray, z: float) -> np.ndarray:
    """Deltas moved so that their mean is z standard errors above zero (two-sided p around 2 * (1 - Phi(z)))."""
    moved: np.ndarray = deltas - deltas.mean() + z * deltas.std() / math.sqrt(deltas.size)
    return moved


@pytest.mark.parametrize("chunk_cells", [stats._CHUNK_CELLS, SMALL_CHUNKS])
@pytest.mark.parametrize("min_repeats", [GROUPED, PER_DELTA, SPLIT])
@pytest.mark.parametrize(
    "deltas", [_centred(_normal(200, 50), 1.4), _centred(_normal(200, 51), 2.0), _mixed(200, 52, 1.6)]
)
def test_permutation_p_value_matches_scipy_monte_carlo(
    monkeypatch: pytest.MonkeyPatch, chunk_cells: int, min_repeats: int, deltas: np.ndarray
) -> None:
    monkeypatch.setattr(stats, "_MIN_REPEATS", min_repeats)
    monkeypatch.setattr(stats, "_CHUNK_CELLS", chunk_cells)
    resamples = 20_000
    p = permutation_p_value(deltas, resamples=resamples)
    expected = _scipy_permutation_p(deltas, np.zeros_like(deltas), resamples, seed=7)
    # A two-sided Monte Carlo p = 2 q with q a proportion of R draws has sd sqrt(p (2 - p) / R); two independent
    # estimates differ with sd sqrt(2 p (2 - p) / R) (0.006 at p = 0.16, R = 20000); allow 5 of those.
    assert 0.02 < expected < 0.3  # the data are built to give a moderate p, where the comparison has power
    assert p == pytest.approx(expected, abs=5 * math.sqrt(2 * expected * (2 - expected) / resamples))


@pytest.mark.parametrize("min_repeats", [GROUPED, PER_DELTA])
def test_permutation_p_value_on_ternary_deltas_matches_the_exact_binomial_null(
    monkeypatch: pytest.MonkeyPatch, min_repeats: int
) -> None:
    # 70 wins, 55 losses, 75 ties: the sign-flip null of the sum is 2 B - 125 with B ~ Binomial(125, 1/2), so the
    # exact p is 2 min(P(B <= 70), P(B >= 70)) = 2 P(B >= 70); the Monte Carlo p must be within 5 sds of it.
    monkeypatch.setattr(stats, "_MIN_REPEATS", min_repeats)
    deltas = np.random.default_rng(60).permutation(np.repeat([1.0, -1.0, 0.0], [70, 55, 75]))
    exact = 2 * float(scipy_stats.binom.sf(69, 125, 0.5))
    resamples = 20_000
    assert permutation_p_value(deltas, resamples=resamples) == pytest.approx(
        exact, abs=5 * math.sqrt(exact * (2 - exact) / resamples)
    )


@pytest.mark.parametrize("shift", [0.5, -0.5])
def test_permutation_p_value_detects_a_strong_shift(shift: float) -> None:
    p = permutation_p_value(_normal(300, 70, shift))
    assert p is not None
    assert p < 0.001
    assert p == 2 / 10_001  # no null sum reaches the observed one: the +1 adjustment alone


def test_permutation_p_value_is_reproducible() -> None:
    noisy = _normal(300, 71, shift=0.05)
    assert permutation_p_value(noisy, seed=5) == permutation_p_value(noisy.copy(), seed=5)
    assert permutation_p_value(noisy, seed=5) != permutation_p_value(noisy, seed=6)


def test_permutation_p_value_empty_and_all_zero() -> None:
    assert permutation_p_value(np.array([])) is None
    assert permutation_p_value(np.zeros(5)) == 1.0  # exact path
    assert permutation_p_value(np.zeros(500)) == 1.0  # Monte Carlo path


def test_exact_permutation_p_value_is_symmetric_in_sign() -> None:
    # Enumerating every sign vector makes the null exactly symmetric (Monte Carlo draws are only so in law).
    deltas = _normal(12, 80, shift=0.5)
    p = permutation_p_value(deltas)
    assert p is not None
    assert p < 0.5
    assert p == permutation_p_value(-deltas)


def _exact_sign_flip_p(deltas: list[Fraction]) -> Fraction:
    """The two-sided sign-flip p of the sum in exact arithmetic, over all 2**n sign vectors."""
    observed = sum(deltas, Fraction(0))
    null = [
        sum((delta if signs >> index & 1 else -delta for index, delta in enumerate(deltas)), Fraction(0))
        for signs in range(2 ** len(deltas))
    ]
    less = Fraction(sum(value <= observed for value in null), len(null))
    greater = Fraction(sum(value >= observed for value in null), len(null))
    return min(Fraction(1), 2 * min(less, greater))


_THIRDS = [Fraction(1, 3)] * 10 + [Fraction(-1, 3)] * 10 + [Fraction(0)] * 20  # the null sums carry rounding
_ZERO_MEAN = [
    _THIRDS,
    [Fraction(1, 10), Fraction(2, 10), Fraction(-3, 10)] * 20,  # 0.1 + 0.2 - 0.3 is 5.6e-17 in floats
    [Fraction(1, 7)] * 40 + [Fraction(-1, 7)] * 40,  # one |delta| repeated often enough to be drawn as a binomial
]


@pytest.mark.parametrize("min_repeats", [GROUPED, PER_DELTA])
@pytest.mark.parametrize("exact", _ZERO_MEAN)
def test_permutation_p_value_is_one_when_the_mean_delta_is_zero(
    monkeypatch: pytest.MonkeyPatch, min_repeats: int, exact: list[Fraction]
) -> None:
    # A null sum equal to the observed one counts on both sides, so p = 2 min(less, greater) is 1 whatever the draws.
    monkeypatch.setattr(stats, "_MIN_REPEATS", min_repeats)
    deltas = np.array([float(value) for value in exact])
    assert permutation_p_value(deltas) == 1.0


def test_permutation_p_value_of_a_zero_mean_is_scipys() -> None:
    # scipy computes each null mean exactly zero here and counts it as a tie. (On 0.1 + 0.2 - 0.3 it does not: its
    # tolerance, relative to the observed mean, is then 100 eps x 5.6e-17.)
    deltas = np.array([float(value) for value in _THIRDS])
    assert _scipy_permutation_p(deltas, np.zeros_like(deltas), resamples=10_000) == 1.0
    assert permutation_p_value(deltas) == 1.0


@pytest.mark.parametrize(
    "exact",
    [
        [Fraction(1, 10), Fraction(2, 10), Fraction(-3, 10)] * 3,
        [Fraction(1, 3), Fraction(-1, 3), Fraction(1, 3), Fraction(-1, 3), Fraction(0), Fraction(1, 6)],
        [Fraction(1, 3)] * 4 + [Fraction(-1, 3)] * 3 + [Fraction(-1, 6), Fraction(-1, 6)],  # mean zero, near ties
        [Fraction(1, 10)] * 5 + [Fraction(-1, 10)] * 5 + [Fraction(1, 1000)],  # a mean near zero
        [Fraction(7, 10), Fraction(-1, 10), Fraction(-2, 10), Fraction(-4, 10), Fraction(1, 1000)],
    ],
)
def test_exact_permutation_p_value_equals_exact_arithmetic_near_a_zero_mean(exact: list[Fraction]) -> None:
    deltas = np.array([float(value) for value in exact])
    assert permutation_p_value(deltas) == pytest.approx(float(_exact_sign_flip_p(exact)), abs=1e-12)


def test_permutation_p_value_near_a_zero_mean_matches_scipy_monte_carlo() -> None:
    # A mean of 0.001 against |deltas| of 1/3: p is close to 1 but below it, and no tolerance may swallow the shift.
    deltas = np.array([1 / 3] * 30 + [-1 / 3] * 30 + [0.001 * 60 / 7] * 7)
    resamples = 20_000
    p = permutation_p_value(deltas, resamples=resamples)
    expected = _scipy_permutation_p(deltas, np.zeros_like(deltas), resamples, seed=8)
    assert expected < 1.0
    assert p == pytest.approx(expected, abs=5 * math.sqrt(2 * expected * (2 - expected) / resamples))


# --- histogram path: independent of order and partitioning ------------------------------------------------------


def _reference_multinomial_ci(deltas: np.ndarray, resamples: int, seed: int) -> tuple[float, float]:
    """The grouped bootstrap as main's code drew it, written out: one multinomial draw per resample over the
    sorted distinct values (one chunk: resamples x distinct values is far below the chunk size)."""
    values, counts = np.unique(deltas, return_counts=True)
    means = np.random.default_rng(seed).multinomial(deltas.size, counts / deltas.size, size=resamples) @ values
    # The levels as main computes them from the confidence: (1 - 0.95) / 2 is 0.025000000000000022, not 0.025.
    low, high = np.quantile(means / deltas.size, [(1 - 0.95) / 2, (1 + 0.95) / 2])
    return float(low), float(high)


def _reference_grouped_permutation_p(deltas: np.ndarray, resamples: int, seed: int) -> float:
    """The sign-flip p where every nonzero |delta| repeats _MIN_REPEATS times or more, written out: one
    Binomial(c, 1/2) per sorted distinct |delta| and resample; observed sum and tolerance in exact arithmetic."""
    magnitudes, counts = np.unique(np.abs(deltas[deltas != 0]), return_counts=True)
    assert (counts >= stats._MIN_REPEATS).all()
    null = (2 * np.random.default_rng(seed).binomial(counts, 0.5, size=(resamples, counts.size)) - counts) @ magnitudes
    observed, tie = math.fsum(deltas), 1e-9 * math.fsum(np.abs(deltas))
    less = (np.count_nonzero(null <= observed + tie) + 1) / (resamples + 1)
    greater = (np.count_nonzero(null >= observed - tie) + 1) / (resamples + 1)
    return min(1.0, 2 * min(less, greater))


_REPEATED = [
    _ternary(3_000, 90),
    np.random.default_rng(91).choice([-0.75, -0.25, 0.0, 0.25, 0.5, 1.0], size=2_000),
    np.random.default_rng(92).choice([-1 / 3, 1 / 3, 2 / 3, 0.1, -0.2], size=1_500, p=[0.3, 0.3, 0.2, 0.1, 0.1]),
]


@pytest.mark.parametrize("deltas", _REPEATED)
def test_grouped_statistics_equal_main_s_draws_written_out(deltas: np.ndarray) -> None:
    assert bootstrap_ci(deltas) == _reference_multinomial_ci(deltas, 2000, stats.SEED)
    assert bootstrap_ci(deltas, resamples=500, seed=3) == _reference_multinomial_ci(deltas, 500, 3)
    assert permutation_p_value(deltas) == _reference_grouped_permutation_p(deltas, 10_000, stats.SEED)
    assert permutation_p_value(deltas, seed=4) == _reference_grouped_permutation_p(deltas, 10_000, 4)


def _random_split(deltas: np.ndarray, parts: int, seed: int) -> list[np.ndarray]:
    shuffled = np.random.default_rng(seed).permutation(deltas)
    cuts = np.sort(np.random.default_rng(seed + 1).integers(0, deltas.size + 1, parts - 1))
    return np.split(shuffled, cuts)


@pytest.mark.parametrize("deltas", [*_REPEATED, _normal(500, 93), _mixed(600, 94, 1.0), np.round(_normal(400, 95), 1)])
@pytest.mark.parametrize("parts", [1, 2, 4, 7])
def test_histogram_statistics_of_merged_partitions_equal_the_whole_sample(deltas: np.ndarray, parts: int) -> None:
    # Shuffled and split at random: the merged histogram is the whole sample's, and so is every statistic drawn
    # from it, bit for bit (the permutation test's rarer deltas are drawn in increasing order of |delta|).
    merged = DeltaHistogram.merged(DeltaHistogram.of(part) for part in _random_split(deltas, parts, parts))
    whole = DeltaHistogram.of(deltas)
    np.testing.assert_array_equal(merged.values, whole.values)
    np.testing.assert_array_equal(merged.counts, whole.counts)
    assert stats.histogram_permutation_p(merged) == permutation_p_value(deltas)
    assert stats.histogram_permutation_p(merged) == permutation_p_value(np.random.default_rng(1).permutation(deltas))
    if stats.resampled_by_counts(merged):
        assert stats.histogram_bootstrap_ci(merged) == bootstrap_ci(deltas)


def test_the_sign_flip_null_is_drawn_in_increasing_order_of_magnitude(monkeypatch: pytest.MonkeyPatch) -> None:
    # Deltas drawn one by one: bit j of a resample flips the j-th smallest |delta|, whatever the input order.
    monkeypatch.setattr(stats, "_MIN_REPEATS", 10**9)
    deltas = np.array([0.5, -2.0, 1.0, -0.25] * 5)
    rng = np.random.default_rng(0)
    null = stats._sampled_sign_flip_sums(DeltaHistogram.of(deltas).magnitudes(), 16, rng)
    bits = stats._random_bits(np.random.default_rng(0), range(16), deltas.size)
    ordered = np.sort(np.abs(deltas))
    np.testing.assert_allclose(null, 2 * bits @ ordered - ordered.sum(), rtol=0, atol=1e-12)


# --- mcnemar_exact_p --------------------------------------------------------------------------------------------


def _paired_flags(b: int, c: int, agree_true: int = 3, agree_false: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """b cases right only in the baseline, c only in the candidate, plus concordant cases that must not matter."""
    baseline = np.repeat([True, False, True, False], [b, c, agree_true, agree_false])
    candidate = np.repeat([False, True, True, False], [b, c, agree_true, agree_false])
    return baseline, candidate


_COUNTS = [0, 1, 2, 3, 5, 10, 37, 100, 1000]


@pytest.mark.parametrize(
    ("b", "c"),
    [(b, c) for b in _COUNTS for c in _COUNTS if b + c]
    + [(3, 1_020), (9_999, 10_000), (40_000, 41_000), (41_000, 40_000), (500_000, 500_000), (2_000_000, 2_003_000)],
)
def test_mcnemar_exact_p_matches_scipy_binomtest(b: int, c: int) -> None:
    p = mcnemar_exact_p(*_paired_flags(b, c))
    # Both evaluate the same binomial tail in double precision; they agree to about 1e-13 relative.
    assert p == pytest.approx(scipy_stats.binomtest(b, b + c, 0.5).pvalue, rel=1e-10, abs=0)
    assert p is not None
    assert 0.0 <= p <= 1.0


def test_mcnemar_exact_p_without_discordant_pairs_or_cases() -> None:
    assert mcnemar_exact_p(*_paired_flags(0, 0)) == 1.0
    assert mcnemar_exact_p(np.array([], dtype=bool), np.array([], dtype=bool)) is None
    with pytest.raises(ValueError, match="same length"):
        mcnemar_exact_p(np.array([True]), np.array([True, False]))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=200))
def test_mcnemar_exact_p_is_a_probability_symmetric_in_the_runs(pairs: list[tuple[bool, bool]]) -> None:
    baseline, candidate = np.array(pairs, dtype=bool).T
    p = mcnemar_exact_p(baseline, candidate)
    assert p is not None
    assert 0.0 <= p <= 1.0
    assert p == mcnemar_exact_p(candidate, baseline)


# --- holm -------------------------------------------------------------------------------------------------------


def test_holm_hand_computed() -> None:
    # m = 4, sorted p: 0.005, 0.01, 0.03, 0.04 -> 4 * 0.005 = 0.02, 3 * 0.01 = 0.03, 2 * 0.03 = 0.06,
    # 1 * 0.04 = 0.04 raised to the running max 0.06; back in input order: [0.03, 0.06, 0.06, 0.02].
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # m = 3: 3 * 0.2 = 0.6, 2 * 0.4 = 0.8, 1 * 0.9 = 0.9.
    assert holm([0.9, 0.2, 0.4]) == pytest.approx([0.9, 0.6, 0.8])
    # m = 2: 2 * 0.6 = 1.2 capped at 1, then 0.7 raised to 1.
    assert holm([0.7, 0.6]) == [1.0, 1.0]


def test_holm_keeps_none_and_ignores_it_in_m() -> None:
    # m = 2 (the Nones do not count): 2 * 0.01 = 0.02, 1 * 0.04 = 0.04.
    assert holm([None, 0.04, None, 0.01]) == pytest.approx([None, 0.04, None, 0.02])
    assert holm([None, None]) == [None, None]
    assert holm([]) == []
    assert holm([0.3]) == [0.3]


@pytest.mark.parametrize("bad", [-0.1, 1.5, math.nan])
def test_holm_rejects_non_probabilities(bad: float) -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([0.1, bad])


@given(st.lists(st.one_of(st.none(), st.floats(0, 1)), max_size=30))
def test_holm_is_monotone_bounded_and_order_preserving(p_values: list[float | None]) -> None:
    adjusted = holm(p_values)
    assert [a is None for a in adjusted] == [p is None for p in p_values]
    pairs = [(p, a) for p, a in zip(p_values, adjusted, strict=True) if p is not None and a is not None]
    for p, a in pairs:
        assert p <= a <= 1.0
    for p, a in pairs:
        for q, b in pairs:
            if p < q:
                assert a <= b


# --- sign_test_p and binomial_ci ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wins", "losses"),
    [(won, lost) for won in _COUNTS for lost in _COUNTS if won + lost] + [(30, 12), (12_345, 12_000)],
)
def test_sign_test_p_matches_scipy_binomtest(wins: int, losses: int) -> None:
    p = stats.sign_test_p(wins, losses)
    assert p == pytest.approx(scipy_stats.binomtest(wins, wins + losses, 0.5).pvalue, rel=1e-10, abs=0)


def test_sign_test_p_without_decided_pairs_or_with_a_negative_count() -> None:
    assert stats.sign_test_p(0, 0) is None
    # One win against one loss is the most even outcome there is: p = 1. Hand-computed: 2 P(X <= 1) capped at 1.
    assert stats.sign_test_p(1, 1) == 1.0
    # Five wins, no loss: 2 * (1/2)**5 = 1/16.
    assert stats.sign_test_p(5, 0) == pytest.approx(1 / 16, rel=1e-12)
    with pytest.raises(ValueError, match="counts of 0 or more"):
        stats.sign_test_p(-1, 3)


@pytest.mark.parametrize(
    ("successes", "trials"),
    [(0, 1), (1, 1), (0, 5), (5, 5), (1, 2), (3, 10), (7, 9), (450, 1000), (30, 42), (1, 10_000), (9_999, 10_000)],
)
@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.99])
def test_binomial_ci_matches_scipy_exact_interval(successes: int, trials: int, confidence: float) -> None:
    expected = scipy_stats.binomtest(successes, trials).proportion_ci(confidence, method="exact")
    interval = stats.binomial_ci(successes, trials, confidence=confidence)
    assert interval is not None
    assert interval[0] == pytest.approx(expected.low, abs=1e-10)
    assert interval[1] == pytest.approx(expected.high, abs=1e-10)


def test_binomial_ci_edges() -> None:
    assert stats.binomial_ci(0, 0) is None
    # 0 of n: [0, 1 - (alpha/2)**(1/n)]; n of n: [(alpha/2)**(1/n), 1]. Hand-computed for n = 4.
    assert stats.binomial_ci(0, 4) == (0.0, pytest.approx(1 - 0.025**0.25, abs=1e-12))
    assert stats.binomial_ci(4, 4) == (pytest.approx(0.025**0.25, abs=1e-12), 1.0)
    with pytest.raises(ValueError, match="between 0 and trials"):
        stats.binomial_ci(5, 4)
    with pytest.raises(ValueError, match="confidence"):
        stats.binomial_ci(1, 4, confidence=1.0)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))).filter(lambda t: t[1] > 0))
def test_binomial_ci_holds_the_observed_rate(case: tuple[int, int]) -> None:
    successes, trials = case
    interval = stats.binomial_ci(successes, trials)
    assert interval is not None
    assert 0.0 <= interval[0] <= successes / trials <= interval[1] <= 1.0


_EXACT_CASES = [
    (successes, trials)
    for trials in (1, 7, 50, 1000, 1_000_000)
    for successes in sorted({0, 1, 2, trials // 3, trials // 2, trials - 1, trials})
    if 0 <= successes <= trials
]


@pytest.mark.parametrize(("successes", "trials"), _EXACT_CASES)
@pytest.mark.parametrize("confidence", [0.5, 0.95, 0.999999])
def test_binomial_ci_matches_scipy_from_one_to_a_million_trials(successes: int, trials: int, confidence: float) -> None:
    interval = stats.binomial_ci(successes, trials, confidence=confidence)
    assert interval is not None
    # scipy's exact interval solves the binomial tails by brentq, to an absolute 2e-12 (its xtol).
    expected = scipy_stats.binomtest(successes, trials).proportion_ci(confidence, method="exact")
    assert interval == pytest.approx((expected.low, expected.high), rel=1e-9, abs=2e-12)
    # The same bounds as Beta quantiles, which scipy (Boost's inverse incomplete beta) finds to a relative 1e-15.
    tail = (1 - confidence) / 2
    low = 0.0 if successes == 0 else scipy_stats.beta.ppf(tail, successes, trials - successes + 1)
    high = 1.0 if successes == trials else scipy_stats.beta.isf(tail, successes + 1, trials - successes)
    assert interval == pytest.approx((low, high), rel=1e-9, abs=0)


@pytest.mark.parametrize("successes", [0, 3, 123_456_789, 500_000_000, 999_999_999])
def test_binomial_ci_at_a_billion_trials(successes: int) -> None:
    # A handful of continued-fraction evaluations, whatever the trials; the rounding of the front factor's deviance
    # grows with them, to about 1e-8 relative at 10**9.
    trials = 10**9
    interval = stats.binomial_ci(successes, trials)
    assert interval is not None
    low = 0.0 if successes == 0 else scipy_stats.beta.ppf(0.025, successes, trials - successes + 1)
    high = scipy_stats.beta.isf(0.025, successes + 1, trials - successes)
    assert interval == pytest.approx((low, high), rel=1e-7, abs=0)


@pytest.mark.parametrize(("successes", "trials"), [(3, 10), (0, 1_000_000), (999_000, 1_000_000)])
def test_binomial_ci_at_a_confidence_one_rounding_step_below_one(successes: int, trials: int) -> None:
    # 1 - tail rounds to 1 here, so each bound is solved on its own tail (below the low one, above the high one).
    confidence = 1 - 2**-53
    tail = (1 - confidence) / 2
    interval = stats.binomial_ci(successes, trials, confidence=confidence)
    low = 0.0 if successes == 0 else scipy_stats.beta.ppf(tail, successes, trials - successes + 1)
    high = scipy_stats.beta.isf(tail, successes + 1, trials - successes)
    assert interval == pytest.approx((low, high), rel=1e-9, abs=0)
