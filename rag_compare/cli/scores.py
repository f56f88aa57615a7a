"""The commands that make and use scores: ``score``, ``import-scores`` and ``fallback``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from rag_compare.cli.exits import interrupted, say
from rag_compare.cli.options import (
    ASSIGNMENTS,
    BASE_URLS,
    CACHE,
    DRY_RUN,
    FORMAT,
    JUDGE_SAMPLING,
    OFFLINE_JUDGE,
    PATH,
    RAY_ADDRESS,
    Command,
    FreezingCommand,
    OutputPath,
    choice_option,
    endpoint_settings,
    engine_option,
    finite_float,
    limit_options,
    model_option,
)
from rag_compare.cli.output import wants_json
from rag_compare.compute.engines import SCORING_ENGINES
from rag_compare.core.listing import counts_line
from rag_compare.llm.judge_checks import CHECKS, DEFAULT_CHECKS

if TYPE_CHECKING:
    from rag_compare.compute.lexical_judge import LexicalJudge
    from rag_compare.core.protocols import Judge
    from rag_compare.io.scores import Scores
    from rag_compare.llm.limits import Limits

__all__ = ["ENGINE_HELP", "fallback", "import_scores_command", "score"]

ENGINE_HELP = (
    "Where the judge's requests are sent from: this process, or Ray tasks, each sending its share of "
    "--concurrency (needs rag-compare[ray])."
)


def _checks(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, ...]:
    names = (
        tuple(CHECKS) if value.strip() == "all" else tuple(part.strip() for part in value.split(",") if part.strip())
    )
    unknown = [name for name in names if name not in CHECKS]
    if unknown or not names:
        raise click.BadParameter(
            f"unknown check {', '.join(unknown) or '(none)'}; use any of: {', '.join(CHECKS)}, or all."
        )
    return names


@click.command(cls=FreezingCommand)
@click.argument("run", type=PATH)
@choice_option(
    "--judge",
    "judge_name",
    choices=["openai", "lexical"],
    help="openai: an LLM over any OpenAI-compatible endpoint; lexical: the offline judge's verdicts, frozen.",
)
@model_option("The model the endpoint serves (required with --judge openai).")
@BASE_URLS
@click.option(
    "--checks",
    callback=_checks,
    default=",".join(DEFAULT_CHECKS),
    show_default=True,
    help=f"Comma-separated checks, or all: {', '.join(CHECKS)}.",
)
@limit_options(concurrency=8, timeout=60.0, max_retries=4, unit="request")
@engine_option(SCORING_ENGINES, help=ENGINE_HELP)
@RAY_ADDRESS
@JUDGE_SAMPLING
@CACHE
@DRY_RUN
@OFFLINE_JUDGE
@click.option(
    "--output",
    type=OutputPath("scores file"),
    help="The scores file to write (never overwritten); required unless --dry-run.",
)
@FORMAT
def score(
    run: Path,
    judge_name: str,
    model: str | None,
    base_url: str | tuple[str, ...] | None,
    checks: tuple[str, ...],
    limits: Limits,
    engine: str,
    ray_address: str | None,
    temperature: float,
    seed: int | None,
    cache: Path | bool,
    dry_run: bool,
    offline_judge: LexicalJudge,
    output: Path | None,
    output_format: str,
) -> None:
    """Judge every case of the frozen RUN and freeze the verdicts in a scores file.

    Replies are cached by content: rerunning, resuming after an interruption, or scoring another run
    with the same cases costs no new request. A case whose judging finally fails is kept as
    judge_failed with its error. Compare with LLM verdicts: rag-compare BASELINE CANDIDATE
    --baseline-scores B.scores.arrow --candidate-scores C.scores.arrow
    """
    from rag_compare.io.runs import load_run
    from rag_compare.io.scores import score_run
    from rag_compare.llm.llm_judge import OpenAIJudge

    wants_json(output_format)
    if output is None and not dry_run:
        raise click.UsageError("give --output PATH for the scores file (or --dry-run to see the cost first).")
    if judge_name == "lexical" and (engine != "local" or ray_address):
        raise click.UsageError(
            "--engine and --ray-address say where the LLM judge sends from: use them with --judge openai."
        )
    judge = (
        offline_judge
        if judge_name == "lexical"
        else _llm_judge(offline_judge, model, base_url, checks, temperature, seed, limits, cache, engine, ray_address)
    )
    loaded = load_run(run)
    if dry_run:
        if not isinstance(judge, OpenAIJudge):
            raise click.UsageError("--dry-run estimates the cost of --judge openai; the lexical judge costs nothing.")
        click.echo(judge.plan(loaded.records).render(output_format), nl=False)
        return
    try:
        scores = score_run(loaded, judge, output=output)
    except KeyboardInterrupt:
        interrupted("every reply received so far is cached")
    if output_format == "json":
        click.echo(scores.to_json(), nl=False)
    else:
        _say_scored(scores, loaded.name, judge, output)
    if isinstance(judge, OpenAIJudge):
        for line in judge.pool_summary():
            say(line, err=True)


def _llm_judge(
    offline_judge: LexicalJudge,
    model: str | None,
    base_url: str | tuple[str, ...] | None,
    checks: tuple[str, ...],
    temperature: float,
    seed: int | None,
    limits: Limits,
    cache: Path | bool,
    engine: str,
    ray_address: str | None,
) -> Judge:
    """The LLM judge of ``--judge openai``, which needs ``--model`` and takes no offline judge setting."""
    from rag_compare.compute.lexical_judge import LexicalJudge
    from rag_compare.llm.llm_judge import OpenAIJudge

    if offline_judge != LexicalJudge():
        raise click.UsageError("--language and --language-file set the offline judge: use them with --judge lexical.")
    if not model:
        raise click.UsageError("--judge openai needs --model (the model name the endpoint serves).")
    return OpenAIJudge(
        model,
        checks=checks,
        temperature=temperature,
        seed=seed,
        engine=engine,
        ray_address=ray_address,
        **endpoint_settings(base_url, limits, cache),
    )


def _say_scored(scores: Scores, name: str, judge: Judge, output: Path | None) -> None:
    counts = {status: count for status, count in scores.counts.items() if count}
    usage = scores.to_dict()["usage"]
    sent = f", {usage['requests']:,} requests sent" if "requests" in usage else ""
    say(f"scored {scores.frame.height} cases of '{name}' ({counts_line(counts, ', ')}){sent}")
    say(f"wrote {output} (evaluator {judge.name} {judge.fingerprint[:12]}, fingerprint {scores.fingerprint[:12]})")
    if scores.counts["judge_failed"]:
        say(
            f"warning: {scores.counts['judge_failed']} cases could not be judged (judge_failed; see judge_error). "
            "Run again with a new --output to retry only those: the other replies are cached.",
            err=True,
        )


def _mapping(ctx: click.Context, param: click.Parameter, values: Sequence[str]) -> dict[str, str]:
    mapping = {}
    for value in values:
        column, separator, signal = value.partition("=")
        if not separator or not column.strip() or not signal.strip():
            raise click.BadParameter(f"expected COLUMN=SIGNAL, got {value!r}.")
        mapping[column.strip()] = signal.strip()
    return mapping


@click.command("import-scores", cls=FreezingCommand)
@click.argument("run", type=PATH)
@click.argument("file", type=PATH)
@click.option(
    "--preset",
    type=click.Choice(["ragas", "deepeval", "promptfoo"]),
    help="FILE is that tool's results (ragas: EvaluationResult.to_pandas() saved as CSV/JSONL/Parquet; "
    "deepeval: its test run JSON; promptfoo: the results.json of promptfoo eval -o); it names the evaluator "
    "and maps the metrics it knows (see the README).",
)
@click.option("--evaluator", help="The name of the evaluator the scores come from (required without --preset).")
@click.option(
    "--map",
    "mapping",
    multiple=True,
    callback=_mapping,
    metavar="COLUMN=SIGNAL",
    help="Take COLUMN of FILE as SIGNAL (e.g. trust_score=trustworthiness). Repeatable; required without "
    "--preset, with it adds or overrides.",
)
@click.option(
    "--id-column",
    default="case_id",
    show_default=True,
    help="The column of FILE holding case ids (with --preset, rows of a FILE without it match by question).",
)
@click.option(
    "--repeat-column",
    default="repeat",
    show_default=True,
    help="The column of FILE numbering each case's samples, for a RUN with repeats (scores are per sample).",
)
@ASSIGNMENTS
@click.option(
    "--output", type=OutputPath("scores file"), required=True, help="The scores file to write (never overwritten)."
)
@FORMAT
def import_scores_command(
    run: Path,
    file: Path,
    preset: str | None,
    evaluator: str | None,
    mapping: dict[str, str],
    id_column: str,
    repeat_column: str,
    assignments: Sequence[str],
    output: Path,
    output_format: str,
) -> None:
    """Turn FILE (CSV, JSONL or Parquet of another evaluator's scores) into a scores file of RUN.

    --set declares the evaluator's settings (e.g. --set model=trust-v2); they and the name make its
    fingerprint. Score signals must lie in [0, 1]. Cases of RUN that FILE lacks, and empty or NaN
    scores, are judge_failed. --preset ragas|deepeval|promptfoo reads that tool's results as they are.
    """
    from rag_compare.io.config import apply_assignments
    from rag_compare.io.external_scores import import_scores

    wants_json(output_format)
    config = apply_assignments({}, assignments)
    scores = import_scores(
        run,
        file,
        evaluator=evaluator,
        mapping=mapping,
        id_column=id_column,
        repeat_column=repeat_column,
        preset=preset,
        config=config,
        output=output,
    )
    if output_format == "json":
        click.echo(scores.to_json(), nl=False)
        return
    counts = {status: count for status, count in scores.counts.items() if count}
    say(f"imported {', '.join(scores.signals)} for {scores.frame.height} cases ({counts_line(counts, ', ')})")
    for column, why in scores.evaluator["config"].get("not_imported", {}).items():
        say(f"not imported: {column} ({why})")
    say(f"wrote {output} (evaluator {scores.evaluator['name']} {scores.evaluator['fingerprint'][:12]})")


@click.command(cls=Command)
@click.argument("run", type=PATH)
@click.option("--scores", "scores_path", type=PATH, required=True, help="A scores file of RUN.")
@click.option("--signal", required=True, help="The score the rule reads, e.g. grounded or trustworthiness.")
@click.option("--threshold", type=finite_float(0, 1), help="Replace an answer whose score is below this.")
@click.option("--sweep", is_flag=True, help="Also try every threshold from 0 to 1 in steps of 0.05.")
@click.option("--fallback-text", help="The text shown instead of a replaced answer.")
@click.option("--truth", help="A true/false column of RUN's records saying the answer is good (e.g. a review).")
@click.option(
    "--truth-labels",
    type=PATH,
    help="People's labels as the truth: a reviews file or a labels table; their answer_correct (--truth-label) "
    "says which answers are good.",
)
@click.option("--truth-label", default="answer_correct", show_default=True, help="The yes/no label of --truth-labels.")
@click.option(
    "--agreement",
    "agreement_file",
    type=PATH,
    help="The JSON of rag-compare agreement --target-precision/--target-recall: try the threshold it found for SIGNAL.",
)
@click.option(
    "--output",
    type=OutputPath("fallback table"),
    help="Write every case's decision, with its original answer, to this CSV/JSONL/Parquet.",
)
@FORMAT
def fallback(
    run: Path,
    scores_path: Path,
    signal: str,
    threshold: float | None,
    sweep: bool,
    fallback_text: str | None,
    truth: str | None,
    truth_labels: Path | None,
    truth_label: str,
    agreement_file: Path | None,
    output: Path | None,
    output_format: str,
) -> None:
    """Simulate a fallback rule on RUN: replace answers whose SIGNAL score is below a threshold.

    Shows which answers it replaces and, on labelled cases, how many bad answers it catches and how
    many good ones it hides (per threshold with --sweep). The original answers stay in --output.
    """
    from rag_compare.compute.agreement import found_threshold
    from rag_compare.compute.fallback import DEFAULT_FALLBACK_TEXT, SWEEP_THRESHOLDS, simulate_fallback
    from rag_compare.io.runs import load_run
    from rag_compare.io.scores import load_scores

    wants_json(output_format)
    if threshold is None and not sweep and agreement_file is None:
        raise click.UsageError("give --threshold T, --agreement FILE, or --sweep to try thresholds from 0 to 1.")
    loaded, scores = load_run(run), load_scores(scores_path)
    scores.check_scored(loaded)
    found = [] if agreement_file is None else [found_threshold(agreement_file, signal, scores.evaluator["fingerprint"])]
    given = found + ([] if threshold is None else [threshold])
    thresholds = given + (list(SWEEP_THRESHOLDS) if sweep else [])
    simulation = simulate_fallback(
        loaded,
        scores.frame,
        signal,
        list(dict.fromkeys(thresholds)),
        fallback_text=DEFAULT_FALLBACK_TEXT if fallback_text is None else fallback_text,
        truth=truth,
        people=truth_labels,
        people_label=truth_label,
        evaluator={"name": scores.evaluator["name"], "fingerprint": scores.evaluator["fingerprint"]},
    )
    if output is not None:
        simulation.write_cases(output)
    click.echo(simulation.render(output_format), nl=False)
