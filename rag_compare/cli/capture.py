"""The ``capture`` command: a run made from what the built-in pipeline (or an OpenAI model) did."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_compare.cli.exits import interrupted, say
from rag_compare.cli.options import (
    BASE_URL,
    BUCKETS,
    FORMAT,
    INCLUDE_UNREVIEWED,
    PATH,
    RUN_CONFIG,
    FreezingCommand,
    choice_option,
    limit_options,
    model_option,
)
from rag_compare.cli.output import wants_json
from rag_compare.cli.runs import RUN_OUTPUT
from rag_compare.core.listing import counted, counts_line
from rag_compare.core.protocols import MAX_K

if TYPE_CHECKING:
    from rag_compare.core.protocols import Generator
    from rag_compare.io.runs import Run
    from rag_compare.llm.limits import Limits

__all__ = ["capture_command"]


@click.command("capture", cls=FreezingCommand)
@click.argument("corpus", type=PATH)
@click.option("--passages", type=PATH, required=True, help="The knowledge base the retriever searches.")
@click.option("--top-k", type=click.IntRange(min=1, max=MAX_K), required=True, help="Passages retrieved per case.")
@click.option(
    "--repeats",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Samples captured per case, each a record with its repeat (0, 1, ...); run again with more to add samples.",
)
@choice_option("--retriever", choices=["bm25"], help="bm25: BM25 over the passages of the case's source version.")
@choice_option(
    "--generator",
    "generator_name",
    choices=["extractive", "openai"],
    help="extractive: offline, answers with the context sentences that best match the question; openai: a chat "
    "model over any OpenAI-compatible endpoint.",
)
@model_option("The model the endpoint serves (required with --generator openai).")
@BASE_URL
@click.option(
    "--prompt-template", type=PATH, help="A Jinja2 file rendering the user message [default: the built-in one]."
)
@click.option("--context-budget", type=click.IntRange(min=1), help="Characters the context may take [default: all].")
@click.option("--context-budget-tokens", type=click.IntRange(min=1), help="Tokens (approximate) the context may take.")
@limit_options(concurrency=4, timeout=120.0, max_retries=2, unit="case")
@RUN_CONFIG
@INCLUDE_UNREVIEWED
@RUN_OUTPUT
@BUCKETS
@FORMAT
def capture_command(
    corpus: Path,
    passages: Path,
    top_k: int,
    repeats: int,
    retriever: str,
    generator_name: str,
    model: str | None,
    base_url: str | None,
    prompt_template: Path | None,
    context_budget: int | None,
    context_budget_tokens: int | None,
    limits: Limits,
    config: dict[str, Any],
    include_unreviewed: bool,
    output: Path | str,
    buckets: int | None,
    output_format: str,
) -> None:
    """Run every case of CORPUS through a pipeline and freeze what happened as a run.

    \b
    Retrieve --top-k passages (BM25), build the context within the budget (recording which passages
    made it in), answer, and record it all; a case that fails keeps its row as failed or timeout.
    Each finished case goes to OUTPUT.checkpoint.jsonl at once: after an interruption, run the same
    command again and only the unfinished cases run. With --repeats N each case is captured N times,
    each sample checkpointed on its own.
    """
    from rag_compare.pipeline.bm25 import BM25Retriever
    from rag_compare.pipeline.context_builder import BudgetContextBuilder
    from rag_compare.pipeline.runner import capture

    wants_json(output_format)
    generator = _generator(generator_name, model, base_url, prompt_template)
    try:
        run = capture(
            corpus,
            BM25Retriever(passages),
            generator,
            top_k=top_k,
            repeats=repeats,
            context_builder=BudgetContextBuilder(context_budget, context_budget_tokens),
            config=config,
            output=output,
            buckets=buckets,
            limits=limits,
            include_unreviewed=include_unreviewed,
            progress=True,
        )
    except KeyboardInterrupt:
        interrupted(f"every finished {'sample' if repeats > 1 else 'case'} is in the checkpoint")
    if output_format == "json":
        click.echo(run.to_json(), nl=False)
    else:
        _say_captured(run, output, repeats)


def _generator(generator_name: str, model: str | None, base_url: str | None, prompt_template: Path | None) -> Generator:
    """The generator ``--generator`` names, refusing the options it does not take."""
    from rag_compare.llm.chat_generator import DEFAULT_PROMPT, OpenAIGenerator
    from rag_compare.pipeline.extractive import ExtractiveGenerator

    if generator_name == "openai":
        if not model:
            raise click.UsageError("--generator openai needs --model (the model name the endpoint serves).")
        return OpenAIGenerator(model, base_url=base_url, prompt_template=prompt_template or DEFAULT_PROMPT)
    unused = [name for name, value in (("--model", model), ("--prompt-template", prompt_template)) if value]
    if unused:
        raise click.UsageError(f"{' and '.join(unused)} apply to --generator openai, not the extractive one.")
    return ExtractiveGenerator()


def _say_captured(run: Run, output: Path | str, repeats: int) -> None:
    summary = run.to_dict()
    statuses = counts_line(summary["status_counts"])
    cases = summary["cases"]
    samples = summary.get("samples", cases)
    what = f"{cases} cases x {repeats} repeats ({samples} samples)" if repeats > 1 else f"{cases} cases"
    say(f"captured {what} of '{run.name}' to {output} ({statuses}; fingerprint {run.fingerprint[:12]})")
    left_out = run.config["capture"].get("unreviewed_left_out", [])
    if left_out:
        say(
            f"left out {counted(len(left_out), 'unreviewed synthetic case')}: {', '.join(left_out)}. Review them and "
            "`rag-compare admit`, or pass --include-unreviewed.",
            err=True,
        )
