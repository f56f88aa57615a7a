"""The word diff of two answers: its pieces join back to both texts exactly, changed words are marked
whole with the whitespace they share left equal, and long texts are refused rather than compared slowly."""

from __future__ import annotations

import itertools
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_compare.compute.word_diff import MAX_DIFF_WORDS, word_diff

WORDS = st.sampled_from(["the", "limit", "is", "40", "50", "euros.", "Paris", "€", "日本語", "", "\u200b"])
SPACES = st.sampled_from([" ", "  ", "\n", "\n\n", "\t", "\u00a0", " \n "])
TEXT = st.lists(st.tuples(WORDS, SPACES), max_size=40).map(lambda parts: "".join(w + s for w, s in parts))
"""Texts made of a few words and whitespace runs, so that the two sides share words often."""


def joined(pieces: list[tuple[str, str]], keep: str) -> str:
    return "".join(text for operation, text in pieces if operation in ("=", keep))


@given(TEXT, TEXT)
def test_the_pieces_join_back_to_both_texts(before: str, after: str) -> None:
    pieces = word_diff(before, after)
    assert pieces is not None
    assert joined(pieces, "-") == before
    assert joined(pieces, "+") == after
    assert all(operation in ("=", "-", "+") for operation, _ in pieces)
    assert all(text for _, text in pieces) or pieces == [("=", "")]


@given(st.text(max_size=200), st.text(max_size=200))
def test_any_text_joins_back(before: str, after: str) -> None:
    pieces = word_diff(before, after)
    assert pieces is not None
    assert (joined(pieces, "-"), joined(pieces, "+")) == (before, after)


@given(TEXT, TEXT)
def test_no_two_equal_pieces_follow_each_other_and_changes_come_deletion_first(before: str, after: str) -> None:
    pieces = word_diff(before, after)
    assert pieces is not None
    operations = [operation for operation, _ in pieces]
    assert all(pair not in (("=", "="), ("-", "-"), ("+", "+"), ("+", "-")) for pair in itertools.pairwise(operations))


def test_a_changed_number_is_one_deletion_and_one_insertion_between_equal_text() -> None:
    assert word_diff("The limit is 40 euros.", "The limit is 50 euros.") == [
        ("=", "The limit is "),
        ("-", "40"),
        ("+", "50"),
        ("=", " euros."),
    ]


def test_a_rewritten_sentence_is_one_change_not_a_word_salad() -> None:
    assert word_diff("a b c", "x y z") == [("-", "a b c"), ("+", "x y z")]


def test_words_only_added_or_only_removed() -> None:
    assert word_diff("Paris 210 euros.", "Paris and London 210 euros.") == [
        ("=", "Paris "),
        ("+", "and London "),
        ("=", "210 euros."),
    ]
    assert word_diff("up to 50 euros", "50 euros") == [("-", "up to "), ("=", "50 euros")]


def test_whitespace_alone_changed_is_a_change_of_the_word_it_follows() -> None:
    assert word_diff("one two", "one  two") == [("-", "one"), ("+", "one "), ("=", " two")]


def test_equal_answers_are_one_equal_piece_and_a_missing_answer_is_no_diff() -> None:
    assert word_diff("Same.", "Same.") == [("=", "Same.")]
    assert word_diff("", "") == [("=", "")]
    assert word_diff("", "New.") == [("+", "New.")]
    assert word_diff(None, "x") is None
    assert word_diff("x", None) is None


def test_non_latin_words_are_compared_whole() -> None:
    assert word_diff("上限は 150 ユーロ", "上限は 210 ユーロ") == [
        ("=", "上限は "),
        ("-", "150"),
        ("+", "210"),
        ("=", " ユーロ"),
    ]


def test_over_max_diff_words_on_either_side_is_no_diff() -> None:
    at_limit = " ".join(["word"] * MAX_DIFF_WORDS)
    over = at_limit + " more"
    assert word_diff(at_limit, at_limit + "!") is not None
    assert word_diff(over, "short") is None
    assert word_diff("short", over) is None
    assert word_diff(over, over) == [("=", over)]  # equal texts need no matching


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(" ".join(["the"] * MAX_DIFF_WORDS), " ".join(["the", "a"] * (MAX_DIFF_WORDS // 2)), id="one word"),
        pytest.param(
            " ".join(f"w{index % 97}" for index in range(MAX_DIFF_WORDS)),
            " ".join(f"w{index % 89}" for index in range(MAX_DIFF_WORDS)),
            id="few words",
        ),
        pytest.param(
            " ".join(f"w{index}" for index in range(MAX_DIFF_WORDS)),
            " ".join(f"w{index}" if index % 50 else "changed" for index in range(MAX_DIFF_WORDS)),
            id="a change every 50 words",
        ),
    ],
)
def test_texts_at_the_limit_are_compared_quickly(before: str, after: str) -> None:
    started = time.perf_counter()
    pieces = word_diff(before, after)
    elapsed = time.perf_counter() - started
    assert pieces is not None
    assert (joined(pieces, "-"), joined(pieces, "+")) == (before, after)
    assert elapsed < 5  # quadratic matching of 10,000 pieces would take minutes


def test_a_megabyte_of_one_word_is_compared_as_one_word() -> None:
    big = "x" * 1_000_000
    assert word_diff(big, big + "y") == [("-", big), ("+", big + "y")]
