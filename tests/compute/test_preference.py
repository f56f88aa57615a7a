"""The pairwise preference in a comparison: counts, win rate and sign test against SciPy, position bias, statuses."""

from __future__ import annotations

import json

import polars as pl
import pytest
from scipy import stats as scipy_stats

from rag_compare import compare, freeze_run
from rag_compare.compute.preference import position_bias, preference_of
from rag_compare.core.errors import PairsError
from rag_compare.io.pairs import judge_pairs
from rag_compare.io.runs import Run
from tests.helpers.pairs import BASELINE, CANDIDATE, CORPUS, EXPECTED_COUNTS, ScriptedPairJudge


@pytest.fixture
def runs() -> tuple[Run, Run]:
    return freeze_run(BASELINE, CORPUS, {"name": "base"}), freeze_run(CANDIDATE, CORPUS, {"name": "cand"})


def test_the_fixture_preference_matches_the_hand_computation(runs: tuple[Run, Run]) -> None:
    preference = preference_of(judge_pairs(*runs, ScriptedPairJudge()))
    assert dict(preference.counts) == EXPECTED_COUNTS
    assert (preference.wins, preference.losses) == (1, 1)
    assert preference.win_rate == 0.5
    assert preference.p_value == 1.0
    exact = scipy_stats.binomtest(1, 2).proportion_ci(0.95, method="exact")
    assert (preference.ci_low, preference.ci_high) == (pytest.approx(exact.low), pytest.approx(exact.high))
    bias = preference.bias
    assert (bias.pairs, bias.consistent, bias.replies, bias.first) == (5, 3, 8, 5)
    assert bias.consistency_rate == 0.6
    assert bias.first_position_rate == 0.625


def test_a_judge_that_always_picks_the_first_answer_shows_as_biased(runs: tuple[Run, Run]) -> None:
    asked = ["a_better@v1", "b_worse@v1", "c_tie@v1", "d_first@v1", "h_judgefail@v1", "i_halftie@v1"]
    pairs = judge_pairs(*runs, ScriptedPairJudge(dict.fromkeys(asked, ("first", "first"))))
    preference = preference_of(pairs)
    assert preference.win_rate is None
    assert preference.p_value is None
    assert preference.ci_low is None
    assert preference.bias.consistency_rate == 0.0
    assert preference.bias.first_position_rate == 1.0


def _many_pairs(wins: int, losses: int, ties: int) -> tuple[Run, Run, dict[str, tuple[str | None, str | None]]]:
    """Runs of ``wins + losses + ties`` answered cases, and a script deciding each as named."""
    ids = [f"case{index:03d}@v1" for index in range(wins + losses + ties)]
    corpus = pl.DataFrame(
        {
            "case_id": ids,
            "question": [f"Question {index}?" for index in range(len(ids))],
            "answerability": ["answerable"] * len(ids),
            "source_version": ["v1"] * len(ids),
            "required_passage_ids": [["p"]] * len(ids),
            "acceptance_note": [None] * len(ids),
        }
    )
    records = pl.DataFrame(
        {
            "case_id": ids,
            "status": ["ok"] * len(ids),
            "error": [None] * len(ids),
            "context": ["[p] Leave is 3 days."] * len(ids),
        }
    )
    baseline = freeze_run(records.with_columns(answer=pl.lit("Leave is 3 days.")), corpus, {"name": "b"})
    candidate = freeze_run(records.with_columns(answer=pl.lit("Leave: 3 days.")), corpus, {"name": "c"})
    choices = [("second", "first")] * wins + [("first", "second")] * losses + [("tie", "tie")] * ties
    return baseline, candidate, dict(zip(ids, choices, strict=True))


def test_the_win_rate_interval_and_sign_test_agree_with_scipy() -> None:
    baseline, candidate, script = _many_pairs(wins=30, losses=12, ties=5)
    preference = preference_of(judge_pairs(baseline, candidate, ScriptedPairJudge(script)))
    result = scipy_stats.binomtest(30, 42, 0.5)
    exact = result.proportion_ci(0.95, method="exact")
    assert preference.win_rate == pytest.approx(30 / 42)
    assert preference.p_value == pytest.approx(result.pvalue, rel=1e-10)
    assert preference.ci_low == pytest.approx(exact.low, abs=1e-10)
    assert preference.ci_high == pytest.approx(exact.high, abs=1e-10)
    assert preference.counts["tie"] == 5


def test_a_decided_preference_decides_a_case_where_nothing_else_moved(runs: tuple[Run, Run]) -> None:
    comparison = compare(*runs, pairs=judge_pairs(*runs, ScriptedPairJudge()))
    cases = {row["case_id"]: row for row in comparison.cases.iter_rows(named=True)}
    assert cases["a_better@v1"]["status"] == "improved"
    assert cases["a_better@v1"]["reasons"] == ["the pairwise judge preferred the candidate in both orders"]
    assert cases["a_better@v1"]["preference_reason"] == "baseline_first reason"
    assert cases["b_worse@v1"]["status"] == "regressed"
    assert cases["b_worse@v1"]["reasons"] == ["the pairwise judge preferred the baseline in both orders"]
    for case_id in ("c_tie@v1", "d_first@v1", "e_same@v1", "h_judgefail@v1", "i_halftie@v1"):
        assert cases[case_id]["status"] == "unchanged", case_id
        assert cases[case_id]["reasons"] == []
    assert cases["d_first@v1"]["preference_reason"] == (
        "baseline shown first: baseline (baseline_first reason); candidate shown first: candidate (candidate_first reason)"
    )
    assert cases["h_judgefail@v1"]["preferred"] == "judge_failed"
    assert cases["h_judgefail@v1"]["preference_reason"].startswith(
        "the pairwise judge failed: candidate_first: HTTP 500"
    )
    assert cases["f_failed@v1"]["status"] == "failed_in_candidate"
    assert cases["f_failed@v1"]["preferred"] == "not_judged"
    assert comparison.preference is not None
    assert dict(comparison.preference.counts) == EXPECTED_COUNTS


def test_without_pairs_nothing_changes(runs: tuple[Run, Run]) -> None:
    plain = compare(*runs)
    assert plain.preference is None
    assert "preferred" not in plain.cases.columns
    assert plain.counts["improved"] == plain.counts["regressed"] == 0
    assert plain.to_dict()["preference"] is None
    assert "preferred" not in plain.to_dict()["cases"][0]


def test_a_preference_against_a_moved_signal_keeps_the_status_and_says_both(runs: tuple[Run, Run]) -> None:
    baseline, _ = runs
    unsupported = CANDIDATE.with_columns(
        answer=pl.when(pl.col("case_id") == "a_better@v1")
        .then(pl.lit("Leave is 9 weeks, paid twice."))
        .otherwise(pl.col("answer"))
    )
    candidate = freeze_run(unsupported, CORPUS, {"name": "cand"})
    comparison = compare(baseline, candidate, pairs=judge_pairs(baseline, candidate, ScriptedPairJudge()))
    case = comparison.cases.filter(pl.col("case_id") == "a_better@v1").row(0, named=True)
    assert case["status"] == "regressed"  # the offline judge: the answer is no longer grounded
    assert case["reasons"][0].startswith("grounded 1 -> ")
    assert case["reasons"][-1] == "the pairwise judge preferred the candidate in both orders"


def test_the_json_holds_the_preference_and_each_case_verdict(runs: tuple[Run, Run]) -> None:
    comparison = compare(*runs, pairs=judge_pairs(*runs, ScriptedPairJudge()))
    data = json.loads(comparison.to_json())
    assert data["preference"]["counts"] == EXPECTED_COUNTS
    assert data["preference"]["win_rate"] == 0.5
    assert data["preference"]["position_bias"]["consistency_rate"] == 0.6
    assert data["preference"]["evaluator"]["name"] == "scripted"
    by_id = {case["case_id"]: case for case in data["cases"]}
    assert by_id["a_better@v1"]["preferred"] == "candidate"
    assert by_id["a_better@v1"]["preference_reason"] == "baseline_first reason"


def test_pairs_of_other_runs_or_swapped_runs_are_refused(runs: tuple[Run, Run]) -> None:
    pairs = judge_pairs(*runs, ScriptedPairJudge())
    with pytest.raises(PairsError, match="the other way round"):
        compare(runs[1], runs[0], pairs=pairs)
    other = freeze_run(BASELINE, CORPUS, {"name": "other"})
    with pytest.raises(PairsError, match="judged runs 'base'"):
        compare(other, runs[1], pairs=pairs)


def test_position_bias_leaves_identical_answers_out(runs: tuple[Run, Run]) -> None:
    frame = judge_pairs(*runs, ScriptedPairJudge()).frame
    only_identical = frame.filter(pl.col("identical"))
    bias = position_bias(only_identical)
    assert (bias.pairs, bias.replies) == (0, 0)
    assert bias.consistency_rate is None
    assert bias.first_position_rate is None
