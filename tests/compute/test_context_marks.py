"""Where required passages are in a context: found whole (once or more), cut by a budget or a template,
absent, overlapping, with other whitespace, in other scripts, in a context of a megabyte; the pieces
always join back to the context exactly."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_compare.compute.context_marks import MAX_MARKS, MIN_CUT_CHARS, context_segments
from rag_compare.core.protocols import Case, Passage
from rag_compare.pipeline.context_builder import BudgetContextBuilder

HOTEL = "Hotels are reimbursed up to 150 euros per night."
PARIS = "Exception: in Paris, London and Zurich the cap is 210 euros per night."
MEAL = "The daily meal allowance is 45 euros."
CASE = Case(case_id="hotel@v1", question="What is the hotel cap?", source_version="v1")


def piece(text: str, passage_id: str | None = None, *, cut: bool = False) -> dict[str, Any]:
    return {"text": text, "passage_id": passage_id, "cut": cut}


def built(builder: BudgetContextBuilder, *texts: tuple[str, str]) -> str:
    """The context the built-in builder makes of these passages (id, text), best first."""
    passages = [Passage(passage_id=passage_id, text=text, score=1.0) for passage_id, text in texts]
    return builder(CASE, passages).text


def test_a_passage_found_whole_is_its_own_piece() -> None:
    context = built(BudgetContextBuilder(), ("hotel", HOTEL), ("meal", MEAL))
    assert context_segments(context, {"hotel": HOTEL}) == [
        piece("[hotel] "),
        piece(HOTEL, "hotel"),
        piece("\n\n[meal] " + MEAL),
    ]


def test_a_passage_found_twice_is_marked_at_both_places() -> None:
    context = f"{HOTEL} And again: {HOTEL}"
    assert context_segments(context, {"hotel": HOTEL}) == [
        piece(HOTEL, "hotel"),
        piece(" And again: "),
        piece(HOTEL, "hotel"),
    ]


def test_a_passage_cut_where_the_context_ends_is_marked_cut() -> None:
    whole = built(BudgetContextBuilder(), ("meal", MEAL), ("paris", PARIS))
    context = whole[: whole.index("Zurich") + 3]  # a pipeline that truncates the context at a character budget
    assert context_segments(context, {"paris": PARIS, "meal": MEAL}) == [
        piece("[meal] "),
        piece(MEAL, "meal"),
        piece("\n\n[paris] "),
        piece("Exception: in Paris, London and Zur", "paris", cut=True),
    ]


def test_a_passage_the_template_shortened_is_marked_cut_where_the_next_one_follows() -> None:
    builder = BudgetContextBuilder(template="[{passage_id}] {text:.40}")
    context = built(builder, ("paris", PARIS), ("hotel", HOTEL), ("meal", MEAL))
    assert context == (
        "[paris] Exception: in Paris, London and Zurich t\n\n[hotel] Hotels are reimbursed up to 150 euros pe"
        f"\n\n[meal] {MEAL}"
    )
    assert context_segments(context, {"paris": PARIS, "hotel": HOTEL, "meal": MEAL}) == [
        piece("[paris] "),
        piece("Exception: in Paris, London and Zurich t", "paris", cut=True),
        piece("\n\n[hotel] "),
        piece("Hotels are reimbursed up to 150 euros pe", "hotel", cut=True),
        piece("\n\n[meal] "),
        piece(MEAL, "meal"),
    ]


def test_a_leading_part_under_half_the_passage_inside_the_context_is_not_marked() -> None:
    builder = BudgetContextBuilder(template="[{passage_id}] {text:.30}")
    context = built(builder, ("paris", PARIS), ("meal", MEAL))
    assert context_segments(context, {"paris": PARIS}) == [piece(context)]


def test_a_passage_the_budget_left_out_is_not_marked() -> None:
    builder = BudgetContextBuilder(budget_chars=len(f"[hotel] {HOTEL}") + 10)
    context = built(builder, ("hotel", HOTEL), ("paris", PARIS))
    assert context == f"[hotel] {HOTEL}"  # the builder adds whole passages only: Paris did not fit
    assert context_segments(context, {"hotel": HOTEL, "paris": PARIS}) == [piece("[hotel] "), piece(HOTEL, "hotel")]


def test_an_absent_or_unknown_passage_leaves_the_context_one_piece() -> None:
    context = f"[hotel] {HOTEL}"
    assert context_segments(context, {"meal": MEAL, "unknown": None, "blank": "  "}) == [piece(context)]
    assert context_segments(context, {}) == [piece(context)]


def test_a_leading_part_too_short_to_tell_is_not_marked_cut() -> None:
    context = f"{HOTEL} {PARIS[: MIN_CUT_CHARS - 1]}"
    assert context_segments(context, {"paris": PARIS}) == [piece(context)]


def test_a_passage_sharing_only_its_first_words_with_the_context_is_not_cut() -> None:
    context = "Exception: in Paris the rate differs. " + MEAL
    assert context_segments(context, {"paris": PARIS}) == [piece(context)]


def test_overlapping_passages_keep_the_earlier_whole_and_the_later_starts_after_it() -> None:
    first, second = "the cap is 150 euros per night", "150 euros per night in every city"
    context = "Rule: the cap is 150 euros per night in every city."
    assert context_segments(context, {"second": second, "first": first}) == [
        piece("Rule: "),
        piece(first, "first"),
        piece(" in every city", "second"),
        piece("."),
    ]


def test_a_passage_inside_another_ones_piece_is_not_marked_again() -> None:
    context = f"Policy: {PARIS} End."
    assert context_segments(context, {"whole": PARIS, "inner": "Paris, London and Zurich"}) == [
        piece("Policy: "),
        piece(PARIS, "whole"),
        piece(" End."),
    ]


def test_whitespace_runs_match_any_whitespace_and_the_piece_keeps_the_contexts_own() -> None:
    context = "Intro.\n\nHotels are  reimbursed\nup to 150\teuros per night.\n"
    assert context_segments(context, {"hotel": "  Hotels are reimbursed up to\n150 euros per night.  "}) == [
        piece("Intro.\n\n"),
        piece("Hotels are  reimbursed\nup to 150\teuros per night.", "hotel"),
        piece("\n"),
    ]


def test_non_latin_passages_are_found_and_cut() -> None:
    japanese = "ホテルの上限は一泊150ユーロです。パリでは210ユーロです。"
    greek = "Το ημερήσιο επίδομα γευμάτων είναι 45 ευρώ για κάθε ημέρα ταξιδιού."  # noqa: RUF001
    context = f"[ja] {japanese}\n\n[el] {greek[:30]}"
    assert context_segments(context, {"ja": japanese, "el": greek}) == [
        piece("[ja] "),
        piece(japanese, "ja"),
        piece("\n\n[el] "),
        piece(greek[:30], "el", cut=True),
    ]


def test_no_context_is_no_pieces_and_an_empty_one_none() -> None:
    assert context_segments(None, {"hotel": HOTEL}) is None
    assert context_segments("", {"hotel": HOTEL}) == []


def test_a_context_of_a_megabyte_is_marked_in_well_under_a_second() -> None:
    filler = "Unrelated handbook text about other policies. " * 20_000
    context = f"{filler}{HOTEL}\n{filler}{PARIS[:50]}"
    assert len(context) > 1_000_000
    started = time.perf_counter()
    segments = context_segments(context, {"hotel": HOTEL, "paris": PARIS, "meal": MEAL})
    elapsed = time.perf_counter() - started
    assert segments is not None
    assert [(segment["passage_id"], segment["cut"]) for segment in segments] == [
        (None, False),
        ("hotel", False),
        (None, False),
        ("paris", True),
        (None, False),  # the space after "is", which is not part of what was found
    ]
    assert "".join(segment["text"] for segment in segments) == context
    assert elapsed < 1


PASSAGE_WORDS = st.sampled_from(["Hotels", "cap", "150", "euros", "Paris", "210", "日本", "\u00e9t\u00e9"])
SPACING = st.sampled_from([" ", "  ", "\n", "\t"])


@st.composite
def contexts(draw: st.DrawFn) -> tuple[str, dict[str, str | None]]:
    """A context of passage words and whitespace, and a few passages drawn from the same words."""
    words = draw(st.lists(st.tuples(PASSAGE_WORDS, SPACING), max_size=30))
    context = "".join(word + space for word, space in words)
    passages = draw(
        st.dictionaries(
            st.sampled_from(["p1", "p2", "p3"]),
            st.lists(st.tuples(PASSAGE_WORDS, SPACING), min_size=1, max_size=8).map(
                lambda parts: "".join(word + space for word, space in parts)
            ),
        )
    )
    return context, dict(passages)


@given(contexts())
def test_the_pieces_always_join_back_to_the_context(drawn: tuple[str, dict[str, str | None]]) -> None:
    context, passages = drawn
    segments = context_segments(context, passages)
    assert segments is not None
    assert "".join(segment["text"] for segment in segments) == context
    assert all(segment["text"] for segment in segments)
    assert all(segment["passage_id"] in (None, *passages) for segment in segments)
    assert all(not segment["cut"] for segment in segments if segment["passage_id"] is None)


@pytest.mark.parametrize("spaces", ["\u00a0", "\u3000", "\r\n"])
def test_unicode_whitespace_counts_as_whitespace(spaces: str) -> None:
    context = HOTEL.replace(" ", spaces)
    assert context_segments(context, {"hotel": HOTEL}) == [piece(context, "hotel")]


def test_a_passage_found_very_often_is_marked_at_its_first_places_only() -> None:
    context = "a b " * 200_000
    started = time.perf_counter()
    segments = context_segments(context, {"ab": "a b"})
    assert time.perf_counter() - started < 2
    assert segments is not None
    assert sum(segment["passage_id"] == "ab" for segment in segments) == MAX_MARKS
    assert "".join(segment["text"] for segment in segments) == context


@pytest.mark.parametrize(
    ("context", "passage", "marked"),
    [
        pytest.param("a" * 1_000_000, "a" * 500_000 + "b", [(None, False), ("p", True)], id="one letter"),
        pytest.param(
            ("ab" * 8 + "Y") * 60_000, "ab" * 8 + "X" + "c" * 1_000, [(None, False)], id="a repeated head near the end"
        ),
        pytest.param(
            ("ab" * 8 + "Y") * 60_000,
            ("ab" * 8 + "Y") * 59_999 + "Z",
            [(None, False), ("p", True)],
            id="a long near miss",
        ),
    ],
)
def test_repetitive_hostile_text_is_marked_quickly(
    context: str, passage: str, marked: list[tuple[str | None, bool]]
) -> None:
    started = time.perf_counter()
    segments = context_segments(context, {"p": passage})
    assert time.perf_counter() - started < 2
    assert segments is not None
    assert [(segment["passage_id"], segment["cut"]) for segment in segments] == marked
    assert "".join(segment["text"] for segment in segments) == context
