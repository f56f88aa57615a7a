"""Passage texts mapped to ids by the documented rules: exact, same words, chunk; ties broken by version only."""

from __future__ import annotations

import polars as pl

from rag_compare.io.passage_matching import PassageIndex, fold_whitespace

INDEX = PassageIndex.of(
    pl.DataFrame(
        {
            "passage_id": ["cap-v1", "cap-v2", "paris", "meal", "tax-a", "tax-b"],
            "source_version": ["v1", "v2", "v2", "v2", "v2", "v2"],
            "text": [
                "The hotel cap is 150 euros per night.",
                "The hotel cap is 150 euros per night.",
                "In Paris the hotel cap is 210 euros per night.",
                "The meal allowance is 45 euros a day, receipts required.",
                "Taxis are paid back up to 40 euros a ride.",
                "Taxis are paid back up to 40 euros a ride at night.",
            ],
        }
    )
)


def test_whitespace_folds_to_single_spaces() -> None:
    assert fold_whitespace("  a\n\tb   c ") == "a b c"


def test_each_rule_finds_the_one_passage() -> None:
    assert INDEX.match("In Paris the hotel cap is\n 210 euros per night.", "v2") == "paris"  # exact
    assert INDEX.match("in paris, the HOTEL cap is 210 euros — per night", None) == "paris"  # same words
    assert INDEX.match("The meal allowance is 45 euros a day", None) == "meal"  # a chunk of one passage
    assert INDEX.match("[paris] In Paris the hotel cap is 210 euros per night.", None) == "paris"  # a label around


def test_a_tie_goes_to_the_cases_version_and_stays_unmatched_otherwise() -> None:
    text = "The hotel cap is 150 euros per night."
    assert INDEX.match(text, "v1") == "cap-v1"
    assert INDEX.match(text, "v2") == "cap-v2"
    assert INDEX.match(text, None) is None
    assert INDEX.match("Taxis are paid back up to 40 euros a ride", "v2") == "tax-a"  # same words as one
    assert INDEX.match("paid back up to 40 euros a ride", "v2") is None  # a chunk of two passages


def test_a_short_or_unknown_text_matches_nothing() -> None:
    assert INDEX.match("150 euros", "v2") is None  # folded, shorter than the chunk rule's minimum
    assert INDEX.match("Nothing like any passage at all here.", "v2") is None
