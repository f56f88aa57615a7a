"""``rag-compare BASELINE CANDIDATE CANDIDATE...``: several candidates compared with one baseline
(``compare_many``), as a summary, JSON or a Markdown report, with a release gate evaluated on each candidate."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

import click

from rag_compare.cli.exits import EXIT_FOUND, say
from rag_compare.cli.flags import multi_in_flags
from rag_compare.cli.gates import say_verdict, write_for_github
from rag_compare.cli.output import emit

if TYPE_CHECKING:
    from rag_compare.compute.gate_result import GateResult
    from rag_compare.compute.gating import Gate
    from rag_compare.compute.multi_comparison import MultiComparison

__all__ = ["MANY_FORMATS", "Ranked", "Written", "compare_candidates", "refuse_for_many", "split_rank_by"]

MANY_FORMATS = ("text", "json", "markdown", "html", "github", "junit")
"""What several candidates are rendered as."""


class Ranked(NamedTuple):
    """How the candidates are ranked: ``--rank-by`` (``None``: the default signals) at ``--alpha`` (``None``:
    the gate's, else the default)."""

    rank_by: tuple[str, ...] | None
    alpha: float | None


class Written(NamedTuple):
    """The output: its format, its file (``None``: stdout), and the changed cases a report lists at most."""

    output_format: str
    file: Path | None
    max_cases: int | None


def split_rank_by(rank_by: str | None) -> tuple[str, ...] | None:
    """``--rank-by recall,all_cases.grounded`` as its signals (``None`` when not given)."""
    return None if rank_by is None else tuple(part.strip() for part in rank_by.split(",") if part.strip())


def refuse_for_many(
    output_format: str, output: Path | str | None, *, pairs: bool, with_texts: bool, all_cases: bool
) -> None:
    """Refuse, before any work, what only a comparison of two runs has."""
    if all_cases:
        raise click.UsageError(
            "--all-cases lists a comparison's unchanged cases; several candidates list the cases that changed in "
            "some candidate: leave it out, or compare BASELINE with one CANDIDATE."
        )
    if pairs:
        raise click.UsageError("--pairs holds the verdicts of two runs: compare BASELINE with one CANDIDATE to use it.")
    if with_texts:
        raise click.UsageError("--with-texts is for two runs: compare BASELINE with one CANDIDATE for every text.")
    if isinstance(output, str):
        raise click.UsageError(
            "--output with a trailing / writes the folder of one comparison: give --output a file name, or compare "
            "BASELINE with each CANDIDATE in turn."
        )
    if output_format not in MANY_FORMATS:
        raise click.UsageError(
            f"several candidates are rendered as {', '.join(MANY_FORMATS)}, not {output_format}: give --format "
            "markdown, say, or compare BASELINE with one CANDIDATE for that format."
        )


def compare_candidates(
    baseline: Path,
    candidates: tuple[Path, ...],
    comparing: dict[str, Any],
    ranked: Ranked,
    gate: Gate | None,
    written: Written,
) -> None:
    """Compare (``comparing``: ``compare_many``'s keywords but the ranking's), write the output, then say each
    candidate's gate verdict and exit with ``EXIT_FOUND`` when the gate failed for one."""
    from rag_compare.compute.compare_many import DEFAULT_ALPHA, compare_many

    alpha = ranked.alpha if ranked.alpha is not None else (gate.alpha if gate is not None else DEFAULT_ALPHA)
    rank_by: dict[str, Any] = {} if ranked.rank_by is None else {"rank_by": ranked.rank_by}
    multi = multi_in_flags(compare_many(baseline, candidates, alpha=alpha, **rank_by, **comparing), "compare")
    verdicts = {} if gate is None else {name: gate.evaluate(multi.comparison(name)) for name in multi.names}
    if written.output_format == "github":
        _write_github(multi, verdicts, written)
    else:
        emit(
            lambda stream: multi.write(stream, written.output_format, max_cases=written.max_cases, gates=verdicts),
            written.file,
        )
    if written.file is not None:
        what = "Markdown summary" if written.output_format == "github" else f"{written.output_format} comparison"
        message = f"wrote the {what} of {len(multi.names)} candidates to {written.file}: {multi.ranking.reason}"
        say(message, err=written.output_format == "github")
    _say_gates(verdicts)


def _write_github(multi: MultiComparison, gates: dict[str, GateResult], written: Written) -> None:
    """The workflow commands on stdout, the Markdown report as the job's summary (``write_for_github``)."""
    from rag_compare.report.github import write_multi_github

    def write(commands: TextIO, summary: TextIO) -> None:
        write_multi_github(multi, commands, summary, max_cases=written.max_cases, gates=gates)

    write_for_github(write, written.file)


def _say_gates(verdicts: dict[str, GateResult]) -> None:
    """On stderr, per candidate after its name, its gate's verdict (``say_verdict``); exit with ``EXIT_FOUND`` when
    the gate failed for some candidate."""
    for name, result in verdicts.items():
        say_verdict(result, f"{name}: ")
    if any(not result.passed for result in verdicts.values()):
        raise SystemExit(EXIT_FOUND)
