"""What the claim changes add to the reports: the summary of every case's (``compute.claim_changes``), and each
listed case's changes, a line each. The text summary leaves them out: pairing every case's claims costs about
as much again as the rest of a comparison."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rag_compare.compute.claims import CHANGES
from rag_compare.report.text import p_value_text

if TYPE_CHECKING:
    from rag_compare.compute.claim_changes import ClaimSummary

__all__ = [
    "CHANGE_NAMES",
    "CLAIMS_TITLE",
    "SUMMARY_HEADERS",
    "change_lines",
    "changes_line",
    "summary_rows",
]

CLAIMS_TITLE = "Claims"
CHANGE_NAMES = {
    "became_unsupported": "became unsupported",
    "became_supported": "became supported",
    "dropped": "dropped",
    "added": "added",
}
SUMMARY_HEADERS = ("claims", "count", "cases")


def summary_rows(summary: ClaimSummary) -> list[tuple[str, str, str]]:
    """A row per kind of change: the claims so changed and the cases with one at least."""
    return [(CHANGE_NAMES[change], f"{summary.counts[change]:,}", f"{summary.cases[change]:,}") for change in CHANGES]


def test_line(summary: ClaimSummary) -> str:
    """The sign test over cases (``1 of 30 cases lost more support than they gained, ...``), or why the claims
    are not available."""
    if summary.unavailable:
        return "not available (" + "; ".join(summary.unavailable) + ")"
    if summary.p_value is None:
        return f"none of {summary.compared:,} cases gained or lost support"
    return (
        f"{summary.worse:,} of {summary.compared:,} cases lost more support than they gained, "
        f"{summary.better:,} gained more (sign test p {p_value_text(summary.p_value)})"
    )


def changes_line(changes: Sequence[Mapping[str, Any]] | None) -> str:
    """A case's changes counted (``1 became unsupported, 1 added``), ``none`` or ``not available``."""
    if changes is None:
        return "not available"
    kinds = [change["change"] for change in changes]
    counted = [f"{kinds.count(kind)} {CHANGE_NAMES[kind]}" for kind in CHANGES if kind in kinds]
    return ", ".join(counted) or "none changed"


def change_lines(changes: Sequence[Mapping[str, Any]] | None) -> list[str]:
    """Each change of a case, a line: ``became unsupported: "150 euros" -> "180 euros"``, ``dropped: "..."``."""
    lines = []
    for change in changes or ():
        before, after = (change[side]["text"] if change[side] else None for side in ("baseline", "candidate"))
        name = CHANGE_NAMES[change["change"]]
        if before is not None and after is not None:
            lines.append(f'{name}: "{before}" -> "{after}"')
        else:
            lines.append(f'{name}: "{before if after is None else after}"')
    return lines
