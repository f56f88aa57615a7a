"""What a pairwise judge's verdicts (a pairs file) add to a comparison's reports, as plain cells every
format shows: the preference section (outcome counts, the win rate with its interval and sign test,
the judge's position consistency and first-position preference, a warning when it looks biased), the
inconsistent pairs and the pairs the judge could not judge; and the text summary of a pairs file.
Each is empty (or ``None``) for a comparison without pairs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import polars as pl

from rag_compare.compute.comparison import SIDES
from rag_compare.compute.preference import position_bias
from rag_compare.core.signals import JUDGE_FAILED
from rag_compare.io.pairs import OUTCOMES
from rag_compare.report.text import p_value_text, text_table

if TYPE_CHECKING:
    from rag_compare.compute.comparison import Comparison
    from rag_compare.compute.preference import PositionBias, Preference
    from rag_compare.io.pairs import Pairs

__all__ = [
    "INCONSISTENT_TITLE",
    "LIST_HEADERS",
    "PREFERENCE_HEADERS",
    "PREFERENCE_LISTS",
    "UNJUDGED_TITLE",
    "bias_warning",
    "inconsistent_rows",
    "pairs_text",
    "preference_rows",
    "preference_title",
    "preference_warning",
    "unjudged_rows",
]

PREFERENCE_HEADERS = ("measure", "value")
LIST_HEADERS = ("case", "pairwise judge")
INCONSISTENT_TITLE = "Inconsistent pairs: the two orders disagree (counted for neither side)"
UNJUDGED_TITLE = "Pairs the judge could not judge"
_OUTCOME_LABELS = dict(
    zip(
        OUTCOMES,
        (
            "candidate preferred (wins)",
            "baseline preferred (losses)",
            "ties",
            "inconsistent",
            JUDGE_FAILED,
            "not judged",
        ),
        strict=True,
    )
)
"""Each outcome of ``io.pairs.OUTCOMES`` as the reports name it."""
_MIN_REPLIES = 10
"""Fewer replies than this never warn: a handful of choices says little about a judge."""
_MIN_CONSISTENCY = 0.8
_FIRST_RANGE = (0.35, 0.65)


def preference_title(comparison: Comparison) -> str | None:
    """``Pairwise preference (judge NAME FINGERPRINT12)``; ``None`` without pairs."""
    preference = comparison.preference
    if preference is None:
        return None
    judge = preference.evaluator
    return f"Pairwise preference (judge {judge['name']} {str(judge['fingerprint'])[:12]})"


def preference_rows(comparison: Comparison) -> list[tuple[str, str]]:
    """The preference section's cells: the pairs file, each outcome's count, the win rate and the
    position bias (no rows without pairs)."""
    preference = comparison.preference
    if preference is None:
        return []
    judge = preference.evaluator
    source = f"{judge['path'] or 'not written'} ({str(judge['pairs_fingerprint'])[:12]})"
    return [
        ("pairs", source),
        *_count_rows(preference.counts),
        ("win rate (decided pairs)", _win_rate(preference)),
        *_bias_rows(preference.bias),
    ]


def _count_rows(counts: Mapping[str, int]) -> list[tuple[str, str]]:
    """Each outcome's count, wins and losses first."""
    return [(label, f"{counts[outcome]:,}") for outcome, label in _OUTCOME_LABELS.items()]


def _win_rate(preference: Preference) -> str:
    """``0.500 [0.013, 0.987], sign test p 1.000``; ``-`` without a pair decided for a side."""
    if preference.win_rate is None or preference.ci_low is None or preference.ci_high is None:
        return "-"
    interval = f"[{preference.ci_low:.3f}, {preference.ci_high:.3f}]"
    return f"{preference.win_rate:.3f} {interval}, sign test p {p_value_text(preference.p_value)}"


def _bias_rows(bias: PositionBias) -> list[tuple[str, str]]:
    """Position consistency and first-position preference, each as a share of what it counts."""
    consistency, first = bias.consistency_rate, bias.first_position_rate
    return [
        (
            "position consistency",
            "-"
            if consistency is None
            else f"{consistency:.0%} ({bias.consistent:,} of {bias.pairs:,} pairs judged in both orders)",
        ),
        (
            "first-position preference",
            "-" if first is None else f"{first:.0%} ({bias.first:,} of {bias.replies:,} replies that chose an answer)",
        ),
    ]


def bias_warning(bias: PositionBias) -> str | None:
    """What makes the judge look biased, with at least ``_MIN_REPLIES`` replies that chose an answer:
    a position consistency below 80%, or a first-position preference outside 35% to 65%."""
    if bias.replies < _MIN_REPLIES:
        return None
    consistency, first = bias.consistency_rate, bias.first_position_rate
    signs = []
    if consistency is not None and consistency < _MIN_CONSISTENCY:
        signs.append(f"position consistency {consistency:.0%}, below {_MIN_CONSISTENCY:.0%}")
    if first is not None and not _FIRST_RANGE[0] <= first <= _FIRST_RANGE[1]:
        low, high = _FIRST_RANGE
        signs.append(f"first-position preference {first:.0%}, outside {low:.0%} to {high:.0%}")
    if not signs:
        return None
    return (
        f"the pairwise judge looks position-biased ({'; '.join(signs)}): its verdicts follow the position "
        "of an answer, not the answer. The inconsistent cases count for neither side."
    )


def preference_warning(comparison: Comparison) -> str | None:
    """The bias warning of the comparison's pairwise judge (see ``bias_warning``); ``None`` without pairs."""
    return None if comparison.preference is None else bias_warning(comparison.preference.bias)


def inconsistent_rows(comparison: Comparison, limit: int | None) -> tuple[list[tuple[str, str]], int]:
    """The first ``limit`` inconsistent cases (``None``: all) with what each order chose, and how many there are."""
    return _outcome_rows(comparison, "inconsistent", limit)


def unjudged_rows(comparison: Comparison, limit: int | None) -> tuple[list[tuple[str, str]], int]:
    """The first ``limit`` cases whose judging failed (``None``: all) with the error, and how many there are."""
    return _outcome_rows(comparison, JUDGE_FAILED, limit)


PREFERENCE_LISTS = (
    ("inconsistent", INCONSISTENT_TITLE, inconsistent_rows),
    ("judge-failed", UNJUDGED_TITLE, unjudged_rows),
)
"""The lists a report closes with: an id (HTML), a title and the function giving its rows and total."""


def _outcome_rows(comparison: Comparison, outcome: str, limit: int | None) -> tuple[list[tuple[str, str]], int]:
    if comparison.preference is None:
        return [], 0
    cases = comparison.scan_cases().filter(pl.col("preferred") == outcome).select("case_id", "preference_reason")
    total = comparison.preference.counts[outcome]
    shown = cases.sort("case_id") if limit is None else cases.sort("case_id").head(limit)
    return [(case_id, reason or "") for case_id, reason in shown.collect().rows()], total


def pairs_text(pairs: Pairs) -> str:
    """A pairs file: the two runs, the judge, the outcome counts, the judge's position bias, the usage."""
    summary = pairs.to_dict()
    judge = pairs.evaluator
    model = judge.get("config", {}).get("model")
    bias = position_bias(pairs.frame)
    runs = (pairs.baseline, pairs.candidate)
    rows = [
        ("pairs", summary["path"] or "(not written)"),
        ("fingerprint", pairs.fingerprint),
        *((side, f"{run['name']} ({str(run['fingerprint'])[:12]})") for side, run in zip(SIDES, runs, strict=True)),
        ("judge", f"{judge['name']} ({str(judge['fingerprint'])[:12]})" + (f", model {model}" if model else "")),
        ("created", pairs.created_at),
        ("cases", f"{summary['cases']:,}"),
        *_count_rows(summary["counts"]),
        *_bias_rows(bias),
        *((name, f"{count:,}") for name, count in summary["usage"].items()),
    ]
    warning = bias_warning(bias)
    return text_table(("", ""), rows) + (f"warning: {warning}\n" if warning else "")
