"""The Poisson bootstrap: hashed weights that are Poisson(1), the same in every process, exact sums that give the
same interval whatever the partitioning, and intervals that behave like the ordinary bootstrap's."""

from __future__ import annotations

import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from scipy import stats as scipy_stats

from rag_compare.compute import poisson_bootstrap
from rag_compare.compute.poisson_bootstrap import FixedPoint, poisson_ci, poisson_sums, poisson_weights
from rag_compare.core.digest import case_hash
from tests.helpers.data import ROOT

MASK = 2**64 - 1


def _reference_weight(key: int, replicate: int, seed: int) -> int:
    """w for one case and replicate, in plain integers: splitmix64 (Steele, Lea and Flood) and the Poisson(1)
    inverse CDF, P(X <= k) = e^-1 sum_{j <= k} 1 / j!, against a 32-bit uniform."""

    def mix(z: int) -> int:
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    gamma = 0x9E3779B97F4A7C15
    pair_key = mix((mix(seed) + (replicate // 2 + 1) * gamma) & MASK)
    word = mix((pair_key + key) & MASK)
    uniform = Fraction(word >> 32 if replicate % 2 == 0 else word & 0xFFFFFFFF, 2**32)
    k, cdf, term = 0, Fraction(0), Fraction(1)
    while True:  # e^-1 to 30 digits: far finer than the 2**-32 steps of the uniform
        cdf += term * Fraction("0.367879441171442321595523770161")
        if uniform < cdf:
            return k
        k, term = k + 1, term / (k + 1)


def _keys(count: int, prefix: str = "case") -> np.ndarray:
    return case_hash(pl.Series([f"{prefix}-{index}" for index in range(count)])).to_numpy()


def test_weights_are_splitmix64_through_the_poisson_inverse_cdf() -> None:
    keys = _keys(40)
    weights = poisson_weights(keys, 9, seed=20_260_101)
    expected = [[_reference_weight(int(key), r, 20_260_101) for key in keys] for r in range(9)]
    assert weights.tolist() == expected
    # The rare uniforms that the table cannot answer alone (close to a threshold, or in the far tail).
    rng = np.random.default_rng(0)
    tail = rng.integers(0, 2**63, size=2000, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    many = poisson_weights(tail, 64, seed=5)
    assert many.max() >= 5  # the tail is reached
    for replicate, case in zip(*np.nonzero(many >= 4), strict=True):
        assert many[replicate, case] == _reference_weight(int(tail[case]), int(replicate), 5)


def test_weights_are_the_same_in_another_process() -> None:
    code = (
        "import numpy as np, polars as pl; from rag_compare.core.digest import case_hash;"
        "from rag_compare.compute.poisson_bootstrap import poisson_weights;"
        "keys = case_hash(pl.Series([f'case-{i}' for i in range(300)])).to_numpy();"
        "print(poisson_weights(keys, 50, seed=7).tobytes().hex())"
    )
    other = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT)},
    )
    assert other.stdout.strip() == poisson_weights(_keys(300), 50, seed=7).tobytes().hex()


def test_weights_have_the_moments_and_frequencies_of_poisson_one() -> None:
    # 200 replicates x 5000 cases = 10**6 weights: the mean has sd 1e-3, the variance sd sqrt(3 / N) = 1.7e-3
    # (Poisson(1)'s fourth central moment is 4); allow 5 sds. Frequencies of 0..5 and 6 or more against the pmf
    # by a chi-square test at level 1e-4.
    weights = poisson_weights(_keys(5000), 200, seed=11).astype(np.float64)
    assert weights.mean() == pytest.approx(1.0, abs=5e-3)
    assert weights.var() == pytest.approx(1.0, abs=5 * math.sqrt(3 / weights.size))
    observed = np.bincount(weights.astype(np.int64).ravel(), minlength=7)
    observed = np.append(observed[:6], observed[6:].sum())
    pmf = scipy_stats.poisson.pmf(np.arange(6), 1.0)
    expected = np.append(pmf, 1 - pmf.sum()) * weights.size
    assert scipy_stats.chisquare(observed, expected).pvalue > 1e-4


def test_weights_of_replicates_and_of_cases_are_uncorrelated() -> None:
    # Two replicates share each mixed word (its two halves): their weights must still be independent. With
    # 10**5 cases the sample correlation of independent weights has sd 0.0032; allow 5 of those.
    weights = poisson_weights(_keys(100_000), 4, seed=3).astype(np.float64)
    for first, second in ((0, 1), (0, 2), (1, 2), (2, 3)):
        assert abs(np.corrcoef(weights[first], weights[second])[0, 1]) < 0.016
    # Consecutive keys (positions) are mixed as well as hashes are.
    positional = poisson_weights(poisson_bootstrap.position_keys(100_000), 2, seed=3).astype(np.float64)
    assert abs(np.corrcoef(positional[0, :-1], positional[0, 1:])[0, 1]) < 0.016
    assert positional.mean() == pytest.approx(1.0, abs=0.016)


def _exact_replicate_means(deltas: np.ndarray, keys: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Each replicate's weighted mean in exact rational arithmetic, rounded once; replicates of weight 0 left out."""
    weights = poisson_weights(keys, resamples, seed)
    exact = [Fraction(delta) for delta in deltas]
    means = []
    for row in weights.tolist():
        if sum(row):
            means.append(float(sum((w * d for w, d in zip(row, exact, strict=True)), Fraction(0)) / sum(row)))
    return np.array(means)


@pytest.mark.parametrize(
    "deltas",
    [
        np.random.default_rng(1).normal(0.1, 1, 300),
        np.random.default_rng(2).random(200) - np.random.default_rng(3).random(200),  # scores in [0, 1]
        np.array([1e-17, -3e-17, 0.1 + 0.2 - 0.3, 1.0, -0.5, 0.25] * 20),  # values 2**58 apart
    ],
)
def test_replicate_means_are_exact(deltas: np.ndarray) -> None:
    keys = _keys(deltas.size)
    sums = poisson_sums(deltas, keys, FixedPoint.covering(deltas), resamples=60, seed=9)
    np.testing.assert_array_equal(sums.means(), _exact_replicate_means(deltas, keys, 60, 9))


def test_deltas_too_far_apart_are_cut_to_a_shared_resolution() -> None:
    # 1 and 2**-200 span more than 4 limbs: the layout keeps 104 bits below 2**1 and drops the tiny delta's bits.
    deltas = np.array([1.0, 2.0**-200, -0.75])
    layout = FixedPoint.covering(deltas)
    assert layout == FixedPoint(exponent=1 - 104, limbs=4)
    limbs = layout.split(deltas)
    weights = np.array([float(2 ** (26 * (3 - index))) for index in range(4)])
    assert [Fraction(int(limb @ weights)) * Fraction(2) ** layout.exponent for limb in limbs] == [1, 0, Fraction(-3, 4)]


@pytest.mark.parametrize("parts", [2, 3, 5, 7])
def test_intervals_are_bit_identical_whatever_the_partitioning(parts: int) -> None:
    rng = np.random.default_rng(parts)
    deltas, keys = rng.normal(0.05, 0.3, 3000), _keys(3000, "p")
    layout = FixedPoint.covering(deltas)
    whole = poisson_sums(deltas, keys, layout, resamples=400, seed=1)
    order = rng.permutation(deltas.size)
    cuts = np.sort(rng.integers(0, deltas.size + 1, parts - 1))
    partials = [poisson_sums(deltas[part], keys[part], layout, resamples=400, seed=1) for part in np.split(order, cuts)]
    merged = partials[0]
    for partial in reversed(partials[1:]):
        merged = partial.merge(merged)
    np.testing.assert_array_equal(merged.limb_sums, whole.limb_sums)
    np.testing.assert_array_equal(merged.means(), whole.means())
    assert poisson_ci(merged) == poisson_ci(whole)


def test_chunks_of_cases_and_replicates_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    deltas, keys = np.random.default_rng(4).normal(size=500), _keys(500)
    layout = FixedPoint.covering(deltas)
    expected = poisson_sums(deltas, keys, layout, resamples=301, seed=2)
    monkeypatch.setattr(poisson_bootstrap, "_CHUNK_CELLS", 37)
    chunked = poisson_sums(deltas, keys, layout, resamples=301, seed=2)
    np.testing.assert_array_equal(chunked.limb_sums, expected.limb_sums)
    np.testing.assert_array_equal(chunked.weights, expected.weights)
    assert chunked.weights.size == 301


def test_replicates_of_total_weight_zero_are_left_out() -> None:
    # Two cases: both weights are 0 with probability e^-2 = 13.5%; 2000 replicates leave out about 271 (sd 15).
    sums = poisson_sums(np.array([0.0, 1.0]), _keys(2), FixedPoint.covering(np.array([1.0])), resamples=2000, seed=1)
    left_out = int(np.count_nonzero(sums.weights == 0))
    assert 2000 * math.exp(-2) - 75 < left_out < 2000 * math.exp(-2) + 75
    assert sums.means().size == 2000 - left_out
    assert poisson_ci(sums) == (0.0, 1.0)
    none = poisson_sums(np.array([1.0]), _keys(1), FixedPoint.covering(np.array([1.0])), resamples=1, seed=0)
    assert (int(none.weights[0]) == 0) == (poisson_ci(none) is None)


def test_partials_of_other_layouts_or_seeds_do_not_merge() -> None:
    deltas, keys = np.array([0.5, -0.25]), _keys(2)
    layout = FixedPoint.covering(deltas)
    sums = poisson_sums(deltas, keys, layout, resamples=10, seed=1)
    for other in (
        poisson_sums(deltas, keys, FixedPoint(layout.exponent - 1, layout.limbs), resamples=10, seed=1),
        poisson_sums(deltas, keys, layout, resamples=10, seed=2),
        poisson_sums(deltas, keys, layout, resamples=11, seed=1),
    ):
        with pytest.raises(ValueError, match="same layout"):
            sums.merge(other)


def test_coverage_is_near_the_nominal_rate() -> None:
    # 200 samples of 80 from a skewed distribution (exponential, mean 1): the percentile bootstrap covers the true
    # mean about 93-94% of the time at this n. With 200 trials the rate has sd 0.017: [0.87, 0.99] is 3.5 sds.
    covered = 0
    for trial in range(200):
        deltas = np.random.default_rng(500 + trial).exponential(1.0, 80)
        ci = poisson_ci(
            poisson_sums(deltas, _keys(80, f"t{trial}"), FixedPoint.covering(deltas), resamples=500, seed=1)
        )
        assert ci is not None
        covered += ci[0] <= 1.0 <= ci[1]
    assert 0.87 <= covered / 200 <= 0.99


def test_interval_agrees_with_scipy_percentile_bootstrap() -> None:
    # Each endpoint is a 2.5% / 97.5% quantile of R replicate means with sd s = sd(d) / sqrt(n): Monte Carlo sd
    # 0.027 s between two independent estimates at R = 20000 (see test_stats), plus the Poisson bootstrap's own
    # difference from the fixed-n one, O(s / sqrt(n)); 0.15 s covers both.
    deltas = np.random.default_rng(7).gamma(2.0, 0.1, 2000) - 0.2
    s = deltas.std() / math.sqrt(deltas.size)
    ci = poisson_ci(poisson_sums(deltas, _keys(2000), FixedPoint.covering(deltas), resamples=20_000, seed=1))
    reference = scipy_stats.bootstrap(
        (deltas,), np.mean, method="percentile", n_resamples=20_000, rng=np.random.default_rng(1)
    ).confidence_interval
    assert ci is not None
    assert ci[0] == pytest.approx(reference.low, abs=0.15 * s)
    assert ci[1] == pytest.approx(reference.high, abs=0.15 * s)
