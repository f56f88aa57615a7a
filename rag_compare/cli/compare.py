"""The ``compare`` command: two frozen runs compared case by case, as a summary, JSON or a report."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import cast

import click

from rag_compare.cli.exits import EXIT_FOUND, say
from rag_compare.cli.options import PATH, Command, finite_float, format_option
from rag_compare.cli.output import emit
from rag_compare.core.result import DEFAULT_MAX_CASES, FORMATS, REPORT_FORMATS

__all__ = ["compare_command"]


def _statuses(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, ...]:
    from rag_compare.compute.comparison import CASE_STATUSES

    if not value:
        return ()
    statuses = tuple(part.strip() for part in value.split(",") if part.strip())
    unknown = [status for status in statuses if status not in CASE_STATUSES]
    if unknown:
        raise click.BadParameter(f"unknown status {', '.join(unknown)}; use any of: {', '.join(CASE_STATUSES)}.")
    return statuses


@click.command("compare", cls=Command)
@click.argument("baseline", type=PATH)
@click.argument("candidate", type=PATH)
@click.option(
    "--corpus",
    type=PATH,
    help="Judge both runs by this corpus' labels; its cases that neither run has are missing_in_both.",
)
@click.option(
    "--passages",
    type=PATH,
    help="The knowledge base: find required passages' text in the context of records without context_passage_ids.",
)
@click.option(
    "--k",
    type=click.IntRange(min=1),
    help="Cut both ranked lists at k [default: each run's top_k, else the list's length].",
)
@click.option(
    "--tolerance",
    type=finite_float(0),
    default=1e-9,
    show_default=True,
    help="How far a signal must move to count as changed.",
)
@format_option(
    FORMATS + REPORT_FORMATS,
    "A summary for a terminal (text), data for programs (json), or a report to read: markdown, or html "
    "(one self-contained page that opens offline).",
)
@click.option(
    "--all-cases", is_flag=True, help="Reports (markdown, html) list the unchanged cases too, not only count them."
)
@click.option(
    "--max-cases",
    type=click.IntRange(min=0),
    default=DEFAULT_MAX_CASES,
    show_default=True,
    help="Reports (markdown, html) list at most this many cases per status; 0 lists every one.",
)
@click.option("--output", type=PATH, help="Write the output to this file (replaced atomically) instead of stdout.")
@click.option(
    "--fail-on",
    callback=_statuses,
    metavar="STATUS[,STATUS...]",
    help="Exit with code 1 when any case has one of these statuses, e.g. regressed,failed_in_candidate.",
)
@click.option(
    "--baseline-scores", type=PATH, help="A scores file of BASELINE: its verdicts replace the offline judge's."
)
@click.option(
    "--candidate-scores", type=PATH, help="A scores file of CANDIDATE: its verdicts replace the offline judge's."
)
@click.option(
    "--pairs",
    type=PATH,
    help="A pairs file of BASELINE and CANDIDATE (rag-compare judge-pairs): each case's preferred side, and the "
    "win rate.",
)
def compare_command(
    baseline: Path,
    candidate: Path,
    corpus: Path | None,
    passages: Path | None,
    k: int | None,
    tolerance: float,
    output_format: str,
    all_cases: bool,
    max_cases: int,
    output: Path | None,
    fail_on: tuple[str, ...],
    baseline_scores: Path | None,
    candidate_scores: Path | None,
    pairs: Path | None,
) -> None:
    """Compare the frozen run CANDIDATE with BASELINE, case by case (also: rag-compare BASELINE CANDIDATE).

    Each case gets one status (missing, failed, judge_failed, improved, regressed, mixed or unchanged)
    with the signals that moved; aggregates come with 95% bootstrap intervals and Holm-adjusted
    p-values. A report for reviewers: --format html --output report.html (or --format markdown).
    LLM verdicts: score each run (rag-compare score) and pass --baseline-scores/--candidate-scores;
    a pairwise judge's (rag-compare judge-pairs): --pairs.
    """
    from rag_compare.cli.flags import as_flags
    from rag_compare.compute.compare_runs import compare

    comparison = compare(
        baseline,
        candidate,
        corpus,
        passages=passages,
        k=k,
        tolerance=tolerance,
        baseline_scores=baseline_scores,
        candidate_scores=candidate_scores,
        pairs=pairs,
    )
    group = cast(click.Group, click.get_current_context().find_root().command)
    comparison = replace(
        comparison, warnings=tuple(as_flags(warning, group, "compare") for warning in comparison.warnings)
    )
    limit = max_cases or None
    emit(lambda stream: comparison.write(stream, output_format, all_cases=all_cases, max_cases=limit), output)
    if output is not None:
        say(f"wrote the {output_format} comparison to {output}: {comparison.counts_text(', ')}")
    if any(comparison.counts[status] for status in fail_on):
        sys.exit(EXIT_FOUND)
