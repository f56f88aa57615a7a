"""A comparison's text summary for a terminal: the warnings, the runs, config differences, status counts,
the aggregates of both scopes, then the cases that changed, failed or are missing (the first 100); with
repeats, also the samples per side, the counts beside the noise floor, the within-case variance and the
flaky cases (see ``repeats``); with pairs, the pairwise preference after the aggregates, the judge's
reason under each listed case, and the inconsistent and unjudged pairs (see ``preference``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from rag_compare.compute.comparison import CASE_STATUSES, REPORTED_STATUSES, SCOPE_TITLES, SIDES
from rag_compare.core.listing import truncated
from rag_compare.core.signals import STAGE_PHRASES
from rag_compare.report import preference
from rag_compare.report.repeats import (
    FLAKY_HEADERS,
    FLAKY_TITLE,
    NOISE_HEADERS,
    NOISE_TITLE,
    VARIANCE_HEADERS,
    VARIANCE_TITLE,
    flaky_rows,
    noise_rows,
    repeats_text,
    variance_rows,
)
from rag_compare.report.text import (
    AGGREGATE_HEADERS,
    aggregate_cells,
    config_diff_rows,
    config_text,
    k_text,
    text_table,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rag_compare.compute.comparison import Comparison

__all__ = ["comparison_text"]

_MAX_LISTED = 100
_REASON_CHARS = 200
_STATUS_WIDTH = max(len(status) for status in CASE_STATUSES)
_SAME_SCOPES = "All cases: the same as paired (no case is missing or failed on a side)"


def comparison_text(comparison: Comparison) -> str:
    """The summary, before control characters are escaped."""
    evaluator = comparison.evaluator
    runs = [
        (side, run.name, run.fingerprint[:12], run.created_at, run.path_text, k_text(run.k))
        for side, run in zip(SIDES, (comparison.baseline, comparison.candidate), strict=True)
    ]
    scores = comparison.scores_text()
    parts = [
        "".join(f"warning: {warning}\n" for warning in comparison.warnings),
        text_table(("", "run", "fingerprint", "created", "path", "k"), runs)
        + f"evaluator {evaluator['name']} ({evaluator['fingerprint'][:12]}), "
        f"tolerance {comparison.tolerance:g}" + (f"; scores: {scores}" if scores else ""),
    ]
    if comparison.config_diff:
        changes = config_diff_rows(comparison, 40)
        parts.append(text_table(("config key", "baseline", "candidate"), changes, title="Config differences"))
    repeats = repeats_text(comparison)
    if repeats:
        parts.append(f"repeats: {repeats}")
    stages = "".join(f"\n  {line}" for line in comparison.stages_text())
    parts.append(f"{comparison.n_cases} cases: {comparison.counts_text()}{stages}")
    noise = noise_rows(comparison)
    if noise:
        parts.append(f"{NOISE_TITLE}\n" + text_table(NOISE_HEADERS, noise))
    parts += _aggregate_tables(comparison.aggregates)
    variance = variance_rows(comparison)
    if variance:
        parts.append(f"{VARIANCE_TITLE}\n" + text_table(VARIANCE_HEADERS, variance))
    empty = comparison.signals_without_values
    if empty:
        parts.append(f"no values for: {', '.join(empty)}")
    parts += _preference_parts(comparison)
    parts.append(_listed_cases(comparison.scan_cases()))
    parts.append(_cut_table(FLAKY_TITLE, FLAKY_HEADERS, *flaky_rows(comparison, _MAX_LISTED)))
    for _, title, listing in preference.PREFERENCE_LISTS:
        pairs, total = listing(comparison, _MAX_LISTED)
        cut = [(case_id, config_text(reason, _REASON_CHARS)) for case_id, reason in pairs]
        parts.append(_cut_table(title, preference.LIST_HEADERS, cut, total))
    return "\n".join(part.rstrip("\n") + "\n" for part in parts if part)


def _aggregate_tables(aggregates: pl.DataFrame) -> list[str]:
    """The aggregates of each scope; the all-cases table only where it shows other values than the paired
    one (they are the same when no case is missing or failed on a side), a line saying so otherwise."""
    cells = {
        scope: [
            aggregate_cells(row)
            for row in aggregates.filter(pl.col("scope") == scope, pl.col("n") > 0).iter_rows(named=True)
        ]
        for scope in SCOPE_TITLES
    }
    if cells["all_cases"] == cells["paired"]:
        return [text_table(AGGREGATE_HEADERS, cells["paired"], title=SCOPE_TITLES["paired"]), _SAME_SCOPES]
    return [text_table(AGGREGATE_HEADERS, rows, title=SCOPE_TITLES[scope]) for scope, rows in cells.items()]


def _preference_parts(comparison: Comparison) -> list[str]:
    """The pairwise preference section and its bias warning; nothing without pairs."""
    title = preference.preference_title(comparison)
    if title is None:
        return []
    table = f"{title}\n" + text_table(preference.PREFERENCE_HEADERS, preference.preference_rows(comparison))
    warning = preference.preference_warning(comparison)
    return [table + (f"warning: {warning}\n" if warning else "")]


def _cut_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]], total: int) -> str:
    """A titled table of the first rows of a list and how many more there are; empty without rows."""
    if not rows:
        return ""
    table = f"{title}\n" + text_table(headers, rows)
    return table + (f"… and {total - len(rows):,} more\n" if total > len(rows) else "")


def _listed_cases(cases: pl.LazyFrame) -> str:
    """The reported cases, in ``REPORTED_STATUSES`` order then by id, each with where it changed (but a
    failure's) and its reasons."""
    order = {status: rank for rank, status in enumerate(REPORTED_STATUSES)}
    judged = pl.col("preference_reason") if "preference_reason" in cases.collect_schema() else pl.lit(None, pl.String)
    listed = (
        cases.select(
            "case_id",
            pl.col("status").cast(pl.String),
            pl.col("stage").cast(pl.String).replace_strict(STAGE_PHRASES, default=None),
            "reasons",
            judged.alias("judge"),
        )
        .filter(pl.col("status").is_in(REPORTED_STATUSES))
        .sort(pl.col("status").replace_strict(order, return_dtype=pl.Int32), "case_id")
        .collect()
    )
    if listed.is_empty():
        return "No case changed, failed or is missing."
    indent = " " * (_STATUS_WIDTH + 2)
    blocks = [
        "\n".join(
            [
                f"{status:<{_STATUS_WIDTH}} {case_id}" + (f"  ({stage})" if stage and stage != "a failure" else ""),
                *(indent + reason for reason in reasons),
                *([f"{indent}judge: {config_text(judge, _REASON_CHARS)}"] if judge else []),
            ]
        )
        for case_id, status, stage, reasons, judge in listed.head(_MAX_LISTED).iter_rows()
    ]
    every = " (--format json lists every case)"
    shown = truncated(blocks, _MAX_LISTED, separator="\n", prefix="\n", suffix=every, total=listed.height)
    return "Cases that changed, failed or are missing\n" + shown
