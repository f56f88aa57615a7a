"""A comparison's claim changes from scores files written by hand, with the expected changes beside them;
a side whose scores hold no claims is "not available", never "no change"."""

from __future__ import annotations

import json
from typing import Any

import polars as pl
import pytest

from rag_compare import Scores, compare
from tests.helpers.claims import claim, handmade_scores
from tests.helpers.data import HANDMADE_RUNS, PAYLOAD, ROOT, SCRIPT

PASSAGES = ROOT / "corpora" / "handbook_passages.csv"
HOTEL = "hotel-cap@2026-01"
MEAL = "meal-allowance-daily@2026-01"


# By hand: HOTEL's claim of the cap became unsupported (150 -> 180, words 5 of 7 shared), its Paris claim was
# dropped, a claim was added; MEAL's claim of the receipt became supported. Every other case: one claim, the same.
CLAIMS = {
    "baseline": {
        HOTEL: [claim("The hotel cap is 150 euros a night.", True), claim("Paris allows 210 euros.", True)],
        MEAL: [claim("Meals need a receipt.", False)],
    },
    "candidate": {
        HOTEL: [claim("The hotel cap is 180 euros a night.", False), claim("Book through Concur.", True)],
        MEAL: [claim("Meals need a receipt.", True)],
    },
}


def scored(side: str, *, with_claims: bool = True) -> Scores:
    return handmade_scores(side, CLAIMS[side] if with_claims else None)


@pytest.fixture(scope="module")
def both() -> Any:
    runs = [HANDMADE_RUNS / f"{side}.arrow" for side in ("baseline", "candidate")]
    return compare(*runs, passages=PASSAGES, baseline_scores=scored("baseline"), candidate_scores=scored("candidate"))


def shown(changes: list[dict[str, Any]]) -> list[tuple[str, str | None, str | None]]:
    return [
        (change["change"], (change["baseline"] or {}).get("text"), (change["candidate"] or {}).get("text"))
        for change in changes
    ]


def test_each_case_gets_the_changes_worked_out_by_hand(both: Any) -> None:
    claims = both.claims([HOTEL, MEAL, "bike-lease@2026-01"])
    assert claims.get_column("case_id").to_list() == [HOTEL, MEAL, "bike-lease@2026-01"]
    hotel, meal, bike = claims.get_column("claim_changes").to_list()
    assert shown(hotel) == [
        ("became_unsupported", "The hotel cap is 150 euros a night.", "The hotel cap is 180 euros a night."),
        ("dropped", "Paris allows 210 euros.", None),
        ("added", None, "Book through Concur."),
    ]
    assert shown(meal) == [("became_supported", "Meals need a receipt.", "Meals need a receipt.")]
    assert bike == []
    assert claims.get_column("candidate_claims").to_list()[1] == CLAIMS["candidate"][MEAL]


def test_the_summary_counts_every_case_and_tests_the_cases(both: Any) -> None:
    summary = both.claim_summary
    assert dict(summary.counts) == {"became_unsupported": 1, "became_supported": 1, "dropped": 1, "added": 1}
    assert dict(summary.cases) == {"became_unsupported": 1, "became_supported": 1, "dropped": 1, "added": 1}
    # one case worse (HOTEL: 1 became unsupported, 0 supported), one better (MEAL): two-sided sign test, p = 1.
    assert (summary.worse, summary.better, summary.p_value) == (1, 1, 1.0)
    # the cases with an ok record on both sides: failed and missing ones have no claims on a side
    assert (
        summary.compared
        == both.cases.filter(pl.col("baseline_status").eq("ok") & pl.col("candidate_status").eq("ok")).height
    )
    assert summary.unavailable == ()


def test_scores_without_claims_make_that_side_not_available() -> None:
    runs = [HANDMADE_RUNS / f"{side}.arrow" for side in ("baseline", "candidate")]
    comparison = compare(
        *runs,
        passages=PASSAGES,
        baseline_scores=scored("baseline", with_claims=False),
        candidate_scores=scored("candidate"),
    )
    claims = comparison.claims([HOTEL])
    assert claims.row(0, named=True)["claim_changes"] is None
    assert claims.row(0, named=True)["baseline_claims"] is None
    summary = comparison.claim_summary
    assert (summary.compared, summary.p_value) == (0, None)
    assert summary.unavailable == ("baseline: the scores of by-hand hold no claims",)


@pytest.mark.parametrize("with_texts", [False, True], ids=["json", "json-with-texts"])
def test_the_json_holds_the_summary_and_each_cases_changes(both: Any, with_texts: bool) -> None:
    payload = json.loads(both.to_json(with_texts=with_texts))
    assert payload["claims"] == both.claim_summary.to_dict()
    cases = {case["case_id"]: case for case in payload["cases"]}
    assert shown(cases[HOTEL]["claim_changes"]) == shown(both.claims([HOTEL]).item(0, "claim_changes"))
    assert cases["bike-lease@2026-01"]["claim_changes"] == []
    assert cases["leave-carryover@2025-01"]["claim_changes"] is None  # failed in the candidate: no claims there
    assert list(cases[HOTEL])[-1] == "claim_changes"
    assert ("question" in cases[HOTEL]) is with_texts
    assert "context" not in cases[HOTEL]["candidate"]


def test_claims_holding_markup_or_control_characters_are_escaped_in_every_format() -> None:
    hostile = f"{PAYLOAD} \x1b[31mred\x1b[0m \u202e"
    claims = {"baseline": {HOTEL: [claim(hostile, True)]}, "candidate": {HOTEL: [claim(hostile, False)]}}
    runs = [HANDMADE_RUNS / f"{side}.arrow" for side in ("baseline", "candidate")]
    comparison = compare(
        *runs,
        passages=PASSAGES,
        baseline_scores=handmade_scores("baseline", claims["baseline"], name=f"judge {SCRIPT}\x1b[2J"),
        candidate_scores=handmade_scores("candidate", claims["candidate"]),
    )
    markdown = comparison.render("markdown")
    assert "became unsupported: &quot;" not in markdown  # quotes stay quotes: only markup is escaped
    line = next(line for line in markdown.splitlines() if line.startswith("  - became unsupported:"))
    assert "<script" not in line
    assert "&lt;script&gt;" in line
    assert "\x1b" not in markdown
    assert "\\x1b\\[31mred" in line
    assert "\\u202e" in line
    assert "\u202e" not in markdown
    page = comparison.render("html")
    assert "<script>window.__pwned" not in page
    assert "\x1b" not in comparison.render("text")
    cases = {case["case_id"]: case for case in json.loads(comparison.to_json())["cases"]}
    assert cases[HOTEL]["claim_changes"][0]["candidate"]["text"] == hostile  # JSON carries it whole, escaped


def test_with_the_passages_a_shown_claim_names_the_passage_its_evidence_lies_in() -> None:
    # runs/: hotel-cap@2026-01's candidate context holds the hotel rule, then the meal rule; each claim's
    # evidence is the sentence of one of them.
    examples = [ROOT / "runs" / f"{side}.arrow" for side in ("baseline", "candidate")]
    comparison = compare(*examples, passages=PASSAGES)
    named = comparison.claims([HOTEL]).item(0, "candidate_claims")
    assert [claim["passage_id"] for claim in named] == ["travel-hotel-1@2026-01", "travel-meal-1@2026-01"]
    json_claims = json.loads(comparison.to_json())["cases"]  # every case: no context read back, none named
    assert all(
        change[side] is None or change[side]["passage_id"] is None
        for case in json_claims
        for change in case["claim_changes"] or []
        for side in ("baseline", "candidate")
    )
