"""The histogram of a sample of paired deltas: its distinct values, sorted, and how often each occurs.

The resampling statistics of ``stats`` are functions of it alone (never of the order the deltas came in), so
partitions of the cases give, once their histograms are merged, exactly the statistics of the whole sample.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["DeltaHistogram"]


@dataclass(frozen=True)
class DeltaHistogram:
    """Distinct ``values`` in increasing order (-0.0 counted as 0.0) and their ``counts`` (int64, all > 0)."""

    values: NDArray[np.float64]
    counts: NDArray[np.int64]

    @classmethod
    def of(cls, deltas: NDArray[np.number[Any]]) -> DeltaHistogram:
        values, counts = np.unique(np.asarray(deltas, dtype=np.float64) + 0.0, return_counts=True)
        return cls(values, counts.astype(np.int64))

    @classmethod
    def merged(cls, histograms: Iterable[DeltaHistogram]) -> DeltaHistogram:
        """The histogram of all the histograms' deltas together."""
        parts = list(histograms)
        values = np.concatenate([np.empty(0), *(part.values for part in parts)])
        counts = np.concatenate([np.empty(0, dtype=np.int64), *(part.counts for part in parts)])
        if not values.size:
            return cls(values, counts)
        order = np.argsort(values, kind="stable")
        values, counts = values[order], counts[order]
        starts = np.flatnonzero(np.concatenate([[True], values[1:] != values[:-1]]))
        return cls(values[starts], np.add.reduceat(counts, starts))

    def merge(self, other: DeltaHistogram) -> DeltaHistogram:
        return DeltaHistogram.merged((self, other))

    @property
    def n(self) -> int:
        """The number of deltas."""
        return int(self.counts.sum())

    def repeats(self, min_repeats: int) -> bool:
        """Whether the values repeat ``min_repeats`` times on average (then resampling draws counts per value)."""
        return bool(self.values.size * min_repeats <= self.n)

    def deltas(self) -> NDArray[np.float64]:
        """Every delta, in increasing order."""
        return np.repeat(self.values, self.counts)

    def magnitudes(self) -> DeltaHistogram:
        """The histogram of the nonzero |deltas|."""
        nonzero = self.values != 0
        return DeltaHistogram.merged([DeltaHistogram(np.abs(self.values[nonzero]), self.counts[nonzero])])
