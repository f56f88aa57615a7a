"""Cases sampled several times (a run's ``repeat`` column): each side's samples reduced to one row per
case, the cases whose own repeats disagree, and the noise floor of two samples of one config.

A side's case frame with repeats has, per signal, its **mean** over the samples that have a value (a
flag's mean is the share of samples where it held), ``_low``/``_high`` (the smallest and largest
sample value), ``_variance`` (the sample variance, ddof 1; null under two values), ``_count`` (the
samples with a value) and ``_all_cases``
(the mean with each failed sample, and for a judge's verdict each judge-failed sample, at the signal's
worst value). ``repeats``, ``failed_repeats`` and ``judge_failed_repeats`` count the samples. The case
is ``ok`` when one sample is; its error is its first failed sample's; its answer, ids and context those
of its first ok sample (by ``repeat``). With one sample a case, every mean is that sample's value.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from rag_compare.compute.case_status import CASE_STATUSES, SIDES, case_status
from rag_compare.core.contract import REPEAT, record_ok
from rag_compare.core.signals import JUDGE_FAILED, Signal, applies

__all__ = [
    "FLAKY_SCHEMA",
    "MAX_NOISE_REPEATS",
    "REDUCED_SUFFIXES",
    "NoiseFloor",
    "NoisePartial",
    "SideNoise",
    "flaky_cases",
    "has_repeats",
    "merged_repeat_counts",
    "noise_floor",
    "noise_numbers",
    "noise_partial",
    "reduced_side",
    "repeat_counts",
    "shown_value",
]

MAX_NOISE_REPEATS = 10
"""The noise floor compares every pair among a side's first this many repeat numbers (45 pairs)."""
REDUCED_SUFFIXES = ("_low", "_high", "_variance", "_count", "_all_cases")
"""The columns a signal gains on a side with repeats, beside its mean."""
FLAKY_SCHEMA: dict[str, pl.DataType] = {
    "case_id": pl.String(),
    "side": pl.String(),
    "repeats": pl.UInt32(),
    "disagreements": pl.UInt32(),
    "spread": pl.Float64(),
    "details": pl.List(pl.String()),
}
_NOISE_STATUSES = tuple(status for status in CASE_STATUSES if not status.startswith("missing") and status != "unstable")
_MIRRORED = {"improved": "regressed", "regressed": "improved"} | {
    f"{outcome}_in_{one}": f"{outcome}_in_{other}"
    for outcome in ("failed", "judge_failed")
    for one, other in (SIDES, SIDES[::-1])
}


def has_repeats(records: pl.DataFrame) -> bool:
    """Whether some case of ``records`` has two samples or more."""
    return REPEAT in records.columns and bool(records.select(pl.col("case_id").is_duplicated().any()).item())


def repeat_counts(records: pl.DataFrame) -> dict[str, int]:
    """``cases``, ``samples``, the ``min``/``max`` samples of a case, and ``failed`` samples."""
    failed = int(records.select((~record_ok()).sum()).item())
    if REPEAT not in records.columns:  # one sample a case: nothing to group
        each = int(not records.is_empty())
        return {"cases": records.height, "samples": records.height, "min": each, "max": each, "failed": failed}
    sizes = records.group_by("case_id").len()
    counts = sizes.select(
        pl.len().alias("cases"),
        pl.lit(records.height).alias("samples"),
        pl.col("len").min().fill_null(0).alias("min"),
        pl.col("len").max().fill_null(0).alias("max"),
        pl.lit(failed).alias("failed"),
    )
    return {name: int(value) for name, value in counts.row(0, named=True).items()}


def merged_repeat_counts(counts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """The ``repeat_counts`` of a side from those of the partitions of its cases (each case in one)."""
    held = [part for part in counts if part["cases"]]
    if not held:
        return {"cases": 0, "samples": 0, "min": 0, "max": 0, "failed": 0}
    return {
        "cases": sum(part["cases"] for part in held),
        "samples": sum(part["samples"] for part in held),
        "min": min(part["min"] for part in held),
        "max": max(part["max"] for part in held),
        "failed": sum(part["failed"] for part in held),
    }


def reduced_side(samples: pl.DataFrame, signals: Sequence[Signal]) -> pl.DataFrame:
    """One row per case of a side's ``samples`` (``case_id``, record columns, labels, signals, judge
    columns), as the module describes; cases in order of first appearance."""
    ok = record_ok()
    judge_ok = pl.col("judge_status").ne_missing(JUDGE_FAILED)
    first_ok = ok & judge_ok
    signal_names = {signal.name for signal in signals}
    kept = [name for name in samples.columns if name not in {"case_id", REPEAT, "status", "error", *signal_names}]
    ordered = samples.sort(REPEAT, maintain_order=True) if REPEAT in samples.columns else samples
    judge = {
        "judge_status": pl.when((ok & ~judge_ok).any() & ~first_ok.any())
        .then(pl.lit(JUDGE_FAILED))
        .otherwise(pl.col("judge_status").filter(first_ok).first()),
        "judge_error": pl.col("judge_error").filter(ok & ~judge_ok).first(),
    }
    return ordered.group_by("case_id", maintain_order=True).agg(
        pl.when(ok.any()).then(pl.lit("ok")).otherwise(pl.col("status").first()).alias("status"),
        pl.col("error").filter(~ok).first().alias("error"),
        *(judge[name].alias(name) if name in judge else shown_value(name) for name in kept),
        *(expr for signal in signals for expr in _signal_summary(signal, ok, judge_ok)),
        pl.len().cast(pl.UInt32).alias("repeats"),
        (~ok).sum().cast(pl.UInt32).alias("failed_repeats"),
        (ok & ~judge_ok).sum().cast(pl.UInt32).alias("judge_failed_repeats"),
    )


def shown_value(name: str) -> pl.Expr:
    """A case's ``name`` as its reduced row shows it, in a group of its samples in repeat order: the first
    sample's that succeeded, else the first sample's."""
    ok = record_ok()
    return pl.coalesce(pl.col(name).filter(ok).first(), pl.col(name).first()).alias(name)


def _signal_summary(signal: Signal, ok: pl.Expr, judge_ok: pl.Expr) -> list[pl.Expr]:
    value = pl.col(signal.name).cast(pl.Float64)
    counted = ok & judge_ok if signal.judged else ok
    all_cases = pl.when(counted).then(value).when(applies(signal, pl.col("answerability"))).then(pl.lit(signal.worst))
    return [
        value.mean().alias(signal.name),
        value.min().alias(f"{signal.name}_low"),
        value.max().alias(f"{signal.name}_high"),
        value.var(ddof=1).alias(f"{signal.name}_variance"),
        value.count().alias(f"{signal.name}_count"),
        all_cases.mean().alias(f"{signal.name}_all_cases"),
    ]


def flaky_cases(cases: pl.DataFrame, side: str, signals: Sequence[Signal], tolerance: float) -> pl.DataFrame:
    """The cases of a side whose own samples disagree (``FLAKY_SCHEMA``), from its reduced frame (see
    ``reduced_side``): per case, each status signal whose samples differ by more than ``tolerance``
    (``abstained in 1 of 3 samples``, ``recall from 0.5 to 1``) and a failure in some samples only;
    ``disagreements`` counts them, ``spread`` adds up each signal's range and the failed share."""
    details, spreads = [], []
    for signal in (signal for signal in signals if signal.decides_status):
        low, high, count = (pl.col(f"{signal.name}{suffix}") for suffix in ("_low", "_high", "_count"))
        spread = (high - low).fill_null(0.0)
        held = (pl.col(signal.name) * count).round(0).cast(pl.Int64)
        text = (
            pl.format(f"{signal.name} in {{}} of {{}} samples", held, count)
            if signal.flag
            else pl.format(f"{signal.name} from {{}} to {{}}", _shown(low), _shown(high))
        )
        details.append(pl.when(spread > tolerance).then(text))
        spreads.append(spread)
    failed, total = pl.col("failed_repeats"), pl.col("repeats")
    some_failed = (failed > 0) & (failed < total)
    details.append(pl.when(some_failed).then(pl.format("failed in {} of {} samples", failed, total)))
    spreads.append(pl.when(some_failed).then(failed / total).otherwise(0.0))
    disagreeing = pl.any_horizontal(spread > tolerance for spread in spreads)
    flaky = cases.filter(disagreeing).select(
        "case_id",
        pl.lit(side).alias("side"),
        "repeats",
        pl.concat_list(details).list.drop_nulls().alias("details"),
        pl.sum_horizontal(spreads).alias("spread"),
    )
    flaky = flaky.with_columns(pl.col("details").list.len().alias("disagreements"))
    return flaky.select(pl.col(name).cast(dtype) for name, dtype in FLAKY_SCHEMA.items())


def _shown(number: pl.Expr) -> pl.Expr:
    """``number`` rounded to 3 decimals, a whole number without ``.0``."""
    return number.round(3).cast(pl.String).str.strip_suffix(".0")


@dataclass(frozen=True)
class SideNoise:
    """A side's A/A comparison: its repeats compared with each other, pair by pair."""

    repeats: int
    pairs: int
    cases: int
    """Cases with a sample in both repeats of a pair, on average over the pairs."""
    expected: Mapping[str, float]
    """Cases per status, on average over the pairs, each pair counted in both orders."""

    def to_dict(self) -> dict[str, Any]:
        return {"repeats": self.repeats, "pairs": self.pairs, "cases": self.cases, "expected": dict(self.expected)}


@dataclass(frozen=True)
class NoiseFloor:
    """How many cases two single samples of one config would call improved, regressed, ...: per side
    with two repeats or more, and ``expected`` on average over those sides."""

    sides: Mapping[str, SideNoise]
    expected: Mapping[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {"expected": dict(self.expected), "sides": {side: noise.to_dict() for side, noise in self.sides.items()}}


@dataclass(frozen=True)
class NoisePartial:
    """A side's noise-floor sums over a partition of its cases (``noise_partial``): the status counts of
    every pair of ``numbers`` summed (each pair in both orders, halved) and the cases compared. Partials of
    one side add up (``+``); ``finished`` gives its ``SideNoise``."""

    numbers: tuple[int, ...]
    totals: Mapping[str, float]
    cases: int

    def __add__(self, other: NoisePartial) -> NoisePartial:
        if other.numbers != self.numbers:
            raise ValueError("noise partials of different repeat numbers cannot be merged")
        totals = {name: total + other.totals[name] for name, total in self.totals.items()}
        return NoisePartial(self.numbers, totals, self.cases + other.cases)

    def finished(self) -> SideNoise:
        pairs = len(self.numbers) * (len(self.numbers) - 1) // 2
        expected = {name: total / pairs for name, total in self.totals.items()}
        return SideNoise(repeats=len(self.numbers), pairs=pairs, cases=round(self.cases / pairs), expected=expected)


def noise_numbers(repeat_numbers: Iterable[int]) -> tuple[int, ...]:
    """The repeat numbers a side's noise floor compares: its first ``MAX_NOISE_REPEATS``; empty under two."""
    numbers = tuple(sorted(set(repeat_numbers))[:MAX_NOISE_REPEATS])
    return numbers if len(numbers) > 1 else ()


def noise_floor(samples: pl.DataFrame, signals: Sequence[Signal], tolerance: float) -> SideNoise | None:
    """A side's noise floor: each pair of its first ``MAX_NOISE_REPEATS`` repeat numbers compared case by
    case as a baseline and a candidate of one sample each (the same status rules, the cases with both
    samples), the status counts averaged over the pairs. A pair counts in both orders, so ``improved``
    and ``regressed`` (and a side's failures) are expected equally often. ``None`` under two repeats.
    The one-partition case of ``noise_partial``."""
    if REPEAT not in samples.columns:
        return None
    numbers = noise_numbers(samples.get_column(REPEAT).unique().to_list())
    return noise_partial(samples, numbers, signals, tolerance).finished() if numbers else None


def noise_partial(
    samples: pl.DataFrame, numbers: tuple[int, ...], signals: Sequence[Signal], tolerance: float
) -> NoisePartial:
    """The noise-floor sums of ``samples``, a partition of a side's cases, over the pairs of ``numbers`` (the
    whole side's ``noise_numbers``)."""
    status = case_status(signals, tolerance)
    totals = dict.fromkeys(_NOISE_STATUSES, 0.0)
    cases = 0
    for first, second in itertools.combinations(numbers, 2):
        one, other = (
            _one_repeat(samples, side, number, signals) for side, number in zip(SIDES, (first, second), strict=True)
        )
        compared = one.join(other, on="case_id", how="inner").select(status)
        counts = dict(compared.get_column("status").cast(pl.String).value_counts().iter_rows())
        cases += compared.height
        for name in _NOISE_STATUSES:
            mirrored = _MIRRORED.get(name, name)
            totals[name] += (counts.get(name, 0) + counts.get(mirrored, 0)) / 2
    return NoisePartial(numbers, totals, cases)


def _one_repeat(samples: pl.DataFrame, side: str, number: int, signals: Sequence[Signal]) -> pl.DataFrame:
    """The samples of repeat ``number`` with what a status needs, named as ``side``'s in a comparison."""
    needed = ["status", "judge_status", *(signal.name for signal in signals if signal.decides_status)]
    one = samples.filter(pl.col(REPEAT) == number).select("case_id", *needed)
    return one.rename({name: f"{side}_{name}" for name in needed})
