"""Comparisons of runs with repeats, on tests/fixtures/repeats (expected results in its EXPECTED.md)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from rag_compare.compute.compare_runs import compare
from rag_compare.compute.freezing import freeze_run
from rag_compare.compute.poisson_bootstrap import poisson_weights
from rag_compare.compute.stats import SEED
from rag_compare.core.digest import case_hash
from rag_compare.io.runs import Run
from tests.helpers.data import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "repeats"
CORPUS = FIXTURE / "corpus.csv"


def _run(records: pl.DataFrame, name: str) -> Run:
    return freeze_run(records, CORPUS, {"name": name})


def _side(side: str) -> Run:
    return _run(pl.read_ndjson(FIXTURE / f"{side}.jsonl"), side)


@pytest.fixture(scope="module")
def comparison():  # type: ignore[no-untyped-def]
    return compare(_side("baseline"), _side("candidate"))


def _statuses(comparison) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return dict(comparison.cases.select("case_id", pl.col("status").cast(pl.String)).iter_rows())


def test_a_case_flipping_in_one_repeat_is_unstable_and_one_worse_in_every_repeat_regressed(comparison) -> None:  # type: ignore[no-untyped-def]
    assert _statuses(comparison) == {
        "c1@v1": "regressed",
        "c2@v1": "unstable",
        "c3@v1": "improved",
        "c4@v1": "unchanged",
        "c5@v1": "unstable",
        "c6@v1": "unstable",
        "c7@v1": "unstable",
        "c8@v1": "failed_in_candidate",
    }
    counts = {status: count for status, count in comparison.counts.items() if count}
    assert counts == {"regressed": 1, "improved": 1, "unstable": 4, "unchanged": 1, "failed_in_candidate": 1}


def test_reasons_say_what_moved_within_repeats_and_which_samples_failed(comparison) -> None:  # type: ignore[no-untyped-def]
    reasons = dict(comparison.cases.select("case_id", "reasons").iter_rows())
    assert "recall 1 -> 0 (worse)" in reasons["c1@v1"]
    assert "recall 1 -> 0.667 (within repeats)" in reasons["c2@v1"]
    assert reasons["c5@v1"] == ["abstention_correct 1 -> 0.667 (within repeats)"]
    assert reasons["c6@v1"] == ["candidate failed in 1 of 3 repeats: read timed out after 30 s"]
    assert reasons["c8@v1"] == ["candidate timeout in 3 of 3 repeats: read timed out after 30 s"]


def test_a_case_signal_is_its_mean_over_repeats_with_its_spread(comparison) -> None:  # type: ignore[no-untyped-def]
    row = comparison.cases.filter(pl.col("case_id") == "c2@v1").row(0, named=True)
    assert row["candidate_recall"] == pytest.approx(2 / 3)
    assert (row["candidate_recall_low"], row["candidate_recall_high"]) == (0.0, 1.0)
    assert row["candidate_recall_variance"] == pytest.approx(1 / 3)
    assert row["candidate_full_coverage"] == pytest.approx(2 / 3)  # a flag's mean is its rate
    assert (row["candidate_repeats"], row["candidate_failed_repeats"]) == (3, 0)
    c6 = comparison.cases.filter(pl.col("case_id") == "c6@v1").row(0, named=True)
    assert (c6["candidate_status"], c6["candidate_failed_repeats"], c6["candidate_recall"]) == ("ok", 1, 1.0)
    assert c6["candidate_recall_all_cases"] == pytest.approx(2 / 3)


def test_the_noise_floor_matches_the_hand_count(comparison) -> None:  # type: ignore[no-untyped-def]
    noise = comparison.noise_floor
    baseline, candidate = noise.sides["baseline"], noise.sides["candidate"]
    assert (baseline.repeats, baseline.pairs, candidate.pairs) == (3, 3, 3)
    third = 1 / 3
    assert {k: v for k, v in baseline.expected.items() if v} == pytest.approx(
        {"improved": third, "regressed": third, "unchanged": 22 / 3}
    )
    assert {k: v for k, v in candidate.expected.items() if v} == pytest.approx(
        {
            "improved": 2 / 3,
            "regressed": 2 / 3,
            "failed_in_baseline": third,
            "failed_in_candidate": third,
            "failed_in_both": 1.0,
            "unchanged": 5.0,
        }
    )
    assert {k: v for k, v in noise.expected.items() if v} == pytest.approx(
        {
            "improved": 0.5,
            "regressed": 0.5,
            "failed_in_baseline": 1 / 6,
            "failed_in_candidate": 1 / 6,
            "failed_in_both": 0.5,
            "unchanged": 37 / 6,
        }
    )


def test_the_flaky_cases_are_those_whose_repeats_disagree_most_first(comparison) -> None:  # type: ignore[no-untyped-def]
    flaky = comparison.flaky
    assert flaky.select("case_id", "side", "disagreements").rows() == [
        ("c2@v1", "candidate", 5),
        ("c7@v1", "baseline", 5),
        ("c5@v1", "candidate", 1),
        ("c6@v1", "candidate", 1),
    ]
    assert flaky.get_column("spread").to_list() == pytest.approx([5, 5, 1, 1 / 3])
    details = dict(flaky.select("case_id", "details").iter_rows())
    assert details["c5@v1"] == ["abstention_correct in 2 of 3 samples"]
    assert details["c6@v1"] == ["failed in 1 of 3 samples"]
    assert "full_coverage in 2 of 3 samples" in details["c2@v1"]
    assert "recall from 0 to 1" in details["c7@v1"]


def test_paired_and_all_cases_recall_take_one_value_per_case(comparison) -> None:  # type: ignore[no-untyped-def]
    rows = {row["scope"]: row for row in comparison.aggregates.filter(pl.col("signal") == "recall").to_dicts()}
    paired, all_cases = rows["paired"], rows["all_cases"]
    assert paired["n"] == 6
    assert (paired["baseline"], paired["candidate"]) == pytest.approx((7 / 9, 11 / 18))
    assert (paired["baseline_within_variance"], paired["candidate_within_variance"]) == pytest.approx((1 / 18, 1 / 18))
    assert all_cases["n"] == 7
    assert (all_cases["baseline"], all_cases["candidate"]) == pytest.approx((17 / 21, 10 / 21))
    assert all_cases["baseline_within_variance"] is None


def test_the_bootstrap_resamples_cases_as_a_hand_written_cluster_bootstrap_does(comparison) -> None:  # type: ignore[no-untyped-def]
    # Per-case means of recall written out by hand (EXPECTED.md), then resampled case by case: 5 distinct deltas
    # among 6 cases, so each replicate weighs each case by its Poisson(1) weight, drawn from the hash of its id.
    deltas = np.array([float(Fraction(text)) for text in ("-1", "-1/3", "1", "0", "0", "-2/3")])
    pairs = comparison.cases.filter(
        pl.col("baseline_recall").is_not_null() & pl.col("candidate_recall").is_not_null()
    ).select("case_id", (pl.col("candidate_recall") - pl.col("baseline_recall")).alias("delta"))
    assert sorted(pairs["delta"].to_list()) == pytest.approx(sorted(deltas))
    weights = poisson_weights(case_hash(pairs["case_id"]).to_numpy(), 2000, SEED).astype(np.float64)
    kept = weights.sum(axis=1) > 0  # a replicate that weighs no case is left out
    means = (weights[kept] @ pairs["delta"].to_numpy()) / weights[kept].sum(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    paired = comparison.aggregates.filter((pl.col("signal") == "recall") & (pl.col("scope") == "paired")).row(
        0, named=True
    )
    assert (paired["ci_low"], paired["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    # The sign-flip test over the 6 case means is exact (2**6 sign vectors), as SciPy's is.
    scipy_p = stats.permutation_test(
        (deltas,), np.mean, permutation_type="samples", alternative="two-sided", n_resamples=np.inf
    ).pvalue
    assert paired["p_value"] == pytest.approx(scipy_p)
    # Counting the 3 samples of a case as 3 cases would give n = 16 ok pairs of samples, not 6.
    assert paired["n"] == 6


def test_a_flag_over_repeats_is_tested_as_a_rate_not_by_mcnemar(comparison) -> None:  # type: ignore[no-untyped-def]
    row = comparison.aggregates.filter((pl.col("signal") == "full_coverage") & (pl.col("scope") == "paired")).row(
        0, named=True
    )
    deltas = np.array([-1, -1 / 3, 1, 0, 0, -2 / 3])
    scipy_p = stats.permutation_test(
        (deltas,), np.mean, permutation_type="samples", alternative="two-sided", n_resamples=np.inf
    ).pvalue
    assert row["p_value"] == pytest.approx(scipy_p)


def test_the_json_has_a_repeats_block_per_side_the_noise_floor_and_the_flaky_cases(comparison) -> None:  # type: ignore[no-untyped-def]
    document = comparison.to_dict()
    assert document["schema_version"] == 1
    assert document["candidate"]["repeats"] == {"cases": 8, "samples": 24, "min": 3, "max": 3, "failed": 4}
    assert document["counts"]["unstable"] == 4
    assert document["noise_floor"]["expected"]["regressed"] == pytest.approx(0.5)
    assert document["noise_floor"]["sides"]["baseline"]["pairs"] == 3
    assert [case["case_id"] for case in document["flaky"]] == ["c2@v1", "c7@v1", "c5@v1", "c6@v1"]
    c6 = next(case for case in document["cases"] if case["case_id"] == "c6@v1")
    assert (c6["candidate"]["repeats"], c6["candidate"]["failed_repeats"]) == (3, 1)


# --- properties ------------------------------------------------------------------------------------------

_KINDS = st.sampled_from(["G", "B", "F"])
_CASES = ("c1@v1", "c2@v1", "c3@v1", "c4@v1", "c6@v1")
_RECORDS = pl.read_ndjson(FIXTURE / "candidate.jsonl")
_KIND_ROWS = {
    "G": _RECORDS.filter(pl.col("case_id") == "c3@v1").head(1).drop("case_id", "repeat"),
    "B": _RECORDS.filter(pl.col("case_id") == "c1@v1").head(1).drop("case_id", "repeat"),
    "F": _RECORDS.filter(pl.col("case_id") == "c8@v1").head(1).drop("case_id", "repeat"),
}


def _records(kinds: dict[str, list[str]]) -> pl.DataFrame:
    rows = [
        _KIND_ROWS[kind].with_columns(case_id=pl.lit(case), repeat=pl.lit(repeat, pl.Int64))
        for case, samples in kinds.items()
        for repeat, kind in enumerate(samples)
    ]
    return pl.concat(rows, how="diagonal_relaxed")


_SIDE = st.fixed_dictionaries({case: st.lists(_KINDS, min_size=1, max_size=4) for case in _CASES})


@settings(max_examples=15, deadline=None)
@given(side=_SIDE)
def test_a_run_compared_with_itself_has_nothing_improved_regressed_or_unstable(side: dict[str, list[str]]) -> None:
    run = _run(_records(side), "same")
    counts = compare(run, run).counts
    assert counts["improved"] == counts["regressed"] == counts["mixed"] == counts["unstable"] == 0


@settings(max_examples=10, deadline=None)
@given(baseline=_SIDE, candidate=_SIDE, times=st.integers(2, 3))
def test_repeating_every_sample_k_times_changes_no_mean_and_no_status(
    baseline: dict[str, list[str]], candidate: dict[str, list[str]], times: int
) -> None:
    def repeated(side: dict[str, list[str]]) -> dict[str, list[str]]:
        return {case: samples * times for case, samples in side.items()}

    once = compare(_run(_records(baseline), "b"), _run(_records(candidate), "c"))
    again = compare(_run(_records(repeated(baseline)), "b"), _run(_records(repeated(candidate)), "c"))
    assert _statuses(again) == _statuses(once)
    signals = [f"{side}_{signal.name}" for side in ("baseline", "candidate") for signal in once.signals]
    _assert_close(again.cases.select(signals), once.cases.select(signals))
    columns = ["baseline", "candidate", "delta", "n"]
    _assert_close(again.aggregates.select(columns), once.aggregates.select(columns))


def _assert_close(got: pl.DataFrame, expected: pl.DataFrame) -> None:
    """Equal nulls, and numbers within 1e-12."""
    for name in expected.columns:
        left, right = got.get_column(name).cast(pl.Float64), expected.get_column(name).cast(pl.Float64)
        assert left.is_null().to_list() == right.is_null().to_list(), name
        assert ((left - right).abs().fill_null(0.0) <= 1e-12).all(), name


def test_a_run_without_repeat_compares_as_before(tmp_path: Path) -> None:
    records = pl.read_ndjson(FIXTURE / "baseline.jsonl").filter(pl.col("repeat") == 0).drop("repeat")
    run = _run(records, "plain")
    comparison = compare(run, run)
    assert comparison.noise_floor is None
    assert comparison.flaky.is_empty()
    assert "baseline_recall_low" not in comparison.cases.columns
    assert comparison.cases.get_column("baseline_full_coverage").dtype == pl.Boolean


def test_a_run_with_a_repeat_column_but_one_sample_a_case_compares_as_a_plain_run() -> None:
    records = pl.read_ndjson(FIXTURE / "baseline.jsonl")
    single = _run(records.filter(pl.col("repeat") == 1), "one")  # repeat 1 of every case, nothing else
    plain = _run(records.filter(pl.col("repeat") == 1).drop("repeat"), "plain")
    with_column, without = compare(single, single), compare(plain, plain)
    assert with_column.noise_floor is None
    assert with_column.cases.columns == without.cases.columns
    assert with_column.cases.equals(without.cases)
