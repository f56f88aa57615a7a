"""The ``compare`` command: two frozen runs compared case by case, as a summary, JSON or a report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

import click

from rag_compare.cli.exits import say
from rag_compare.cli.flags import in_flags
from rag_compare.cli.gates import gate_of, say_gate, write_for_github
from rag_compare.cli.many import Ranked, Written, compare_candidates, refuse_for_many, split_rank_by
from rag_compare.cli.options import (
    COMPARED,
    COMPARED_ON,
    JUDGED_BY_EACH,
    OFFLINE_JUDGE,
    PATH,
    Command,
    OutputPath,
    check_engine,
    finite_float,
    format_option,
)
from rag_compare.cli.output import emit
from rag_compare.compute.gate_grammar import GATE_GRAMMAR
from rag_compare.core.result import CI_FORMATS, DEFAULT_MAX_CASES, FORMATS, REPORT_FORMATS

if TYPE_CHECKING:
    from rag_compare.compute.comparison import Comparison
    from rag_compare.compute.gate_result import GateResult
    from rag_compare.compute.lexical_judge import LexicalJudge

__all__ = ["compare_command"]


@click.command("compare", cls=Command, epilog="\b\n" + GATE_GRAMMAR)
@click.argument("baseline", type=PATH)
@click.argument("candidates", type=PATH, nargs=-1, required=True, metavar="CANDIDATE [CANDIDATE...]")
@COMPARED
@format_option(
    FORMATS + REPORT_FORMATS + CI_FORMATS,
    "A summary for a terminal (text), data for programs (json), a report to read: markdown, or html "
    "(one self-contained page that opens offline); for CI: github (workflow commands on stdout, the Markdown "
    "report to --output, else $GITHUB_STEP_SUMMARY, else stdout) or junit (JUnit XML).",
    written_to="--output",
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
@click.option(
    "--with-texts",
    is_flag=True,
    help="JSON (--format json, or a folder --output) only: each case also holds its question, source_version, "
    "required_passage_ids and acceptance_note, and each side its answer, retrieved_passage_ids and "
    "context_passage_ids, read back from the runs (a larger, slower JSON).",
)
@click.option(
    "--output",
    type=OutputPath("report", folder="comparison folder", existing="replaced"),
    help="Write the output to this file (replaced atomically) instead of stdout; with a trailing / a new folder: "
    "summary.json (the JSON without its cases) and the cases as cases/part-*.parquet, for large comparisons.",
)
@click.option(
    "--fail-on",
    multiple=True,
    metavar="CONDITION[,CONDITION...]",
    help="Exit with code 1 when this gate condition holds (repeatable), e.g. regressed, regressed>2%, "
    "recall:worse, error_rate>5%; the grammar is below.",
)
@click.option(
    "--gate",
    "gate_file",
    type=PATH,
    help="A TOML file whose [gate] table holds fail_on = [CONDITION, ...] and, optionally, alpha.",
)
@click.option(
    "--alpha",
    type=finite_float(0, 1, min_open=True, max_open=True),
    help="The significance level of the :worse conditions and of --rank-by [default: the --gate file's alpha, "
    "else 0.05].",
)
@click.option(
    "--rank-by",
    metavar="SIGNAL[,SIGNAL...]",
    help="With several candidates: name one best only when it is better than every other on each of these "
    "signals (SCOPE.SIGNAL for all_cases), paired on the cases both have [default: recall,grounded].",
)
@JUDGED_BY_EACH
@COMPARED_ON
@OFFLINE_JUDGE
def compare_command(
    baseline: Path,
    candidates: tuple[Path, ...],
    output_format: str,
    all_cases: bool,
    max_cases: int,
    with_texts: bool,
    output: Path | str | None,
    fail_on: tuple[str, ...],
    gate_file: Path | None,
    alpha: float | None,
    rank_by: str | None,
    candidate_scores: tuple[Path, ...],
    engine: str,
    buckets: int | None,
    ray_address: str | None,
    offline_judge: LexicalJudge,
    **comparing: Any,
) -> None:
    """Compare the frozen run CANDIDATE with BASELINE, case by case (also: rag-compare BASELINE CANDIDATE).

    Each case gets one status (missing, failed, judge_failed, improved, regressed, mixed or unchanged)
    with the signals that moved; aggregates come with 95% bootstrap intervals and Holm-adjusted
    p-values. A report for reviewers: --format html --output report.html (or --format markdown).
    LLM verdicts: score each run (rag-compare score) and pass --baseline-scores/--candidate-scores;
    a pairwise judge's (rag-compare judge-pairs): --pairs. A release gate: --fail-on and --gate (exit 1
    when a condition holds).

    Several candidates (rag-compare BASELINE C1 C2 ...): each compared with BASELINE, the p-values adjusted
    over every candidate and signal, a leaderboard per --rank-by signal and a best candidate only when it is
    better than every other; the gate fails when it fails for one candidate.
    """
    gate = gate_of(fail_on, gate_file, alpha)
    check_engine(engine, buckets, ray_address)
    comparing |= {"judge": offline_judge, "engine": engine, "buckets": buckets, "ray_address": ray_address}
    if len(candidates) > 1:
        pairs = comparing.pop("pairs") is not None
        refuse_for_many(output_format, output, pairs=pairs, with_texts=with_texts, all_cases=all_cases)
        comparing["candidate_scores"] = candidate_scores or None
        written = Written(output_format, output if isinstance(output, Path) else None, max_cases or None)
        compare_candidates(baseline, candidates, comparing, Ranked(split_rank_by(rank_by), alpha), gate, written)
        return
    _refuse_for_one(rank_by, candidate_scores)
    folder, file = _output(output, output_format, with_texts=with_texts)
    from rag_compare.compute.compare_runs import compare

    scores = candidate_scores[0] if candidate_scores else None
    comparison = in_flags(compare(baseline, candidates[0], candidate_scores=scores, **comparing), "compare")
    gate_result = None if gate is None else gate.evaluate(comparison)
    listing = _Listing(all_cases, max_cases or None, with_texts)
    _write(comparison, output_format, folder, file, gate_result, listing)
    say_gate(gate_result)


def _refuse_for_one(rank_by: str | None, candidate_scores: tuple[Path, ...]) -> None:
    """Refuse, before any work, what only several candidates have."""
    if rank_by is not None:
        raise click.UsageError("--rank-by ranks several candidates: give two CANDIDATEs or more, or leave it out.")
    if len(candidate_scores) > 1:
        raise click.UsageError(
            f"--candidate-scores is given {len(candidate_scores)} times for one CANDIDATE: give it once per candidate."
        )


def _output(output: Path | str | None, output_format: str, *, with_texts: bool) -> tuple[Path | None, Path | None]:
    """The folder (``--output`` with a trailing ``/``, refused before any work as ``_check_folder_format`` says) or
    the file ``--output`` names; ``None`` for each it does not. ``--with-texts`` is refused but for JSON."""
    if isinstance(output, str):
        _check_folder_format(output_format)
        return Path(output), None
    if with_texts and output_format != "json":
        raise click.UsageError("--with-texts is for JSON: add --format json (or a folder --output), or leave it out.")
    return None, output


class _Listing(NamedTuple):
    """What the output lists of the cases: the unchanged ones too (``--all-cases``), at most ``max_cases`` per
    status in a report (``None``: all), each JSON case's texts (``--with-texts``)."""

    all_cases: bool
    max_cases: int | None
    with_texts: bool


def _write(
    comparison: Comparison,
    output_format: str,
    folder: Path | None,
    file: Path | None,
    gate: GateResult | None,
    listing: _Listing,
) -> None:
    """Write the comparison to ``folder``, ``file`` or stdout, listing its cases as ``listing`` says, and say
    where a file or folder went."""
    all_cases, max_cases, with_texts = listing
    if folder is not None:
        comparison.write_directory(folder, with_texts=with_texts)
        say(f"wrote the comparison to {folder}/: {comparison.counts_text(', ')}")
        return
    if output_format == "github":
        _write_github(comparison, gate, file, all_cases=all_cases, max_cases=max_cases)
    else:
        emit(
            lambda stream: comparison.write(
                stream, output_format, all_cases=all_cases, max_cases=max_cases, gate=gate, with_texts=with_texts
            ),
            file,
        )
    if file is not None:
        what = "Markdown summary" if output_format == "github" else f"{output_format} comparison"
        say(f"wrote the {what} to {file}: {comparison.counts_text(', ')}", err=output_format == "github")


def _check_folder_format(output_format: str) -> None:
    """Refuse, before any work, a folder output with a format other than JSON (the folder holds the JSON
    summary and the cases as Parquet)."""
    from click.core import ParameterSource

    given = click.get_current_context().get_parameter_source("output_format") is not ParameterSource.DEFAULT
    if given and output_format != "json":
        raise click.UsageError(
            f"--output with a trailing / writes a folder of JSON and Parquet, not {output_format}: "
            "leave out --format (or give --format json), or give --output a file name."
        )


def _write_github(
    comparison: Comparison, gate: GateResult | None, output: Path | None, *, all_cases: bool, max_cases: int | None
) -> None:
    """The workflow commands on stdout, the Markdown report as the job's summary (``write_for_github``)."""
    from rag_compare.report.github import write_github

    def write(commands: TextIO, summary: TextIO) -> None:
        write_github(comparison, commands, summary, all_cases=all_cases, max_cases=max_cases, gate=gate)

    write_for_github(write, output)
