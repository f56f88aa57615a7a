"""The ``agreement`` command: each judge measured against people's labels, with a gate on it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from rag_compare.cli.gates import gate_of, say_gate, write_for_github
from rag_compare.cli.options import PATH, Command, OutputPath, finite_float, format_option
from rag_compare.cli.output import emit, wants_json
from rag_compare.compute.gate_grammar import GATE_GRAMMAR
from rag_compare.core.result import CI_FORMATS, FORMATS, REPORT_FORMATS

if TYPE_CHECKING:
    from rag_compare.compute.agreement import Agreement
    from rag_compare.compute.gate_result import GateResult

__all__ = ["agreement_command"]

_SIDES = ("baseline", "candidate")


def _pairs(ctx: click.Context, param: click.Parameter, values: Sequence[str]) -> dict[str, str]:
    """``LABEL=VALUE`` options as a mapping; a malformed one is a usage error naming the option."""
    found = {}
    for value in values:
        label, equals, given = value.partition("=")
        if not equals or not label.strip() or not given.strip():
            raise click.BadParameter(f"{value!r} is not LABEL=VALUE, e.g. grounded=0.8.", ctx, param)
        found[label.strip()] = given.strip()
    return found


@click.command("agreement", cls=Command, epilog="\b\n" + GATE_GRAMMAR)
@click.argument("human", type=PATH)
@click.argument("judges", nargs=-1, required=True, type=PATH)
@click.option(
    "--corpus", type=PATH, help="The corpus: each case's category, answerability and language for the breakdowns."
)
@click.option(
    "--map",
    "mapping",
    multiple=True,
    metavar="LABEL=SIGNAL",
    callback=_pairs,
    help="Measure LABEL by SIGNAL instead of its default (repeatable), e.g. answer_correct=helpfulness.",
)
@click.option(
    "--threshold",
    "thresholds",
    multiple=True,
    metavar="LABEL=T",
    callback=_pairs,
    help="A numeric signal says yes at T or above (repeatable) [default: grounded=1, answer_correct=0.5].",
)
@click.option(
    "--side",
    type=click.Choice(_SIDES),
    help="A labels table with a side column holding both: the side whose answers the judges judged.",
)
@click.option(
    "--target-precision",
    type=finite_float(0, 1, min_open=True),
    help="Find each numeric signal's lowest threshold whose precision is at least this.",
)
@click.option(
    "--target-recall",
    type=finite_float(0, 1, min_open=True),
    help="Find each numeric signal's highest threshold whose recall is at least this.",
)
@format_option(
    (*FORMATS, *REPORT_FORMATS, *CI_FORMATS),
    "Output for a terminal, for programs, a report, or CI with the gate's verdict (github: workflow commands, the "
    "Markdown report as the job's summary; junit: JUnit XML).",
    written_to="--output",
)
@click.option("--output", type=OutputPath("report", existing="replaced"), help="Write the output to this file.")
@click.option(
    "--fail-on",
    multiple=True,
    metavar="CONDITION[,CONDITION...]",
    help="Exit with code 1 when this agreement condition holds (repeatable), e.g. kappa[grounded]<0.6.",
)
@click.option("--gate", "gate_file", type=PATH, help="A TOML file whose [gate] table holds fail_on = [CONDITION, ...].")
def agreement_command(
    human: Path,
    judges: tuple[Path, ...],
    corpus: Path | None,
    mapping: dict[str, str],
    thresholds: dict[str, str],
    side: str | None,
    target_precision: float | None,
    target_recall: float | None,
    output_format: str,
    output: Path | None,
    fail_on: tuple[str, ...],
    gate_file: Path | None,
) -> None:
    """Measure each JUDGE against people's labels in HUMAN: how far the judges' statuses can be trusted.

    HUMAN is a reviews file (rag-compare reviews export) or a labels table (CSV, Parquet or JSONL: case_id,
    optionally side and repeat, and any of answer_correct, grounded, abstention_correct, retrieval_ok,
    preferred, comment). A JUDGE is a frozen run (its offline judge), a scores file or a pairs file. For each
    judge and label: n, the base rate, the confusion matrix, accuracy, Cohen's kappa with its 95% interval,
    sensitivity and specificity with exact intervals, and for a numeric signal its ROC AUC and thresholds;
    breakdowns, the disagreements, and judges of the same answers compared (exact McNemar). A gate on it:
    --fail-on and --gate (exit 1 when a condition held; one on fewer than 20 answers is not evaluated).
    """
    from rag_compare.compute.agreement import agreement

    wants_json(output_format)
    gate = gate_of(fail_on, gate_file, None)
    if target_precision is not None and target_recall is not None:
        raise click.UsageError("give --target-precision or --target-recall, not both.")
    target = ("precision", target_precision) if target_precision is not None else None
    target = ("recall", target_recall) if target_recall is not None else target
    result = agreement(
        human,
        list(judges),
        corpus=corpus,
        mapping=mapping,
        thresholds={label: _number(value, label) for label, value in thresholds.items()},
        side=side,
        target=target,
    )
    gate_result = None if gate is None else gate.evaluate(result)
    _write(result, output_format, output, gate_result)
    say_gate(gate_result)


def _number(value: str, label: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise click.BadParameter(
            f"{label}={value}: a threshold is a number from 0 to 1.", param_hint="--threshold"
        ) from None


def _write(result: Agreement, output_format: str, output: Path | None, gate: GateResult | None) -> None:
    from rag_compare.report.rendering import write

    if output_format == "github":
        from rag_compare.report.github import write_agreement_github

        write_for_github(lambda commands, summary: write_agreement_github(result, commands, summary, gate), output)
        return

    def written(stream: TextIO) -> None:
        if output_format == "json":
            result.write_json(stream)
        else:
            write(result, stream, output_format, gate=gate)

    emit(written, output)
