"""A release gate: its conditions (``gate_grammar``), decided on a comparison, each with the numbers it was
decided on.

A condition *holds* when what it names happened (``regressed>2%`` holds when more than 2% of the cases
regressed): the gate fails when any condition holds. A condition that has nothing to be decided on
(a signal with no paired value, a share of no cases) is not held and says so (``evaluated`` is false).

``error_rate`` counts the cases whose candidate side has no record, a failed one, or a judging that
failed: the same sides the statuses ``missing_in_*``, ``failed_in_*`` and ``judge_failed_in_*`` look at,
whatever the baseline did. With repeats a case's candidate side counts so when none of its samples
succeeded (or none that succeeded was judged); a case with only some failed samples does not.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from rag_compare.compute.gate_grammar import (
    AgreementLimit,
    Condition,
    ErrorRateLimit,
    SignalLimit,
    StatusLimit,
    parse_condition,
    split_conditions,
)
from rag_compare.compute.gate_result import ConditionResult, GateResult
from rag_compare.core.contract import record_ok
from rag_compare.core.errors import GateError
from rag_compare.core.signals import SIGNALS_BY_NAME, STAGE_PHRASES, judge_failed
from rag_compare.io.gate_file import read_gate_file

if TYPE_CHECKING:
    from rag_compare.compute.agreement import Agreement
    from rag_compare.compute.comparison import Comparison

__all__ = ["DEFAULT_ALPHA", "Gate", "load_gate"]

_MEASURED = ("baseline", "candidate", "delta")
"""The numbers of an aggregate row a ``:delta``/``:candidate``/``:baseline`` condition shows."""
DEFAULT_ALPHA = 0.05
_COMPARE: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}


@dataclass(frozen=True)
class Gate:
    """The conditions of a release gate and the significance level of its ``:worse`` conditions.

    ``Gate.parse(['regressed>2%', 'recall:worse'])`` reads conditions written as ``GATE_GRAMMAR``
    describes; ``gate.evaluate(comparison)`` decides each one.
    """

    conditions: tuple[Condition, ...]
    alpha: float = DEFAULT_ALPHA

    def __post_init__(self) -> None:
        if not self.conditions:
            raise GateError(
                "a gate needs at least one condition (`conditions` is empty): without one it passes every "
                "comparison. Give one, e.g. ['regressed>2%']."
            )
        alpha = self.alpha
        if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
            raise GateError(f"`alpha` must be a number between 0 and 1 (both excluded), e.g. 0.05; got {alpha!r}.")

    def __repr__(self) -> str:
        return f"Gate.parse({[condition.text for condition in self.conditions]!r}, alpha={self.alpha!r})"

    @classmethod
    def parse(cls, conditions: Sequence[str], alpha: float = DEFAULT_ALPHA) -> Gate:
        """A gate of ``conditions``, each a string of one or more conditions separated by commas; an empty
        one (``''``, ``' , '``) is a ``GateError``, as is an empty list."""
        if isinstance(conditions, str):
            raise GateError(f"`conditions` is a list of conditions, e.g. [{conditions!r}], not one string.")
        texts = [text for value in conditions for text in split_conditions(_condition_text(value))]
        return cls(tuple(parse_condition(text) for text in texts), alpha)

    def evaluate(self, result: Comparison | Agreement) -> GateResult:
        """Every condition decided on ``result``, in order: a comparison's conditions on a ``Comparison``, the
        agreement conditions (``kappa[grounded]<0.6``) on an ``Agreement``; a ``GateError`` for the others."""
        from rag_compare.compute.agreement import Agreement

        agreement = isinstance(result, Agreement)
        wrong = [condition.text for condition in self.conditions if isinstance(condition, AgreementLimit) != agreement]
        if wrong:
            decided_by = "a comparison (`compare`)" if agreement else "an agreement with people (`agreement`)"
            raise GateError(
                f"gate condition {wrong[0]!r} is decided on {decided_by}, not on this "
                f"{type(result).__name__}; give each gate the conditions of what it checks."
            )
        if isinstance(result, Agreement):
            on = result
            decided = tuple(_agreement_result(item, on) for item in self.conditions if isinstance(item, AgreementLimit))
        else:
            compared = result
            decided = tuple(
                _decide(item, compared, self.alpha) for item in self.conditions if not isinstance(item, AgreementLimit)
            )
        return GateResult(decided, self.alpha)


def load_gate(path: str | Path) -> Gate:
    """The gate of a TOML file's ``[gate]`` table: ``fail_on``, a list of conditions, and ``alpha``
    (optional, 0.05 by default); see ``io.gate_file``."""
    conditions, alpha = read_gate_file(path)
    try:
        return Gate.parse(conditions, DEFAULT_ALPHA if alpha is None else alpha)
    except GateError as error:
        raise GateError(f"{path}: [gate]: {error}") from None


def _condition_text(value: object) -> str:
    if not isinstance(value, str):
        raise GateError(f"a gate condition is text such as 'regressed>2%', not {type(value).__name__}.")
    return value


def _decide(
    condition: StatusLimit | SignalLimit | ErrorRateLimit, comparison: Comparison, alpha: float
) -> ConditionResult:
    if isinstance(condition, StatusLimit):
        return _status_result(condition, comparison)
    if isinstance(condition, ErrorRateLimit):
        return _error_rate_result(condition, comparison)
    if condition.measure == "worse":
        return _worse_result(condition, comparison, alpha)
    return _measure_result(condition, comparison)


def _figure(value: float, beside: float | None = None) -> str:
    """``value`` to 3 significant digits, or more where it would read as ``beside`` though it differs."""
    for digits in range(3, 16):
        text = f"{value:.{digits}g}"
        if beside is None or value == beside or text != f"{beside:.{digits}g}":
            return text
    return repr(value)


def _share_result(condition: StatusLimit | ErrorRateLimit, count: int, total: int, what: str) -> ConditionResult:
    """A count of ``total`` cases against a share (or, for a status, a count) limit; a share of no
    cases is not evaluated."""
    shared = isinstance(condition, ErrorRateLimit) or condition.share
    limit = f"the limit is {condition.op} {_figure(condition.limit)}{'%' if shared else ''}"
    if total == 0:
        numbers = f"no cases were compared: 0 {what}; {limit}"
        held = not shared and _COMPARE[condition.op](0, condition.limit)
        return ConditionResult(condition.text, held, not shared, numbers)
    share = 100 * count / total
    held = _COMPARE[condition.op](share if shared else count, condition.limit)
    shown = _figure(share, condition.limit if shared else None)
    return ConditionResult(condition.text, held, True, f"{count} of {total} cases ({shown}%) {what}; {limit}")


def _status_result(condition: StatusLimit, comparison: Comparison) -> ConditionResult:
    if condition.stage is None:
        return _share_result(condition, comparison.counts[condition.status], comparison.n_cases, condition.status)
    count = comparison.stage_counts.get(condition.status, {}).get(condition.stage, 0)
    what = f"{condition.status} {STAGE_PHRASES[condition.stage]}"
    return _share_result(condition, count, comparison.n_cases, what)


def _error_rate_result(condition: ErrorRateLimit, comparison: Comparison) -> ConditionResult:
    status = pl.col("candidate_status")
    kinds = {
        "failed": status.is_not_null() & ~record_ok("candidate_status"),
        "judge_failed": record_ok("candidate_status") & judge_failed("candidate"),
        "missing": status.is_null(),
    }
    sums = comparison.scan_cases().select(*(where.sum().alias(kind) for kind, where in kinds.items())).collect()
    counts = sums.row(0, named=True)
    count = sum(counts.values())
    listed = ", ".join(f"{kind} {counts[kind]}" for kind in kinds)
    what = f"failed, were judge-failed or are missing in the candidate ({listed})"
    return _share_result(condition, count, comparison.n_cases, what)


def _aggregate_row(condition: SignalLimit, comparison: Comparison) -> dict[str, Any] | str:
    """The condition's aggregate row, or why there is none to decide it on."""
    scoped = f"{condition.scope} {condition.signal}"
    rows = comparison.aggregates.filter(
        (pl.col("signal") == condition.signal) & (pl.col("scope") == condition.scope)
    ).to_dicts()
    if not rows:
        return f"no {scoped}: the comparison has no value of {condition.signal} (a scores signal needs scores with it)"
    if not rows[0]["n"] or rows[0]["delta"] is None:
        return f"no {scoped}: no case has a value of {condition.signal} on both sides"
    return rows[0]


def _worse_result(condition: SignalLimit, comparison: Comparison, alpha: float) -> ConditionResult:
    row = _aggregate_row(condition, comparison)
    if isinstance(row, str):
        return ConditionResult(condition.text, False, False, row)
    higher_is_better = SIGNALS_BY_NAME[condition.signal].higher_is_better
    low, high, p = row["ci_low"], row["ci_high"], row["p_adjusted"]
    side = "below" if higher_is_better else "above"
    apart = (high < 0 if higher_is_better else low > 0) if low is not None and high is not None else False
    significant = p is not None and p < alpha
    interval = "none" if low is None or high is None else f"[{_figure(low)}, {_figure(high)}]"
    tested = "no p" if p is None else f"p (Holm) {_figure(p, alpha)} {'<' if significant else '>='} alpha {alpha:g}"
    numbers = (
        f"{condition.scope} {condition.signal} delta {_figure(row['delta'])}, 95% CI {interval} "
        f"({'' if apart else 'not '}entirely {side} 0), {tested}; n {row['n']}"
    )
    return ConditionResult(condition.text, apart and significant, True, numbers)


def _measure_result(condition: SignalLimit, comparison: Comparison) -> ConditionResult:
    row = _aggregate_row(condition, comparison)
    if isinstance(row, str):
        return ConditionResult(condition.text, False, False, row)
    value = float(row[condition.measure])
    held = _COMPARE[condition.op](value, condition.limit)
    others = ", ".join(f"{name} {_figure(row[name])}" for name in _MEASURED if name != condition.measure)
    numbers = (
        f"{condition.scope} {condition.signal} {condition.measure} {_figure(value, condition.limit)} "
        f"({others}, n {row['n']}); the limit is {condition.op} {_figure(condition.limit)}"
    )
    return ConditionResult(condition.text, held, True, numbers)


def _agreement_result(condition: AgreementLimit, agreement: Agreement) -> ConditionResult:
    """Held when any judge's ``measure`` on the label meets the limit; not evaluated where a judge's is undefined
    or rests on fewer than ``agreement.min_n`` answers (too few to decide), unless another judge's held."""
    rows = [row for row in agreement.rows if row.label == condition.label]
    if not rows:
        return ConditionResult(condition.text, False, False, f"no judge was measured on {condition.label}")
    held, evaluated, numbers = False, True, []
    for row in rows:
        value = row.measure(condition.measure)
        if value is None:
            evaluated = False
            numbers.append(f"{row.judge}: {condition.measure} undefined or not applicable (n {row.n})")
        elif row.n < agreement.min_n:
            evaluated = False
            numbers.append(
                f"{row.judge}: {condition.measure} {_figure(value)} on n {row.n}, under {agreement.min_n}: too few "
                "labelled answers to decide"
            )
        else:
            meets = _COMPARE[condition.op](value, condition.limit)
            held = held or meets
            numbers.append(f"{row.judge}: {condition.measure} {_figure(value, condition.limit)} (n {row.n})")
    limit = f"the limit is {condition.op} {_figure(condition.limit)}"
    return ConditionResult(condition.text, held, held or evaluated, f"{'; '.join(numbers)}; {limit}")
