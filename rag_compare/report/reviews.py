"""A reviews file for a terminal: the runs, the reviewers, agreement with the statuses shown, and the labels."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag_compare.core.listing import counts_line
from rag_compare.core.result import labelled
from rag_compare.io.reviews import BLANK
from rag_compare.io.verdicts import LABELS
from rag_compare.report.text import text_table

if TYPE_CHECKING:
    from rag_compare.io.reviews import Reviews

__all__ = ["reviews_text"]


def reviews_text(reviews: Reviews) -> str:
    """The summary ``show`` prints of a reviews file."""
    summary = reviews.to_dict()
    head = [
        ("reviews", summary["path"] or "(not written)"),
        ("fingerprint", reviews.fingerprint),
        ("evaluator", labelled(reviews.evaluator["name"], reviews.evaluator["fingerprint"])),
        *((side, labelled(summary[side]["name"], summary[side]["fingerprint"])) for side in ("baseline", "candidate")),
        ("exported", reviews.created_at),
        ("from", reviews.database or "(no database)"),
        ("cases", f"{summary['cases']:,} ({summary['verdicts']:,} verdict{'' if summary['verdicts'] == 1 else 's'})"),
        ("reviewers", counts_line(reviews.reviewers, ", ")),
        ("status", counts_line(reviews.agreement, ", ")),
    ]
    values = ("yes", "partly", "no", BLANK)
    counts = reviews.label_counts()
    labels = [
        (name, side, *(str(counts[side][name][value]) if value in counts[side][name] else "" for value in values))
        for name in LABELS
        for side in counts
    ]
    text = text_table(("", ""), head) + "\n" + text_table(("label", "side", *values), labels)
    corrections = [(row["shown_status"], row["status"], f"{row['count']:,}") for row in summary["corrections"]]
    if corrections:
        text += "\n" + text_table(("shown", "should be", "verdicts"), corrections, title="Statuses people corrected")
    return text
