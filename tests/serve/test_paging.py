"""The review server over 1M synthetic cases: pages, filters, search and sort run on the server, over HTTP.
Built once for the module (two runs frozen and compared: about 20 s); no timing is asserted (see benchmarks/)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import polars as pl
import pytest

from rag_compare import Comparison, compare, freeze_run
from tests.helpers.review import ReviewClient, case_path, reviewing

CASES = 1_000_000


def million_case_comparison(cases: int = CASES) -> Comparison:
    """Two runs of ``cases`` answerable cases ``c{i}@v1`` of one gold passage ``p1``: each side retrieves it
    with a chance of 0.7 and answers ``Answer {i}``; categories cycle through three."""
    rng = np.random.default_rng(0)
    numbers = pl.Series(np.arange(cases)).cast(pl.String)
    ids = "c" + numbers + "@v1"
    corpus = pl.DataFrame(
        {
            "case_id": ids,
            "question": "What does the handbook say about topic " + numbers + "?",
            "answerability": "answerable",
            "source_version": "v1",
            "required_passage_ids": pl.Series(np.full((cases, 1), "p1")).cast(pl.List(pl.String)),
            "category": pl.Series(np.array(["rule", "distractor", "rule_exception"])[np.arange(cases) % 3]),
        }
    )
    runs = []
    for side in ("baseline", "candidate"):
        retrieved = pl.Series(np.where(rng.random(cases) < 0.7, "p1", "p2").reshape(cases, 1))
        records = pl.DataFrame(
            {"case_id": ids, "retrieved_passage_ids": retrieved.cast(pl.List(pl.String)), "answer": "Answer " + numbers}
        )
        runs.append(freeze_run(records, corpus, {"name": side, "top_k": 1}))
    return compare(*runs)


@pytest.fixture(scope="module")
def million() -> Comparison:
    return million_case_comparison()


@pytest.fixture(scope="module")
def client(million: Comparison, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReviewClient]:
    with reviewing(million, tmp_path_factory.mktemp("reviews") / "reviews.sqlite") as client:
        yield client


def test_the_first_page_counts_every_case(client: ReviewClient, million: Comparison) -> None:
    listed = client.get_json("/api/cases")
    assert listed["total"] == CASES
    assert len(listed["cases"]) == 50
    assert sum(listed["counts"].values()) == CASES
    assert listed["counts"]["regressed"] == million.counts["regressed"] > 100_000


def test_the_last_pages_hold_the_last_cases(client: ReviewClient, million: Comparison) -> None:
    last = client.get_json(f"/api/cases?sort=case_id&page_size=500&page={CASES // 500}")
    assert [case["case_id"] for case in last["cases"]] == million.cases["case_id"].sort().tail(500).to_list()
    assert client.get_json(f"/api/cases?page_size=500&page={CASES // 500 + 1}")["cases"] == []


def test_a_filter_a_search_and_a_sort_run_over_every_case(client: ReviewClient, million: Comparison) -> None:
    regressed = client.get_json("/api/cases?status=regressed&category=distractor&page_size=500")
    expected = million.cases.filter(pl.col("status") == "regressed", pl.col("category") == "distractor").height
    assert regressed["total"] == expected
    assert {(case["status"], case["category"]) for case in regressed["cases"]} == {("regressed", "distractor")}
    found = client.get_json("/api/cases?q=TOPIC%20987654%3F")
    assert [case["case_id"] for case in found["cases"]] == ["c987654@v1"]
    worst = client.get_json("/api/cases?sort=delta:recall:asc&page_size=10")["cases"]
    assert [case["deltas"]["recall"] for case in worst] == [-1.0] * 10


def test_a_case_of_a_million_is_shown_and_reviewed(client: ReviewClient) -> None:
    case = client.get_json(case_path("c500000@v1"))
    assert case["sides"]["candidate"]["answer"] == "Answer 500000"
    assert client.verdict("c500000@v1").status == 201
    assert client.get_json("/api/progress")["queued"] > 0
