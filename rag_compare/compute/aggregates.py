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
variance). Signals are aggregated on threads (numpy's draws release the GIL);
each draws from its own seeded generator, so the results do not depend on the order they finish in.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import cast

import numpy as np
import polars as pl

from rag_compare.compute.case_status import SIDES
from rag_compare.compute.stats import bootstrap_ci, holm, mcnemar_exact_p, permutation_p_value
from rag_compare.core.contract import record_ok
from rag_compare.core.signals import Signal, applies, judge_failed

__all__ = ["BREAKDOWN_COLUMNS", "SCOPES", "aggregate_signals", "breakdown_signals"]

SCOPES = ("paired", "all_cases")
BREAKDOWN_COLUMNS = ("category", "answerability")
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


def aggregate_signals(cases: pl.DataFrame, signals: Sequence[Signal], *, reduced: bool = False) -> pl.DataFrame:
    """One row per scope and signal (``signal, scope, baseline, candidate, delta, ci_low, ci_high,
    p_value, p_adjusted, n, baseline_within_variance, candidate_within_variance``); ``cases`` holds
    ``baseline_<signal>``/``candidate_<signal>`` columns, both statuses, both judge statuses and
    ``answerability``; ``reduced``: each side's signals are means over repeats, with their spread
    columns (see ``repeats``)."""
    with ThreadPoolExecutor(max_workers=pl.thread_pool_size()) as pool:
        aggregated = list(
            pool.map(lambda task: _aggregate(cases, *task, reduced=reduced), itertools.product(SCOPES, signals))
        )
    rows = []
    for start in range(0, len(aggregated), len(signals)):
        scoped = aggregated[start : start + len(signals)]
        adjusted = holm([cast(float | None, row["p_value"]) for row in scoped])
        rows += [row | {"p_adjusted": p} for row, p in zip(scoped, adjusted, strict=True)]
    return pl.DataFrame(rows, schema=_AGGREGATE_SCHEMA)


def breakdown_signals(cases: pl.DataFrame, signals: Sequence[Signal]) -> pl.DataFrame:
    """Paired means per group of ``category`` and of ``answerability`` (``by, group, signal,
    baseline, candidate, delta, n``); groups where a signal has no pair are left out."""
    rows = []
    for by in BREAKDOWN_COLUMNS:
        means = (
            cases.group_by(pl.col(by).cast(pl.String).fill_null("(none)").alias("group"))
            .agg(expr for signal in signals for expr in _paired_means(signal))
            .sort("group")
        )
        for group in means.iter_rows(named=True):
            for signal in signals:
                baseline, candidate, n = (group[f"{signal.name}/{part}"] for part in ("baseline", "candidate", "n"))
                if n:
                    rows.append(
                        {
                            "by": by,
                            "group": group["group"],
                            "signal": signal.name,
                            "baseline": baseline,
                            "candidate": candidate,
                            "delta": candidate - baseline,
                            "n": n,
                        }
                    )
    return pl.DataFrame(rows, schema=_BREAKDOWN_SCHEMA)


def _paired_means(signal: Signal) -> list[pl.Expr]:
    baseline, candidate = (pl.col(f"{side}_{signal.name}").cast(pl.Float64) for side in ("baseline", "candidate"))
    paired = baseline.is_not_null() & candidate.is_not_null()
    return [
        baseline.filter(paired).mean().alias(f"{signal.name}/baseline"),
        candidate.filter(paired).mean().alias(f"{signal.name}/candidate"),
        paired.sum().alias(f"{signal.name}/n"),
    ]


def _scoped_value(signal: Signal, side: str, scope: str, reduced: bool) -> pl.Expr:
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
    """The mean over the cases of the variance of a side's samples (paired scope, with repeats), else null."""
    if scope != "paired" or not reduced:
        return pl.lit(None, pl.Float64)
    return pl.col(f"{side}_{signal.name}_variance")


def _aggregate(cases: pl.DataFrame, scope: str, signal: Signal, *, reduced: bool) -> dict[str, object]:
    pairs = cases.select(
        _scoped_value(signal, "baseline", scope, reduced).alias("baseline"),
        _scoped_value(signal, "candidate", scope, reduced).alias("candidate"),
        *(_within_variance(signal, side, scope, reduced).alias(f"{side}_variance") for side in SIDES),
    ).filter(pl.col("baseline").is_not_null() & pl.col("candidate").is_not_null())
    baseline, candidate = pairs.get_column("baseline").to_numpy(), pairs.get_column("candidate").to_numpy()
    row: dict[str, object] = {"signal": signal.name, "scope": scope, "n": pairs.height}
    row |= {f"{side}_within_variance": pairs.get_column(f"{side}_variance").mean() for side in SIDES}
    if not pairs.height:
        return row | dict.fromkeys(("baseline", "candidate", "delta", "ci_low", "ci_high", "p_value"))
    deltas = candidate - baseline
    ci = bootstrap_ci(deltas)
    p_value = (
        mcnemar_exact_p(baseline.astype(np.bool_), candidate.astype(np.bool_))
        if signal.flag and not reduced
        else permutation_p_value(deltas)
    )
    mean_baseline, mean_candidate = float(baseline.mean()), float(candidate.mean())
    return row | {
        "baseline": mean_baseline,
        "candidate": mean_candidate,
        "delta": mean_candidate - mean_baseline,
        "ci_low": None if ci is None else ci[0],
        "ci_high": None if ci is None else ci[1],
        "p_value": p_value,
    }
