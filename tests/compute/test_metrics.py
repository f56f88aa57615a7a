"""Retrieval and context signals: hand-computed cases, properties, and ranx as the reference."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_compare.compute.metrics import CONTEXT_SIGNALS, RETRIEVAL_SIGNALS, context_signals, retrieval_signals

IDS = pl.List(pl.String)


def frame(retrieved: list[list[str] | None], gold: list[list[str]], **columns: list[object]) -> pl.DataFrame:
    return pl.DataFrame(
        {"retrieved_passage_ids": retrieved, "required_passage_ids": gold, **columns},
        schema_overrides={"retrieved_passage_ids": IDS, "required_passage_ids": IDS},
    )


def test_hand_computed_case_with_a_repeat_cut_at_k() -> None:
    # ranked a, x, a (repeat dropped), b, c -> a, x, b, c; top 3 = a, x, b; gold c, a -> one hit at rank 1
    # recall 1/2, precision 1/3, mrr 1, ndcg 1 / (1 + 1/log2(3)) = 0.6131, hit, not full
    row = retrieval_signals(frame([["a", "x", "a", "b", "c"]], [["c", "a"]]), k=3).row(0, named=True)
    assert row["recall"] == 0.5
    assert row["precision"] == pytest.approx(1 / 3)
    assert row["mrr"] == 1.0
    assert row["ndcg"] == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert row["hit_rate"] is True
    assert row["full_coverage"] is False


def test_without_k_the_list_length_is_the_cut() -> None:
    # a, x, b, c with gold c, a: hits at ranks 1 and 4; precision 2/4; ndcg (1 + 1/log2 5) / (1 + 1/log2 3)
    row = retrieval_signals(frame([["a", "x", "a", "b", "c"]], [["c", "a"]])).row(0, named=True)
    assert row["recall"] == 1.0
    assert row["precision"] == 0.5
    assert row["ndcg"] == pytest.approx((1 + 1 / math.log2(5)) / (1 + 1 / math.log2(3)))
    assert row["full_coverage"] is True


def test_first_hit_further_down_and_a_short_list_still_divides_by_k() -> None:
    # x, y, g with k 5: mrr 1/3, precision 1/5 (trec_eval P@k), ndcg (1/log2 4) / 1 = 0.5
    row = retrieval_signals(frame([["x", "y", "g"]], [["g"]]), k=5).row(0, named=True)
    assert row["mrr"] == pytest.approx(1 / 3)
    assert row["precision"] == pytest.approx(1 / 5)
    assert row["ndcg"] == pytest.approx(0.5)


def test_no_gold_or_no_captured_list_gives_nulls_and_an_empty_list_gives_zeros() -> None:
    result = retrieval_signals(frame([["a"], None, []], [[], ["a"], ["a"]]), k=3)
    assert result.row(0) == (None,) * len(RETRIEVAL_SIGNALS)
    assert result.row(1) == (None,) * len(RETRIEVAL_SIGNALS)
    assert result.row(2) == (0.0, 0.0, 0.0, 0.0, False, False)


def test_rejects_k_below_one() -> None:
    with pytest.raises(ValueError, match="k must be 1 or more"):
        retrieval_signals(frame([["a"]], [["a"]]), k=0)


def test_context_signals_from_context_passage_ids() -> None:
    # gold a, b; retrieved a, b; context holds a only -> coverage 0.5 and a construction failure
    # second row: b never retrieved and not in context -> coverage 0.5, no construction failure
    data = frame(
        [["a", "b"], ["a"]],
        [["a", "b"], ["a", "b"]],
        context_passage_ids=[["a"], ["a"]],
        context=["A text", "A text"],
    )
    result = context_signals(data)
    assert result.rows() == [(0.5, True, ["b"]), (0.5, False, ["b"])]


def test_context_signals_by_finding_passage_text_and_null_without_a_way_to_know() -> None:
    passages = pl.DataFrame({"passage_id": ["a", "b"], "text": ["Alpha rule.", "Beta exception."]})
    data = frame(
        [["a", "b"], ["a", "b"], ["a"]],
        [["a", "b"], ["a", "b"], ["a"]],
        context_passage_ids=[None, None, None],
        context=["[a] Alpha rule.\n\n[b] Beta exception.", "[a] Alpha rule.", None],
    )
    found = context_signals(data, passages)
    assert found.select(CONTEXT_SIGNALS).rows() == [(1.0, False), (0.5, True), (None, None)]
    assert found.get_column("missing_from_context").to_list() == [[], ["b"], None]
    assert context_signals(data).rows() == [(None, None, None)] * 3


def test_inputs_are_not_modified() -> None:
    data = frame([["a", "a"]], [["a"]], context_passage_ids=[["a"]], context=["x"])
    before = data.clone()
    retrieval_signals(data, k=1)
    context_signals(data)
    assert data.equals(before)


ranked_lists = st.lists(st.sampled_from("abcdefgh"), max_size=10)
gold_lists = st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=4, unique=True)


@given(st.lists(st.tuples(ranked_lists, gold_lists), min_size=1, max_size=20), st.integers(1, 12))
@settings(max_examples=150, deadline=None)
def test_every_metric_is_within_zero_and_one_and_recall_never_falls_as_k_grows(
    cases: list[tuple[list[str], list[str]]], k: int
) -> None:
    data = frame([retrieved for retrieved, _ in cases], [gold for _, gold in cases])
    shallow, deep = retrieval_signals(data, k=k), retrieval_signals(data, k=k + 1)
    for name in ("recall", "precision", "mrr", "ndcg"):
        values = shallow.get_column(name)
        assert values.null_count() == 0
        assert ((values >= 0) & (values <= 1 + 1e-12)).all()
    assert (deep.get_column("recall") >= shallow.get_column("recall")).all()
    assert (deep.get_column("hit_rate").cast(pl.Int8) >= shallow.get_column("hit_rate").cast(pl.Int8)).all()


@given(ranked_lists, gold_lists, st.integers(1, 12))
@settings(max_examples=100, deadline=None)
def test_a_repeated_id_counts_once(retrieved: list[str], gold: list[str], k: int) -> None:
    deduplicated = list(dict.fromkeys(retrieved))
    with_repeats = retrieval_signals(frame([retrieved + retrieved], [gold]), k=k)
    assert with_repeats.equals(retrieval_signals(frame([deduplicated], [gold]), k=k))


@given(st.lists(st.tuples(gold_lists, st.lists(st.sampled_from("abcdefgh"), unique=True)), min_size=1, max_size=10))
@settings(max_examples=100, deadline=None)
def test_context_coverage_is_a_share(cases: list[tuple[list[str], list[str]]]) -> None:
    data = frame(
        [gold for gold, _ in cases],
        [gold for gold, _ in cases],
        context_passage_ids=[sent for _, sent in cases],
        context=["..."] * len(cases),
    )
    result = context_signals(data)
    expected = [len(set(gold) & set(sent)) / len(gold) for gold, sent in cases]
    assert result.get_column("context_coverage").to_list() == pytest.approx(expected)
    missing = [sorted(found) for found in result.get_column("missing_from_context").to_list()]
    assert missing == [sorted(set(gold) - set(sent)) for gold, sent in cases]
    assert result.columns == [*CONTEXT_SIGNALS, "missing_from_context"]


def generated_cases(count: int, seed: int) -> tuple[list[list[str]], list[list[str]]]:
    """Ranked lists of 1-15 ids (repeats possible) and 1-5 gold ids, from a pool of 40 passages."""
    rng = np.random.default_rng(seed)
    pool = np.array([f"p{i}" for i in range(40)])
    retrieved = [list(rng.choice(pool, size=rng.integers(1, 16))) for _ in range(count)]
    gold = [list(rng.choice(pool, size=rng.integers(1, 6), replace=False)) for _ in range(count)]
    return retrieved, gold


@pytest.mark.parametrize("k", [1, 3, 5, 10])
def test_matches_ranx_on_two_thousand_generated_cases(k: int) -> None:
    import ranx

    retrieved, gold = generated_cases(2000, seed=k)
    ours = retrieval_signals(frame(retrieved, gold), k=k)
    qrels = ranx.Qrels({f"q{i:05d}": dict.fromkeys(ids, 1) for i, ids in enumerate(gold)})
    run = ranx.Run(
        {
            f"q{i:05d}": {doc: 1.0 / rank for rank, doc in enumerate(dict.fromkeys(ids), start=1)}
            for i, ids in enumerate(retrieved)
        }
    )
    names = {"recall": "recall", "precision": "precision", "mrr": "mrr", "ndcg": "ndcg", "hit_rate": "hit_rate"}
    reference = ranx.evaluate(qrels, run, [f"{metric}@{k}" for metric in names.values()], return_mean=False)
    for ours_name, ranx_name in names.items():
        expected = np.asarray(reference[f"{ranx_name}@{k}"], dtype=float)
        got = ours.get_column(ours_name).cast(pl.Float64).to_numpy()
        assert np.abs(got - expected).max() <= 1e-9, ours_name
