"""Claims of two answers paired across runs, with the changes worked out by hand beside each case."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from rag_compare.compute.claims import CLAIM_TYPE, PAIRING_OVERLAP, pair_claims


def claim(text: str, supported: bool | None = True) -> dict[str, Any]:
    return {"text": text, "supported": supported, "passage_id": None, "start": None, "end": None, "cited": None}


def changes(baseline: list[dict[str, Any]] | None, candidate: list[dict[str, Any]] | None) -> list[Any] | None:
    """The changes of one case's claims, each as (change, baseline text, candidate text)."""
    frame = pl.DataFrame(
        {"case_id": ["c"], "baseline_claims": [baseline], "candidate_claims": [candidate]},
        schema={"case_id": pl.String, "baseline_claims": pl.List(CLAIM_TYPE), "candidate_claims": pl.List(CLAIM_TYPE)},
    )
    (found,) = pair_claims(frame).to_list()
    if found is None:
        return None
    return [
        (item["change"], (item["baseline"] or {}).get("text"), (item["candidate"] or {}).get("text")) for item in found
    ]


def test_a_changed_number_pairs_with_its_claim_and_shows_as_newly_unsupported() -> None:
    # {annual, leave, is, 30, days} and {annual, leave, is, 45, days}: 4 shared of 6 = 0.67 >= 0.5.
    got = changes([claim("Annual leave is 30 days.")], [claim("Annual leave is 45 days.", False)])
    assert got == [("became_unsupported", "Annual leave is 30 days.", "Annual leave is 45 days.")]


def test_equal_claims_pair_whatever_their_case_spaces_and_final_stop() -> None:
    got = changes(
        [claim("Pets are not allowed.", False), claim("Bikes go in shed B.")],
        [claim("bikes  go in shed b"), claim("PETS ARE NOT ALLOWED", True)],
    )
    assert got == [("became_supported", "Pets are not allowed.", "PETS ARE NOT ALLOWED")]


def test_claims_without_a_close_enough_match_are_dropped_and_added() -> None:
    # {the, office, closes, at, 6} against {parking, is, free, for, visitors}: nothing shared.
    got = changes([claim("The office closes at 6.")], [claim("Parking is free for visitors.")])
    assert got == [("dropped", "The office closes at 6.", None), ("added", None, "Parking is free for visitors.")]


def test_each_claim_pairs_once_with_its_mutual_best_match() -> None:
    # b0 {meals, are, paid, up, to, 20, euros} and c1 (the same words): equal; c0 {meals, are, paid} shares
    # 3 of 7 with b0, under 0.5, so it is added; b1 has no match and is dropped.
    baseline = [claim("Meals are paid up to 20 euros."), claim("Taxis need a receipt.")]
    candidate = [claim("Meals are paid.", False), claim("meals are paid up to 20 euros", False)]
    assert changes(baseline, candidate) == [
        ("became_unsupported", "Meals are paid up to 20 euros.", "meals are paid up to 20 euros"),
        ("dropped", "Taxis need a receipt.", None),
        ("added", None, "Meals are paid."),
    ]


def test_unchanged_claims_give_no_change_and_a_side_without_claims_gives_none() -> None:
    same = [claim("Overtime is paid at 125%."), claim("It needs approval.", False)]
    assert changes(same, same) == []
    assert changes([], []) == []
    assert changes(None, same) is None
    assert changes(same, None) is None
    assert changes([], same) == [("added", None, "Overtime is paid at 125%."), ("added", None, "It needs approval.")]


def test_a_claim_not_judged_on_a_side_is_no_change_of_support() -> None:
    assert changes([claim("The badge costs 5 euros.", None)], [claim("The badge costs 5 euros.", False)]) == []


@pytest.mark.parametrize(("shared", "paired"), [(1, True), (0, False)])
def test_the_pairing_threshold_is_half_the_words(shared: int, paired: bool) -> None:
    # {a1, a2, x} against {a1, a2, y} shares 2 of 4 (0.5, pairs); {a1, x, z} against {a1, y, w} 1 of 5.
    assert PAIRING_OVERLAP == 0.5
    words = ("alpha beta gamma", "alpha beta delta") if shared else ("alpha gamma zeta", "alpha delta eta")
    got = changes([claim(words[0])], [claim(words[1], False)])
    assert (got == [("became_unsupported", words[0], words[1])]) is paired
