"""``compare_many``: several candidates compared with one baseline into a ``MultiComparison``.

Each candidate is compared with the baseline by ``compare``'s rules, the baseline's records made narrow once
for all of them (``compare_runs.compare_each``). Then every candidate's aggregates are put together and
their p-values adjusted by Holm over every candidate and signal of a scope (one family per scope), each
comparison given the family's adjusted p, and the candidates ranked (``ranking``).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from rag_compare.compute.compare_runs import DEFAULT_TOLERANCE, Scored, Settings, compare_each, opened_runs
from rag_compare.compute.comparison import ComparedRun, Comparison
from rag_compare.compute.multi_comparison import NAMED_CANDIDATES, MultiComparison
from rag_compare.compute.partials import SCOPES
from rag_compare.compute.ranking import DEFAULT_RANK_BY, rank_candidates, rank_keys
from rag_compare.compute.stats import holm
from rag_compare.core.errors import CompareError
from rag_compare.core.listing import truncated
from rag_compare.core.protocols import Judge
from rag_compare.core.signals import ALL_SIGNALS
from rag_compare.io.corpus import Corpus
from rag_compare.io.runs import OpenedRun, Run
from rag_compare.io.scores import Scores

__all__ = ["DEFAULT_ALPHA", "compare_many", "family_adjusted"]

DEFAULT_ALPHA = 0.05
_ABSENT = ("missing_in_candidate", "missing_in_baseline", "missing_in_both")
"""The statuses of a case that is not in both runs."""


def compare_many(
    baseline: Run | str | Path,
    candidates: Sequence[Run | str | Path],
    corpus: Corpus | str | Path | pl.DataFrame | None = None,
    *,
    passages: str | Path | pl.DataFrame | None = None,
    k: int | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    judge: Judge | None = None,
    baseline_scores: Scores | str | Path | None = None,
    candidate_scores: Sequence[Scores | str | Path | None] | None = None,
    rank_by: Sequence[str] = DEFAULT_RANK_BY,
    alpha: float = DEFAULT_ALPHA,
    engine: str = "memory",
    buckets: int | None = None,
    ray_address: str | None = None,
) -> MultiComparison:
    """Compare each of ``candidates`` with ``baseline`` (runs, or paths of run files or run directories).

    Each comparison is ``compare``'s (see there for ``corpus``, ``passages``, ``k``, ``tolerance``, ``judge``,
    ``engine``, ``buckets`` and ``ray_address``); ``candidate_scores`` holds a scores file (or ``None``) per
    candidate, in their order. The p-values are adjusted by Holm over every candidate and signal of a scope.
    The candidates are ranked by ``rank_by`` (signals, ``SCOPE.SIGNAL`` for the all-cases scope): one is
    named best only when it is better than every other on each of them, paired on the cases both have, at
    ``alpha`` (see ``ranking``).

    Raises ``CompareError`` for no candidate, a candidate given twice (the baseline may be one), a list of
    scores of another length, an unknown ``rank_by`` signal, an ``alpha`` outside (0, 1), or, with two
    candidates or more, a candidate that shares no case with the baseline, or candidates of which some have
    repeats and some do not; and what ``compare`` raises.
    """
    _check_request(candidates, candidate_scores, rank_by, alpha)
    opened = opened_runs([baseline, *candidates])
    _refuse_repeated_candidates(opened[1:])
    settings = Settings(k, tolerance, engine, buckets, ray_address)
    scores = Scored(baseline_scores, tuple(candidate_scores or ()))
    comparisons = compare_each(
        opened[0], opened[1:], corpus, passages=passages, judge=judge, scores=scores, settings=settings
    )
    if len(comparisons) > 1:
        _refuse_unshared(comparisons)
        _refuse_mixed_repeats(comparisons)
    names = candidate_names([comparison.candidate for comparison in comparisons])
    aggregates = family_adjusted(
        pl.concat(
            [
                c.aggregates.select(pl.lit(name).alias("run"), pl.all())
                for name, c in zip(names, comparisons, strict=True)
            ]
        )
    )
    adjusted = tuple(
        dataclasses.replace(comparison, aggregates=aggregates.filter(pl.col("run") == name).drop("run"))
        for name, comparison in zip(names, comparisons, strict=True)
    )
    keys = rank_keys(rank_by, comparisons[0].signals)
    ranking = rank_candidates(dict(zip(names, adjusted, strict=True)), aggregates, keys, alpha)
    return MultiComparison(comparisons[0].baseline, names, adjusted, aggregates, ranking, _warnings(names, comparisons))


def family_adjusted(aggregates: pl.DataFrame) -> pl.DataFrame:
    """``aggregates`` (with ``run``, the candidate's name) with ``p_adjusted`` by Holm over every candidate and
    signal of each scope: one family per scope (in the order given)."""
    adjusted = pl.Series("p_adjusted", [None] * aggregates.height, dtype=pl.Float64)
    for scope in SCOPES:
        where = (aggregates.get_column("scope") == scope).arg_true()
        family = holm(aggregates.get_column("p_value").gather(where).to_list())
        adjusted = adjusted.scatter(where, pl.Series(family, dtype=pl.Float64))
    return aggregates.with_columns(adjusted)


def candidate_names(runs: Sequence[ComparedRun]) -> tuple[str, ...]:
    """Each run's name, with its fingerprint where two runs share a name: ``candidate (92e89e9c6b4a)``."""
    shared = {name for name, count in Counter(run.name for run in runs).items() if count > 1}
    return tuple(f"{run.name} ({run.fingerprint[:12]})" if run.name in shared else run.name for run in runs)


def _check_request(
    candidates: Sequence[object], scores: Sequence[object] | None, rank_by: Sequence[str], alpha: float
) -> None:
    """Refuse, before any run is read, what cannot be compared (see ``compare_many``)."""
    if isinstance(candidates, (str, Path, Run)) or not candidates:
        raise CompareError("`candidates` must be a list of one run or more (runs, or paths of run files).")
    if scores is not None and len(scores) != len(candidates):
        raise CompareError(
            f"`candidate_scores` holds {len(scores)} scores files for {len(candidates)} candidates: give one per "
            "candidate, in their order (None for a candidate judged by the judge)."
        )
    rank_keys(rank_by, ALL_SIGNALS)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not (math.isfinite(alpha) and 0 < alpha < 1):
        raise CompareError(f"`alpha` must be a number between 0 and 1, got {alpha!r}.")


def _refuse_repeated_candidates(candidates: Sequence[Run | OpenedRun]) -> None:
    """Refuse a candidate given twice (the same fingerprint): its comparison would be counted twice."""
    seen: dict[str, Run | OpenedRun] = {}
    for run in candidates:
        if run.fingerprint not in seen:
            seen[run.fingerprint] = run
            continue
        first = seen[run.fingerprint]
        same = "" if _where(first) == _where(run) else f" (as {_where(first)} too: the same fingerprint)"
        raise CompareError(f"the candidate {_where(run)} is given twice{same}: give each candidate once.")


def _where(run: Run | OpenedRun) -> str:
    return repr(str(run.path)) if run.path is not None else f"run {run.name!r}"


def _refuse_unshared(comparisons: Sequence[Comparison]) -> None:
    """Refuse a candidate that shares no case with the baseline: nothing of it can be compared."""
    for comparison in comparisons:
        absent = sum(comparison.counts[status] for status in _ABSENT)
        if absent == comparison.n_cases:
            raise CompareError(
                f"the candidate {comparison.candidate.path_text} shares no case with the baseline "
                f"{comparison.baseline.path_text}: compare runs of the same cases (or leave it out)."
            )


def _refuse_mixed_repeats(comparisons: Sequence[Comparison]) -> None:
    """Refuse candidates of which some sampled a case several times and some did not: their statuses and means
    would follow different rules (a noise floor, or the tolerance), and could not be ranked together."""
    repeated = [comparison.candidate.repeats["max"] > 1 for comparison in comparisons]
    if any(repeated) and not all(repeated):
        with_repeats = [c.candidate.path_text for c, has in zip(comparisons, repeated, strict=True) if has]
        without = [c.candidate.path_text for c, has in zip(comparisons, repeated, strict=True) if not has]
        raise CompareError(
            f"some candidates have repeats ({', '.join(with_repeats)}) and some do not ({', '.join(without)}): "
            "compare them in two calls, or merge each configuration's runs into one with repeats "
            "(`merge_repeats`)."
        )


def _warnings(names: Sequence[str], comparisons: Sequence[Comparison]) -> tuple[str, ...]:
    """Every comparison's warnings, each once: as it is when every candidate has it, else after the names of the
    candidates that have it (the first five, then how many more)."""
    holders: dict[str, list[str]] = {}
    for name, comparison in zip(names, comparisons, strict=True):
        for warning in comparison.warnings:
            holders.setdefault(warning, []).append(name)
    everyone = [warning for warning, held in holders.items() if len(held) == len(names)]
    some = [
        f"{truncated(held, NAMED_CANDIDATES)}: {warning}" for warning, held in holders.items() if len(held) < len(names)
    ]
    return tuple(everyone + some)
