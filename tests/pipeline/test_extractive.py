"""The extractive generator: sentences chosen by hand, abstention, and the shipped example."""

from __future__ import annotations

import polars as pl
import pytest

from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.core.errors import ConfigError
from rag_compare.core.protocols import Case, Context, Generation
from rag_compare.io.passages import load_passages
from rag_compare.pipeline.extractive import DEFAULT_ABSTENTION, ExtractiveGenerator
from tests.helpers.data import ROOT

HANDBOOK = Context(
    "[p1] Employees on a business trip receive a meal allowance of 45 euros per day. No receipts are needed.\n\n"
    "[p2] Hotel stays are capped at 150 euros per night. Bookings above the cap need approval from your manager.",
    ("p1", "p2"),
)
# "What meal allowance per day applies on trips?" has 6 terms: meal, allow, per, day, appli, trip.
#   [a] 4 of 6 (meal, allow, appli, trip) = 0.67;  [b] 5 of 6 = 0.83;  [c] 4 of 6 (meal, allow, per, day) = 0.67
RULES = Context(
    "[a] Meal allowance rules apply on trips.\n\n[b] The meal allowance is 45 euros per day on trips.\n\n"
    "[c] The meal allowance is paid per day.",
    ("a", "b", "c"),
)
RULES_QUESTION = "What meal allowance per day applies on trips?"
A = "Meal allowance rules apply on trips."
B = "The meal allowance is 45 euros per day on trips."
C = "The meal allowance is paid per day."


def ask(question: str, context: Context, generator: ExtractiveGenerator | None = None) -> str:
    generation = (generator or ExtractiveGenerator())(Case("q@v1", question, "v1"), context)
    assert (generation.prompt_tokens, generation.completion_tokens, generation.messages) == (None, None, None)
    return generation.answer


def test_answers_with_the_sentence_holding_the_question_terms() -> None:
    # hotel, cap, per, night: "Hotel stays are capped at 150 euros per night." holds all 4; the others 1 or 0.
    assert ask("What is the hotel cap per night?", HANDBOOK) == "Hotel stays are capped at 150 euros per night."
    # meal, allow, get, busi, trip (5): the first sentence holds 4 ("get" is not there), 0.8.
    assert ask("What meal allowance do I get on a business trip?", HANDBOOK) == (
        "Employees on a business trip receive a meal allowance of 45 euros per day."
    )


def test_best_sentences_in_context_order_up_to_max_sentences() -> None:
    assert ask(RULES_QUESTION, RULES) == f"{A} {B}"  # b first, then a before c (a tie, a comes earlier)
    assert ask(RULES_QUESTION, RULES, ExtractiveGenerator(max_sentences=1)) == B
    assert ask(RULES_QUESTION, RULES, ExtractiveGenerator(max_sentences=3)) == f"{A} {B} {C}"
    assert ask(RULES_QUESTION, RULES, ExtractiveGenerator(max_sentences=3, min_overlap=0.8)) == B


def test_labels_are_dropped_and_end_a_sentence() -> None:
    # One passage per line, no full stops: "[p1]" and "[p2]" still split them. meal, cap: p2 holds both, p1 one.
    context = Context("[p1] Hotel cap 150 euros\n[p2] Meal cap 45 euros", ("p1", "p2"))
    assert ask("What is the meal cap?", context, ExtractiveGenerator(max_sentences=1)) == "Meal cap 45 euros"
    assert ask("What is the meal cap?", context) == "Hotel cap 150 euros Meal cap 45 euros"


@pytest.mark.parametrize(
    ("question", "context"),
    [
        ("Is there a dress code?", HANDBOOK),  # no term in common
        ("What is the hotel cap per night?", Context("")),  # empty context
        ("What is it?", HANDBOOK),  # no content term
        ("Can I lease a bike or a car?", HANDBOOK),  # bike, car, leas: none there
    ],
)
def test_abstains_when_no_sentence_holds_enough_terms(question: str, context: Context) -> None:
    assert ask(question, context) == DEFAULT_ABSTENTION


def test_default_abstention_reads_as_an_abstention_to_the_lexical_judge() -> None:
    answered = ask("What is the hotel cap per night?", HANDBOOK)
    answers = pl.DataFrame({"answer": [DEFAULT_ABSTENTION, answered], "answerability": ["unanswerable"] * 2})
    assert LexicalJudge().abstentions(answers)["abstained"].to_list() == [True, False]


def test_same_question_and_context_give_the_same_answer() -> None:
    first = ExtractiveGenerator()(Case("q@v1", RULES_QUESTION, "v1"), RULES)
    assert first == ExtractiveGenerator()(Case("q@v1", RULES_QUESTION, "v1"), RULES) == Generation(f"{A} {B}")


def test_example_meal_allowance_answers_45_euros_from_its_passage() -> None:
    passages = load_passages(ROOT / "corpora" / "handbook_passages.csv")
    corpus = pl.read_csv(ROOT / "corpora" / "handbook.csv").filter(pl.col("case_id") == "meal-allowance-daily@2026-01")
    (question, required) = corpus.select("question", "required_passage_ids").row(0)
    text = passages.filter(pl.col("passage_id") == required)["text"].item()
    answer = ask(question, Context(f"[{required}] {text}", (required,)))
    assert "45 euros" in answer
    assert "[" not in answer


def test_config_records_the_settings() -> None:
    assert ExtractiveGenerator().config == {
        "kind": "extractive",
        "model": "extractive",
        "max_sentences": 2,
        "min_overlap": 0.4,
        "abstention": DEFAULT_ABSTENTION,
    }


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"max_sentences": 0}, "max_sentences must be"),
        ({"max_sentences": 1.5}, "max_sentences must be"),
        ({"max_sentences": True}, "max_sentences must be"),
        ({"min_overlap": 0}, "min_overlap must be"),
        ({"min_overlap": 1.5}, "min_overlap must be"),
        ({"min_overlap": "0.5"}, "min_overlap must be"),
        ({"abstention": " "}, "abstention is empty"),
    ],
)
def test_bad_settings_are_config_errors(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ExtractiveGenerator(**settings)  # type: ignore[arg-type]
