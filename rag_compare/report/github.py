"""A comparison (or an agreement with people) for GitHub Actions: workflow commands that annotate the job, and
the Markdown report as its summary.

The commands, in order: ``::warning title=rag-compare::...`` for each of the comparison's warnings, ``::error
title=rag-compare gate::CONDITION: NUMBERS`` for each gate condition that held, a warning for each condition that
could not be evaluated, and one ``::notice title=rag-compare::...`` with the case counts, where the changed cases
changed (their stages), and the gate's verdict. Text from data is redacted (no credential), made terminal-safe,
then escaped as GitHub's toolkit escapes it, so no value can end a command or start another.

Several candidates (``multi_commands``) give the warnings once, then per candidate, each message after its
name, the errors and warnings of its gate and its notice, and last a notice with the ranking's verdict; the
summary is their Markdown report.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, TextIO

from rag_compare.core.credentials import redact
from rag_compare.core.listing import counted
from rag_compare.core.result import DEFAULT_MAX_CASES, terminal_safe
from rag_compare.report.documents import write_report

if TYPE_CHECKING:
    from rag_compare.compute.agreement import Agreement
    from rag_compare.compute.comparison import Comparison
    from rag_compare.compute.gate_result import GateResult
    from rag_compare.compute.multi_comparison import MultiComparison

__all__ = [
    "GATE_TITLE",
    "TITLE",
    "agreement_commands",
    "escape_data",
    "escape_property",
    "multi_commands",
    "workflow_commands",
    "write_agreement_github",
    "write_github",
    "write_multi_github",
]

TITLE = "rag-compare"
"""The title of the warnings and of the notice."""
GATE_TITLE = "rag-compare gate"
"""The title of the errors: one per gate condition that held."""


def escape_data(text: str) -> str:
    """``text`` as a command's message, escaped as GitHub's toolkit does (``%``, CR and LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """``text`` as a command's property value: ``escape_data``, and ``:`` and ``,`` too."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_commands(comparison: Comparison, gate: GateResult | None = None) -> list[str]:
    """The workflow command lines (without line ends) for ``comparison`` and the verdict of ``gate``."""
    lines = [_command("warning", TITLE, warning) for warning in comparison.warnings]
    line = (
        f"{comparison.baseline.name} → {comparison.candidate.name}: "
        f"{counted(comparison.n_cases, 'case')}: {comparison.counts_text(', ')}"
        + "".join(f"; {line}" for line in comparison.stages_text())
    )
    return [*lines, *_gate_commands(gate), _command("notice", TITLE, _with_verdict(line, gate))]


def multi_commands(multi: MultiComparison, gates: Mapping[str, GateResult] | None = None) -> list[str]:
    """The workflow command lines for several candidates and each one's gate verdict (``gates``, by name)."""
    lines = [_command("warning", TITLE, warning) for warning in multi.warnings]
    for name, comparison in zip(multi.names, multi.comparisons, strict=True):
        gate = (gates or {}).get(name)
        line = f"{name}: {counted(comparison.n_cases, 'case')}: {comparison.counts_text(', ')}"
        lines += [*_gate_commands(gate, f"{name}: "), _command("notice", TITLE, _with_verdict(line, gate))]
    return [*lines, _command("notice", TITLE, multi.ranking.reason)]


def write_multi_github(
    multi: MultiComparison,
    commands: TextIO,
    summary: TextIO,
    *,
    max_cases: int | None = DEFAULT_MAX_CASES,
    gates: Mapping[str, GateResult] | None = None,
) -> None:
    """Write the workflow commands to ``commands``, then the Markdown report of several candidates (listing up
    to ``max_cases`` changed cases) to ``summary``."""
    from rag_compare.report.multi import write_multi_report

    commands.write("".join(f"{line}\n" for line in multi_commands(multi, gates)))
    write_multi_report(multi, summary, max_cases=max_cases, gates=gates)


def agreement_commands(result: Agreement, gate: GateResult | None = None) -> list[str]:
    """The workflow command lines for an agreement with people and the verdict of ``gate``."""
    judges = counted(len(result.judges), "judge")
    line = f"{judges} measured against people ({result.human['source']}): {counted(len(result.rows), 'label')}"
    return [*_gate_commands(gate), _command("notice", TITLE, _with_verdict(line, gate))]


def write_agreement_github(result: Agreement, commands: TextIO, summary: TextIO, gate: GateResult | None) -> None:
    """Write the workflow commands to ``commands``, then the Markdown agreement report to ``summary``."""
    from rag_compare.report.agreement import write_agreement

    commands.write("".join(f"{line}\n" for line in agreement_commands(result, gate)))
    write_agreement(result, summary, "markdown", gate=gate)


def _gate_commands(gate: GateResult | None, prefix: str = "") -> list[str]:
    """An error per gate condition that held, a warning per one that could not be evaluated (each message after
    ``prefix``)."""
    if gate is None:
        return []
    held = [_command("error", GATE_TITLE, f"{prefix}{result.condition}: {result.numbers}") for result in gate.held]
    return held + [
        _command("warning", TITLE, f"{prefix}gate condition {result.condition} was not evaluated: {result.numbers}")
        for result in gate.conditions
        if not result.evaluated and not result.held
    ]


def write_github(
    comparison: Comparison,
    commands: TextIO,
    summary: TextIO,
    *,
    all_cases: bool = False,
    max_cases: int | None = DEFAULT_MAX_CASES,
    gate: GateResult | None = None,
) -> None:
    """Write the workflow commands to ``commands``, then the Markdown report (``all_cases``,
    ``max_cases``: what it lists; the gate's verdict at its top) to ``summary``; the two may be the same stream."""
    commands.write("".join(f"{line}\n" for line in workflow_commands(comparison, gate)))
    write_report(comparison, summary, all_cases=all_cases, max_cases=max_cases, gate=gate)


def _command(name: str, title: str, message: str) -> str:
    return f"::{name} title={escape_property(title)}::{escape_data(terminal_safe(redact(message)))}"


def _with_verdict(line: str, gate: GateResult | None) -> str:
    """``line`` and the gate's verdict: ``...; gate failed: 1 of 3 conditions held``."""
    if gate is None:
        return line
    total = counted(len(gate.conditions), "condition")
    verdict = "passed" if gate.passed else "failed"
    return f"{line}; gate {verdict}: {len(gate.held)} of {total} held"
