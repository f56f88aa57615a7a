"""Verdicts given on the hand-made runs, in a review database, as the review page would give them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rag_compare.io.review_db import ReviewDatabase
from rag_compare.io.runs import OpenedRun, open_run
from rag_compare.io.verdicts import NewVerdict, Verdict
from tests.helpers.data import HANDMADE_RUNS

BASELINE = HANDMADE_RUNS / "baseline.arrow"
CANDIDATE = HANDMADE_RUNS / "candidate.arrow"
STATUSES = ("regressed", "improved", "unchanged", "failed_in_candidate")
VERDICTS: list[dict[str, Any]] = [
    # ana, then bo on the same case and side: bo's is the latest; the baseline side of q1 on its own.
    {"case": "q1@v1", "reviewer": "ana", "side": "candidate", "agree": True, "labels": {"answer_correct": "yes"}},
    {"case": "q1@v1", "reviewer": "bo", "side": "candidate", "agree": True, "labels": {"answer_correct": "no"}},
    {"case": "q1@v1", "reviewer": "ana", "side": "baseline", "agree": True, "labels": {"grounded": "partly"}},
    {
        "case": "q2@v1",
        "reviewer": "bo",
        "side": "candidate",
        "agree": False,
        "status": "unchanged",
        "labels": {"grounded": "yes", "retrieval_ok": "no"},
        "comment": "the new wording says the same",
    },
]


def give(
    database: ReviewDatabase,
    given: dict[str, Any],
    baseline: OpenedRun | None = None,
    candidate: OpenedRun | None = None,
) -> Verdict:
    """Store the verdict ``given`` (``case`` and a body) on the hand-made runs (or ``baseline`` and ``candidate``)
    as shown with status ``regressed``."""
    body = {key: value for key, value in given.items() if key != "case"}
    verdict = NewVerdict.from_body(given["case"], body, statuses=STATUSES)
    return database.add(
        verdict,
        baseline_fingerprint=(baseline or open_run(BASELINE)).fingerprint,
        candidate_fingerprint=(candidate or open_run(CANDIDATE)).fingerprint,
        shown_status="regressed",
        shown_signals={"baseline_recall": 1.0, "candidate_recall": 0.5},
    )


def reviewed(path: Path, verdicts: list[dict[str, Any]] = VERDICTS) -> Path:
    """A review database at ``path`` holding ``verdicts`` on the hand-made runs."""
    with ReviewDatabase.open(path) as database:
        for given in verdicts:
            give(database, given)
    return path
