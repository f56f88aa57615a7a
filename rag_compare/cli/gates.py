"""A release gate at the command line: the gate of ``--gate`` and ``--fail-on``, and its verdict said on stderr
with exit code 1 when a condition held (``compare``, ``agreement``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rag_compare.cli.exits import EXIT_FOUND, say

if TYPE_CHECKING:
    from rag_compare.compute.gate_result import GateResult
    from rag_compare.compute.gating import Gate

__all__ = ["gate_of", "say_gate"]


def gate_of(fail_on: Sequence[str], gate_file: Path | None, alpha: float | None) -> Gate | None:
    """The gate of ``--gate``'s file and then of each ``--fail-on``, at ``--alpha`` (else the file's);
    ``None`` when neither was given (the library refuses one given empty)."""
    from rag_compare.compute.gating import Gate, load_gate

    gates = ([load_gate(gate_file)] if gate_file is not None else []) + ([Gate.parse(fail_on)] if fail_on else [])
    if not gates:
        return None
    conditions = tuple(condition for gate in gates for condition in gate.conditions)
    return Gate(conditions, gates[0].alpha if alpha is None else alpha)


def say_gate(result: GateResult | None) -> None:
    """On stderr: each condition that held, with its numbers, and each one that could not be evaluated;
    then whether the gate passed, exiting with ``EXIT_FOUND`` when it did not. Nothing without a gate."""
    from rag_compare.report.summaries import gate_verdict

    if result is None:
        return
    for condition in result.conditions:
        if condition.held:
            say(f"gate condition held: {condition.condition}: {condition.numbers}", err=True)
        elif not condition.evaluated:
            say(f"warning: gate condition not evaluated: {condition.condition}: {condition.numbers}", err=True)
    say(gate_verdict(result), err=True)
    if not result.passed:
        sys.exit(EXIT_FOUND)
