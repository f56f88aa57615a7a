"""``rag-compare BASELINE CANDIDATE CANDIDATE...``: several candidates compared with one baseline
(``compare_many``), as a summary, JSON or a Markdown report, with a release gate evaluated on each candidate."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import click

from rag_compare.cli.exits import EXIT_FOUND, say
from rag_compare.cli.flags import multi_in_flags
from rag_compare.cli.output import emit

if TYPE_CHECKING:
    from rag_compare.compute.gate_result import GateResult
    from rag_compare.compute.gating import Gate
    from rag_compare.compute.lexical_judge import LexicalJudge

__all__ = ["MANY_FORMATS", "Many", "compare_candidates", "refuse_for_many", "split_rank_by"]

MANY_FORMATS = ("text", "json", "markdown")
"""What several candidates are rendered as."""


class Many(NamedTuple):
    """What the command line asks of several candidates beside the runs: how they are compared and ranked,
    the output, and the gate."""

    corpus: Path | None
    passages: Path | None
    k: int | None
    tolerance: float
    baseline_scores: Path | None
    candidate_scores: tuple[Path, ...]
    rank_by: tuple[str, ...] | None
    alpha: float | None
    engine: str
    buckets: int | None
    ray_address: str | None
    judge: LexicalJudge


def split_rank_by(rank_by: str | None) -> tuple[str, ...] | None:
    """``--rank-by recall,all_cases.grounded`` as its signals (``None`` when not given)."""
    return None if rank_by is None else tuple(part.strip() for part in rank_by.split(",") if part.strip())


def refuse_for_many(output_format: str, output: Path | str | None, *, pairs: bool, with_texts: bool) -> None:
    """Refuse, before any work, what only a comparison of two runs has."""
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
    many: Many,
    gate: Gate | None,
    output_format: str,
    output: Path | None,
    max_cases: int | None,
) -> None:
    """Compare, write the output to ``output`` (or stdout), then say each candidate's gate verdict and exit
    with ``EXIT_FOUND`` when a condition held for one."""
    from rag_compare.compute.compare_many import DEFAULT_ALPHA, compare_many

    alpha = many.alpha if many.alpha is not None else (gate.alpha if gate is not None else DEFAULT_ALPHA)
    rank_by = {} if many.rank_by is None else {"rank_by": many.rank_by}
    multi = compare_many(
        baseline,
        candidates,
        many.corpus,
        passages=many.passages,
        k=many.k,
        tolerance=many.tolerance,
        judge=many.judge,
        baseline_scores=many.baseline_scores,
        candidate_scores=many.candidate_scores or None,
        alpha=alpha,
        engine=many.engine,
        buckets=many.buckets,
        ray_address=many.ray_address,
        **rank_by,
    )
    multi = multi_in_flags(multi, "compare")
    verdicts = {} if gate is None else {name: gate.evaluate(multi.comparison(name)) for name in multi.names}
    emit(lambda stream: multi.write(stream, output_format, max_cases=max_cases), output)
    if output is not None:
        say(
            f"wrote the {output_format} comparison of {len(multi.names)} candidates to {output}: {multi.ranking.reason}"
        )
    _say_gates(verdicts)


def _say_gates(verdicts: dict[str, GateResult]) -> None:
    """On stderr, per candidate: each condition that held or could not be evaluated, then its verdict; exit
    with ``EXIT_FOUND`` when the gate failed for some candidate."""
    from rag_compare.report.summaries import gate_verdict

    for name, result in verdicts.items():
        for condition in result.conditions:
            if condition.held:
                say(f"{name}: gate condition held: {condition.condition}: {condition.numbers}", err=True)
            elif not condition.evaluated:
                say(
                    f"{name}: warning: gate condition not evaluated: {condition.condition}: {condition.numbers}",
                    err=True,
                )
        say(f"{name}: {gate_verdict(result)}", err=True)
    if any(not result.passed for result in verdicts.values()):
        raise SystemExit(EXIT_FOUND)
