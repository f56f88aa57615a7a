"""``compare_many`` on the hand-worked fixture of three candidates (``tests/fixtures/three_candidates``, its
statuses and p-values worked out in its ``EXPECTED.md``), checked against statsmodels and SciPy, and what it
refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from scipy import stats
from statsmodels.stats.multitest import multipletests

from rag_compare import compare, freeze_run
from rag_compare.compute.compare_many import compare_many
from rag_compare.compute.multi_comparison import MultiComparison
from rag_compare.core.errors import CompareError
from rag_compare.io.runs import Run
from tests.helpers.data import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "three_candidates"
NAMES = ("a", "b", "c")
PASSAGES = FIXTURE / "passages.csv"
CASES = [f"c{i:02d}@v1" for i in range(1, 13)]


def frozen(records: str, **config: Any) -> Run:
    """The fixture's ``records`` frozen, named after them unless ``config`` names them."""
    return freeze_run(FIXTURE / f"{records}.jsonl", FIXTURE / "corpus.csv", {"name": records, "top_k": 2, **config})


@pytest.fixture(scope="module")
def runs() -> dict[str, Run]:
    return {name: frozen(name) for name in ("baseline", *NAMES)}


@pytest.fixture(scope="module")
def multi(runs: dict[str, Run]) -> MultiComparison:
    return compare_many(runs["baseline"], [runs[name] for name in NAMES], passages=PASSAGES)


def test_each_case_has_the_hand_worked_status_in_each_candidate(multi: MultiComparison) -> None:
    expected = pl.DataFrame(
        {
            "case_id": CASES,
            "a": ["improved"] * 12,
            "b": ["unchanged"] * 6 + ["improved"] * 3 + ["unchanged"] * 3,
            "c": ["regressed"] * 3 + ["unchanged"] * 9,
        }
    )
    assert_frame_equal(multi.status_matrix, expected)
    assert multi.changed_cases().get_column("case_id").to_list() == CASES  # every one improved in a


P_VALUES = {  # EXPECTED.md: exact sign-flip (n = 12 <= log2 10,000) and exact McNemar p-values, paired scope
    "a": {"recall": 2 / 64, "precision": 2 / 64, "mrr": 2 / 4096, "ndcg": 2 / 4096, "hit_rate": 2 / 64},
    "b": {"recall": 2 / 8, "precision": 2 / 8, "mrr": 2 / 8, "ndcg": 2 / 8, "hit_rate": 2 / 8},
    "c": {"recall": 2 / 8, "precision": 2 / 8, "mrr": 2 / 8, "ndcg": 2 / 8, "hit_rate": 2 / 8},
}


def paired(multi: MultiComparison) -> pl.DataFrame:
    return multi.aggregates.filter(pl.col("scope") == "paired")


@pytest.mark.parametrize("name", NAMES)
def test_the_raw_p_values_are_the_hand_worked_ones(multi: MultiComparison, name: str) -> None:
    rows = {row["signal"]: row for row in paired(multi).filter(pl.col("run") == name).iter_rows(named=True)}
    for signal, p in P_VALUES[name].items():
        assert rows[signal]["p_value"] == pytest.approx(p, abs=1e-12), signal
    for signal in ("context_coverage", "grounded", "abstained", "context_construction_failure"):
        assert rows[signal]["p_value"] == 1.0  # nothing moved
    assert rows["answer_completeness"]["n"] == 12
    assert rows["abstention_correct"]["p_value"] is None  # no unanswerable case


def test_one_holm_family_covers_every_candidate_and_signal_of_a_scope(multi: MultiComparison) -> None:
    rows = paired(multi)
    present = rows.filter(pl.col("p_value").is_not_null())
    assert present.height == 33  # 3 candidates x 11 signals with a p-value (EXPECTED.md)
    reference = multipletests(present.get_column("p_value").to_numpy(), method="holm")[1]
    np.testing.assert_allclose(present.get_column("p_adjusted").to_numpy(), reference, rtol=0, atol=1e-12)
    a = {row["signal"]: row["p_adjusted"] for row in rows.filter(pl.col("run") == "a").iter_rows(named=True)}
    assert a["mrr"] == pytest.approx(33 * 2 / 4096)  # the smallest of 33
    assert a["recall"] == pytest.approx(31 * 2 / 64)  # the third smallest: 31 x 1/32 = 0.96875


def test_each_candidates_comparison_is_compares_but_for_the_familys_p(
    multi: MultiComparison, runs: dict[str, Run]
) -> None:
    alone = compare(runs["baseline"], runs["b"], passages=PASSAGES)
    together = multi.comparison("b")
    assert_frame_equal(together.cases, alone.cases)
    assert_frame_equal(together.aggregates.drop("p_adjusted"), alone.aggregates.drop("p_adjusted"))
    family = multi.aggregates.filter(pl.col("run") == "b").get_column("p_adjusted")
    assert together.aggregates.get_column("p_adjusted").equals(family)
    assert (family.fill_null(0) >= alone.aggregates.get_column("p_adjusted").fill_null(0)).all()


def test_the_leaderboard_ranks_by_the_mean_best_first(multi: MultiComparison) -> None:
    board = multi.leaderboard("recall")
    assert board.get_column("run").to_list() == ["a", "b", "c"]
    assert board.get_column("candidate").to_list() == pytest.approx([1.0, 0.75, 0.25])
    assert board.get_column("delta").to_list() == pytest.approx([0.5, 0.25, -0.25])
    lower = multi.leaderboard("precision", "all_cases")
    assert lower.get_column("rank").to_list() == [1, 2, 3]


def test_no_clear_winner_when_the_contender_ties_on_a_ranked_signal(multi: MultiComparison) -> None:
    ranking = multi.ranking  # recall, grounded: every candidate's answers are the baseline's
    assert ranking.contender == "a"
    assert ranking.best is None
    assert ranking.reason.startswith("no clear winner: a leads on recall but is not better")
    tests = {(row["against"], row["signal"]): row for row in ranking.tests.iter_rows(named=True)}
    assert tests["c", "recall"]["p_value"] == pytest.approx(2 / 512)  # a finds 9 more cases than c
    assert tests["b", "recall"]["p_value"] == pytest.approx(2 / 8)
    assert tests["b", "grounded"]["p_value"] == 1.0
    assert not tests["b", "recall"]["better"]


def test_the_best_candidate_is_named_when_every_test_finds_it_better(runs: dict[str, Run]) -> None:
    many = compare_many(runs["baseline"], [runs[name] for name in NAMES], rank_by=["mrr"])
    assert many.ranking.best == "a"
    p = many.ranking.tests.get_column("p_value").to_list()
    assert p == pytest.approx([2 / 4096, 2 / 4096])  # every one of the 12 cases ranks a's gold higher
    assert many.ranking.tests.get_column("p_adjusted").to_list() == pytest.approx([4 / 4096, 4 / 4096])
    assert many.ranking.tests.get_column("better").all()


def test_the_candidates_tests_agree_with_scipy(runs: dict[str, Run]) -> None:
    many = compare_many(runs["baseline"], [runs[name] for name in NAMES], rank_by=["ndcg"])
    values = {
        name: many.comparison(name).cases.sort("case_id").get_column("candidate_ndcg").to_numpy() for name in NAMES
    }
    for row in many.ranking.tests.iter_rows(named=True):
        deltas = values["a"] - values[row["against"]]
        reference = stats.permutation_test(
            (deltas,), np.mean, permutation_type="samples", n_resamples=np.inf, alternative="two-sided"
        )
        assert row["p_value"] == pytest.approx(reference.pvalue, rel=1e-9)
        assert row["delta"] == pytest.approx(deltas.mean())


def test_a_run_compared_with_itself_stays_allowed(runs: dict[str, Run]) -> None:
    many = compare_many(runs["baseline"], [runs["baseline"], runs["a"]])
    assert set(many.status_matrix.get_column("baseline").to_list()) == {"unchanged"}


def test_names_shared_by_two_runs_get_their_fingerprints(runs: dict[str, Run]) -> None:
    other = frozen("b", name="a")
    many = compare_many(runs["baseline"], [runs["a"], other])
    assert many.names == (f"a ({runs['a'].fingerprint[:12]})", f"a ({other.fingerprint[:12]})")


def test_a_candidate_given_twice_is_refused(runs: dict[str, Run]) -> None:
    with pytest.raises(CompareError, match="given twice"):
        compare_many(runs["baseline"], [runs["a"], runs["b"], runs["a"]])


def test_a_candidate_that_shares_no_case_is_refused(runs: dict[str, Run], tmp_path: Path) -> None:
    records = pl.read_ndjson(FIXTURE / "a.jsonl").with_columns(pl.col("case_id").str.replace("@v1", "@v2"))
    corpus = pl.read_csv(FIXTURE / "corpus.csv").with_columns(pl.col("case_id").str.replace("@v1", "@v2"))
    records.write_ndjson(tmp_path / "other.jsonl")
    corpus.write_csv(tmp_path / "corpus.csv")
    other = freeze_run(tmp_path / "other.jsonl", tmp_path / "corpus.csv", {"name": "other", "top_k": 2})
    with pytest.raises(CompareError, match="shares no case with the baseline"):
        compare_many(runs["baseline"], [runs["a"], other])
    assert compare_many(runs["baseline"], [other]).counts["other"]["missing_in_candidate"] == 12  # one: allowed


def test_candidates_with_and_without_repeats_are_refused(runs: dict[str, Run], tmp_path: Path) -> None:
    records = pl.read_ndjson(FIXTURE / "b.jsonl")
    twice = pl.concat([records.with_columns(pl.lit(number).alias("repeat")) for number in (0, 1)])
    twice.write_ndjson(tmp_path / "twice.jsonl")
    repeated = freeze_run(tmp_path / "twice.jsonl", FIXTURE / "corpus.csv", {"name": "twice", "top_k": 2})
    with pytest.raises(CompareError, match="some candidates have repeats"):
        compare_many(runs["baseline"], [runs["a"], repeated])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"candidates": []}, "one run or more"),
        ({"candidates": "a.arrow"}, "one run or more"),
        ({"candidate_scores": [None]}, "1 scores files for 2 candidates"),
        ({"rank_by": ["recal"]}, "no signal"),
        ({"rank_by": ["pairs.recall"]}, "no signal"),
        ({"rank_by": "recall"}, "as a list"),
        ({"rank_by": ["recall", "recall"]}, "twice"),
        ({"alpha": 1.0}, "between 0 and 1"),
    ],
)
def test_bad_requests_are_refused_before_any_run_is_read(options: dict[str, Any], message: str) -> None:
    request: dict[str, Any] = {"candidates": ["missing-a.arrow", "missing-b.arrow"]} | options
    with pytest.raises(CompareError, match=message):
        compare_many("missing-baseline.arrow", **request)


@pytest.mark.parametrize("engine", ["streaming"])
def test_every_engine_gives_the_same_multi_comparison(
    runs: dict[str, Run], multi: MultiComparison, engine: str
) -> None:
    other = compare_many(runs["baseline"], [runs[name] for name in NAMES], passages=PASSAGES, engine=engine, buckets=3)
    assert_frame_equal(other.status_matrix, multi.status_matrix)
    assert_frame_equal(other.aggregates, multi.aggregates, check_exact=False, rel_tol=0, abs_tol=1e-12)
    assert other.ranking.tests.equals(multi.ranking.tests)


def test_a_ranked_signal_keeps_its_scope(runs: dict[str, Run]) -> None:
    many = compare_many(runs["baseline"], [runs[name] for name in NAMES], rank_by=["all_cases.mrr", "recall"])
    assert many.ranking.tests.select("against", "scope", "signal").rows() == [
        ("b", "all_cases", "mrr"),
        ("b", "paired", "recall"),
        ("c", "all_cases", "mrr"),
        ("c", "paired", "recall"),
    ]
    assert many.ranking.reason.startswith("no clear winner: a leads on all_cases.mrr")
