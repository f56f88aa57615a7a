"""Aggregates and breakdowns from partial sums: any partitioning of the cases, merged in any order, finishes to
the frame of all the cases at once; and that frame's statistics are the ones of ``stats`` on the deltas."""

from __future__ import annotations

import itertools
import math
import pickle
import random

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from rag_compare.compute.aggregates import aggregate_signals, breakdown_signals
from rag_compare.compute.partials import (
    AggregatePartial,
    aggregate_partial,
    breakdown_partial,
    finish_aggregates,
    finish_breakdowns,
    merge_partials,
    resampling_partial,
    resampling_plan,
)
from rag_compare.compute.stats import bootstrap_ci, mcnemar_exact_p, permutation_p_value
from rag_compare.core.digest import case_hash
from rag_compare.core.signals import JUDGE_FAILED, Signal

SIGNALS = (
    Signal(
        "continuous", flag=False, higher_is_better=True, applies_to="gold", stage="answer"
    ),  # mostly distinct: Poisson
    Signal("levels", flag=False, higher_is_better=True, applies_to="gold", stage="answer"),  # five levels: multinomial
    Signal("flagged", flag=True, higher_is_better=False, applies_to="answerable", stage="answer"),  # McNemar
    Signal("verdict", flag=False, higher_is_better=True, applies_to="all", stage="answer", judged=True),
)
STATISTICS = ["n", "ci_low", "ci_high", "p_value", "p_adjusted"]
MEANS = ["baseline", "candidate", "delta", "baseline_within_variance", "candidate_within_variance"]


def _cases(n: int, seed: int, *, reduced: bool = False) -> pl.DataFrame:
    """Joined cases as compare_runs makes them: statuses (some failed or missing), labels, both sides' signals;
    with ``reduced``, each signal's all-cases mean and within-case variance over repeats too."""
    rng = np.random.default_rng(seed)
    status = [rng.choice(np.array(["ok", "ok", "ok", "ok", "failed", None], dtype=object), n) for _ in range(2)]
    columns: dict[str, object] = {
        "case_id": [f"case-{seed}-{index}" for index in range(n)],
        "category": rng.choice(np.array(["billing", "travel", None], dtype=object), n).tolist(),
        "answerability": rng.choice(["answerable", "unanswerable", "conflict"], n, p=[0.8, 0.15, 0.05]),
    }
    for side, side_status in zip(("baseline", "candidate"), status, strict=True):
        ok = side_status == "ok"
        columns[f"{side}_status"] = side_status.tolist()
        columns[f"{side}_judge_status"] = np.where(rng.random(n) < 0.05, JUDGE_FAILED, "scored")
        shift = 0.05 if side == "candidate" else 0.0
        values = {
            "continuous": np.clip(rng.normal(0.6 + shift, 0.2, n), 0, 1),
            "levels": rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], n),
            "flagged": (rng.random(n) < 0.2 + shift).astype(float),
            "verdict": rng.choice([0.0, 1.0, 1.0 / 3, 2.0 / 3], n),
        }
        for name, value in values.items():
            present = ok & (rng.random(n) < 0.95)
            columns[f"{side}_{name}"] = np.where(present, value, np.nan)
            if reduced:
                columns[f"{side}_{name}_all_cases"] = np.where(ok, value * 0.9, np.nan)
                columns[f"{side}_{name}_variance"] = np.where(
                    present & (rng.random(n) < 0.7), rng.random(n) / 10, np.nan
                )
    return pl.DataFrame(columns).fill_nan(None)


def _partitions(frame: pl.DataFrame, parts: int, rng: random.Random) -> list[pl.DataFrame]:
    """The rows shuffled and cut at random places into ``parts`` frames (some may be empty)."""
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=rng.randrange(2**32))
    cuts = sorted(rng.randrange(frame.height + 1) for _ in range(parts - 1))
    bounds = [0, *cuts, frame.height]
    return [shuffled.slice(start, stop - start) for start, stop in itertools.pairwise(bounds)]


def _merged_aggregates(parts: list[pl.DataFrame], rng: random.Random, *, reduced: bool) -> pl.DataFrame:
    """Both passes, each a map over the parts and a merge in a random order, then finish."""
    first = [aggregate_partial(part, SIGNALS, reduced=reduced) for part in parts]
    partial = merge_partials(rng.sample(first, len(first)))
    plan = resampling_plan(partial)
    second = [resampling_partial(part, plan) for part in parts]
    return finish_aggregates(partial, merge_partials(rng.sample(second, len(second))))


def _assert_same_aggregates(merged: pl.DataFrame, whole: pl.DataFrame) -> None:
    assert merged.columns == whole.columns
    assert merged.schema == whole.schema
    assert_frame_equal(merged.drop(MEANS), whole.drop(MEANS), check_exact=True)
    for column in MEANS:
        for got, expected in zip(merged[column], whole[column], strict=True):
            assert (got is None) == (expected is None)
            if got is not None:
                assert math.isclose(got, expected, rel_tol=0, abs_tol=1e-12)


@pytest.fixture(scope="module")
def cases() -> pl.DataFrame:
    return _cases(1500, 1)


@pytest.fixture(scope="module")
def reduced_cases() -> pl.DataFrame:
    return _cases(900, 2, reduced=True)


def test_the_frame_takes_both_bootstrap_paths(cases: pl.DataFrame) -> None:
    # Without this, the partitioning tests below would not exercise the Poisson sums.
    plan = resampling_plan(aggregate_partial(cases, SIGNALS))
    assert set(plan.layouts) == {("paired", "continuous"), ("all_cases", "continuous")}


@pytest.mark.parametrize("parts", range(1, 8))
def test_random_partitionings_finish_to_the_one_partition_frame(cases: pl.DataFrame, parts: int) -> None:
    whole = aggregate_signals(cases, SIGNALS)
    for trial in range(2):
        rng = random.Random(parts * 100 + trial)
        merged = _merged_aggregates(_partitions(cases, parts, rng), rng, reduced=False)
        _assert_same_aggregates(merged, whole)


@pytest.mark.parametrize("parts", [1, 3, 7])
def test_random_partitionings_of_reduced_cases_finish_to_the_one_partition_frame(
    reduced_cases: pl.DataFrame, parts: int
) -> None:
    whole = aggregate_signals(reduced_cases, SIGNALS, reduced=True)
    assert whole["baseline_within_variance"].drop_nulls().len() == len(SIGNALS)  # the paired rows have one
    rng = random.Random(parts)
    merged = _merged_aggregates(_partitions(reduced_cases, parts, rng), rng, reduced=True)
    _assert_same_aggregates(merged, whole)


@pytest.mark.parametrize("parts", [2, 5, 7])
def test_random_partitionings_of_breakdowns_finish_to_the_one_partition_frame(cases: pl.DataFrame, parts: int) -> None:
    whole = breakdown_signals(cases, SIGNALS)
    rng = random.Random(parts)
    partials = [breakdown_partial(part, SIGNALS) for part in _partitions(cases, parts, rng)]
    merged = finish_breakdowns(merge_partials(rng.sample(partials, len(partials))))
    assert merged.schema == whole.schema
    assert_frame_equal(merged.drop("baseline", "candidate", "delta"), whole.drop("baseline", "candidate", "delta"))
    for column in ("baseline", "candidate", "delta"):
        assert (merged[column] - whole[column]).abs().max() < 1e-12  # type: ignore[operator]


def _paired(cases: pl.DataFrame, name: str) -> pl.DataFrame:
    return cases.filter(pl.col(f"baseline_{name}").is_not_null() & pl.col(f"candidate_{name}").is_not_null())


def test_breakdowns_are_the_paired_means_of_each_group(cases: pl.DataFrame) -> None:
    breakdowns = breakdown_signals(cases, SIGNALS)
    # Every group of each column in sorted order, then the signals in their order, null category as "(none)".
    assert breakdowns.filter(pl.col("by") == "category")["group"].unique(maintain_order=True).to_list() == [
        "(none)",
        "billing",
        "travel",
    ]
    assert breakdowns["signal"].head(len(SIGNALS)).to_list() == [signal.name for signal in SIGNALS]
    row = breakdowns.filter((pl.col("group") == "travel") & (pl.col("signal") == "levels")).row(0, named=True)
    paired = _paired(cases.filter(pl.col("category") == "travel"), "levels")
    assert row["n"] == paired.height
    assert row["baseline"] == pytest.approx(float(np.mean(paired["baseline_levels"].to_numpy())), abs=1e-12)
    assert row["delta"] == pytest.approx(
        float(np.mean(paired["candidate_levels"].to_numpy() - paired["baseline_levels"].to_numpy())), abs=1e-12
    )


def test_aggregates_are_the_statistics_of_the_paired_deltas(cases: pl.DataFrame) -> None:
    aggregates = aggregate_signals(cases, SIGNALS)
    for name in ("continuous", "levels", "flagged"):
        paired = _paired(cases, name)
        baseline, candidate = paired[f"baseline_{name}"].to_numpy(), paired[f"candidate_{name}"].to_numpy()
        row = aggregates.filter((pl.col("signal") == name) & (pl.col("scope") == "paired")).row(0, named=True)
        assert row["n"] == paired.height
        assert row["baseline"] == float(np.mean(baseline))
        assert row["candidate"] == float(np.mean(candidate))
        # The Poisson path weighs each case by the hash of its id, the multinomial path ignores the ids.
        assert (row["ci_low"], row["ci_high"]) == bootstrap_ci(
            candidate - baseline, case_hashes=case_hash(paired["case_id"]).to_numpy()
        )
        expected_p = (
            mcnemar_exact_p(baseline.astype(bool), candidate.astype(bool))
            if name == "flagged"
            else permutation_p_value(candidate - baseline)
        )
        assert row["p_value"] == expected_p


def test_merging_partials_of_other_signals_or_settings_is_refused(
    cases: pl.DataFrame, reduced_cases: pl.DataFrame
) -> None:
    partial = aggregate_partial(cases, SIGNALS)
    with pytest.raises(ValueError, match="same signals"):
        partial.merge(aggregate_partial(reduced_cases, SIGNALS, reduced=True))
    with pytest.raises(ValueError, match="same signals"):
        partial.merge(aggregate_partial(cases, SIGNALS[:2]))
    with pytest.raises(ValueError, match="no partial"):
        merge_partials(list[AggregatePartial]())


def test_finishing_without_the_second_pass_is_refused(cases: pl.DataFrame) -> None:
    partial = aggregate_partial(cases, SIGNALS)
    empty_plan = resampling_partial(cases, resampling_plan(aggregate_partial(cases.head(0), SIGNALS)))
    with pytest.raises(ValueError, match="second pass"):
        finish_aggregates(partial, empty_plan)


def test_partials_survive_pickling(cases: pl.DataFrame) -> None:
    # A Ray job ships partials between processes.
    partial = aggregate_partial(cases, SIGNALS)
    second = resampling_partial(cases, resampling_plan(partial))
    revived = pickle.loads(pickle.dumps(partial)), pickle.loads(pickle.dumps(second))
    assert_frame_equal(finish_aggregates(*revived), finish_aggregates(partial, second))


def test_an_empty_frame_gives_rows_without_values(cases: pl.DataFrame) -> None:
    aggregates = aggregate_signals(cases.head(0), SIGNALS)
    assert aggregates.height == 2 * len(SIGNALS)
    assert aggregates["n"].to_list() == [0] * 2 * len(SIGNALS)
    assert aggregates.select(pl.col("baseline", "ci_low", "p_value").null_count()).row(0) == (8, 8, 8)
    assert breakdown_signals(cases.head(0), SIGNALS).height == 0
