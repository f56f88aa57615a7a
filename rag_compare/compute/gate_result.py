"""A release gate's verdict on a comparison: each condition, whether it held, and the numbers it was decided on.

A condition *holds* when what it names happened (``regressed>2%`` holds when more than 2% of the cases
regressed): the gate fails when any condition holds. ``gating`` decides them; the report floor renders
the verdict (a text table; the CI formats of a comparison).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rag_compare.core.listing import counted
from rag_compare.core.result import Report

__all__ = ["ConditionResult", "GateResult"]


@dataclass(frozen=True)
class ConditionResult:
    """One condition of a gate, decided."""

    condition: str
    """The condition as written, e.g. ``regressed>2%`` or ``all_cases.recall:worse``."""
    held: bool
    """Whether what it names happened: the gate fails on it."""
    evaluated: bool
    """False when there was nothing to decide it on (then ``held`` is false)."""
    numbers: str
    """What it was decided on, in words: ``3 of 35 cases (8.57%) regressed; the limit is > 2%``."""

    def to_dict(self) -> dict[str, Any]:
        return {"condition": self.condition, "held": self.held, "evaluated": self.evaluated, "numbers": self.numbers}


@dataclass(frozen=True)
class GateResult(Report):
    """Every condition of a gate decided on one comparison, in the order they were given."""

    conditions: tuple[ConditionResult, ...]
    alpha: float
    """The significance level of the ``:worse`` conditions."""

    def __repr__(self) -> str:
        conditions = counted(len(self.conditions), "condition")
        verdict = (
            f"passed: {conditions}, none held" if self.passed else f"failed: {len(self.held)} of {conditions} held"
        )
        return f"<GateResult {verdict} (alpha {self.alpha:g})>"

    @property
    def held(self) -> tuple[ConditionResult, ...]:
        """The conditions that held."""
        return tuple(condition for condition in self.conditions if condition.held)

    @property
    def passed(self) -> bool:
        """Whether no condition held."""
        return not self.held

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "alpha": self.alpha,
            "conditions": [condition.to_dict() for condition in self.conditions],
        }
