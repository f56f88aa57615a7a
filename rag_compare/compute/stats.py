"""Paired statistics for two runs on the same cases: numpy only, seeded, so reruns are bit-identical.

The resampling statistics are functions of the deltas' histogram (``DeltaHistogram``: distinct values sorted,
their counts), never of the order the deltas come in, so the histograms of partitions of the cases, merged, give
exactly the statistics of the whole sample (see ``partials``).

The bootstrap of the mean takes one of two paths. Where values repeat (``resampled_by_counts``: 32 times on
average or more) a resample matters only through how often each distinct value is drawn, and those counts are
Multinomial(n, counts / n): drawing the counts gives exactly the ordinary percentile bootstrap, at
O(resamples x distinct values) instead of O(resamples x n). Where they are mostly distinct it is a Poisson
bootstrap (``poisson_bootstrap``): each case is weighed Poisson(1) in each replicate by a hash of its id and the
replicate, with exact sums, so partitions of the cases merge to the same interval. The sign-flip permutation
test (scipy's definition) draws Binomial(count, 1/2) positive signs per often repeated |delta| and one sign per
rarer delta, in increasing order of |delta|; its observed sum and tie tolerance are summed over the sorted
histogram. McNemar and the sign test are the exact binomial test (McNemar from its discordant counts alone);
``binomial_ci`` is its exact (Clopper-Pearson) interval of a proportion, Beta quantiles found by Newton steps on the
regularized incomplete beta function (a continued fraction); holm adjusts p.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rag_compare.compute.delta_histogram import DeltaHistogram
from rag_compare.compute.poisson_bootstrap import FixedPoint, poisson_ci, poisson_sums, position_keys

__all__ = [
    "SEED",
    "binomial_ci",
    "bootstrap_ci",
    "histogram_bootstrap_ci",
    "histogram_permutation_p",
    "holm",
    "mcnemar_counts_p",
    "mcnemar_exact_p",
    "permutation_p_value",
    "resampled_by_counts",
    "sign_test_p",
]

SEED = 20_260_101
"""Default seed of the resampling functions."""

_MIN_REPEATS = 32
"""A grouped (multinomial or binomial) draw costs about as much as 30 per-delta draws, so deltas are grouped by
distinct value only when a value repeats this often (on average over the values, for the bootstrap)."""
_CHUNK_CELLS = 1 << 22
"""Random numbers drawn per chunk of resamples (32 MiB as int64), which bounds memory whatever the input size."""
_TIE_RTOL = 1e-9
"""How close to the observed statistic a null one counts as equal to it, relative to the scale of the statistics
(the mean, or the sum, of |deltas|): rounding errors grow with that scale and with n, not with the observed value,
which may be exactly 0. scipy.stats.permutation_test's tolerance, 100 eps x |observed|, is always within this one."""
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_QUANTILE_RTOL = 1e-12
"""A Newton step this small, relative to the quantile, leaves an error of about its square: the quantile is then
exact but for the rounding of the incomplete beta function (about 1e-11 relative at a million trials)."""
_MOST_QUANTILE_STEPS = 200
"""A cap on the quantile's Newton and bisection steps, far above the 3-15 it takes."""
_FRACTION_RTOL = 1e-15
"""The continued fraction stops when a term changes it by less than this, relatively."""
_MOST_FRACTION_TERMS = 1 << 24
"""A cap on the continued fraction's terms, far above the O(sqrt(max(a, b))) it needs (about 80 near a tail
quantile at a million trials)."""
_TINY = 1e-300
"""Lentz's stand-in for a denominator of 0 in the continued fraction."""

Floats = NDArray[np.float64]


def _as_deltas(deltas: NDArray[np.number[Any]]) -> Floats:
    d = np.asarray(deltas, dtype=np.float64)
    if d.ndim != 1 or not np.isfinite(d).all():
        raise ValueError("deltas must be a one-dimensional array of finite numbers")
    return d


def _check_resamples(resamples: int) -> None:
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")


def _chunked(total: int, width: int, draw: Callable[[range], Floats]) -> Floats:
    """Concatenate ``draw(rows)`` over consecutive ranges of ``total`` rows, each with at most _CHUNK_CELLS cells."""
    step = max(1, _CHUNK_CELLS // max(width, 1))
    return np.concatenate([draw(range(start, min(start + step, total))) for start in range(0, total, step)])


def bootstrap_ci(
    deltas: NDArray[np.number[Any]],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = SEED,
    case_hashes: NDArray[np.uint64] | None = None,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of the paired deltas; None when there are none.

    Values repeating often are resampled as multinomial counts (``histogram_bootstrap_ci``); mostly distinct
    ones by the Poisson bootstrap of ``poisson_bootstrap``, each case weighed by its ``case_hashes`` (default:
    its position), O(resamples x n) at 10-20 ns per resampled delta.
    """
    d = _as_deltas(deltas)
    _check_resamples(resamples)
    _check_confidence(confidence)
    if d.size == 0:
        return None
    histogram = DeltaHistogram.of(d)
    if histogram.values.size == 1 or resampled_by_counts(histogram):
        return histogram_bootstrap_ci(histogram, confidence=confidence, resamples=resamples, seed=seed)
    keys = position_keys(d.size) if case_hashes is None else case_hashes
    sums = poisson_sums(d, keys, FixedPoint.covering(histogram.values), resamples=resamples, seed=seed)
    return poisson_ci(sums, confidence=confidence)


def resampled_by_counts(histogram: DeltaHistogram) -> bool:
    """Whether the bootstrap of these deltas draws counts per distinct value (else, it weighs each case)."""
    return histogram.repeats(_MIN_REPEATS)


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")


def histogram_bootstrap_ci(
    histogram: DeltaHistogram, *, confidence: float = 0.95, resamples: int = 2000, seed: int = SEED
) -> tuple[float, float]:
    """The percentile bootstrap of the mean, drawing Multinomial(n, counts / n) counts of the histogram's values,
    O(resamples x distinct values); one distinct value v gives (v, v). The histogram must not be empty."""
    _check_resamples(resamples)
    _check_confidence(confidence)
    values, counts, n = histogram.values, histogram.counts, histogram.n
    if values.size == 1:
        return float(values[0]), float(values[0])
    rng, probabilities = np.random.default_rng(seed), counts / n
    means = _chunked(
        resamples, values.size, lambda rows: rng.multinomial(n, probabilities, size=len(rows)) @ values / n
    )
    low, high = np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(low), float(high)


def permutation_p_value(deltas: NDArray[np.number[Any]], *, resamples: int = 10000, seed: int = SEED) -> float | None:
    """Two-sided paired sign-flip test of mean delta = 0, as ``scipy.stats.permutation_test``; None when empty.

    With 2**n <= resamples every sign vector is enumerated and p is exact; otherwise p = 2 min(less, greater) with
    Monte Carlo counts adjusted by +1. Each often repeated |delta| costs one binomial draw per resample; each
    rarer delta costs 2-3 ns per resample (20-30 s for 10**4 x 10**6 distinct deltas). A function of the
    deltas' histogram only (``histogram_permutation_p``), whatever their order.
    """
    d = _as_deltas(deltas)
    _check_resamples(resamples)
    return None if d.size == 0 else histogram_permutation_p(DeltaHistogram.of(d), resamples=resamples, seed=seed)


def histogram_permutation_p(histogram: DeltaHistogram, *, resamples: int = 10000, seed: int = SEED) -> float:
    """``permutation_p_value`` of the deltas of a non-empty histogram: the observed sum and the tie tolerance are
    summed over the sorted values, the rarer |deltas| drawn one by one in increasing order."""
    _check_resamples(resamples)
    n = histogram.n
    total = float((np.abs(histogram.values) * histogram.counts).sum())
    if n <= math.log2(resamples):  # 2**n <= resamples
        d = histogram.deltas()
        return _two_sided_p(_all_sign_flip_means(d), float(np.mean(d)), tie=_TIE_RTOL * total / n, adjustment=0)
    observed = float((histogram.values * histogram.counts).sum())
    null = _sampled_sign_flip_sums(histogram.magnitudes(), resamples, np.random.default_rng(seed))
    return _two_sided_p(null, observed, tie=_TIE_RTOL * total, adjustment=1)


def _all_sign_flip_means(d: Floats) -> Floats:
    """Mean of each of the 2**n sign-flipped copies of d; copy k negates the deltas at the set bits of k."""
    return _chunked(2**d.size, d.size, lambda rows: (_sign_vectors(rows, d.size) * d).mean(axis=1))


def _sign_vectors(rows: range, n: int) -> NDArray[np.int64]:
    return 1 - 2 * ((np.arange(rows.start, rows.stop)[:, None] >> np.arange(n)) & 1)


def _sampled_sign_flip_sums(magnitudes: DeltaHistogram, resamples: int, rng: np.random.Generator) -> Floats:
    """Sums of randomly sign-flipped nonzero deltas, of the histogram of their magnitudes.

    A |delta| value shared by _MIN_REPEATS deltas or more is drawn as one binomial: B ~ Binomial(c, 1/2) positive
    signs among its c deltas add v (2 B - c) to the sum. The rarer deltas, in increasing order, each draw a random
    bit: keeping a delta where its bit is 1 and negating it where it is 0 sums to 2 (bits @ d) - sum(d).
    """
    values, counts = magnitudes.values, magnitudes.counts
    grouped = counts >= _MIN_REPEATS
    group_values, group_counts = values[grouped], counts[grouped]
    single = np.repeat(values[~grouped], counts[~grouped])
    single_total = float(single.sum())

    def draw(rows: range) -> Floats:
        sums = np.zeros(len(rows))
        if group_values.size:
            sums += (2 * rng.binomial(group_counts, 0.5, size=(len(rows), group_values.size)) - group_counts) @ (
                group_values
            )
        if single.size:
            sums += 2 * (_random_bits(rng, rows, single.size) @ single) - single_total
        return sums

    return _chunked(resamples, group_values.size + single.size, draw)


def _random_bits(rng: np.random.Generator, rows: range, n: int) -> Floats:
    """len(rows) x n fair 0/1 draws, unpacked from random bytes (several times faster than integers(0, 2))."""
    packed = rng.integers(0, 256, size=(len(rows), (n + 7) // 8), dtype=np.uint8)
    return np.unpackbits(packed, axis=1, count=n).astype(np.float64)


def _two_sided_p(null: Floats, observed: float, *, tie: float, adjustment: int) -> float:
    """scipy.stats.permutation_test's two-sided p: null statistics within ``tie`` of the observed one count on
    both sides."""
    total = null.size + adjustment
    less = (np.count_nonzero(null <= observed + tie) + adjustment) / total
    greater = (np.count_nonzero(null >= observed - tie) + adjustment) / total
    return min(1.0, 2 * min(less, greater))


def mcnemar_exact_p(baseline: NDArray[np.bool_], candidate: NDArray[np.bool_]) -> float | None:
    """Exact McNemar p on paired booleans: 2 P(X <= min(b, c)) capped at 1, X ~ Binomial(b + c, 1/2).

    b counts cases True only in the baseline, c those True only in the candidate; None when there are no cases.
    """
    base, cand = np.asarray(baseline, dtype=np.bool_), np.asarray(candidate, dtype=np.bool_)
    if base.shape != cand.shape or base.ndim != 1:
        raise ValueError("baseline and candidate must be one-dimensional arrays of the same length")
    if base.size == 0:
        return None
    return mcnemar_counts_p(int(np.count_nonzero(base & ~cand)), int(np.count_nonzero(~base & cand)))


def mcnemar_counts_p(b: int, c: int) -> float:
    """``mcnemar_exact_p`` of paired booleans with ``b`` cases True only in the baseline, ``c`` only in the
    candidate (1 when both are 0)."""
    if b < 0 or c < 0:
        raise ValueError(f"b and c must be counts of 0 or more, got {b} and {c}")
    return _sign_test(b, c)


def sign_test_p(wins: int, losses: int) -> float | None:
    """Two-sided exact sign test of ``wins`` against ``losses`` (ties left out): 2 P(X <= min) capped at 1,
    X ~ Binomial(wins + losses, 1/2); None when both are 0."""
    if wins < 0 or losses < 0:
        raise ValueError(f"wins and losses must be counts of 0 or more, got {wins} and {losses}")
    return None if wins + losses == 0 else _sign_test(wins, losses)


def _sign_test(b: int, c: int) -> float:
    return min(1.0, 2 * _binomial_half_cdf(min(b, c), b + c))


def binomial_ci(successes: int, trials: int, *, confidence: float = 0.95) -> tuple[float, float] | None:
    """Exact (Clopper-Pearson) interval of a proportion: the p at which P(X >= successes) and P(X <= successes)
    are each (1 - confidence) / 2, X ~ Binomial(trials, p); None without trials.

    Those p are Beta quantiles, low = BetaInv(tail; x, n - x + 1) and high = BetaInv(1 - tail; x + 1, n - x),
    found by safeguarded Newton steps on the regularized incomplete beta function (``_beta_tails``): a few steps
    of at most O(sqrt(trials)) terms each, well under a millisecond at a million trials.
    """
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must lie between 0 and trials, got {successes} of {trials}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if trials == 0:
        return None
    tail = (1 - confidence) / 2
    low = 0.0 if successes == 0 else _beta_quantile(tail, successes, trials - successes + 1)
    high = 1.0 if successes == trials else _beta_quantile(tail, successes + 1, trials - successes, upper=True)
    return low, high


def _beta_quantile(tail: float, a: int, b: int, *, upper: bool = False) -> float:
    """The p in (0, 1) with Beta(a, b) probability ``tail`` below it, or above it when ``upper``: Newton steps from
    the normal approximation (or from the mean, where that falls outside (0, 1)), each narrowing a bracket around
    the root, and a bisection of the bracket where a step would leave it."""
    n, mean = a + b, a / (a + b)
    z = NormalDist().inv_cdf(tail)
    normal = mean + (-z if upper else z) * math.sqrt(mean * (1 - mean) / (n + 1))
    low, high, p = 0.0, 1.0, normal if 0 < normal < 1 else mean
    for _ in range(_MOST_QUANTILE_STEPS):
        front = _beta_front(p, a, b)
        below, above = _beta_tails(p, a, b, front)
        excess = tail - above if upper else below - tail  # rises with p
        if excess == 0:
            return p
        low, high = (p, high) if excess < 0 else (low, p)
        density = front / (p * (1 - p))
        newton = p - excess / density if density > 0 else None
        guess = newton if newton is not None and low < newton < high else (low + high) / 2
        if abs(guess - p) <= _QUANTILE_RTOL * guess or guess in (low, high):
            return guess
        p = guess
    return p


def _beta_front(p: float, a: int, b: int) -> float:
    """p**a (1 - p)**b / B(a, b) for whole a, b >= 1: (a b / n) times the Binomial(n = a + b, p) probability of a,
    in Loader's saddle-point form (``_stirling_error``), whose deviance sums terms of the order of a - n p where
    log B(a, b) = lgamma(a) + lgamma(b) - lgamma(n) would cancel terms of the order of n log n."""
    n = a + b
    shortfall = a - n * p  # = -(b - n (1 - p))
    deviance = a * math.log1p(shortfall / (n * p)) + b * math.log1p(-shortfall / (n * (1 - p)))
    stirling = _stirling_error(n) - _stirling_error(a) - _stirling_error(b)
    return math.exp(stirling - deviance + 0.5 * math.log(a * b / n) - _HALF_LOG_2PI)


def _beta_tails(p: float, a: int, b: int, front: float) -> tuple[float, float]:
    """The Beta(a, b) probabilities below and above p in (0, 1), I_p(a, b) and I_(1-p)(b, a), of ``front`` =
    ``_beta_front(p, a, b)``: the front factor times a continued fraction, evaluated for the tail on the side of
    (a + 1) / (a + b + 2) where it converges fast, the other tail 1 minus that one."""
    if p < (a + 1) / (a + b + 2):
        below = front * _beta_fraction(p, a, b) / a
        return below, 1 - below
    above = front * _beta_fraction(1 - p, b, a) / b
    return 1 - above, above


def _beta_fraction(p: float, a: int, b: int) -> float:
    """The continued fraction of I_p(a, b) by the modified Lentz method (Numerical Recipes' betacf): its terms
    alternate d_2m = m (b - m) p / ((a + 2m - 1)(a + 2m)) and d_2m+1 = -(a + m)(a + b + m) p / ((a + 2m)(a + 2m + 1)).
    A denominator nearly 0 is replaced by _TINY (``_not_zero``, written out in the loop, which runs hot)."""
    c, d = 1.0, _not_zero(1 - (a + b) * p / (a + 1))
    fraction = d = 1 / d
    tiny = _TINY
    for m in range(1, _MOST_FRACTION_TERMS):
        for term in (
            m * (b - m) * p / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * p / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d, c = 1 + term * d, 1 + term / c
            d = 1 / (d if d >= tiny or d <= -tiny else tiny)
            c = c if c >= tiny or c <= -tiny else tiny
            fraction *= d * c
        if abs(d * c - 1) <= _FRACTION_RTOL:
            break
    return fraction


def _not_zero(value: float) -> float:
    """``value``, or _TINY in its place when it is nearly 0."""
    return value if abs(value) >= _TINY else _TINY


def _binomial_half_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2) and k <= n / 2, summing down from P(X = k) by pmf ratios."""
    i = np.arange(k, 0, -1, dtype=np.float64)
    ratios = i / (n - i + 1)  # P(X = i - 1) / P(X = i)
    return math.exp(_log_binomial_half_pmf(k, n)) * (1.0 + float(np.cumprod(ratios).sum()))


def _log_binomial_half_pmf(k: int, n: int) -> float:
    """log P(X = k) for X ~ Binomial(n, 1/2), in Loader's saddle-point form so it stays accurate for large n."""
    if k in (0, n):
        return -n * math.log(2)
    t = (2 * k - n) / n
    deviance = k * math.log1p(t) + (n - k) * math.log1p(-t)  # k log(2k / n) + (n - k) log(2(n - k) / n)
    spread = 0.5 * math.log(k * (n - k) / n) + _HALF_LOG_2PI
    return _stirling_error(n) - _stirling_error(k) - _stirling_error(n - k) - deviance - spread


def _stirling_error(m: int) -> float:
    """log(m!) - log(sqrt(2 pi m) (m / e)**m) for m >= 1, series from m = 32 (error < 1e-16)."""
    if m < 32:
        return math.lgamma(m + 1) - (m + 0.5) * math.log(m) + m - _HALF_LOG_2PI
    inverse_square = 1 / (m * m)
    return (1 / 12 - inverse_square * (1 / 360 - inverse_square * (1 / 1260 - inverse_square / 1680))) / m


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm step-down adjusted p-values in input order; None entries stay None and do not count."""
    present = sorted((p, index) for index, p in enumerate(p_values) if p is not None)
    if any(not 0 <= p <= 1 for p, _ in present):
        raise ValueError("p-values must lie in [0, 1]")
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, index) in enumerate(present):
        running = max(running, min(1.0, (len(present) - rank) * p))
        adjusted[index] = running
    return adjusted
