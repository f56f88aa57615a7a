"""The run commands: ``freeze`` makes a run file (or run directory) from records, ``import-run`` from
another tool's file, ``merge-repeats`` one run with repeats from runs of one config, ``show`` shows a run
or scores file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click
from click.core import ParameterSource

from rag_compare.cli.exits import say
from rag_compare.cli.options import (
    BUCKETS,
    FORMAT,
    INCLUDE_UNREVIEWED,
    PATH,
    RUN_CONFIG,
    Command,
    FreezingCommand,
    OutputPath,
)
from rag_compare.cli.output import wants_json
from rag_compare.core.listing import counted

if TYPE_CHECKING:
    from rag_compare.io.runs import Run

__all__ = ["RUN_OUTPUT", "freeze_command", "import_run_command", "merge_repeats_command", "show_command"]


RUN_OUTPUT = click.option(
    "--output",
    type=OutputPath("frozen run", folder="run directory"),
    required=True,
    help="The run file to write, or with a trailing / (or --buckets) the run directory (never overwritten).",
)


@click.command("freeze", cls=FreezingCommand)
@click.argument("records", type=PATH)
@click.option("--corpus", type=PATH, required=True, help="The corpus the records were run against.")
@RUN_CONFIG
@INCLUDE_UNREVIEWED
@RUN_OUTPUT
@BUCKETS
@FORMAT
def freeze_command(
    records: Path,
    corpus: Path,
    config: dict[str, Any],
    include_unreviewed: bool,
    output: Path | str,
    buckets: int | None,
    output_format: str,
) -> None:
    """Freeze RECORDS (what a pipeline did, per case) with the corpus labels and config into one file,
    or into a run directory of Parquet parts (--output DIR/, --buckets N). RECORDS, and --corpus, may
    then be a folder or a quoted glob of parts, frozen a bucket at a time."""
    from rag_compare.compute.freezing import freeze_run

    wants_json(output_format)
    run = freeze_run(records, corpus, config, output=output, buckets=buckets, include_unreviewed=include_unreviewed)
    if output_format == "json":
        click.echo(run.to_json(), nl=False)
    else:
        say(f"froze {_samples(run)} of '{run.name}' to {_written(run, output)} (fingerprint {run.fingerprint[:12]})")


def _written(run: Run, output: Path | str) -> str:
    """Where ``run`` was written: ``output``, with its parts for a run directory."""
    return str(output) if run.buckets is None else f"{output} ({counted(run.buckets, 'part')})"


def _samples(run: Run) -> str:
    """``3 cases``, or with repeats ``6 samples of 3 cases``, of a ``Run``."""
    summary = run.to_dict()
    cases = counted(summary["cases"], "case")
    return cases if run.repeats == 1 else f"{counted(summary['samples'], 'sample')} of {cases}"


_FORMATS = ("openinference", "ragas", "promptfoo", "deepeval", "langsmith")
"""``io.run_import.FORMATS``'s names, listed here so that ``--help`` imports nothing heavy (a test pins them)."""


@click.command("import-run", cls=FreezingCommand)
@click.argument("source", type=PATH)
@click.option(
    "--from",
    "source_format",
    type=click.Choice(_FORMATS),
    required=True,
    help="The tool that wrote SOURCE: OpenInference traces (OTLP JSON lines or a Phoenix span export), a Ragas "
    "dataset, promptfoo's results JSON, a DeepEval test run, LangSmith runs as JSON lines.",
)
@click.option("--corpus", type=PATH, required=True, help="The corpus the run answered.")
@click.option(
    "--case-id-key",
    default="case_id",
    show_default=True,
    help="The metadata key (trace metadata, column, var) holding each case id.",
)
@click.option(
    "--match-question",
    is_flag=True,
    help="Find each case by its question's text in the corpus (whitespace and case folded) instead of a key.",
)
@click.option(
    "--keep",
    type=click.Choice(("first", "last")),
    help="Which one counts when a case was recorded twice (by start time); without it, a repeat is refused.",
)
@click.option("--passages", type=PATH, help="The knowledge base, to map passage texts without ids to their ids.")
@RUN_CONFIG
@INCLUDE_UNREVIEWED
@RUN_OUTPUT
@BUCKETS
@FORMAT
def import_run_command(
    source: Path,
    source_format: str,
    corpus: Path,
    case_id_key: str,
    match_question: bool,
    keep: Literal["first", "last"] | None,
    passages: Path | None,
    config: dict[str, Any],
    include_unreviewed: bool,
    output: Path | str,
    buckets: int | None,
    output_format: str,
) -> None:
    """Freeze a run another tool recorded (SOURCE) as freeze does: validated against the corpus,
    fingerprinted, never overwritten. Failed requests stay failed cases; skipped units are counted."""
    from rag_compare.compute.freezing import import_run

    wants_json(output_format)
    if (
        match_question
        and click.get_current_context().get_parameter_source("case_id_key") is not ParameterSource.DEFAULT
    ):
        raise click.UsageError("use --case-id-key or --match-question, not both.")
    imported = import_run(
        source,
        source_format,
        corpus,
        config,
        case_id_key=case_id_key,
        match_question=match_question,
        keep=keep,
        passages=passages,
        output=output,
        buckets=buckets,
        include_unreviewed=include_unreviewed,
    )
    click.echo(imported.render(output_format), nl=False)


@click.command("merge-repeats", cls=FreezingCommand)
@click.argument("runs", type=PATH, nargs=-1, required=True)
@click.option(
    "--output", type=OutputPath("frozen run"), required=True, help="The run file to write (never overwritten)."
)
@click.option("--name", help="The merged run's name [default: the first run's].")
@FORMAT
def merge_repeats_command(runs: tuple[Path, ...], output: Path, name: str | None, output_format: str) -> None:
    """Merge RUNS (two or more run files of one config) into one run with repeats: each run's samples
    numbered after the previous runs'. Refused when a setting or a case's labels differ."""
    from rag_compare.compute.merging import merge_repeats

    wants_json(output_format)
    run = merge_repeats(runs, output, name=name)
    if output_format == "json":
        click.echo(run.to_json(), nl=False)
        return
    say(
        f"merged {counted(len(runs), 'run')} into {_samples(run)} of '{run.name}' (up to {run.repeats} per case) "
        f"to {output} (fingerprint {run.fingerprint[:12]})"
    )


@click.command("show", cls=Command)
@click.argument("file", type=PATH)
@FORMAT
def show_command(file: Path, output_format: str) -> None:
    """Show a frozen run (config, fingerprint, number of cases, counts by status), a scores file (the
    run it scored, its evaluator, judge statuses, tokens and each signal's mean), a pairs file (the
    runs it judged, its judge, verdicts and the judge's position bias) or a reviews file (the runs, the
    reviewers, verdicts agreeing with the status shown, and each label's values)."""
    from rag_compare.io.pairs import load_pairs
    from rag_compare.io.reviews import load_reviews
    from rag_compare.io.runs import PAIRS_FORMAT, REVIEWS_FORMAT, SCORES_FORMAT, frozen_format, load_run
    from rag_compare.io.scores import load_scores

    wants_json(output_format)
    loaders = {SCORES_FORMAT: load_scores, PAIRS_FORMAT: load_pairs, REVIEWS_FORMAT: load_reviews}
    shown = loaders.get(frozen_format(file) or "", load_run)(file)
    click.echo(shown.render(output_format), nl=False)
