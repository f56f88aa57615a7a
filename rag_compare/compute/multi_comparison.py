"""``MultiComparison``, the result of comparing several candidates with one baseline (``compare_many`` makes
it): each candidate's ``Comparison``, the aggregates of all of them with one Holm family per scope, the
statuses of every case in every candidate, a leaderboard per signal, and the ranking (see ``ranking``)."""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, TextIO

import polars as pl

from rag_compare.compute.comparison import ComparedRun, Comparison
from rag_compare.compute.ranking import Ranking
from rag_compare.core.errors import CompareError
from rag_compare.core.result import CI_FORMATS, DEFAULT_MAX_CASES, FORMATS, REPORT_FORMATS, Report, labelled, to_json
from rag_compare.core.signals import SIGNALS_BY_NAME

if TYPE_CHECKING:
    from rag_compare.compute.gate_result import GateResult

__all__ = ["MULTI_FORMATS", "MULTI_SCHEMA_VERSION", "NAMED_CANDIDATES", "MultiComparison"]

MULTI_SCHEMA_VERSION = 1
"""The version of the JSON of a ``MultiComparison`` (its own: not a comparison's ``schema_version``)."""
MULTI_FORMATS = (*FORMATS, *REPORT_FORMATS, *CI_FORMATS)
NAMED_CANDIDATES = 5
"""How many candidates a line of a warning or a report names before it says how many more: it stays readable
with a hundred (every candidate's status is in the JSON and on the page)."""


@dataclass(frozen=True, repr=False)
class MultiComparison(Report):
    """Several candidates compared with one baseline, each by ``compare``'s rules.

    ``names`` are the candidates' names in the order given (a run's name, with its fingerprint when two
    runs share one). ``comparisons`` are theirs with the baseline, in that order, each with ``p_adjusted``
    of this family (below). ``aggregates`` holds every candidate's aggregates with its name as ``run``:
    ``p_adjusted`` is Holm's over every candidate and signal of the scope, one family per scope, so a
    signal is found to move in one candidate at the error rate of the whole comparison. ``ranking`` says
    which candidate, if any, is better than every other (see ``ranking``)."""

    baseline: ComparedRun
    names: tuple[str, ...]
    comparisons: tuple[Comparison, ...]
    aggregates: pl.DataFrame
    ranking: Ranking
    warnings: tuple[str, ...]

    def __repr__(self) -> str:
        return (
            f"<MultiComparison {labelled(self.baseline.name, self.baseline.fingerprint)} → "
            f"{len(self.names)} candidates: {f'best {self.ranking.best}' if self.ranking.best else 'no clear winner'}>"
        )

    def comparison(self, name: str) -> Comparison:
        """The comparison of candidate ``name`` with the baseline (its ``p_adjusted``: this family's)."""
        if name not in self.names:
            raise CompareError(f"no candidate is named {name!r}; the candidates are {', '.join(self.names)}.")
        return self.comparisons[self.names.index(name)]

    @property
    def counts(self) -> dict[str, dict[str, int]]:
        """Per candidate, its cases per status."""
        return {name: comparison.counts for name, comparison in zip(self.names, self.comparisons, strict=True)}

    def leaderboard(self, signal: str, scope: str = "paired") -> pl.DataFrame:
        """The candidates by their mean of ``signal`` in ``scope``, best first (none last): ``rank``, ``run``,
        ``candidate`` (its mean), the baseline's, the delta with its paired 95% interval, ``p_adjusted`` (this
        family's) and ``n``."""
        rows = self.aggregates.filter((pl.col("signal") == signal) & (pl.col("scope") == scope))
        if rows.is_empty():
            known = ", ".join(self.aggregates.get_column("signal").unique(maintain_order=True).to_list())
            raise CompareError(f"no signal {signal!r} in scope {scope!r}; the signals are {known}.")
        higher = SIGNALS_BY_NAME[signal].higher_is_better
        ranked = rows.sort("candidate", descending=higher, nulls_last=True, maintain_order=True)
        rank = pl.when(pl.col("candidate").is_not_null()).then(pl.int_range(1, pl.len() + 1, dtype=pl.Int64))
        return ranked.select(
            rank.alias("rank"), "run", "candidate", "baseline", "delta", "ci_low", "ci_high", "p_adjusted", "n"
        )

    @cached_property
    def status_matrix(self) -> pl.DataFrame:
        """Per case of any comparison, in ``case_id`` order: ``case_id`` and its status in each candidate
        (a column per name; null where a comparison has no such case)."""
        matrix: pl.LazyFrame | None = None
        for name, comparison in zip(self.names, self.comparisons, strict=True):
            statuses = comparison.scan_cases().select("case_id", pl.col("status").cast(pl.String).alias(name))
            matrix = statuses if matrix is None else matrix.join(statuses, on="case_id", how="full", coalesce=True)
        assert matrix is not None
        return matrix.sort("case_id").collect()

    def changed_cases(self) -> pl.DataFrame:
        """The rows of ``status_matrix`` where some candidate's status is other than ``unchanged``."""
        changed = pl.any_horizontal(pl.col(name).fill_null("unchanged") != "unchanged" for name in self.names)
        return self.status_matrix.filter(changed)

    def to_dict(self) -> dict[str, Any]:
        """The summary, each candidate's, the ranking, and the cases that changed in some candidate (see the
        README's JSON of a multi-comparison)."""
        return {
            "schema_version": MULTI_SCHEMA_VERSION,
            "warnings": list(self.warnings),
            "baseline": self.baseline.to_dict(),
            "candidates": [self._candidate_dict(name, c) for name, c in zip(self.names, self.comparisons, strict=True)],
            "aggregates": self.aggregates.to_dicts(),
            "ranking": self.ranking.to_dict(),
            "changed_cases": [
                {"case_id": row["case_id"], "statuses": {name: row[name] for name in self.names}}
                for row in self.changed_cases().iter_rows(named=True)
            ],
        }

    @staticmethod
    def _candidate_dict(name: str, comparison: Comparison) -> dict[str, Any]:
        return {
            "name": name,
            "run": comparison.candidate.to_dict(),
            "evaluator": dict(comparison.evaluator),
            "config_diff": [dict(change) for change in comparison.config_diff],
            "counts": comparison.counts,
            "stage_counts": comparison.stage_counts,
            "unreviewed_left_out": list(comparison.unreviewed_left_out),
        }

    def render(
        self,
        format: str = "text",
        *,
        max_cases: int | None = DEFAULT_MAX_CASES,
        gates: Mapping[str, GateResult] | None = None,
    ) -> str:
        """The comparison as ``text`` (a terminal summary), ``json``, ``markdown`` (a report listing up to
        ``max_cases`` of the cases that changed in some candidate; ``None``: every one), ``html`` (a
        self-contained page: their status matrix, filtered by status in a candidate and searched), or for a CI
        system as
        ``github`` (workflow commands, then the Markdown report) or ``junit`` (JUnit XML: each candidate's
        failing cases, up to ``max_cases`` per status). ``gates``: each candidate's gate verdict, by name (see
        ``Gate.evaluate`` and ``comparison``), shown by every format but ``text`` and ``json``."""
        buffer = io.StringIO()
        self.write(buffer, format, max_cases=max_cases, gates=gates)
        return buffer.getvalue()

    def write(
        self,
        stream: TextIO,
        format: str = "text",
        *,
        max_cases: int | None = DEFAULT_MAX_CASES,
        gates: Mapping[str, GateResult] | None = None,
    ) -> None:
        """Write ``render(format, ...)`` to ``stream``."""
        if format not in MULTI_FORMATS:
            raise ValueError(f"unknown format {format!r}; use one of {', '.join(MULTI_FORMATS)}")
        if max_cases is not None and max_cases < 1:
            raise ValueError(f"max_cases must be 1 or more, or None for every case; got {max_cases!r}")
        unknown = sorted(set(gates or {}) - set(self.names))
        if unknown:
            raise ValueError(
                f"`gates` names no candidate: {', '.join(unknown)}; the candidates are {', '.join(self.names)}"
            )
        if format == "json":
            stream.write(to_json(self.to_dict()))
        elif format == "text":
            self._write(stream, format)
        else:
            self._write(stream, format, max_cases=max_cases, gates=gates)
