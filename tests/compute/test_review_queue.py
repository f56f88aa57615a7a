"""The review queue: the hand-made comparison's cases in review order with their reasons written beside
them; judges that disagree, case by case; the seeded sample of unchanged cases; "next" skipping what was
reviewed, after a case and round to the start; progress by reason; and, over queues drawn at random,
"next" visiting every queued case once, in order."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_compare import QueryError, compare, freeze_run
from rag_compare.compute.case_query import FLAKY, CaseIndex
from rag_compare.compute.review_queue import REASONS, ReviewQueue, default_sample, disagreement
from rag_compare.io.pairs import judge_pairs
from tests.helpers.case_index import index_of
from tests.helpers.data import HANDMADE_RUNS, ROOT
from tests.helpers.pairs import BASELINE, CANDIDATE, CORPUS, ScriptedPairJudge

PASSAGES = ROOT / "corpora" / "handbook_passages.csv"
REPEATS = ROOT / "tests" / "fixtures" / "repeats"
JUDGED = ("recall", "grounded", "abstained", "helpfulness", "preferred")


@pytest.fixture(scope="module")
def handmade() -> CaseIndex:
    return CaseIndex.of(
        compare(*(HANDMADE_RUNS / f"{side}.arrow" for side in ("baseline", "candidate")), passages=PASSAGES)
    )


def queued(queue: ReviewQueue) -> list[tuple[str, str]]:
    return [(case_id, str(reason)) for case_id, reason in queue.frame.iter_rows()]


def test_the_handmade_queue_is_regressed_failed_mixed_improved_then_the_sample(handmade: CaseIndex) -> None:
    queue = ReviewQueue.of(handmade)
    order = queued(queue)
    assert order[:16] == [
        ("hotel-approval@2026-01", "regressed"),
        ("parental-leave-weeks@2026-01", "regressed"),
        ("remote-abroad-days@2026-01", "regressed"),
        ("sabbatical@2026-01", "regressed"),
        ("leave-carryover@2025-01", "failed"),  # failed in the candidate
        ("phone-allowance@2026-01", "failed"),
        ("public-transport-pass@2026-01", "failed"),  # missing in the candidate
        ("sick-leave-certificate@2026-01", "failed"),  # failed in the baseline
        ("equipment-budget@2026-01", "mixed"),
        ("meal-allowance-client-meal@2026-01", "mixed"),
        ("parental-leave-weeks@2025-01", "mixed"),
        ("equipment-budget@2025-01", "improved"),
        ("flight-class@2026-01", "improved"),
        ("hotel-cap@2025-01", "improved"),
        ("hotel-cap@2026-01", "improved"),
        ("mileage-rate@2026-01", "improved"),
    ]
    unchanged = handmade.frame.filter(pl.col("status") == "unchanged").get_column("case_id").to_list()
    assert len(unchanged) == 18
    assert order[16:] == [(case_id, "sample") for case_id in unchanged]  # 18 are fewer than 50: every one
    assert queue.queued == 34


def test_the_sample_is_seeded_drawn_from_the_unchanged_and_as_large_as_asked(handmade: CaseIndex) -> None:
    unchanged = set(handmade.frame.filter(pl.col("status") == "unchanged").get_column("case_id"))
    samples = [tuple(sampled(ReviewQueue.of(handmade, seed=seed, sample=4))) for seed in range(6)]
    assert all(len(sample) == 4 and set(sample) <= unchanged for sample in samples)
    assert all(list(sample) == sorted(sample) for sample in samples)  # in case_id order
    assert samples[0] == tuple(sampled(ReviewQueue.of(handmade, seed=0, sample=4)))
    assert len(set(samples)) > 1
    assert sampled(ReviewQueue.of(handmade, sample=0)) == []
    assert len(sampled(ReviewQueue.of(handmade, sample=1000))) == 18
    with pytest.raises(QueryError, match="`sample` must be 0 or more; got -1"):
        ReviewQueue.of(handmade, sample=-1)


def sampled(queue: ReviewQueue) -> list[str]:
    return queue.frame.filter(pl.col("reason") == "sample").get_column("case_id").to_list()


@pytest.mark.parametrize(
    ("unchanged", "size"), [(0, 0), (7, 7), (50, 50), (120, 50), (5_000, 50), (5_001, 51), (70_000, 700), (10**6, 1000)]
)
def test_the_default_sample_is_at_least_50_or_one_in_a_hundred_and_at_most_1000(unchanged: int, size: int) -> None:
    assert default_sample(unchanged) == size


CASES: list[dict[str, Any]] = [
    {"case_id": "a", "status": "mixed", "grounded": 0.5, "helpfulness": -0.2},  # answer judge up, scores down
    {"case_id": "b", "status": "mixed", "grounded": 0.5, "abstained": 1.0},  # one judge says both: no
    {"case_id": "c", "status": "improved", "recall": 0.5, "preferred": -1.0},  # the pairwise judge against the status
    {"case_id": "d", "status": "regressed", "grounded": -0.5, "preferred": 1.0},  # disagrees, but regressed first
    {"case_id": "e", "status": "unchanged", "grounded": 1e-12, "helpfulness": -1e-12},  # within the tolerance
    {"case_id": "f", "status": "improved", "grounded": 0.5, "helpfulness": 0.1, "preferred": 1.0},  # all agree
    {"case_id": "g", "status": "mixed", "recall": -0.5, "grounded": 0.5},  # retrieval is no judge
    {"case_id": "h", "status": "unchanged", "abstained": -1.0, "helpfulness": -0.5},  # abstained down is better
    {"case_id": "i", "status": "unchanged", "preferred": 0.0, "grounded": -0.5},  # a tie says nothing
    {"case_id": "j", "status": "unchanged", FLAKY: True},
    {"case_id": "k", "status": "regressed", FLAKY: True},
    {"case_id": "l", "status": "unstable", FLAKY: True},
    {"case_id": "m", "status": "missing_in_baseline"},
    {"case_id": "n", "status": "missing_in_both"},
    {"case_id": "o", "status": "judge_failed_in_both"},
    {"case_id": "p", "status": "missing_in_baseline", FLAKY: True},  # the candidate's repeats disagree: not queued
    {"case_id": "q", "status": "regressed", "recall": -0.5, "preferred": 1.0},  # the pairwise judge: better
    {"case_id": "r", "status": "mixed", "grounded": 0.5, "abstained": 1.0, "helpfulness": 0.2},  # both; better
]


def test_judges_disagree_when_one_says_better_and_another_worse() -> None:
    index = index_of(CASES, signals=JUDGED)
    disagreeing = index.frame.filter(disagreement(index)).get_column("case_id").to_list()
    assert disagreeing == ["a", "c", "d", "h", "q", "r"]
    assert queued(ReviewQueue.of(index)) == [
        ("d", "regressed"),
        ("k", "regressed"),
        ("q", "regressed"),
        ("o", "failed"),
        ("a", "disagreement"),
        ("c", "disagreement"),
        ("h", "disagreement"),
        ("r", "disagreement"),
        ("b", "mixed"),
        ("g", "mixed"),
        ("l", "unstable"),
        ("j", "flaky"),
        ("f", "improved"),
        ("e", "sample"),
        ("i", "sample"),
    ]


def test_a_pairwise_verdict_against_the_offline_judge_is_a_disagreement() -> None:
    unsupported = "Leave is 9 weeks, paid twice."
    baseline = freeze_run(
        BASELINE.with_columns(
            answer=pl.when(pl.col("case_id") == "b_worse@v1").then(pl.lit(unsupported)).otherwise("answer")
        ),
        CORPUS,
        {"name": "b"},
    )
    candidate = freeze_run(
        CANDIDATE.with_columns(
            answer=pl.when(pl.col("case_id") == "a_better@v1").then(pl.lit(unsupported)).otherwise("answer")
        ),
        CORPUS,
        {"name": "c"},
    )
    index = CaseIndex.of(compare(baseline, candidate, pairs=judge_pairs(baseline, candidate, ScriptedPairJudge())))
    statuses = dict(index.frame.select("case_id", pl.col("status").cast(pl.String)).iter_rows())
    assert (statuses["a_better@v1"], statuses["b_worse@v1"]) == ("regressed", "improved")  # by grounded
    reasons = dict(queued(ReviewQueue.of(index)))
    assert (reasons["a_better@v1"], reasons["b_worse@v1"]) == ("regressed", "disagreement")
    assert index.frame.filter(disagreement(index)).get_column("case_id").to_list() == ["a_better@v1", "b_worse@v1"]


def test_the_flaky_cases_are_those_of_the_comparison() -> None:
    runs = [
        freeze_run(REPEATS / f"{side}.jsonl", REPEATS / "corpus.csv", {"name": side})
        for side in ("baseline", "candidate")
    ]
    comparison = compare(*runs)
    index = CaseIndex.of(comparison)
    flaky = index.frame.filter(FLAKY).get_column("case_id").to_list()
    assert flaky == sorted(set(comparison.flaky.get_column("case_id"))) == ["c2@v1", "c5@v1", "c6@v1", "c7@v1"]
    assert queued(ReviewQueue.of(index))[:3] == [("c1@v1", "regressed"), ("c8@v1", "failed"), ("c2@v1", "unstable")]


def test_next_skips_what_was_reviewed_goes_on_after_a_case_and_round_to_the_start(handmade: CaseIndex) -> None:
    queue = ReviewQueue.of(handmade, sample=2)
    first = queue.next(set())
    assert first is not None
    assert first.to_dict() == {"case_id": "hotel-approval@2026-01", "reason": "regressed", "position": 1, "queued": 18}
    reviewed = {"hotel-approval@2026-01", "parental-leave-weeks@2026-01"}
    assert item(queue, reviewed) == ("remote-abroad-days@2026-01", "regressed", 3)
    assert item(queue, reviewed, after="remote-abroad-days@2026-01") == ("sabbatical@2026-01", "regressed", 4)
    assert item(queue, reviewed, after="phone-allowance@2026-01") == ("public-transport-pass@2026-01", "failed", 7)
    last = queue.frame.item(-1, "case_id")
    assert item(queue, reviewed, after=last) == ("remote-abroad-days@2026-01", "regressed", 3)  # round to the start
    assert item(queue, reviewed, after="not a case") == ("remote-abroad-days@2026-01", "regressed", 3)
    assert item(queue, reviewed, after="bike-lease@2026-01") == ("remote-abroad-days@2026-01", "regressed", 3)
    everything = set(queue.frame.get_column("case_id"))
    assert queue.next(everything) is None
    assert queue.next(everything, after=last) is None
    assert item(queue, everything - {last}, after=last) == (last, "sample", 18)  # the only one left


def item(queue: ReviewQueue, reviewed: set[str], after: str | None = None) -> tuple[str, str, int] | None:
    found = queue.next(reviewed, after)
    return None if found is None else (found.case_id, found.reason, found.position)


def test_progress_counts_the_reviewed_queued_cases_by_reason(handmade: CaseIndex) -> None:
    queue = ReviewQueue.of(handmade, sample=2)
    assert queue.progress(set()).to_dict() == {
        "reviewed": 0,
        "queued": 18,
        "by_reason": {
            "regressed": [0, 4],
            "failed": [0, 4],
            "disagreement": [0, 0],
            "mixed": [0, 3],
            "unstable": [0, 0],
            "flaky": [0, 0],
            "improved": [0, 5],
            "sample": [0, 2],
        },
        "reviewed_outside": 0,
    }
    sample = set(sampled(queue))
    outside = next(
        case_id for case_id in handmade.frame.get_column("case_id") if case_id not in set(queue.frame["case_id"])
    )
    reviewed = {
        "sabbatical@2026-01",
        "leave-carryover@2025-01",
        "mileage-rate@2026-01",
        *sample,
        outside,
        "other run's case",
    }
    progress = queue.progress(reviewed)
    assert (progress.reviewed, progress.queued, progress.reviewed_outside) == (5, 18, 1)
    assert {reason: counts for reason, counts in progress.by_reason.items() if counts[0]} == {
        "regressed": (1, 4),
        "failed": (1, 4),
        "improved": (1, 5),
        "sample": (2, 2),
    }
    assert list(progress.by_reason) == list(REASONS)


STATUSES = ("regressed", "failed_in_candidate", "mixed", "unstable", "improved", "unchanged", "missing_in_baseline")


@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "case_id": st.text("xyz", min_size=1, max_size=4),
                "status": st.sampled_from(STATUSES),
                FLAKY: st.booleans(),
            }
        ),
        max_size=30,
        unique_by=lambda case: case["case_id"],
    ),
    st.integers(0, 3),
    st.sets(st.text("xyz", min_size=1, max_size=4)),
)
def test_next_visits_every_queued_case_once_in_order(cases: list[dict[str, Any]], seed: int, done: set[str]) -> None:
    queue = ReviewQueue.of(index_of(cases), seed=seed, sample=3)
    order = queue.frame.get_column("case_id").to_list()
    assert [str(reason) for reason in queue.frame.get_column("reason")] == sorted(
        (str(reason) for reason in queue.frame.get_column("reason")), key=REASONS.index
    )
    assert set(order) <= {case["case_id"] for case in cases if case["status"] != "missing_in_baseline"}
    reviewed: set[str] = set()
    visited = []
    while (found := queue.next(reviewed)) is not None:
        visited.append(found.case_id)
        reviewed.add(found.case_id)
    assert visited == order
    skipped, after = [], None
    pending = [case_id for case_id in order if case_id not in done]
    for _ in pending:
        found = queue.next(done, after)
        assert found is not None
        skipped.append(found.case_id)
        after = found.case_id
    assert skipped == pending
    assert queue.progress(done).reviewed == len(order) - len(pending)
