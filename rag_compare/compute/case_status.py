"""A compared case's status and the reasons behind it, from its two sides' columns.

A status is the first rule that holds: missing on a side, failed on a side, its judging failed on a
side, then how its status signals moved beyond the tolerance. A signal is *better* or *worse* only
when the two sides' samples are apart: every candidate sample beyond every baseline sample (with one
sample a side, simply the two values). Some better and some worse is ``mixed``. A case where no signal
is apart but a signal's mean moved, or the share of its failed samples did, is ``unstable``: its own
repeats can explain the change. With a pairwise judge's verdicts, a case where nothing else moved is
``improved`` or ``regressed`` when the judge preferred a side in both orders. Otherwise it is ``unchanged``.

A case's *stage* (see ``signals.STAGES``) is where in the pipeline it changed: ``failure`` for a side
missing or failed, else the latest stage (answer, context, retrieval coverage, retrieval rank) of a signal
that moved in its status' direction (both directions for ``mixed``; any move for ``unstable``, or
``failure`` when only the share of failed repeats moved); a preference counts at the answer. An
unchanged case has none. Each reason has the stage of what it names.

The frame holds ``<side>_<signal>`` per side; with repeats (``reduced``, see ``repeats``) also each
signal's ``_low``/``_high`` and the ``repeats``, ``failed_repeats`` and ``judge_failed_repeats`` counts.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from rag_compare.core.contract import record_ok
from rag_compare.core.rows import lists_by_row, row_index
from rag_compare.core.signals import JUDGE_FAILED, STAGES, Signal, Stage, judge_failed

__all__ = ["CASE_STATUSES", "SIDES", "STAGED_STATUSES", "STAGE_TYPE", "case_stage", "case_status", "with_reasons"]

SIDES = ("baseline", "candidate")
CASE_STATUSES = (
    "missing_in_baseline",
    "missing_in_candidate",
    "missing_in_both",
    "failed_in_baseline",
    "failed_in_candidate",
    "failed_in_both",
    "judge_failed_in_baseline",
    "judge_failed_in_candidate",
    "judge_failed_in_both",
    "improved",
    "regressed",
    "mixed",
    "unstable",
    "unchanged",
)
STAGE_TYPE = pl.Enum(STAGES)
_SIDE_STATUSES = CASE_STATUSES[:9]
"""The statuses of a side missing, failed or judge-failed: their stage is ``failure``."""
STAGED_STATUSES = ("regressed", "improved", "mixed", "unstable")
"""The statuses whose cases may have changed at any stage (the others' is ``failure``, or none)."""
_MAX_ERROR_CHARS = 200
_REASON_DECIMALS = range(3, 16)
"""Decimals a reason may round its two numbers to: the fewest of these at which they differ."""


def _bounds(side: str, signal: Signal, reduced: bool) -> tuple[pl.Expr, pl.Expr]:
    """The side's smallest and largest sample value of ``signal`` (its one value without repeats)."""
    if not reduced:
        value = pl.col(f"{side}_{signal.name}").cast(pl.Float64)
        return value, value
    return pl.col(f"{side}_{signal.name}_low"), pl.col(f"{side}_{signal.name}_high")


def _moved(signal: Signal, tolerance: float, reduced: bool) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """Whether the candidate is better and whether worse than the baseline (all samples apart beyond
    ``tolerance``), and whether the means moved at all; false where a side has no value."""
    (baseline_low, baseline_high), (candidate_low, candidate_high) = (_bounds(side, signal, reduced) for side in SIDES)
    up = (candidate_low - baseline_high > tolerance).fill_null(False)
    down = (baseline_low - candidate_high > tolerance).fill_null(False)
    baseline, candidate = (pl.col(f"{side}_{signal.name}").cast(pl.Float64) for side in SIDES)
    shifted = ((candidate - baseline).abs() > tolerance).fill_null(False)
    return (up, down, shifted) if signal.higher_is_better else (down, up, shifted)


def _failure_share_moved(tolerance: float) -> pl.Expr:
    """Whether the share of failed samples differs between the sides (cases ok on both, with repeats)."""
    baseline, candidate = (pl.col(f"{side}_failed_repeats") / pl.col(f"{side}_repeats") for side in SIDES)
    return ((candidate - baseline).abs() > tolerance).fill_null(False)


def case_status(
    signals: Sequence[Signal], tolerance: float, *, reduced: bool = False, preferred: bool = False
) -> pl.Expr:
    """Each case's status (an ``Enum`` of ``CASE_STATUSES``): the first of the module's rules that holds;
    with ``preferred`` (a ``preferred`` column, see ``preference``), a case where no signal moved is
    improved or regressed by a pairwise judge's decided preference."""
    sided = {
        "missing": {side: pl.col(f"{side}_status").is_null() for side in SIDES},
        "failed": {side: ~record_ok(f"{side}_status") for side in SIDES},
        "judge_failed": {side: judge_failed(side) for side in SIDES},
    }
    moves = [_moved(signal, tolerance, reduced) for signal in signals if signal.decides_status]
    better, worse = pl.any_horizontal(up for up, _, _ in moves), pl.any_horizontal(down for _, down, _ in moves)
    shifted = pl.any_horizontal(moved for _, _, moved in moves)
    if reduced:
        shifted = shifted | _failure_share_moved(tolerance)
    rules = [
        rule
        for outcome, on in sided.items()
        for rule in (
            (on["baseline"] & on["candidate"], f"{outcome}_in_both"),
            (on["baseline"], f"{outcome}_in_baseline"),
            (on["candidate"], f"{outcome}_in_candidate"),
        )
    ]
    rules += [(better & worse, "mixed"), (better, "improved"), (worse, "regressed"), (shifted, "unstable")]
    if preferred:
        rules += [(pl.col("preferred") == "candidate", "improved"), (pl.col("preferred") == "baseline", "regressed")]
    status = pl.coalesce(*(pl.when(where).then(pl.lit(name)) for where, name in rules), pl.lit("unchanged"))
    return status.cast(pl.Enum(CASE_STATUSES)).alias("status")


def case_stage(
    signals: Sequence[Signal], tolerance: float, *, reduced: bool = False, preferred: bool = False
) -> pl.Expr:
    """Each case's ``stage`` (an ``Enum`` of ``STAGES``, null where unchanged), read beside its ``status``
    column: the module's rule for stages."""
    deciding = [signal for signal in signals if signal.decides_status]
    moves = {signal.name: _moved(signal, tolerance, reduced) for signal in deciding}
    stages = _signal_stages(deciding, tolerance, reduced)

    def latest(holds: int) -> pl.Expr:
        """The latest stage of a signal whose move ``holds`` (0 better, 1 worse, 2 moved at all)."""
        indexed = (pl.when(moves[name][holds]).then(stage) for name, stage in stages.items())
        return pl.max_horizontal(pl.lit(None, dtype=pl.UInt8), *indexed)

    either = pl.max_horizontal(latest(0), latest(1))
    failure, answer = _index("failure"), _index("answer")
    status = pl.col("status").cast(pl.String)
    index = (
        pl.when(status.is_in(_SIDE_STATUSES))
        .then(failure)
        .when(status == "improved")
        .then(latest(0).fill_null(answer) if preferred else latest(0))
        .when(status == "regressed")
        .then(latest(1).fill_null(answer) if preferred else latest(1))
        .when(status == "mixed")
        .then(either)
        .when(status == "unstable")
        .then(latest(2).fill_null(failure))
    )
    return _named(index).alias("stage")


def _signal_stages(signals: Sequence[Signal], tolerance: float, reduced: bool) -> dict[str, pl.Expr]:
    """Each signal's stage as its index in ``STAGES``: a rank signal's is ``retrieval_coverage`` in a case
    where a coverage signal moved too."""
    coverage = [signal for signal in signals if signal.stage == "retrieval_coverage"]
    coverage_moved = pl.any_horizontal(pl.lit(False), *(_moved(signal, tolerance, reduced)[2] for signal in coverage))
    stages: dict[str, pl.Expr] = {}
    for signal in signals:
        stage = _index(signal.stage)
        if signal.stage == "retrieval_rank":
            stage = pl.when(coverage_moved).then(_index("retrieval_coverage")).otherwise(stage)
        stages[signal.name] = stage
    return stages


def _index(stage: Stage) -> pl.Expr:
    return pl.lit(STAGES.index(stage), dtype=pl.UInt8)


def _named(index: pl.Expr) -> pl.Expr:
    """A stage's index in ``STAGES`` as the stage (null stays null)."""
    return index.replace_strict(dict(enumerate(STAGES)), default=None, return_dtype=STAGE_TYPE)


def with_reasons(
    cases: pl.DataFrame, signals: Sequence[Signal], tolerance: float, *, reduced: bool = False, preferred: bool = False
) -> pl.DataFrame:
    """``cases`` with ``reasons``: a side missing or failed (in some of its repeats), its judging failed,
    then each status signal that moved; with ``preferred``, last, a pairwise judge's decided preference;
    and ``reason_stages``, each reason's stage.

    Reasons are made only where they apply (a side without an ok record, a signal that moved), as one
    long frame of (row, reason, stage), kind after kind in the order above, then gathered per case.
    """
    failure = _index("failure")
    parts = [_reason_rows(cases, *_failure_reason(side, reduced), failure) for side in SIDES]
    parts += [_reason_rows(cases, *_judge_failure_reason(side, reduced), failure) for side in SIDES]
    deciding = [signal for signal in signals if signal.decides_status]
    for signal, stage in zip(deciding, _signal_stages(deciding, tolerance, reduced).values(), strict=True):
        better, worse, shifted = _moved(signal, tolerance, reduced)
        direction = (
            pl.when(better).then(pl.lit("better")).when(worse).then(pl.lit("worse")).otherwise(pl.lit("within repeats"))
        )
        reason = pl.format(f"{signal.name} {{}} -> {{}} ({{}})", *_shown(signal, reduced), direction)
        parts.append(_reason_rows(cases, shifted, reason, stage))
    if preferred:
        chosen = pl.col("preferred")
        reason = pl.format("the pairwise judge preferred the {} in both orders", chosen)
        parts.append(_reason_rows(cases, chosen.is_in(SIDES), reason, _index("answer")))
    by_row = lists_by_row(cases.height, pl.concat(parts).collect(), "reason", "stage")
    return cases.with_columns(
        by_row.get_column("reason").alias("reasons"), by_row.get_column("stage").alias("reason_stages")
    )


def _error(column: str) -> pl.Expr:
    return pl.col(column).fill_null("no error recorded").str.slice(0, _MAX_ERROR_CHARS)


def _failure_reason(side: str, reduced: bool) -> tuple[pl.Expr, pl.Expr]:
    """Where the side has no record or a failed one, and the reason; with repeats, also where some of
    its samples failed (``candidate failed in 1 of 3 repeats: ...``)."""
    status, error = pl.col(f"{side}_status"), _error(f"{side}_error")
    single = pl.format(f"{side} {{}}: {{}}", status, error)
    failed = ~record_ok(f"{side}_status")
    if reduced:
        repeats, failed_repeats = pl.col(f"{side}_repeats"), pl.col(f"{side}_failed_repeats")
        outcome = pl.when(failed).then(status).otherwise(pl.lit("failed"))
        several = pl.format(f"{side} {{}} in {{}} of {{}} repeats: {{}}", outcome, failed_repeats, repeats, error)
        single = pl.when(repeats > 1).then(several).otherwise(single)
        failed = failed | (failed_repeats > 0).fill_null(False)
    reason = pl.when(status.is_null()).then(pl.lit(f"no record in the {side} run")).otherwise(single)
    return failed, reason


def _judge_failure_reason(side: str, reduced: bool) -> tuple[pl.Expr, pl.Expr]:
    """Where judging the side's (ok) case failed, in all its samples or with repeats in some."""
    error = _error(f"{side}_judge_error")
    where = record_ok(f"{side}_status") & judge_failed(side)
    reason = pl.format(f"{side} {JUDGE_FAILED}: {{}}", error)
    if reduced:
        judged_repeats, repeats = pl.col(f"{side}_judge_failed_repeats"), pl.col(f"{side}_repeats")
        ok_repeats = repeats - pl.col(f"{side}_failed_repeats")
        several = pl.format(f"{side} {JUDGE_FAILED} in {{}} of {{}} repeats: {{}}", judged_repeats, ok_repeats, error)
        reason = pl.when(repeats > 1).then(several).otherwise(reason)
        where = record_ok(f"{side}_status") & (judged_repeats > 0).fill_null(False)
    return where, reason


def _reason_rows(cases: pl.DataFrame, where: pl.Expr, reason: pl.Expr, stage: pl.Expr) -> pl.LazyFrame:
    """``row``, ``reason`` and its ``stage`` for the rows of ``cases`` where ``where`` holds (a query: the
    reasons of every kind are made together, on every core)."""
    selected = (reason.alias("reason"), _named(stage).alias("stage"))
    return cases.lazy().with_columns(row_index()).filter(where).select("row", *selected)


def _shown(signal: Signal, reduced: bool) -> list[pl.Expr]:
    """The two values of ``signal`` as a reason shows them: a flag without repeats as ``true``/``false``;
    numbers (a flag's rate over repeats) rounded to the fewest of ``_REASON_DECIMALS`` (3 at least) at
    which they differ, else in full, without trailing zeros (a whole number has no decimals)."""
    values = [pl.col(f"{side}_{signal.name}") for side in SIDES]
    if signal.flag and not reduced:
        return [pl.when(value).then(pl.lit("true")).otherwise(pl.lit("false")) for value in values]
    numbers = [value.cast(pl.Float64) for value in values]
    decimals = pl.coalesce(
        pl.when(numbers[0].round(places) != numbers[1].round(places)).then(pl.lit(places))
        for places in _REASON_DECIMALS
    )
    return [_rounded(number, decimals).cast(pl.String).str.strip_suffix(".0") for number in numbers]


def _rounded(number: pl.Expr, decimals: pl.Expr) -> pl.Expr:
    """``number`` rounded to ``decimals`` places where that is set, else as it is."""
    return pl.coalesce(*(pl.when(decimals == places).then(number.round(places)) for places in _REASON_DECIMALS), number)
