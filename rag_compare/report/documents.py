"""Markdown and HTML reports of a comparison, rendered from the Jinja2 templates in ``templates/``: the
Markdown report here, and what the HTML page shares with it (its context; the page itself is ``page``).

A report holds, in order: with a release gate, its verdict and each condition's numbers; the two runs and
the config diff with its warnings; status counts (with repeats, beside the noise floor); the aggregates of
both scopes (with repeats, the within-case variance); with pairs, the pairwise preference; breakdowns by
category and answerability; then the cases, regressed, failed and missing first, then mixed, improved and
unstable, up to ``max_cases`` per status (unchanged ones are counted, or listed too with ``all_cases``),
each with the pairwise judge's reason when it has one; with repeats, the flaky cases; with pairs, the
inconsistent pairs and those the judge could not judge, up to ``max_cases`` each. The Markdown report's
cases are read from the frame one at a time and written as they are rendered, so a large report never sits
in memory as one document.

Every value from data is escaped: by Jinja2's autoescape in HTML (the page's data as escaped JSON, see
``page``), and by ``markdown_escape`` for every expression of the Markdown template. Before that, every
text an expression gives is redacted (``credentials.redact``): a run's name or path shows no credential.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import polars as pl

from rag_compare._version import __version__
from rag_compare.compute.aggregates import BREAKDOWN_COLUMNS, SCOPES
from rag_compare.compute.case_status import STAGED_STATUSES
from rag_compare.compute.comparison import NOT_RUN, REPORTED_STATUSES, SCOPE_TITLES, SIDES
from rag_compare.compute.preference import PREFERENCE_COLUMNS
from rag_compare.core.credentials import redactor
from rag_compare.core.listing import truncated
from rag_compare.core.result import DEFAULT_MAX_CASES, REPORT_FORMATS, terminal_safe
from rag_compare.core.signals import ALL_SIGNALS, JUDGE_FAILED, SCORE_SIGNALS, STAGE_PHRASES
from rag_compare.core.templates import template_environment
from rag_compare.report import claims, preference, repeats
from rag_compare.report.charts import category_grid, delta_chart, delta_tone, status_chart, tone_of
from rag_compare.report.summaries import condition_outcome, gate_verdict
from rag_compare.report.text import AGGREGATE_HEADERS, aggregate_cells, config_diff_rows, k_text

if TYPE_CHECKING:
    import jinja2

    from rag_compare.compute.comparison import Comparison
    from rag_compare.compute.gate_result import GateResult

__all__ = [
    "environment",
    "listed_cases",
    "listed_statuses",
    "markdown_escape",
    "report_context",
    "write_report",
]

ANSWER_SIGNALS = ("grounded", "answer_completeness", "abstained", "abstention_correct")
"""The signals shown beside each answer, followed by the score signals a comparison holds."""
_OPEN_TONES = frozenset({"worse", "failed", "missing", "mixed"})
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")


def write_report(
    comparison: Comparison,
    stream: TextIO,
    *,
    all_cases: bool = False,
    max_cases: int | None = DEFAULT_MAX_CASES,
    gate: GateResult | None = None,
) -> None:
    """Write the Markdown report of ``comparison`` to ``stream``, chunk by chunk, listing up to ``max_cases``
    cases per status (``None``: all), with the verdict of ``gate`` at the top when there is one."""
    template = environment("markdown").get_template("comparison.md.j2")
    context = report_context(comparison, all_cases=all_cases, max_cases=max_cases, gate=gate)
    listed = [status for status in listed_statuses(all_cases) if comparison.counts[status]]
    context["views"] = _case_views(comparison, listed_cases(comparison, listed, max_cases), context["answer_signals"])
    for chunk in template.generate(c=context, redact=redactor()):
        stream.write(chunk)


def _stages(comparison: Comparison) -> dict[str, str]:
    """Per status whose cases have stages, where they changed: ``3 at the answer, 1 rank only``."""
    return {
        status: ", ".join(f"{count} {STAGE_PHRASES[stage]}" for stage, count in stages.items())
        for status, stages in comparison.stage_counts.items()
    }


def markdown_escape(value: object) -> str:
    """``value`` as Markdown text that renders as itself: no markup, no HTML, no broken table cell.

    HTML's special characters become entities, Markdown's punctuation is backslash-escaped, and a
    line break becomes ``<br>`` so a multi-line answer stays in its table cell.
    """
    if value is None:
        return ""
    text = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    return "<br>".join(line.strip() for line in text.splitlines()) if "\n" in text or "\r" in text else text


@functools.cache
def environment(format: str) -> jinja2.Environment:
    """The templates' environment; a template is rendered given ``c`` (its ``_context``) and ``redact`` (a
    ``credentials.redactor``), which every expression's text goes through."""
    import jinja2

    if format not in REPORT_FORMATS:
        raise ValueError(f"unknown report format {format!r}; use one of {', '.join(REPORT_FORMATS)}")
    html = format == "html"
    return template_environment(
        Path(__file__).parent / "templates",
        autoescape=html,
        finalize=jinja2.pass_context(_shown_in_html if html else _shown_in_markdown),
        trim_blocks=True,
        keep_trailing_newline=True,
        filters={"count": "{:,}".format},
    )


def _shown_in_html(template: jinja2.runtime.Context, value: object) -> object:
    """An expression's value as text, redacted, for autoescape to escape; markup (the one kind of text that is
    not a plain ``str``) as it is: the templates' own, a macro's output, whose expressions were redacted already."""
    if value is None or (isinstance(value, str) and type(value) is not str):
        return value
    return template["redact"](str(value))


def _shown_in_markdown(template: jinja2.runtime.Context, value: object) -> str:
    """An expression's value as text, redacted, with every control character a terminal would obey shown as its
    escape (``result.terminal_safe``: the report may be read in one), as Markdown (``markdown_escape``)."""
    return markdown_escape(None if value is None else terminal_safe(template["redact"](str(value))))


def report_context(
    comparison: Comparison, *, all_cases: bool, max_cases: int | None, gate: GateResult | None
) -> dict[str, Any]:
    """What both reports show but the cases themselves: the templates' ``c`` (the Markdown report adds its
    case views, the HTML page its data block)."""
    counts = comparison.counts
    answer_signals = ANSWER_SIGNALS + tuple(signal.name for signal in comparison.signals if signal in SCORE_SIGNALS)
    return {
        "version": __version__,
        "title": f"{comparison.baseline.name} → {comparison.candidate.name}",
        "gate": _gate_context(gate),
        "runs": _runs(comparison),
        "evaluator": dict(comparison.evaluator),
        "scores": comparison.scores_text(),
        "tolerance": f"{comparison.tolerance:g}",
        "config_diff": config_diff_rows(comparison),
        "warnings": list(comparison.warnings),
        "total": comparison.n_cases,
        "counts": [(status, count, tone_of(status)) for status, count in counts.items()],
        "stages": _stages(comparison),
        "not_run": _not_run(comparison.unreviewed_left_out),
        "status_chart": status_chart(counts),
        "aggregate_headers": AGGREGATE_HEADERS,
        "scopes": _scopes(comparison.aggregates.filter(pl.col("n") > 0)),
        "empty_signals": comparison.signals_without_values,
        "breakdowns": [_breakdown(comparison.breakdowns, by) for by in BREAKDOWN_COLUMNS],
        "groups": [
            {
                "status": status,
                "tone": tone_of(status),
                "count": counts[status],
                "open": tone_of(status) in _OPEN_TONES,
                "listed": counts[status] if max_cases is None else min(max_cases, counts[status]),
                "more": 0 if max_cases is None else max(0, counts[status] - max_cases),
            }
            for status in listed_statuses(all_cases)
            if counts[status]
        ],
        "unlisted": 0 if all_cases else counts["unchanged"],
        "answer_signals": answer_signals,
        "preference": _preference_context(comparison, max_cases),
        "claims": _claims_context(comparison),
    } | _repeats_context(comparison, max_cases)


def _claims_context(comparison: Comparison) -> dict[str, Any]:
    """The summary of every case's claim changes: a table, or why they are not available."""
    summary = comparison.claim_summary
    return {
        "title": claims.CLAIMS_TITLE,
        "headers": claims.SUMMARY_HEADERS,
        "rows": [] if summary.unavailable else claims.summary_rows(summary),
        "line": claims.test_line(summary),
    }


def listed_cases(comparison: Comparison, statuses: Sequence[str], limit: int | None) -> pl.DataFrame:
    """The cases a report lists: the first ``limit`` of each of ``statuses`` by case id (``None``: all), as
    ``case_id`` and ``status``, in the order of ``statuses``; chosen on their ids alone."""
    order = (
        comparison.scan_cases()
        .select("case_id", pl.col("status").cast(pl.String))
        .filter(pl.col("status").is_in(statuses))
    )
    if limit is not None:
        order = order.filter(pl.int_range(pl.len()).over("status") < limit)
    rank = {status: position for position, status in enumerate(statuses)}
    chosen = order.collect()
    return chosen.sort(pl.col("status").replace_strict(rank, return_dtype=pl.Int32), "case_id", maintain_order=True)


def listed_statuses(all_cases: bool) -> tuple[str, ...]:
    """The statuses a report lists cases of, in its order: unchanged ones only with ``all_cases``."""
    return REPORTED_STATUSES + (("unchanged",) if all_cases else ())


def _gate_context(gate: GateResult | None) -> dict[str, Any] | None:
    """A release gate's verdict and each condition with its outcome and numbers; ``None`` without a gate."""
    if gate is None:
        return None
    return {
        "passed": gate.passed,
        "verdict": f"{gate_verdict(gate)} (alpha {gate.alpha:g})",
        "conditions": [
            (condition.condition, condition_outcome(condition), condition.numbers, condition.held)
            for condition in gate.conditions
        ],
    }


def _not_run(case_ids: tuple[str, ...]) -> str:
    """The line on the unreviewed synthetic cases a run left out; empty when there are none."""
    if not case_ids:
        return ""
    return f"{NOT_RUN.capitalize()} {len(case_ids)}: left out of a run by design, not missing ({truncated(case_ids)})."


def _repeats_context(comparison: Comparison, max_cases: int | None) -> dict[str, Any]:
    """What runs with repeats add (see ``repeats``): empty values for runs without them."""
    flaky, total = repeats.flaky_rows(comparison, max_cases)
    return {
        "repeats": repeats.repeats_text(comparison),
        "noise": {
            "title": repeats.NOISE_TITLE,
            "headers": repeats.NOISE_HEADERS,
            "rows": repeats.noise_rows(comparison),
        },
        "variance": {
            "title": repeats.VARIANCE_TITLE,
            "headers": repeats.VARIANCE_HEADERS,
            "rows": repeats.variance_rows(comparison),
        },
        "flaky": {
            "title": repeats.FLAKY_TITLE,
            "headers": repeats.FLAKY_HEADERS,
            "rows": flaky,
            "more": total - len(flaky),
        },
    }


def _preference_context(comparison: Comparison, max_cases: int | None) -> dict[str, Any] | None:
    """The pairwise preference section and its lists (see ``preference``); ``None`` without pairs."""
    title = preference.preference_title(comparison)
    if title is None:
        return None
    lists = []
    for name, listing_title, listing in preference.PREFERENCE_LISTS:
        rows, total = listing(comparison, max_cases)
        lists.append(
            {
                "id": name,
                "title": listing_title,
                "headers": preference.LIST_HEADERS,
                "rows": rows,
                "more": total - len(rows),
            }
        )
    return {
        "title": title,
        "headers": preference.PREFERENCE_HEADERS,
        "rows": preference.preference_rows(comparison),
        "warning": preference.preference_warning(comparison),
        "lists": lists,
    }


def _runs(comparison: Comparison) -> list[dict[str, Any]]:
    """The two runs as the report's header shows them."""
    return [
        {
            "side": side,
            "name": run.name,
            "fingerprint": run.fingerprint,
            "created_at": run.created_at,
            "path": run.path_text,
            "k": k_text(run.k),
        }
        for side, run in zip(SIDES, (comparison.baseline, comparison.candidate), strict=True)
    ]


def _scopes(aggregates: pl.DataFrame) -> list[dict[str, Any]]:
    """Each scope's aggregates (the signals with values) as table rows and a delta chart."""
    scopes = []
    for scope in SCOPES:
        rows = aggregates.filter(pl.col("scope") == scope).to_dicts()
        scopes.append(
            {
                "name": scope,
                "title": SCOPE_TITLES[scope],
                "rows": [aggregate_cells(row) for row in rows],
                "chart": delta_chart(rows),
            }
        )
    return scopes


def _breakdown(breakdowns: pl.DataFrame, by: str) -> dict[str, Any]:
    """One grouping's paired deltas as a matrix (a row per group, a column per signal) and a grid chart."""
    rows = breakdowns.filter(pl.col("by") == by).to_dicts()
    present = {row["signal"] for row in rows}
    signals = [signal.name for signal in ALL_SIGNALS if signal.name in present]
    by_group: dict[str, dict[str, Any]] = {}
    for row in rows:
        group = by_group.setdefault(row["group"], {"group": row["group"], "n": 0, "cells": {}})
        group["n"] = max(group["n"], row["n"])
        group["cells"][row["signal"]] = (f"{row['delta']:+.3f}", delta_tone(row["signal"], row["delta"]))
    matrix = [
        {
            "group": group["group"],
            "n": group["n"],
            "cells": [group["cells"].get(name, ("", "none")) for name in signals],
        }
        for group in by_group.values()
    ]
    return {"by": by, "signals": signals, "rows": matrix, "chart": category_grid(rows) if by == "category" else None}


def _case_views(
    comparison: Comparison, listed: pl.DataFrame, answer_signals: Sequence[str]
) -> dict[str, list[dict[str, Any]]]:
    """The ``listed`` cases (see ``listed_cases``) by status, as the Markdown template shows them: only their
    rows are gathered and only their texts read back from the runs, once for every status."""
    columns = comparison.case_table.columns
    side_columns = [
        "status",
        "error",
        "missing_from_context",
        "judge_status",
        "judge_error",
        *answer_signals,
        *(name for name in ("repeats", "failed_repeats") if f"baseline_{name}" in columns),
    ]
    selected = (
        comparison.scan_cases()
        .filter(pl.col("case_id").is_in(listed.get_column("case_id").implode()))
        .select(
            "case_id",
            pl.col("status").cast(pl.String),
            pl.col("stage").cast(pl.String).replace_strict(STAGE_PHRASES, default=None),
            "reasons",
            "answerability",
            "category",
            *(name for name in PREFERENCE_COLUMNS if name in columns),
            *(f"{side}_{name}" for side in SIDES for name in side_columns),
        )
        .collect()
    )
    views: dict[str, list[dict[str, Any]]] = {status: [] for status in listed.get_column("status").unique()}
    changes = dict(comparison.claims(selected.get_column("case_id")).select("case_id", "claim_changes").iter_rows())
    for row in comparison.with_texts(selected).iter_rows(named=True):
        required = row["required_passage_ids"] or []
        views[row["status"]].append(
            {
                "case_id": row["case_id"],
                "stage": None if row["status"] not in STAGED_STATUSES else row["stage"],
                "reasons": row["reasons"],
                "question": row["question"],
                "labels": [label for label in (row["answerability"], row["category"]) if label],
                "source_version": row["source_version"],
                "required": required,
                "acceptance_note": row["acceptance_note"],
                "preferred": row.get("preferred"),
                "preference_reason": row.get("preference_reason"),
                "claims": claims.changes_line(changes[row["case_id"]]),
                "claim_changes": claims.change_lines(changes[row["case_id"]]),
                "sides": [_side_view(row, side, required, answer_signals) for side in SIDES],
            }
        )
    return views


def _side_view(row: Mapping[str, Any], side: str, required: list[str], answer_signals: Sequence[str]) -> dict[str, Any]:
    status = row[f"{side}_status"]
    retrieved = row[f"{side}_retrieved_passage_ids"]
    missing = row[f"{side}_missing_from_context"]
    gold = set(required)
    shown = "no record" if status is None else status
    samples = row.get(f"{side}_repeats")
    if samples is not None and samples > 1:
        shown += f" ({samples} samples, {row[f'{side}_failed_repeats']} failed)"
    return {
        "side": side,
        "status": shown,
        "ok": status == "ok",
        "error": row[f"{side}_error"],
        "retrieved": None if retrieved is None else [(passage, passage in gold) for passage in retrieved],
        "in_context": [
            (passage, "unknown" if missing is None else "no" if passage in missing else "yes") for passage in required
        ],
        "answer": row[f"{side}_answer"],
        "judge_error": row[f"{side}_judge_error"] if row[f"{side}_judge_status"] == JUDGE_FAILED else None,
        "signals": {name: _signal_text(row[f"{side}_{name}"]) for name in answer_signals},
    }


def _signal_text(value: object) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:.3f}"
