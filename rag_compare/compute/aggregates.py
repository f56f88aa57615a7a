"""Signal aggregates over a comparison's cases: paired and all-cases scopes, and breakdowns.

- ``paired``: the cases where the signal has a value on both sides (both records ``ok`` and the
  signal applies to the case's label).
- ``all_cases``: also every case missing or failed on a side, counted there at the signal's worst
  value (0 where higher is better, 1 where lower is better), so a run cannot look better by failing;
  so is a judge's verdict where judging the case failed.

Each row has both means, their difference, a 95% bootstrap interval of the paired difference, a
paired test (sign-flip permutation for scores, exact McNemar for flags) and its Holm adjustment
across the signals of the same scope. With repeats a case counts once, at its mean over its samples
(a flag's rate, tested by the permutation test): the bootstrap resamples cases, never samples; and
the paired rows add each side's within-case variance (the mean over the cases of their samples'
variance).

The bootstrap takes one of two paths, decided by the histogram of the deltas: where values repeat
(32 times on average or more, as for flags and for scores on a few levels) it draws multinomial
counts of the distinct values; where they are mostly distinct it is a Poisson bootstrap whose
weights come from a hash of each case's id (``case_hash``) and the replicate, so the interval
depends on which cases there are, never on their order. The permutation test draws signs per
distinct |delta|. All three are functions of the cases as a set: these frames are the one-partition
case of ``partials``, which computes the same from partial sums over partitions of the cases, merged
(identical up to the rounding of means). Work runs on threads; each statistic draws from its own
seeded generator, so the results do not depend on the order they finish in.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from rag_compare.compute.partials import (
    BREAKDOWN_COLUMNS,
    SCOPES,
    aggregate_partial,
    breakdown_partial,
    finish_aggregates,
    finish_breakdowns,
    resampling_partial,
    resampling_plan,
)
from rag_compare.core.signals import Signal

__all__ = ["BREAKDOWN_COLUMNS", "SCOPES", "aggregate_signals", "breakdown_signals"]


def aggregate_signals(
    cases: pl.DataFrame, signals: Sequence[Signal], *, reduced: bool = False, scopes: Sequence[str] = SCOPES
) -> pl.DataFrame:
    """One row per scope and signal (``signal, scope, baseline, candidate, delta, ci_low, ci_high,
    p_value, p_adjusted, n, baseline_within_variance, candidate_within_variance``); ``cases`` holds
    ``case_id``, ``baseline_<signal>``/``candidate_<signal>`` columns, both statuses, both judge statuses
    and ``answerability``; ``reduced``: each side's signals are means over repeats, with their spread
    columns (see ``repeats``). Only the ``paired`` scope (``scopes``) needs no more than ``case_id`` and the
    signals' columns (with ``reduced``, their ``_variance`` columns too)."""
    partial = aggregate_partial(cases, signals, reduced=reduced, scopes=scopes)
    return finish_aggregates(partial, resampling_partial(cases, resampling_plan(partial)))


def breakdown_signals(cases: pl.DataFrame, signals: Sequence[Signal]) -> pl.DataFrame:
    """Paired means per group of ``category`` and of ``answerability`` (``by, group, signal,
    baseline, candidate, delta, n``); groups where a signal has no pair are left out."""
    return finish_breakdowns(breakdown_partial(cases, signals))
