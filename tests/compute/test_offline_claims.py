"""The offline judge's claim verdicts: each sentence as written, its verdict the one its answer's grounded share
counts, and its evidence the context sentence around its anchor; worked out by hand, and held against the
claims a human reader listed in tests/fixtures/strict_judge."""

from __future__ import annotations

from functools import cache

import polars as pl

from rag_compare import LexicalJudge
from tests.helpers.data import ROOT

STRICT = ROOT / "tests" / "fixtures" / "strict_judge" / "answers.jsonl"
CAP = "[h1] Hotel stays on business trips are capped at 150 euros per night, including taxes."
PARIS = "[h2] Exception: in Paris the cap is 210 euros per night."
CONTEXT = f"{CAP}\n\n{PARIS}"
CASES = pl.DataFrame(
    {
        "answer": [
            "Hotel stays are capped at 150 euros per night. Paris allows 300 euros.",
            "I don't know.",
            "Yes.",
            "Die Grenze liegt bei 150\u00a0Euro pro Nacht.",
            "An answer without its context.",
        ],
        "context": [CONTEXT, "x", "y", "Hotels: Die Grenze liegt bei 150 Euro pro Nacht. Sonst nichts.", None],
        "answerability": ["answerable"] * 5,
        "question": ["What is the hotel cap?", "What?", "Is it?", "Wie hoch ist die Grenze?", "What?"],
    }
)


def evidence(claims: list[dict[str, object]] | None, context: str) -> list[tuple[object, object, str | None]]:
    """Each claim's text, verdict and the context's text at its evidence span (None without one)."""
    shown = []
    for claim in claims or []:
        start, end = claim["start"], claim["end"]
        span = context[start:end] if isinstance(start, int) and isinstance(end, int) else None
        shown.append((claim["text"], claim["supported"], span))
    return shown


def test_each_sentence_is_a_claim_with_the_context_sentence_around_its_anchor() -> None:
    claims = LexicalJudge().claims(CASES).to_list()
    # The first claim's anchor is its number 150 (in the context): the h1 sentence. The second's number 300 is
    # not there, so its anchor is its longest word found, "paris" (first of the five-letter ones): the h2 line.
    assert evidence(claims[0], CONTEXT) == [
        ("Hotel stays are capped at 150 euros per night.", True, CAP),
        ("Paris allows 300 euros.", False, PARIS),
    ]
    assert claims[1] == []  # an abstention makes no claim
    assert claims[2] == []  # "Yes." holds no content word
    german = str(CASES.item(3, "context"))
    # written with a no-break space: shown as written; 150 found as written; ":" ends no sentence
    assert evidence(claims[3], german) == [
        ("Die Grenze liegt bei 150\u00a0Euro pro Nacht.", True, "Hotels: Die Grenze liegt bei 150 Euro pro Nacht.")
    ]
    assert claims[4] is None  # no context: nothing to judge against
    assert all(claim["passage_id"] is None and claim["cited"] is None for claim in claims[0])


@cache
def strict() -> tuple[pl.DataFrame, list[list[dict[str, object]] | None], pl.DataFrame]:
    rows = pl.read_ndjson(STRICT)
    cases = rows.select("answer", "context", "answerability", "question", "language")
    judge = LexicalJudge()
    return rows, judge.claims(cases).to_list(), judge.judge(cases)


def test_the_claims_are_the_sentences_a_reader_listed_and_grounded_is_their_supported_share() -> None:
    rows, claims, verdicts = strict()
    for row, found, verdict in zip(rows.iter_rows(named=True), claims, verdicts.iter_rows(named=True), strict=True):
        assert found is not None, row["case_id"]
        if verdict["abstained"]:
            assert found == [], row["case_id"]
            continue
        assert [claim["text"] for claim in found] == [claim["text"] for claim in row["claims"]], row["case_id"]
        supported = [bool(claim["supported"]) for claim in found]
        assert verdict["grounded"] == sum(supported) / len(supported), row["case_id"]


def test_every_evidence_span_lies_in_its_context_and_holds_a_word_of_its_claim() -> None:
    rows, claims, _ = strict()
    spans = 0
    for context, found in zip(rows.get_column("context"), claims, strict=True):
        for claim in found or []:
            if claim["start"] is None:
                continue
            spans += 1
            assert 0 <= claim["start"] < claim["end"] <= len(context)
            span = context[claim["start"] : claim["end"]].casefold()
            words = {word.strip(".,;:!?()«»\"'\u2019").casefold() for word in str(claim["text"]).split()}
            assert any(word and word in span for word in words), (claim, span)
    assert spans >= 100
