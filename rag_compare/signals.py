"""The case-level signals of a comparison: what each measures, its good direction, where it applies.

``case_signals`` computes every signal of one run's records (retrieval and context metrics, then the
judge's verdicts), nulls where a signal does not apply to the case's label, and nulls everything on a
record whose status is not ``ok``. ``answer_completeness`` (see ``completeness``) needs the passages'
text, so it is null without a passages file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import polars as pl

from rag_compare.completeness import answer_completeness
from rag_compare.judge import Judge
from rag_compare.metrics import context_signals, retrieval_signals

__all__ = ["SIGNALS", "STATUS_SIGNALS", "Signal", "applies", "case_signals"]

Applies = Literal["gold", "answerable", "unanswerable", "all"]


@dataclass(frozen=True)
class Signal:
    """One case-level signal: a score in [0, 1] or a flag, and which way is better."""

    name: str
    flag: bool
    higher_is_better: bool
    applies_to: Applies
    decides_status: bool = True

    @property
    def worst(self) -> float:
        """The value a missing or failed case counts at: 0 where higher is better, else 1."""
        return 0.0 if self.higher_is_better else 1.0


SIGNALS = (
    Signal("recall", flag=False, higher_is_better=True, applies_to="gold"),
    Signal("precision", flag=False, higher_is_better=True, applies_to="gold", decides_status=False),
    Signal("mrr", flag=False, higher_is_better=True, applies_to="gold"),
    Signal("ndcg", flag=False, higher_is_better=True, applies_to="gold"),
    Signal("hit_rate", flag=True, higher_is_better=True, applies_to="gold", decides_status=False),
    Signal("full_coverage", flag=True, higher_is_better=True, applies_to="gold"),
    Signal("context_coverage", flag=False, higher_is_better=True, applies_to="gold"),
    Signal("context_construction_failure", flag=True, higher_is_better=False, applies_to="gold"),
    Signal("grounded", flag=False, higher_is_better=True, applies_to="all"),
    Signal("answer_completeness", flag=False, higher_is_better=True, applies_to="gold"),
    Signal("abstained", flag=True, higher_is_better=False, applies_to="answerable"),
    Signal("abstention_correct", flag=True, higher_is_better=True, applies_to="unanswerable"),
)
"""Every signal, in report order. ``precision`` and ``hit_rate`` are reported but do not decide a
status: precision falls whenever ``top_k`` grows, and a hit is implied by recall above zero."""

STATUS_SIGNALS = tuple(signal for signal in SIGNALS if signal.decides_status)


def applies(signal: Signal, answerability: pl.Expr) -> pl.Expr:
    """Whether ``signal`` applies to a case with this answerability label."""
    if signal.applies_to == "all":
        return pl.lit(True)
    if signal.applies_to == "unanswerable":
        return answerability == "unanswerable"
    return answerability != "unanswerable"


def case_signals(
    records: pl.DataFrame, judge: Judge, *, k: int | None = None, passages: pl.DataFrame | None = None
) -> pl.DataFrame:
    """``case_id``, every signal of ``SIGNALS`` and ``missing_from_context`` (the required passages
    that did not reach the context sent) for each record (a new frame, same order).

    Without ``passages``, ``answer_completeness`` is null.
    """
    completeness = (
        pl.repeat(None, records.height, dtype=pl.Float64, eager=True).alias("answer_completeness")
        if passages is None
        else answer_completeness(records, passages)
    )
    columns = pl.concat(
        [
            records.select("case_id"),
            retrieval_signals(records, k),
            context_signals(records, passages),
            judge.judge(records).select("grounded", "abstained", "abstention_correct"),
            completeness.to_frame(),
        ],
        how="horizontal",
    )
    usable = (records.get_column("status") == "ok").fill_null(False)
    answerability = records.get_column("answerability")
    return columns.with_columns(
        *(
            pl.when(pl.lit(usable) & applies(signal, pl.lit(answerability)))
            .then(pl.col(signal.name))
            .alias(signal.name)
            for signal in SIGNALS
        ),
        pl.when(pl.lit(usable)).then(pl.col("missing_from_context")).alias("missing_from_context"),
    )
