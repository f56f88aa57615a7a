"""What the interactive page's script is given: the comparison's signals and statuses, and in the static
page the listed cases' details (``compute.case_details``), each passage's text once for the whole page.

Static: ``{"mode": "static", "signals", "tolerance", "stage_phrases", "max_diff_words", "statuses", "packed"}``,
``packed`` holding ``{"cases", "passages"}`` (see ``packed``);
served: ``{"mode": "served", "api", "review", "token", "reviewer", "case_statuses", ...}`` without cases
(``case_statuses``: every status a reviewer may say a case should have). ``statuses``: each
status with cases, its tone, how many cases it has and how many the page lists; ``signals``: those a case's
``deltas`` hold, with their good direction.
"""

from __future__ import annotations

import base64
import gzip
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from rag_compare.compute.case_details import MAX_DIFF_WORDS, case_details
from rag_compare.compute.case_status import CASE_STATUSES, SIDES
from rag_compare.compute.preference import PREFERENCE_COLUMNS
from rag_compare.core.result import to_json
from rag_compare.core.signals import JUDGE_COLUMNS, JUDGE_FAILED, STAGE_PHRASES
from rag_compare.report.charts import tone_of

if TYPE_CHECKING:
    from rag_compare.compute.comparison import Comparison

__all__ = ["packed", "served_data", "static_data"]

_PREFERRED = {"name": "preferred", "higher_is_better": True, "flag": False}
"""The pairwise judge's preference, a delta in [-1, 1] (the candidate preferred: +1)."""


def static_data(comparison: Comparison, listed: pl.DataFrame, groups: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The static page's data: the ``listed`` cases' details (``documents.listed_cases``), in that order,
    with each passage's text moved to ``passages`` (one table for the page) and what the report shows beside
    a case (``_with_report_facts``); and the report's ``groups``."""
    case_ids = listed.get_column("case_id")
    details = _with_report_facts(comparison, case_ids, case_details(comparison, case_ids.to_list()))
    cases, passages = _passages_apart(details)
    return _common(comparison, groups) | {"mode": "static", "packed": packed({"cases": cases, "passages": passages})}


def packed(payload: Mapping[str, Any]) -> str:
    """``payload`` as the static page carries its cases: its JSON (credentials redacted), gzipped (no time
    in the header: the same payload, the same bytes), in base64. Texts of thousands of cases, which repeat
    words and whole passages, shrink about tenfold; the browser inflates them (``DecompressionStream``)."""
    data = gzip.compress(to_json(payload, compact=True).encode("utf-8"), compresslevel=6, mtime=0)
    return base64.b64encode(data).decode("ascii")


def served_data(
    comparison: Comparison,
    groups: Sequence[dict[str, Any]],
    *,
    api: str,
    review: bool,
    token: str | None,
    reviewer: str | None,
) -> dict[str, Any]:
    """The served page's data: where the API is, whether its review controls are on, the token it sends
    (``Authorization: Bearer``) and the reviewer's name to start the form with."""
    return _common(comparison, groups) | {
        "mode": "served",
        "case_statuses": list(CASE_STATUSES),
        "api": api,
        "review": review,
        "token": token,
        "reviewer": reviewer,
    }


def _common(comparison: Comparison, groups: Sequence[dict[str, Any]]) -> dict[str, Any]:
    signals = [
        {"name": signal.name, "higher_is_better": signal.higher_is_better, "flag": signal.flag}
        for signal in comparison.signals
    ]
    return {
        "signals": signals + ([_PREFERRED] if comparison.preference is not None else []),
        "tolerance": comparison.tolerance,
        "stage_phrases": dict(STAGE_PHRASES),
        "max_diff_words": MAX_DIFF_WORDS,
        "statuses": [
            {
                "status": group["status"],
                "tone": tone_of(group["status"]),
                "count": group["count"],
                "listed": group["listed"],
            }
            for group in groups
        ],
    }


def _with_report_facts(
    comparison: Comparison, case_ids: pl.Series, details: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``details`` with what the report shows beside a case and a case's details do not hold: per side
    ``judge_error``, the judge's error when judging that side failed (else null), and with pairs the pairwise
    judge's ``preference`` (``preferred``: the side it preferred, ``reason``)."""
    columns = comparison.case_table.columns
    judged = [f"{side}_{name}" for side in SIDES for name in JUDGE_COLUMNS]
    wanted = [name for name in (*PREFERENCE_COLUMNS, *judged) if name in columns]
    rows = (
        comparison.scan_cases().filter(pl.col("case_id").is_in(case_ids.implode())).select("case_id", *wanted).collect()
    )
    facts = {row.pop("case_id"): row for row in rows.iter_rows(named=True)}
    shown = []
    for detail in details:
        row = facts[detail["case_id"]]
        sides = {side: facts | {"judge_error": _judge_error(row, side)} for side, facts in detail["sides"].items()}
        preference = {"preferred": row.get("preferred"), "reason": row.get("preference_reason")}
        shown.append(detail | {"sides": sides} | ({"preference": preference} if "preferred" in row else {}))
    return shown


def _judge_error(row: dict[str, Any], side: str) -> str | None:
    """The error of judging ``side`` of a case's ``row`` when judging it failed, else ``None``."""
    return row.get(f"{side}_judge_error") if row.get(f"{side}_judge_status") == JUDGE_FAILED else None


def _passages_apart(details: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """``details`` with each passage's text (the same for a passage id across the page: it comes from the
    comparison's passages) in one table by passage id, and null in the passage itself."""
    texts: dict[str, str] = {}
    cases = []
    for detail in details:
        sides = {}
        for side, facts in detail["sides"].items():
            passages = facts.get("passages")
            if passages is not None:
                passages = [_text_apart(passage, texts) for passage in passages]
            sides[side] = {**facts, "passages": passages}
        cases.append({**detail, "sides": sides})
    return cases, texts


def _text_apart(passage: dict[str, Any], texts: dict[str, str]) -> dict[str, Any]:
    text = passage.get("text")
    if text is None or texts.setdefault(passage["passage_id"], text) != text:
        return passage
    return {**passage, "text": None}
