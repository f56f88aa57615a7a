"""A release gate at the command line: the gate of ``--gate`` and ``--fail-on``, its verdict said on stderr with
exit code 1 when a condition held, and the ``github`` format's two outputs (``compare``, ``agreement``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rag_compare.cli.exits import EXIT_FOUND, say
from rag_compare.cli.output import emit

if TYPE_CHECKING:
    from rag_compare.compute.gate_result import GateResult
    from rag_compare.compute.gating import Gate

__all__ = ["gate_of", "say_gate", "say_verdict", "write_for_github"]


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
    if result is None:
        return
    say_verdict(result)
    if not result.passed:
        sys.exit(EXIT_FOUND)


def say_verdict(result: GateResult, prefix: str = "") -> None:
    """On stderr, each line after ``prefix``: each condition that held, with its numbers, each one that could not
    be evaluated, then whether the gate passed."""
    from rag_compare.report.summaries import gate_verdict

    for condition in result.conditions:
        if condition.held:
            say(f"{prefix}gate condition held: {condition.condition}: {condition.numbers}", err=True)
        elif not condition.evaluated:
            say(f"{prefix}warning: gate condition not evaluated: {condition.condition}: {condition.numbers}", err=True)
    say(f"{prefix}{gate_verdict(result)}", err=True)


def write_for_github(write: Callable[[TextIO, TextIO], None], output: Path | None) -> None:
    """``write(commands, summary)``: the workflow commands on stdout; the summary to ``output`` (atomically), else
    appended to ``$GITHUB_STEP_SUMMARY`` (the job's summary page) when it is set, else on stdout after them."""
    from rag_compare.io.outputs import check_output

    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if output is None and step_summary:
        check_output(step_summary, "step summary", existing="updated")  # appended to, so never a FIFO
        with open(step_summary, "a", encoding="utf-8") as summary:
            write(sys.stdout, summary)
    else:
        emit(lambda summary: write(sys.stdout, summary), output)
