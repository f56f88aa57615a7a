"""The case-level signals of a comparison: what each measures, its good direction, where it applies."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

import polars as pl

__all__ = [
    "ALL_SIGNALS",
    "JUDGE_COLUMNS",
    "JUDGE_FAILED",
    "JUDGE_VERDICTS",
    "SCORED_SIGNALS",
    "SCORE_SIGNALS",
    "SIGNALS",
    "SIGNALS_BY_NAME",
    "STAGES",
    "STAGE_PHRASES",
    "Signal",
    "Stage",
    "applies",
    "judge_failed",
    "signals_in",
]

Applies = Literal["gold", "answerable", "unanswerable", "all"]
Stage = Literal["retrieval_rank", "retrieval_coverage", "context", "answer", "failure"]
STAGES: tuple[Stage, ...] = ("retrieval_rank", "retrieval_coverage", "context", "answer", "failure")
"""Where in the pipeline a case changed, in pipeline order (``failure``: a side failed, is missing or its
judging failed). A rank signal's change counts at ``retrieval_coverage`` when a coverage signal of the
case moved too: a gold passage then entered or left the top k."""
STAGE_PHRASES: Mapping[str, str] = MappingProxyType(
    {
        "answer": "at the answer",
        "context": "at the context",
        "retrieval_coverage": "at retrieval coverage",
        "retrieval_rank": "rank only",
        "failure": "a failure",
    }
)
"""How a report says where a case changed."""


@dataclass(frozen=True)
class Signal:
    """One case-level signal: a score in [0, 1] or a flag, and which way is better."""

    name: str
    flag: bool
    higher_is_better: bool
    applies_to: Applies
    stage: Stage
    """The pipeline stage whose change this signal shows (see ``STAGES``)."""
    decides_status: bool = True
    judged: bool = False
    """A judge's verdict (not measured from the record): a case whose judging failed has no value."""

    @property
    def worst(self) -> float:
        """The value a missing or failed case counts at: 0 where higher is better, else 1."""
        return 0.0 if self.higher_is_better else 1.0


SIGNALS = (
    Signal("recall", flag=False, higher_is_better=True, applies_to="gold", stage="retrieval_coverage"),
    Signal(
        "precision", flag=False, higher_is_better=True, applies_to="gold", stage="retrieval_rank", decides_status=False
    ),
    Signal("mrr", flag=False, higher_is_better=True, applies_to="gold", stage="retrieval_rank"),
    Signal("ndcg", flag=False, higher_is_better=True, applies_to="gold", stage="retrieval_rank"),
    Signal(
        "hit_rate",
        flag=True,
        higher_is_better=True,
        applies_to="gold",
        stage="retrieval_coverage",
        decides_status=False,
    ),
    Signal("full_coverage", flag=True, higher_is_better=True, applies_to="gold", stage="retrieval_coverage"),
    Signal("context_coverage", flag=False, higher_is_better=True, applies_to="gold", stage="context"),
    Signal("context_construction_failure", flag=True, higher_is_better=False, applies_to="gold", stage="context"),
    Signal("grounded", flag=False, higher_is_better=True, applies_to="all", stage="answer", judged=True),
    Signal("answer_completeness", flag=False, higher_is_better=True, applies_to="gold", stage="answer"),
    Signal("abstained", flag=True, higher_is_better=False, applies_to="answerable", stage="answer", judged=True),
    Signal(
        "abstention_correct", flag=True, higher_is_better=True, applies_to="unanswerable", stage="answer", judged=True
    ),
)
"""Every signal of every comparison, in report order. ``precision`` and ``hit_rate`` are reported but
do not decide a status: precision falls whenever ``top_k`` grows, and a hit is implied by recall above
zero."""

SCORE_SIGNALS = (
    Signal(
        "context_sufficiency", flag=False, higher_is_better=True, applies_to="answerable", stage="context", judged=True
    ),
    Signal("helpfulness", flag=False, higher_is_better=True, applies_to="all", stage="answer", judged=True),
    Signal("correctness", flag=False, higher_is_better=True, applies_to="all", stage="answer", judged=True),
    Signal("response", flag=False, higher_is_better=True, applies_to="all", stage="answer", judged=True),
    Signal("trustworthiness", flag=False, higher_is_better=True, applies_to="all", stage="answer", judged=True),
    Signal(
        "query_ease",
        flag=False,
        higher_is_better=True,
        applies_to="all",
        stage="answer",
        decides_status=False,
        judged=True,
    ),
)
"""Signals that only scores carry (an LLM judge's checks, imported evaluators), each a score in [0, 1];
a comparison has them when a side's scores do. ``context_sufficiency`` judges the context, so its stage is
``context``; ``query_ease`` rates the question, not the run: it is reported but does not decide a status."""

ALL_SIGNALS = SIGNALS + SCORE_SIGNALS
SIGNALS_BY_NAME = {signal.name: signal for signal in ALL_SIGNALS}
JUDGE_VERDICTS = ("grounded", "abstained", "abstention_correct")
"""The signals every judge decides."""
SCORED_SIGNALS = (*JUDGE_VERDICTS, *(signal.name for signal in SCORE_SIGNALS))
"""The signals a scores file may hold."""


def applies(signal: Signal, answerability: pl.Expr) -> pl.Expr:
    """Whether ``signal`` applies to a case with this answerability label."""
    if signal.applies_to == "all":
        return pl.lit(True)
    if signal.applies_to == "unanswerable":
        return answerability == "unanswerable"
    return answerability != "unanswerable"


def signals_in(columns: Iterable[str], prefix: str = "") -> tuple[Signal, ...]:
    """The signals of ``SIGNALS`` and those of ``SCORE_SIGNALS`` that ``columns`` hold (``prefix`` + name)."""
    present = set(columns)
    return SIGNALS + tuple(signal for signal in SCORE_SIGNALS if f"{prefix}{signal.name}" in present)


JUDGE_COLUMNS = {"judge_status": pl.String, "judge_error": pl.String}
"""How the judging of each case went, beside its verdicts (null where the offline judge decided)."""
JUDGE_FAILED = "judge_failed"
"""The ``judge_status`` of a case whose judging finally failed."""


def judge_failed(side: str) -> pl.Expr:
    """Whether judging the ``side``'s case failed (false where it was never scored)."""
    return (pl.col(f"{side}_judge_status") == JUDGE_FAILED).fill_null(False)
