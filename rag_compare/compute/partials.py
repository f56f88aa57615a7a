"""Signal aggregates and breakdowns from partial sums over partitions of a comparison's cases.

Each partition (a frame of joined cases with ``case_id``, as ``aggregates`` reads them) gives small picklable
partials; partials merge in any order and ``finish_*`` turns the merged one into the frame ``aggregate_signals``
(or ``breakdown_signals``) returns for all the cases at once. Means differ across partitionings by float
rounding only (sums added in another order); everything else (n, intervals, p-values, Holm) is identical.

Aggregates take two passes over the partitions, each one a map over blocks (a Ray Data ``map_batches``, a
Polars streaming bucket) and a merge:

1. ``aggregate_partial`` per (scope, signal): n, each side's sum, the within-variance sums, McNemar's
   discordant counts b and c, and the histogram of the deltas; ``merge_partials`` adds them up.
2. ``resampling_plan`` of the merged partial names the signals whose deltas are mostly distinct, with the
   fixed-point layout their Poisson bootstrap needs (see ``poisson_bootstrap``); ``resampling_partial`` of
   each partition gives their per-replicate weighted sums (empty, and a pass that can be skipped, when the
   plan is); ``merge_partials`` adds them up.

``finish_aggregates`` then draws the multinomial bootstrap and the permutation test from the merged
histograms and reads the Poisson bootstrap from the merged sums, on threads. In memory, ``aggregates`` runs
both passes on the one frame.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol, Self, TypeVar, cast

import numpy as np
import polars as pl

from rag_compare.compute.case_status import SIDES
from rag_compare.compute.delta_histogram import DeltaHistogram
from rag_compare.compute.poisson_bootstrap import FixedPoint, PoissonSums, poisson_ci, poisson_sums
from rag_compare.compute.stats import (
    SEED,
    histogram_bootstrap_ci,
    histogram_permutation_p,
    holm,
    mcnemar_counts_p,
    resampled_by_counts,
)
from rag_compare.core.contract import record_ok
from rag_compare.core.digest import case_hash
from rag_compare.core.signals import Signal, applies, judge_failed

__all__ = [
    "BREAKDOWN_COLUMNS",
    "SCOPES",
    "AggregatePartial",
    "BreakdownPartial",
    "ResamplingPartial",
    "ResamplingPlan",
    "SignalSums",
    "aggregate_partial",
    "breakdown_partial",
    "finish_aggregates",
    "finish_breakdowns",
    "merge_partials",
    "resampling_partial",
    "resampling_plan",
    "scoped_value",
]

SCOPES = ("paired", "all_cases")
BREAKDOWN_COLUMNS = ("category", "answerability")
BOOTSTRAP_RESAMPLES = 2000
PERMUTATION_RESAMPLES = 10000
_AGGREGATE_SCHEMA = {
    "signal": pl.String,
    "scope": pl.String,
    "baseline": pl.Float64,
    "candidate": pl.Float64,
    "delta": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "p_value": pl.Float64,
    "p_adjusted": pl.Float64,
    "n": pl.Int64,
    "baseline_within_variance": pl.Float64,
    "candidate_within_variance": pl.Float64,
}
_BREAKDOWN_SCHEMA = {
    "by": pl.String,
    "group": pl.String,
    "signal": pl.String,
    "baseline": pl.Float64,
    "candidate": pl.Float64,
    "delta": pl.Float64,
    "n": pl.Int64,
}
_SUM_COLUMNS = ("baseline", "candidate", "n")

Key = tuple[str, str]
"""(scope, signal name)."""


class _Mergeable(Protocol):
    def merge(self, other: Self) -> Self: ...


M = TypeVar("M", bound=_Mergeable)


def merge_partials(partials: Iterable[M]) -> M:
    """All the partials (of one kind) merged into one; at least one is needed."""
    merged: M | None = None
    for partial in partials:
        merged = partial if merged is None else merged.merge(partial)
    if merged is None:
        raise ValueError("there is no partial to merge")
    return merged


@dataclass(frozen=True)
class SignalSums:
    """The first pass's sums of one signal in one scope, over the cases where both sides have a value."""

    n: int
    baseline: float
    candidate: float
    variance_sums: tuple[float, float]
    """Per side, the sum of the within-case variances present (paired scope over repeats, else nothing)."""
    variance_counts: tuple[int, int]
    discordant: tuple[int, int]
    """McNemar's b (True only in the baseline) and c (only in the candidate), for a flag without repeats."""
    histogram: DeltaHistogram

    def merge(self, other: SignalSums) -> SignalSums:
        return SignalSums(
            self.n + other.n,
            self.baseline + other.baseline,
            self.candidate + other.candidate,
            _add(self.variance_sums, other.variance_sums),
            _add(self.variance_counts, other.variance_counts),
            _add(self.discordant, other.discordant),
            self.histogram.merge(other.histogram),
        )


T = TypeVar("T", int, float)


def _add(left: tuple[T, T], right: tuple[T, T]) -> tuple[T, T]:
    return left[0] + right[0], left[1] + right[1]


@dataclass(frozen=True)
class AggregatePartial:
    """The first pass over one partition (or several, merged): ``SignalSums`` per (scope, signal)."""

    signals: tuple[Signal, ...]
    reduced: bool
    sums: dict[Key, SignalSums]

    def merge(self, other: AggregatePartial) -> AggregatePartial:
        _check_same((self.signals, self.reduced), (other.signals, other.reduced))
        return AggregatePartial(
            self.signals, self.reduced, {key: sums.merge(other.sums[key]) for key, sums in self.sums.items()}
        )


@dataclass(frozen=True)
class ResamplingPlan:
    """The (scope, signal)s whose bootstrap weighs cases (Poisson), with their fixed-point layouts."""

    signals: tuple[Signal, ...]
    reduced: bool
    layouts: dict[Key, FixedPoint]


@dataclass(frozen=True)
class ResamplingPartial:
    """The second pass over one partition (or several, merged): Poisson bootstrap sums per planned key."""

    sums: dict[Key, PoissonSums]

    def merge(self, other: ResamplingPartial) -> ResamplingPartial:
        _check_same(set(self.sums), set(other.sums))
        return ResamplingPartial({key: sums.merge(other.sums[key]) for key, sums in self.sums.items()})


@dataclass(frozen=True)
class BreakdownPartial:
    """Per ``by`` column, group and signal: both sides' sums over the paired cases, and their number."""

    signals: tuple[str, ...]
    sums: pl.DataFrame

    def merge(self, other: BreakdownPartial) -> BreakdownPartial:
        _check_same(self.signals, other.signals)
        keys = ("by", "group", "signal")
        merged = pl.concat([self.sums, other.sums]).group_by(keys, maintain_order=True).agg(pl.col(_SUM_COLUMNS).sum())
        return BreakdownPartial(self.signals, merged)


def _check_same(left: object, right: object) -> None:
    if left != right:
        raise ValueError("only partials of the same signals and settings merge")


K = TypeVar("K")
R = TypeVar("R")


def _on_threads(task: Callable[[K], R], keys: Sequence[K]) -> list[R]:
    """``task`` of each key, on threads (numpy's draws and Polars release the GIL)."""
    with ThreadPoolExecutor(max_workers=pl.thread_pool_size()) as pool:
        return list(pool.map(task, keys))


def aggregate_partial(
    frame: pl.DataFrame, signals: Sequence[Signal], *, reduced: bool = False, scopes: Sequence[str] = SCOPES
) -> AggregatePartial:
    """The first pass over a partition of the cases (see ``aggregate_signals`` for the columns it reads), in
    ``scopes``."""
    keys = list(itertools.product(scopes, signals))
    sums = _on_threads(lambda key: _signal_sums(frame, *key, reduced=reduced), keys)
    return AggregatePartial(
        tuple(signals), reduced, {(scope, signal.name): s for (scope, signal), s in zip(keys, sums, strict=True)}
    )


def resampling_plan(partial: AggregatePartial) -> ResamplingPlan:
    """The second pass's plan, from the first pass merged over every partition."""
    layouts = {
        key: FixedPoint.covering(sums.histogram.values)
        for key, sums in partial.sums.items()
        if sums.histogram.values.size > 1 and not resampled_by_counts(sums.histogram)
    }
    return ResamplingPlan(partial.signals, partial.reduced, layouts)


def resampling_partial(frame: pl.DataFrame, plan: ResamplingPlan) -> ResamplingPartial:
    """The second pass over a partition: the Poisson bootstrap sums of the planned signals' deltas."""
    if not plan.layouts:
        return ResamplingPartial({})
    hashed = frame.with_columns(case_hash(frame.get_column("case_id")))
    by_name = {signal.name: signal for signal in plan.signals}

    def sums(key: Key) -> PoissonSums:
        scope, name = key
        pairs = _pairs(hashed, scope, by_name[name], plan.reduced, pl.col("case_hash"))
        deltas = (pairs.get_column("candidate") - pairs.get_column("baseline")).to_numpy()
        keys = pairs.get_column("case_hash").to_numpy()
        return poisson_sums(deltas, keys, plan.layouts[key], resamples=BOOTSTRAP_RESAMPLES, seed=SEED)

    planned = list(plan.layouts)
    return ResamplingPartial(dict(zip(planned, _on_threads(sums, planned), strict=True)))


def finish_aggregates(partial: AggregatePartial, resampling: ResamplingPartial) -> pl.DataFrame:
    """The frame ``aggregate_signals`` returns, from both passes merged over every partition."""
    by_name = {signal.name: signal for signal in partial.signals}
    keys = [(scope, by_name[name]) for scope, name in partial.sums]
    rows = _on_threads(lambda key: _finish(partial, resampling, *key), keys)
    adjusted_rows = []
    for start in range(0, len(rows), len(partial.signals)):
        scoped = rows[start : start + len(partial.signals)]
        adjusted = holm([cast(float | None, row["p_value"]) for row in scoped])
        adjusted_rows += [row | {"p_adjusted": p} for row, p in zip(scoped, adjusted, strict=True)]
    return pl.DataFrame(adjusted_rows, schema=_AGGREGATE_SCHEMA)


def breakdown_partial(frame: pl.DataFrame, signals: Sequence[Signal]) -> BreakdownPartial:
    """Per group of ``category`` and of ``answerability`` of a partition: the paired sums of each signal."""
    parts = []
    for by in BREAKDOWN_COLUMNS:
        sums = frame.group_by(pl.col(by).cast(pl.String).fill_null("(none)").alias("group")).agg(
            pl.struct(_paired_sums(signal)).alias(signal.name) for signal in signals
        )
        long = sums.unpivot(index="group", variable_name="signal").unnest("value")
        parts.append(long.select(pl.lit(by).alias("by"), "group", "signal", *_SUM_COLUMNS))
    return BreakdownPartial(tuple(signal.name for signal in signals), pl.concat(parts))


def finish_breakdowns(partial: BreakdownPartial) -> pl.DataFrame:
    """The frame ``breakdown_signals`` returns, from the partials merged over every partition."""
    order = {"by": BREAKDOWN_COLUMNS, "signal": partial.signals}
    return (
        partial.sums.filter(pl.col("n") > 0)
        .sort(
            pl.col("by").replace_strict(order["by"], range(len(order["by"]))),
            "group",
            pl.col("signal").replace_strict(order["signal"], range(len(order["signal"]))),
        )
        .select(
            "by",
            "group",
            "signal",
            (pl.col("baseline") / pl.col("n")).alias("baseline"),
            (pl.col("candidate") / pl.col("n")).alias("candidate"),
            (pl.col("candidate") / pl.col("n") - pl.col("baseline") / pl.col("n")).alias("delta"),
            "n",
        )
        .cast(_BREAKDOWN_SCHEMA)  # type: ignore[arg-type]
    )


def _paired_sums(signal: Signal) -> list[pl.Expr]:
    baseline, candidate = (pl.col(f"{side}_{signal.name}").cast(pl.Float64) for side in SIDES)
    paired = baseline.is_not_null() & candidate.is_not_null()
    return [
        baseline.filter(paired).sum().alias("baseline"),
        candidate.filter(paired).sum().alias("candidate"),
        paired.sum().cast(pl.Int64).alias("n"),
    ]


def scoped_value(signal: Signal, side: str, scope: str, reduced: bool = False) -> pl.Expr:
    """The side's value of ``signal`` in ``scope``: all-cases puts the worst value where a side has none
    (with repeats, where a sample has none)."""
    value = pl.col(f"{side}_{signal.name}").cast(pl.Float64)
    if scope == "paired":
        return value
    if reduced:
        present, value = record_ok(f"{side}_status"), pl.col(f"{side}_{signal.name}_all_cases")
    else:
        present = record_ok(f"{side}_status") & (~judge_failed(side) if signal.judged else pl.lit(True))
    return pl.when(present).then(value).when(applies(signal, pl.col("answerability"))).then(pl.lit(signal.worst))


def _within_variance(signal: Signal, side: str, scope: str, reduced: bool) -> pl.Expr:
    """A case's variance of a side's samples (paired scope, with repeats), else null."""
    if scope != "paired" or not reduced:
        return pl.lit(None, pl.Float64)
    return pl.col(f"{side}_{signal.name}_variance")


def _pairs(frame: pl.DataFrame, scope: str, signal: Signal, reduced: bool, *extra: pl.Expr) -> pl.DataFrame:
    """Both sides' values of the cases where both have one, with each side's variance and ``extra``."""
    return frame.select(
        scoped_value(signal, "baseline", scope, reduced).alias("baseline"),
        scoped_value(signal, "candidate", scope, reduced).alias("candidate"),
        *(_within_variance(signal, side, scope, reduced).alias(f"{side}_variance") for side in SIDES),
        *extra,
    ).filter(pl.col("baseline").is_not_null() & pl.col("candidate").is_not_null())


def _signal_sums(frame: pl.DataFrame, scope: str, signal: Signal, *, reduced: bool) -> SignalSums:
    pairs = _pairs(frame, scope, signal, reduced)
    baseline, candidate = pairs.get_column("baseline").to_numpy(), pairs.get_column("candidate").to_numpy()
    variances = [pairs.get_column(f"{side}_variance") for side in SIDES]
    discordant = (0, 0)
    if signal.flag and not reduced:
        base, cand = baseline.astype(np.bool_), candidate.astype(np.bool_)
        discordant = int(np.count_nonzero(base & ~cand)), int(np.count_nonzero(~base & cand))
    return SignalSums(
        n=pairs.height,
        baseline=float(baseline.sum()),
        candidate=float(candidate.sum()),
        variance_sums=(float(variances[0].sum()), float(variances[1].sum())),
        variance_counts=(variances[0].count(), variances[1].count()),
        discordant=discordant,
        histogram=DeltaHistogram.of(candidate - baseline),
    )


def _finish(partial: AggregatePartial, resampling: ResamplingPartial, scope: str, signal: Signal) -> dict[str, object]:
    sums = partial.sums[scope, signal.name]
    row: dict[str, object] = {"signal": signal.name, "scope": scope, "n": sums.n}
    for side, total, count in zip(SIDES, sums.variance_sums, sums.variance_counts, strict=True):
        row[f"{side}_within_variance"] = total / count if count else None
    if not sums.n:
        return row | dict.fromkeys(("baseline", "candidate", "delta", "ci_low", "ci_high", "p_value"))
    histogram = sums.histogram
    if (scope, signal.name) in resampling.sums:
        ci = poisson_ci(resampling.sums[scope, signal.name])
    elif histogram.values.size == 1 or resampled_by_counts(histogram):
        ci = histogram_bootstrap_ci(histogram, resamples=BOOTSTRAP_RESAMPLES, seed=SEED)
    else:
        raise ValueError(f"the second pass's sums of {signal.name} ({scope}) are missing")
    p_value = (
        mcnemar_counts_p(*sums.discordant)
        if signal.flag and not partial.reduced
        else histogram_permutation_p(histogram, resamples=PERMUTATION_RESAMPLES, seed=SEED)
    )
    baseline, candidate = sums.baseline / sums.n, sums.candidate / sums.n
    return row | {
        "baseline": baseline,
        "candidate": candidate,
        "delta": candidate - baseline,
        "ci_low": None if ci is None else ci[0],
        "ci_high": None if ci is None else ci[1],
        "p_value": p_value,
    }
