"""answer_completeness: the share of required passages an answer keeps, on hand-made cases."""

from __future__ import annotations

import polars as pl
import pytest

from rag_compare.compute.completeness import answer_completeness

PASSAGES = pl.DataFrame(
    {
        "passage_id": ["rule", "exception", "approval", "legacy"],
        "text": [
            "Hotel stays are capped at 150 euros per night, including taxes.",
            "Exception: in Paris, London and Zurich the cap is 210 euros per night.",
            "Bookings above the nightly cap need prior approval from your line manager in Concur.",
            "The 2019 TravelDesk portal sent bookings above 120 euros to the department head.",
        ],
    }
)


def completeness(answers: list[str | None], required: list[list[str]]) -> list[float | None]:
    records = pl.DataFrame(
        {"answer": answers, "required_passage_ids": required},
        schema_overrides={"answer": pl.String, "required_passage_ids": pl.List(pl.String)},
    )
    return answer_completeness(records, PASSAGES).to_list()


@pytest.mark.parametrize(
    ("answer", "required", "expected"),
    [
        # both numbers kept: the rule's 150 and the exception's 210
        ("The cap is 150 euros, or 210 euros in Paris, London and Zurich.", ["rule", "exception"], 1.0),
        # the exception's number is lost
        ("The cap is 150 euros a night.", ["rule", "exception"], 0.5),
        # a distractor's number instead of the rule's
        ("Bookings above 120 euros need the department head's approval.", ["rule"], 0.0),
        # no numbers in the passage: 7 of its 9 content words (booking, nightly, cap, need, prior, approval,
        # line, manager, concur) appear in the answer (all but prior and concur) -> kept
        ("Bookings above the nightly cap need approval from your line manager.", ["approval"], 1.0),
        # fewer than half of them -> not kept
        ("Ask your manager.", ["approval"], 0.0),
        # thousands separators do not matter
        ("It is 150 euros; a stay of 1,000 nights is unusual.", ["rule"], 1.0),
    ],
)
def test_hand_made_answers(answer: str, required: list[str], expected: float) -> None:
    assert completeness([answer], [required]) == [expected]


def test_null_without_an_answer_or_without_known_passages() -> None:
    assert completeness([None, "150 euros", "150 euros"], [["rule"], [], ["unknown"]]) == [None, None, None]


def test_a_number_must_match_whole_not_as_part_of_another() -> None:
    assert completeness(["The cap is 1500 euros."], [["rule"]]) == [0.0]
