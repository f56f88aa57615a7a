"""What a pairwise judge's verdicts (a pairs file, see ``io.pairs``) say about two runs, and about the judge.

- **Preference.** Cases per outcome (``OUTCOMES``); the candidate's win rate over the pairs decided for
  a side, wins / (wins + losses), with its exact (Clopper-Pearson) 95% interval and the two-sided exact
  sign test. Ties and inconsistent pairs are counted but never won: the sign test leaves ties out, and
  an inconsistent pair is no verdict.
- **Position bias.** Of the pairs answered in both orders (not identical answers), the share whose two
  orders agree (*position consistency*; 1 for a judge that weighs the answers, not their places); of
  the replies that chose an answer rather than a tie, the share that chose the one shown first
  (*first-position preference*; about 0.5 for an unbiased judge, 1 for one that always picks the first).

``preference_columns`` gives each case its ``preferred`` verdict and ``preference_reason`` for the
comparison; a decided preference changes a case's status only where no other signal moved (see
``case_status``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from rag_compare.compute.stats import binomial_ci, sign_test_p
from rag_compare.core.signals import JUDGE_FAILED
from rag_compare.io.pairs import CHOICES, ORDERS, OUTCOMES, Pairs, chosen_side

__all__ = ["PREFERENCE_COLUMNS", "PositionBias", "Preference", "position_bias", "preference_columns", "preference_of"]

PREFERENCE_COLUMNS = ("preferred", "preference_reason")
_CONFIDENCE = 0.95


@dataclass(frozen=True)
class PositionBias:
    """How much a pairwise judge's choices follow the position of an answer rather than the answer."""

    pairs: int
    """Pairs answered in both orders (identical answers, never sent, are not counted)."""
    consistent: int
    """Of those, the pairs whose two orders chose the same side (or both a tie)."""
    replies: int
    """Replies that chose an answer (``first`` or ``second``), whatever became of the other order."""
    first: int
    """Of those, the replies that chose the answer shown first."""

    @property
    def consistency_rate(self) -> float | None:
        return None if not self.pairs else self.consistent / self.pairs

    @property
    def first_position_rate(self) -> float | None:
        return None if not self.replies else self.first / self.replies

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "consistent": self.consistent,
            "consistency_rate": self.consistency_rate,
            "replies": self.replies,
            "first": self.first,
            "first_position_rate": self.first_position_rate,
        }


@dataclass(frozen=True)
class Preference:
    """The pairwise judge's verdicts on a comparison's cases, summed up (see the module)."""

    evaluator: Mapping[str, Any]
    """``name`` and ``fingerprint`` of the judge, and the pairs file's ``path`` and ``fingerprint``."""
    counts: Mapping[str, int]
    """Cases per outcome: each verdict of ``VERDICTS``, then ``judge_failed`` and ``not_judged``."""
    win_rate: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    """The two-sided exact sign test of wins against losses."""
    bias: PositionBias

    @property
    def wins(self) -> int:
        return self.counts["candidate"]

    @property
    def losses(self) -> int:
        return self.counts["baseline"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "evaluator": dict(self.evaluator),
            "counts": dict(self.counts),
            "wins": self.wins,
            "losses": self.losses,
            "win_rate": self.win_rate,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "p_value": self.p_value,
            "position_bias": self.bias.to_dict(),
        }


def preference_of(pairs: Pairs) -> Preference:
    """The preference aggregate and position bias of ``pairs``."""
    counts = pairs.counts
    wins, losses = counts["candidate"], counts["baseline"]
    interval = binomial_ci(wins, wins + losses, confidence=_CONFIDENCE)
    evaluator = {
        "name": pairs.evaluator["name"],
        "fingerprint": pairs.evaluator["fingerprint"],
        "path": None if pairs.path is None else str(pairs.path),
        "pairs_fingerprint": pairs.fingerprint,
    }
    return Preference(
        evaluator=evaluator,
        counts={outcome: counts[outcome] for outcome in OUTCOMES},
        win_rate=None if interval is None else wins / (wins + losses),
        ci_low=None if interval is None else interval[0],
        ci_high=None if interval is None else interval[1],
        p_value=sign_test_p(wins, losses),
        bias=position_bias(pairs.frame),
    )


def position_bias(frame: pl.DataFrame) -> PositionBias:
    """The position consistency and first-position preference of a pairs frame's replies."""
    both = pl.all_horizontal(pl.col(order).is_not_null() for order in ORDERS) & ~pl.col("identical")
    chose = [pl.col(order).is_in(CHOICES[:2]) for order in ORDERS]
    firsts = [pl.col(order) == "first" for order in ORDERS]
    row = frame.select(
        pairs=both.sum(),
        consistent=(both & pl.col("verdict").is_in(["candidate", "baseline", "tie"])).sum(),
        replies=pl.sum_horizontal(chose).sum(),
        first=pl.sum_horizontal(firsts).sum(),
    ).row(0, named=True)
    return PositionBias(**{name: int(value) for name, value in row.items()})


def preference_columns(pairs: Pairs) -> pl.DataFrame:
    """``case_id``, ``preferred`` (the case's outcome, one of ``OUTCOMES``: its verdict, else
    ``judge_failed`` or ``not_judged``) and ``preference_reason``: the
    judge's reason for a decided verdict; for an inconsistent one, what each order chose and why; where
    judging failed, the error."""
    frame = pairs.frame
    said = [
        pl.format(
            f"{order.removesuffix('_first')} shown first: {{}} ({{}})",
            chosen_side(order).replace({"tie": "a tie"}),
            pl.col(f"{order}_reason").fill_null(""),
        )
        for order in ORDERS
    ]
    reason = (
        pl.when(pl.col("judge_status") == JUDGE_FAILED)
        .then(pl.format("the pairwise judge failed: {}", pl.col("judge_error").fill_null("no error recorded")))
        .when(pl.col("verdict") == "inconsistent")
        .then(pl.concat_str(said, separator="; "))
        .when(pl.col("identical"))
        .then(pl.lit("the two answers are identical"))
        .when(pl.col("verdict").is_not_null())
        .then(pl.col("baseline_first_reason"))
    )
    outcome = pl.coalesce("verdict", "judge_status")
    return frame.select("case_id", outcome.alias("preferred"), reason.alias("preference_reason"))
