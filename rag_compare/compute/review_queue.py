"""The order in which people review a comparison's cases: "next case to review", and how far they are.

Each queued case has one reason, the first of ``REASONS`` that holds, and the queue lists them reason by
reason, each in ``case_id`` order:

1. ``regressed``: its status is ``regressed``;
2. ``failed``: a side failed or its judging did (``failed_in_*``, ``judge_failed_in_*``), or the candidate
   has no record of it (``missing_in_candidate``);
3. ``disagreement``: two judges of the case point opposite ways (see ``disagreement``);
4. ``mixed``: its status is ``mixed`` (some signals better, some worse);
5. ``unstable``: its status is ``unstable``;
6. ``flaky``: a side's own repeats of it disagree (``Comparison.flaky``);
7. ``improved``: its status is ``improved``;
8. ``sample``: a seeded random sample of the ``unchanged`` cases no other reason holds, so people also check
   what the comparison calls fine: ``sample`` cases, by default ``min(n, max(50, n / 100 rounded up),
   1000)`` of the ``n`` such cases, drawn with NumPy's default generator seeded with ``seed`` (the same
   cases for the same comparison, seed and NumPy).

Cases missing from the baseline or from both runs are not queued (``UNQUEUED``): there is nothing to
compare. The queue is fixed when made; what has been reviewed (``reviewed``, case ids) only decides what
comes next.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from rag_compare.compute.case_query import FLAKY, CaseIndex
from rag_compare.core.errors import QueryError
from rag_compare.core.signals import JUDGE_VERDICTS, SCORE_SIGNALS, SIGNALS_BY_NAME

__all__ = ["FAILED", "REASONS", "UNQUEUED", "Progress", "QueueItem", "ReviewQueue", "default_sample", "disagreement"]

REASONS = ("regressed", "failed", "disagreement", "mixed", "unstable", "flaky", "improved", "sample")
FAILED = (
    "failed_in_baseline",
    "failed_in_candidate",
    "failed_in_both",
    "judge_failed_in_baseline",
    "judge_failed_in_candidate",
    "judge_failed_in_both",
    "missing_in_candidate",
)
"""The statuses queued as ``failed``."""
UNQUEUED = ("missing_in_baseline", "missing_in_both")
"""The statuses of the cases never queued, whatever else holds: there is nothing to compare."""
SAMPLE_MIN = 50
SAMPLE_SHARE = 0.01
SAMPLE_MAX = 1_000
_JUDGES = {
    "answer": JUDGE_VERDICTS,
    "scores": tuple(signal.name for signal in SCORE_SIGNALS if signal.decides_status),
    "pairwise": ("preferred",),
}
"""The judges of a case whose verdicts ``disagreement`` weighs against each other, by the signals they give."""


def default_sample(unchanged: int) -> int:
    """How many of ``unchanged`` cases the queue samples by default (see the module)."""
    return min(unchanged, max(SAMPLE_MIN, math.ceil(unchanged * SAMPLE_SHARE)), SAMPLE_MAX)


def disagreement(index: CaseIndex) -> pl.Expr:
    """Whether two judges of a case disagree: one says the candidate is better where another says it is
    worse. The judges are the answer judge (``grounded``, ``abstained``, ``abstention_correct``: the offline
    judge's, or a scores file's), the scores (the score signals that decide a status), the pairwise judge
    (``preferred``: the candidate or the baseline preferred) and the case's status (``improved`` better,
    ``regressed`` worse). A judge says *better* when one of its signals moved its good way beyond the
    tolerance, *worse* when one moved the other way (``CaseIndex.moved``). A judge that says both disagrees
    with any other that says either; one that says neither (a tie, no verdict) disagrees with none."""
    better, worse = [], []
    for signals in _JUDGES.values():
        held = [name for name in signals if name in index.signals]
        better.append(pl.any_horizontal(_went(index, name, better=True) for name in held) if held else pl.lit(False))
        worse.append(pl.any_horizontal(_went(index, name, better=False) for name in held) if held else pl.lit(False))
    better.append(pl.col("status").cast(pl.String) == "improved")
    worse.append(pl.col("status").cast(pl.String) == "regressed")
    pairs = [better[one] & worse[other] for one in range(len(better)) for other in range(len(worse)) if one != other]
    return pl.any_horizontal(pairs)


def _went(index: CaseIndex, signal: str, *, better: bool) -> pl.Expr:
    """Whether ``signal`` moved its good way (``better``) or its bad way, beyond the tolerance."""
    higher_is_better = signal == "preferred" or SIGNALS_BY_NAME[signal].higher_is_better
    return index.moved(signal, "up" if higher_is_better == better else "down")


@dataclass(frozen=True)
class QueueItem:
    """The next case to review: its ``case_id``, why it is queued, its ``position`` in the queue (from 1)
    and how many cases are ``queued``."""

    case_id: str
    reason: str
    position: int
    queued: int

    def to_dict(self) -> dict[str, Any]:
        return {"case_id": self.case_id, "reason": self.reason, "position": self.position, "queued": self.queued}


@dataclass(frozen=True)
class Progress:
    """How far the review is: queued cases ``reviewed`` of ``queued``; per reason of ``REASONS``, its
    reviewed and queued cases; and ``reviewed_outside``, the comparison's cases reviewed that are not queued."""

    reviewed: int
    queued: int
    by_reason: Mapping[str, tuple[int, int]]
    reviewed_outside: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "reviewed": self.reviewed,
            "queued": self.queued,
            "by_reason": {reason: list(counts) for reason, counts in self.by_reason.items()},
            "reviewed_outside": self.reviewed_outside,
        }


class ReviewQueue:
    """The queued cases of a comparison, in review order (see the module): ``frame`` holds ``case_id`` and
    ``reason`` (an ``Enum`` of ``REASONS``), one row a case."""

    def __init__(self, frame: pl.DataFrame, index: CaseIndex) -> None:
        self.frame = frame
        self.index = index

    @classmethod
    def of(cls, index: CaseIndex, *, seed: int = 0, sample: int | None = None) -> ReviewQueue:
        """The queue of ``index``'s cases; ``sample``: how many unchanged cases to draw (``None``: the
        module's default; at most as many as there are)."""
        if sample is not None and sample < 0:
            raise QueryError(f"`sample` must be 0 or more; got {sample!r}.")
        status = pl.col("status").cast(pl.String)
        holds = {
            "regressed": status == "regressed",
            "failed": status.is_in(FAILED),
            "disagreement": disagreement(index),
            "mixed": status == "mixed",
            "unstable": status == "unstable",
            "flaky": pl.col(FLAKY) & ~status.is_in(UNQUEUED),
            "improved": status == "improved",
            "sample": status == "unchanged",
        }
        reason = pl.coalesce(pl.when(holds[name]).then(pl.lit(name)) for name in REASONS)
        cases = index.frame.select("case_id", reason.cast(pl.Enum(REASONS)).alias("reason"))
        sampled = cases.filter(pl.col("reason") == "sample")
        size = default_sample(sampled.height) if sample is None else min(sample, sampled.height)
        drawn = np.sort(np.random.default_rng(seed).choice(sampled.height, size=size, replace=False))
        queued = pl.concat([cases.filter(pl.col("reason") != "sample").drop_nulls("reason"), sampled[drawn]])
        return cls(queued.sort("reason", maintain_order=True), index)

    @property
    def queued(self) -> int:
        return self.frame.height

    def next(self, reviewed: Collection[str], after: str | None = None) -> QueueItem | None:
        """The first queued case not in ``reviewed`` after ``after`` (a queued case's id), else the first
        from the start of the queue (``after`` itself when it is the only one left); ``None`` when every
        queued case is reviewed. An ``after`` that is not queued starts from the start."""
        ids = self.frame.get_column("case_id")
        pending = (~ids.is_in(pl.Series(list(reviewed), dtype=pl.String).implode())).arg_true()
        if pending.is_empty():
            return None
        start = (ids == after).arg_true() if after is not None else pending.clear()
        later = pending.filter(pending > start[0]) if start.len() else pending
        position = int((later if later.len() else pending)[0])
        reason = str(self.frame.item(position, "reason"))
        return QueueItem(str(ids[position]), reason, position + 1, self.queued)

    def progress(self, reviewed: Collection[str]) -> Progress:
        """How many queued cases are in ``reviewed``, in all and per reason (see ``Progress``)."""
        done = pl.Series(list(reviewed), dtype=pl.String).unique()
        counts = self.frame.group_by("reason").agg(
            pl.col("case_id").is_in(done.implode()).sum().alias("reviewed"), pl.len().alias("queued")
        )
        found = {row["reason"]: (int(row["reviewed"]), int(row["queued"])) for row in counts.iter_rows(named=True)}
        by_reason = {reason: found.get(reason, (0, 0)) for reason in REASONS}
        reviewed_queued = sum(count for count, _ in by_reason.values())
        outside = self.index.positions(done.to_list()).len() - reviewed_queued
        return Progress(reviewed_queued, self.queued, by_reason, outside)
