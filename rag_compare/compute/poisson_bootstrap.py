"""Poisson bootstrap of a mean, mergeable across partitions and identical whatever the partitioning.

Replicate r gives case i the weight w_ir ~ Poisson(1), a pure function of the case's key (its
``case_hash``), r and the seed: splitmix64's finaliser of key + k_j, k_j itself mixed from the seed and the
pair of replicates j = r // 2, gives a 64-bit word whose high half (r even) or low half (r odd) is read as a
32-bit uniform through the Poisson(1) inverse CDF (thresholds ceil(2**32 F(k)) in exact decimal arithmetic,
so weights go up to 12; a table of the top 12 bits answers all but 0.2% of them). Replicate r's mean is
sum_i w_ir d_i / sum_i w_ir; a replicate whose total weight is 0 (probability e^-n) is left out of the
percentiles.

The sums are exact, so they do not depend on the order the cases come in: each delta is written in fixed
point at a resolution shared by all partitions (``FixedPoint``, from the merged histogram of deltas) as up
to four 26-bit integer limbs; an integer weight times a limb is exact in float64, and so are sums of such
products over at most 2**20 cases (below 2**53), which BLAS computes as ``weights @ limbs``; the chunks'
sums add up as int64. A partial (``PoissonSums``) is, per replicate, those limb sums and the total weight;
partials merge by integer addition, and each replicate's mean is the correctly rounded quotient of the
exact integers. Deltas spanning more than 104 bits (largest |delta| over the smallest bit of any) are cut
to that resolution, 2**-104 of the largest |delta|, the same for every partition.

Cost: one mixed 64-bit word gives the weights of two replicates; with the table lookup, the conversion and
``weights @ limbs`` that is about a dozen vectorised passes per (case, replicate) cell, on chunks that stay in
the processor's cache: the same order as drawing indices (10-25 ns per resampled delta).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, localcontext
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["FixedPoint", "PoissonSums", "poisson_ci", "poisson_sums", "poisson_weights", "position_keys"]

Floats = NDArray[np.float64]
Keys = NDArray[np.uint64]

_LIMB_BITS = 26
_MAX_LIMBS = 4
_MAX_CHUNK_CASES = 1 << 20
"""Cases per chunk at most: a weight (at most 12) times a limb (below 2**26) summed over them stays below 2**53."""
_CHUNK_CELLS = 1 << 17
"""Weights per chunk (cases x replicates): a chunk's uint64 arrays (1 MiB) stay in the processor's cache."""
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX_1, _MIX_2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_TABLE_BITS = 12
_AMBIGUOUS = 255
_TABLE_MASK = np.uint64((1 << _TABLE_BITS) - 1)


def _poisson_thresholds() -> NDArray[np.uint32]:
    """ceil(2**32 F(k)) for the Poisson(1) CDF F, every k where that is below 2**32: w = #{k: u >= T_k}."""
    thresholds, term, total = [], Decimal(1), Decimal(0)
    with localcontext() as context:
        context.prec = 40
        e_inverse = Decimal(-1).exp()
        for k in range(32):
            total += term
            term /= k + 1
            threshold = math.ceil(total * e_inverse * 2**32)
            if threshold >= 2**32:
                break
            thresholds.append(threshold)
    return np.array(thresholds, dtype=np.uint32)


_THRESHOLDS = _poisson_thresholds()


def _weight_table() -> NDArray[np.uint8]:
    """The weight of every uniform whose top _TABLE_BITS bits are the index, or _AMBIGUOUS where a threshold
    falls inside that cell (there the weight is looked up exactly)."""
    shift = 32 - _TABLE_BITS
    starts = np.arange(1 << _TABLE_BITS, dtype=np.uint32) << np.uint32(shift)
    table = np.searchsorted(_THRESHOLDS, starts, side="right").astype(np.uint8)
    ends = starts | np.uint32((1 << shift) - 1)
    table[np.searchsorted(_THRESHOLDS, ends, side="right") != table] = _AMBIGUOUS
    return table


_WEIGHT_TABLE = _weight_table()


def _mix(z: Keys) -> Keys:
    """splitmix64's finaliser, in place."""
    with np.errstate(over="ignore"):
        z ^= z >> np.uint64(30)
        z *= _MIX_1
        z ^= z >> np.uint64(27)
        z *= _MIX_2
        z ^= z >> np.uint64(31)
    return z


def _pair_keys(pairs: range, seed: int) -> Keys:
    """k_j of the replicates 2j and 2j + 1: splitmix64 of the seed's state advanced j + 1 steps."""
    state = _mix(np.array([seed % 2**64], dtype=np.uint64))
    with np.errstate(over="ignore"):
        steps = np.arange(pairs.start + 1, pairs.stop + 1, dtype=np.uint64) * _GAMMA
        return _mix(steps + state)


def position_keys(n: int) -> Keys:
    """Keys for deltas known only by their position (0..n-1), mixed like a hash."""
    with np.errstate(over="ignore"):
        return _mix(np.arange(1, n + 1, dtype=np.uint64) * _GAMMA)


def _half_weights(z: Keys, shift: int) -> NDArray[np.uint8]:
    """Poisson(1) weights of the 32-bit uniforms ``(z >> shift) & (2**32 - 1)``."""
    weights = np.take(_WEIGHT_TABLE, ((z >> np.uint64(shift + 32 - _TABLE_BITS)) & _TABLE_MASK).view(np.int64))
    ambiguous = np.flatnonzero(weights == _AMBIGUOUS)
    if ambiguous.size:
        uniforms = (z.flat[ambiguous] >> np.uint64(shift)) & np.uint64(0xFFFFFFFF)
        weights.flat[ambiguous] = np.searchsorted(_THRESHOLDS, uniforms.astype(np.uint32), side="right")
    return weights


def _weights(keys: Keys, pair_keys: Keys) -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
    """Poisson(1) weights, pairs x cases: of the replicates 2j (high half of the mixed word), 2j + 1 (low half)."""
    z = np.add.outer(pair_keys, keys)
    _mix(z)
    return _half_weights(z, 32), _half_weights(z, 0)


def poisson_weights(keys: Keys, replicates: int, seed: int) -> NDArray[np.uint8]:
    """w_ir for the cases of ``keys`` (uint64 hashes) and replicates 0..replicates-1: replicates x cases."""
    high, low = _weights(np.asarray(keys, dtype=np.uint64), _pair_keys(range((replicates + 1) // 2), seed))
    weights = np.empty((2 * high.shape[0], high.shape[1]), dtype=np.uint8)
    weights[0::2], weights[1::2] = high, low
    return weights[:replicates]


@dataclass(frozen=True)
class FixedPoint:
    """Deltas as ``limbs`` integers of 26 bits, the last one counting units of 2**``exponent``."""

    exponent: int
    limbs: int

    @classmethod
    def covering(cls, values: Floats) -> FixedPoint:
        """The finest layout holding every value exactly, coarsened to 4 limbs below the largest |value|."""
        magnitudes = np.abs(values[values != 0])
        if not magnitudes.size:
            return cls(0, 1)
        top = int(np.frexp(magnitudes.max())[1])  # every |value| < 2**top
        lowest = int(np.frexp(magnitudes)[1].min()) - 53  # every value is a multiple of 2**lowest
        limbs = min(_MAX_LIMBS, max(1, -(-(top - lowest) // _LIMB_BITS)))
        return cls(top - limbs * _LIMB_BITS, limbs)

    def split(self, deltas: Floats) -> Floats:
        """Cases x limbs: integers (as float64, |limb| < 2**26) whose weighted sum is each delta, truncated to
        the resolution 2**exponent."""
        rest = np.trunc(np.ldexp(deltas, -self.exponent))
        limbs = np.empty((deltas.size, self.limbs))
        for index in range(self.limbs):
            scale = float(2 ** (_LIMB_BITS * (self.limbs - 1 - index)))
            limbs[:, index] = np.trunc(rest / scale)
            rest -= limbs[:, index] * scale
        return limbs

    def value(self, limb_sums: NDArray[np.int64]) -> int:
        """The exact integer, in units of 2**exponent, of one replicate's limb sums."""
        total = 0
        for limb in limb_sums.tolist():
            total = (total << _LIMB_BITS) + limb
        return total


@dataclass(frozen=True)
class PoissonSums:
    """Per replicate, the exact weighted sum of the deltas (fixed-point limbs) and the total weight."""

    layout: FixedPoint
    seed: int
    limb_sums: NDArray[np.int64]
    """replicates x limbs."""
    weights: NDArray[np.int64]

    def merge(self, other: PoissonSums) -> PoissonSums:
        if (self.layout, self.seed, self.weights.size) != (other.layout, other.seed, other.weights.size):
            raise ValueError("only sums of the same layout, seed and number of replicates merge")
        return PoissonSums(self.layout, self.seed, self.limb_sums + other.limb_sums, self.weights + other.weights)

    def means(self) -> Floats:
        """Each replicate's weighted mean, correctly rounded; replicates of total weight 0 are left out."""
        means = []
        for limb_sums, weight in zip(self.limb_sums, self.weights.tolist(), strict=True):
            if weight:
                total = self.layout.value(limb_sums)
                exponent = self.layout.exponent
                means.append(total * 2**exponent / weight if exponent >= 0 else total / (weight << -exponent))
        return np.array(means, dtype=np.float64)


def poisson_sums(
    deltas: NDArray[np.number[Any]], keys: Keys, layout: FixedPoint, *, resamples: int, seed: int
) -> PoissonSums:
    """The partial of one partition's ``deltas`` with their cases' ``keys`` (``case_hash``)."""
    d, keys = np.asarray(deltas, dtype=np.float64), np.asarray(keys, dtype=np.uint64)
    if d.shape != keys.shape or d.ndim != 1:
        raise ValueError("deltas and keys must be one-dimensional arrays of the same length")
    limbs = layout.split(d)
    pairs = (resamples + 1) // 2
    pair_keys = _pair_keys(range(pairs), seed)
    limb_sums = np.zeros((2, pairs, layout.limbs), dtype=np.int64)
    weights = np.zeros((2, pairs), dtype=np.int64)
    step = max(1, min(_MAX_CHUNK_CASES, _CHUNK_CELLS // pairs))
    rows = max(1, _CHUNK_CELLS // step)
    for start in range(0, d.size, step):
        chunk_keys, chunk_limbs = keys[start : start + step], limbs[start : start + step]
        for first in range(0, pairs, rows):
            block = slice(first, first + rows)
            for half, w in enumerate(_weights(chunk_keys, pair_keys[block])):
                w_float = w.astype(np.float64)
                limb_sums[half, block] += (w_float @ chunk_limbs).astype(np.int64)
                weights[half, block] += w_float.sum(axis=1).astype(np.int64)
    # Replicate 2j is half 0 of pair j, 2j + 1 half 1: interleave, and drop the last one for an odd count.
    limb_sums = limb_sums.transpose(1, 0, 2).reshape(2 * pairs, layout.limbs)[:resamples]
    weights = weights.T.reshape(2 * pairs)[:resamples]
    return PoissonSums(layout, seed, limb_sums, weights)


def poisson_ci(sums: PoissonSums, *, confidence: float = 0.95) -> tuple[float, float] | None:
    """Percentile interval of the replicates' means; None when every replicate had total weight 0."""
    means = sums.means()
    if not means.size:
        return None
    low, high = np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(low), float(high)
