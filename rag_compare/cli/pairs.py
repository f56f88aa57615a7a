"""The ``judge-pairs`` command: ask a pairwise LLM judge which run answered each case better."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from rag_compare.cli.exits import interrupted, say
from rag_compare.cli.options import (
    BASE_URLS,
    CACHE,
    DRY_RUN,
    FORMAT,
    JUDGE_SAMPLING,
    PATH,
    RAY_ADDRESS,
    FreezingCommand,
    OutputPath,
    endpoint_settings,
    engine_option,
    limit_options,
    model_option,
)
from rag_compare.cli.output import wants_json
from rag_compare.cli.scores import ENGINE_HELP
from rag_compare.compute.engines import SCORING_ENGINES

if TYPE_CHECKING:
    from rag_compare.io.pairs import Pairs
    from rag_compare.llm.limits import Limits

__all__ = ["judge_pairs_command"]


@click.command("judge-pairs", cls=FreezingCommand)
@click.argument("baseline", type=PATH)
@click.argument("candidate", type=PATH)
@model_option("The model the endpoint serves (required).")
@BASE_URLS
@limit_options(concurrency=8, timeout=60.0, max_retries=4, unit="request")
@engine_option(SCORING_ENGINES, help=ENGINE_HELP)
@RAY_ADDRESS
@JUDGE_SAMPLING
@CACHE
@DRY_RUN
@click.option(
    "--output",
    type=OutputPath("pairs file"),
    help="The pairs file to write (never overwritten); required unless --dry-run.",
)
@FORMAT
def judge_pairs_command(
    baseline: Path,
    candidate: Path,
    model: str | None,
    base_url: str | tuple[str, ...] | None,
    limits: Limits,
    engine: str,
    ray_address: str | None,
    temperature: float,
    seed: int | None,
    cache: Path | bool,
    dry_run: bool,
    output: Path | None,
    output_format: str,
) -> None:
    """Ask an LLM which answer is better, BASELINE's or CANDIDATE's, for every case both answered
    differently, once in each order, and freeze the verdicts in a pairs file.

    A case is won only when both orders agree; when they disagree it is inconsistent (the judge
    preferred a position, not an answer) and counts for neither side. Identical answers are a tie
    without a request; cases missing or failed on a side are not judged. Replies are cached: a rerun
    sends only what the cache lacks. Use the verdicts: rag-compare BASELINE CANDIDATE --pairs PAIRS.arrow
    """
    from rag_compare.io.pairs import judge_pairs, pairs_to_judge
    from rag_compare.io.runs import load_run
    from rag_compare.llm.pairwise_judge import PairwiseJudge

    wants_json(output_format)
    if output is None and not dry_run:
        raise click.UsageError("give --output PATH for the pairs file (or --dry-run to see the cost first).")
    if not model:
        raise click.UsageError("judge-pairs needs --model (the model name the endpoint serves).")
    judge = PairwiseJudge(
        model,
        temperature=temperature,
        seed=seed,
        engine=engine,
        ray_address=ray_address,
        **endpoint_settings(base_url, limits, cache),
    )
    runs = load_run(baseline), load_run(candidate)
    if dry_run:
        click.echo(judge.plan(pairs_to_judge(*runs)).render(output_format), nl=False)
        return
    try:
        pairs = judge_pairs(*runs, judge, output=output)
    except KeyboardInterrupt:
        interrupted("every reply received so far is cached")
    if output_format == "json":
        click.echo(pairs.to_json(), nl=False)
    else:
        _say_judged(pairs, output)
    for line in judge.pool_summary():
        say(line, err=True)


def _say_judged(pairs: Pairs, output: Path | None) -> None:
    click.echo(pairs.render("text"), nl=False)
    say(f"wrote {output} (fingerprint {pairs.fingerprint[:12]})")
    failed = pairs.counts["judge_failed"]
    if failed:
        say(
            f"warning: {failed} pairs could not be judged (judge_failed; see judge_error). "
            "Run again with a new --output to retry only those: the other replies are cached.",
            err=True,
        )
