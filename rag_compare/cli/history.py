"""The ``history`` command: a series of runs in creation order, each with its aggregates and what changed from
the run before."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from rag_compare.cli.options import PATH, Command, OutputPath, format_option
from rag_compare.cli.output import emit, wants_json
from rag_compare.core.result import FORMATS

if TYPE_CHECKING:
    from rag_compare.compute.history import History

__all__ = ["history_command"]


@click.command("history", cls=Command)
@click.argument("runs", nargs=-1, required=True, type=PATH)
@click.option(
    "--corpus-version",
    metavar="VERSION",
    help="Only the runs holding cases of this source version (a case id names it: q12@v3 is of v3), each "
    "measured on those cases alone.",
)
@click.option(
    "--signal",
    "signals",
    multiple=True,
    metavar="SIGNAL",
    help="Show this signal (repeatable), e.g. recall [default: every signal a run has a value of].",
)
@format_option(
    (*FORMATS, "html"),
    "Output for a terminal, for programs, or a page with a trend chart per signal (one self-contained file that "
    "opens offline).",
    written_to="--output",
)
@click.option("--output", type=OutputPath("report", existing="replaced"), help="Write the output to this file.")
def history_command(
    runs: tuple[Path, ...],
    corpus_version: str | None,
    signals: tuple[str, ...],
    output_format: str,
    output: Path | None,
) -> None:
    """Show the history of RUNS: each run in creation order (ties by path) with each signal's mean and its 95%
    bootstrap interval, the config keys changed from the run before and the significant changes from it (the
    paired delta's 95% interval leaves out 0 and its Holm-adjusted p is below 0.05).

    A RUN is a run file, a run directory, a folder holding them (scores, pairs and reviews files in it are
    skipped) or a glob pattern, quoted ('runs/*.arrow'). Runs are listed from their metadata alone; each is then
    compared with the run before it. Runs of other corpora are compared on the cases they share, and a trend
    breaks where the corpus fingerprint changes.
    """
    from rag_compare.compute.history import history

    wants_json(output_format)
    result = history(list(runs), corpus_version=corpus_version, signals=list(signals) or None)
    _write(result, output_format, output)


def _write(result: History, output_format: str, output: Path | None) -> None:
    from rag_compare.report.history import write_history

    def written(stream: TextIO) -> None:
        if output_format == "json":
            stream.write(result.to_json())
        else:
            write_history(result, stream, output_format)

    emit(written, output)
