"""The run commands: ``freeze`` makes a run file from records, ``show`` shows a run or scores file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from rag_compare.cli.exits import say
from rag_compare.cli.options import FORMAT, INCLUDE_UNREVIEWED, PATH, RUN_CONFIG, Command
from rag_compare.cli.output import wants_json

__all__ = ["freeze_command", "show_command"]


@click.command("freeze", cls=Command)
@click.argument("records", type=PATH)
@click.option("--corpus", type=PATH, required=True, help="The corpus the records were run against.")
@RUN_CONFIG
@INCLUDE_UNREVIEWED
@click.option("--output", type=PATH, required=True, help="The run file to write (never overwritten).")
@FORMAT
def freeze_command(
    records: Path,
    corpus: Path,
    config: dict[str, Any],
    include_unreviewed: bool,
    output: Path,
    output_format: str,
) -> None:
    """Freeze RECORDS (what a pipeline did, per case) with the corpus labels and config into one file."""
    from rag_compare.io.runs import freeze_run

    wants_json(output_format)
    run = freeze_run(records, corpus, config, output=output, include_unreviewed=include_unreviewed)
    if output_format == "json":
        click.echo(run.to_json(), nl=False)
    else:
        say(f"froze {run.records.height} cases of '{run.name}' to {output} (fingerprint {run.fingerprint[:12]})")


@click.command("show", cls=Command)
@click.argument("file", type=PATH)
@FORMAT
def show_command(file: Path, output_format: str) -> None:
    """Show a frozen run (config, fingerprint, number of cases, counts by status) or a scores file
    (the run it scored, its evaluator, judge statuses, tokens and each signal's mean)."""
    from rag_compare.io.runs import is_scores_file, load_run
    from rag_compare.io.scores import load_scores

    wants_json(output_format)
    shown = load_scores(file) if is_scores_file(file) else load_run(file)
    click.echo(shown.render(output_format), nl=False)
