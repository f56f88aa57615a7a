"""What a comparison of runs with repeats adds to its reports, as plain cells every format shows: the
samples per side, the status counts beside the noise floor, the within-case variance beside each
paired delta, and the flaky cases. Each is empty (or ``None``) for runs without repeats."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import polars as pl

from rag_compare.compute.comparison import CASE_STATUSES, SIDES
from rag_compare.core.listing import counted

if TYPE_CHECKING:
    from rag_compare.compute.comparison import Comparison

__all__ = [
    "FLAKY_HEADERS",
    "FLAKY_TITLE",
    "NOISE_HEADERS",
    "NOISE_TITLE",
    "VARIANCE_HEADERS",
    "VARIANCE_TITLE",
    "flaky_rows",
    "noise_rows",
    "repeats_text",
    "variance_rows",
]

NOISE_TITLE = "Noise floor (two single samples of one config)"
NOISE_HEADERS = ("status", "cases", "expected from noise alone")
VARIANCE_TITLE = "Within-case variance of the repeats beside the paired delta"
VARIANCE_HEADERS = ("signal", "delta", "baseline within", "candidate within", "n")
FLAKY_TITLE = "Flaky cases: their own repeats disagree (most first)"
FLAKY_HEADERS = ("case", "side", "disagree", "how")
_NOT_ESTIMATED = "-"
"""The noise floor of statuses an A/A comparison cannot show (missing, unstable)."""


def repeats_text(comparison: Comparison) -> str | None:
    """``baseline 3 samples a case (24 samples, 0 failed) · candidate ...``; ``None`` when no run has repeats."""
    runs = dict(zip(SIDES, (comparison.baseline, comparison.candidate), strict=True))
    if all(run.repeats["max"] <= 1 for run in runs.values()):
        return None
    return " · ".join(f"{side} {_per_case(run.repeats)}" for side, run in runs.items())


def _per_case(repeats: Mapping[str, int]) -> str:
    low, high = repeats["min"], repeats["max"]
    each = str(high) if low == high else f"{low} to {high}"
    return f"{each} samples a case ({counted(repeats['samples'], 'sample')}, {repeats['failed']:,} failed)"


def noise_rows(comparison: Comparison) -> list[tuple[str, str, str]]:
    """Each status with cases or an expected count from noise, with both (no rows without a noise floor)."""
    if comparison.noise_floor is None:
        return []
    expected, counts = comparison.noise_floor.expected, comparison.counts
    return [
        (status, f"{counts[status]:,}", _NOT_ESTIMATED if status not in expected else f"{expected[status]:.2f}")
        for status in CASE_STATUSES
        if counts[status] or expected.get(status)
    ]


def variance_rows(comparison: Comparison) -> list[tuple[str, ...]]:
    """The paired signals with a within-case variance on a side, with their delta."""
    rows = comparison.aggregates.filter(
        pl.col("scope") == "paired",
        pl.col("n") > 0,
        pl.col("baseline_within_variance").is_not_null() | pl.col("candidate_within_variance").is_not_null(),
    )
    return [
        (
            row["signal"],
            f"{row['delta']:+.3f}",
            _variance(row, "baseline"),
            _variance(row, "candidate"),
            f"{row['n']:,}",
        )
        for row in rows.iter_rows(named=True)
    ]


def _variance(row: Mapping[str, object], side: str) -> str:
    value = row[f"{side}_within_variance"]
    return "" if not isinstance(value, float) else f"{value:.3f}"


def flaky_rows(comparison: Comparison, limit: int | None) -> tuple[list[tuple[str, str, str, str]], int]:
    """The first ``limit`` flaky cases (``None``: all) as cells, and how many there are."""
    flaky = comparison.flaky
    shown = flaky if limit is None else flaky.head(limit)
    rows = [
        (case_id, side, str(disagreements), "; ".join(details))
        for case_id, side, disagreements, details in shown.select("case_id", "side", "disagreements", "details").rows()
    ]
    return rows, flaky.height
