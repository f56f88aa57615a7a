"""The budget context builder: whole passages in rank order, budgets counted by hand."""

from __future__ import annotations

import pytest

from rag_compare.core.errors import ConfigError
from rag_compare.core.protocols import Case, CaseFailure, Context, Passage
from rag_compare.pipeline.context_builder import BudgetContextBuilder, count_words_and_punctuation

CASE = Case(case_id="q@v1", question="What can I claim?", source_version="v1")
# Blocks with the default template "[{passage_id}] {text}", and their lengths:
#   "[p1] Meals: 45 euros."             21 chars,  8 tokens: [ p1 ] Meals : 45 euros .
#   "[p2] Hotels: 150 euros a night."   31 chars, 10 tokens: [ p2 ] Hotels : 150 euros a night .
#   "[p3] Bikes."                       11 chars,  5 tokens: [ p3 ] Bikes .
# The separator "\n\n" adds 2 chars and no token: p1 + p2 is 21 + 2 + 31 = 54 chars and 8 + 10 = 18 tokens.
PASSAGES = (
    Passage("p1", 2.5, "Meals: 45 euros.", {"section": "Travel > Meals"}),
    Passage("p2", 1.25, "Hotels: 150 euros a night.", {"section": "Travel > Hotels"}),
    Passage("p3", 0.5, "Bikes.", {"section": "Benefits"}),
)
FIRST_TWO = "[p1] Meals: 45 euros.\n\n[p2] Hotels: 150 euros a night."
FIRST_IDS = ("p1", "p2")


def count_spaced_words(text: str) -> int:
    return len(text.split())


def test_no_budget_takes_every_passage_in_rank_order() -> None:
    context = BudgetContextBuilder()(CASE, PASSAGES)
    assert context == Context(FIRST_TWO + "\n\n[p3] Bikes.", ("p1", "p2", "p3"))
    assert len(context.text) == 67


def test_char_budget_keeps_whole_passages_and_stops_at_the_first_that_does_not_fit() -> None:
    assert BudgetContextBuilder(54)(CASE, PASSAGES) == Context(FIRST_TWO, FIRST_IDS)
    # 53: p2 no longer fits; p3 would (21 + 2 + 11 = 34) but comes after it.
    assert BudgetContextBuilder(53)(CASE, PASSAGES) == Context("[p1] Meals: 45 euros.", ("p1",))
    assert BudgetContextBuilder(20)(CASE, PASSAGES) == Context("", ())
    assert BudgetContextBuilder(100)(CASE, []) == Context("", ())


def test_token_budget_with_the_default_counter() -> None:
    assert count_words_and_punctuation("[p1] Meals: 45 euros.") == 8
    assert BudgetContextBuilder(budget_tokens=18)(CASE, PASSAGES).passage_ids == FIRST_IDS
    assert BudgetContextBuilder(budget_tokens=17)(CASE, PASSAGES).passage_ids == ("p1",)


def test_token_budget_with_a_custom_counter() -> None:
    # Whitespace-separated words: p1 is 4 ("[p1]", "Meals:", "45", "euros."), p1 + p2 is 4 + 6 = 10.
    assert (
        BudgetContextBuilder(budget_tokens=10, count_tokens=count_spaced_words)(CASE, PASSAGES).passage_ids == FIRST_IDS
    )
    assert BudgetContextBuilder(budget_tokens=9, count_tokens=count_spaced_words)(CASE, PASSAGES).passage_ids == ("p1",)


def test_both_budgets_must_hold() -> None:
    assert BudgetContextBuilder(100, 17)(CASE, PASSAGES).passage_ids == ("p1",)
    assert BudgetContextBuilder(53, 100)(CASE, PASSAGES).passage_ids == ("p1",)
    assert BudgetContextBuilder(54, 18)(CASE, PASSAGES).passage_ids == FIRST_IDS


def test_template_may_name_the_score_and_metadata() -> None:
    builder = BudgetContextBuilder(template="{section} | {passage_id} ({score:.1f}): {text}", separator="\n")
    assert builder(CASE, PASSAGES[:2]).text == (
        "Travel > Meals | p1 (2.5): Meals: 45 euros.\nTravel > Hotels | p2 (1.2): Hotels: 150 euros a night."
    )


def test_template_field_a_passage_lacks_fails_the_case() -> None:
    with pytest.raises(CaseFailure, match=r"cannot format passage 'p1'.*'url'.*passage_id, score, section, text"):
        BudgetContextBuilder(template="{url}: {text}")(CASE, PASSAGES)


@pytest.mark.parametrize("text", ["", "  "])
def test_passage_without_text_fails_the_case(text: str) -> None:
    with pytest.raises(CaseFailure, match="Passage 'p9' has no text"):
        BudgetContextBuilder()(CASE, [*PASSAGES, Passage("p9", 0.1, text)])


@pytest.mark.parametrize("budget", [0, -5, 1.5, True, "100"])
def test_budgets_must_be_positive_whole_numbers(budget: object) -> None:
    with pytest.raises(ConfigError, match="budget_chars must be a whole number of 1 or more"):
        BudgetContextBuilder(budget)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="budget_tokens must be a whole number of 1 or more"):
        BudgetContextBuilder(budget_tokens=budget)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("template", "message"), [("[{passage_id] {text}", "not a valid"), ("{}: {text}", "positional")]
)
def test_bad_template_is_a_config_error(template: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        BudgetContextBuilder(template=template)


def test_config_records_the_settings_and_the_tokenizer() -> None:
    assert BudgetContextBuilder(500).config == {
        "kind": "budget",
        "budget_chars": 500,
        "budget_tokens": None,
        "tokenizer": "words-and-punctuation",
        "template": "[{passage_id}] {text}",
        "separator": "\n\n",
    }
    custom = BudgetContextBuilder(budget_tokens=100, count_tokens=count_spaced_words)
    assert custom.config["tokenizer"] == "tests.pipeline.test_context_builder.count_spaced_words"
