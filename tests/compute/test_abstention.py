"""Abstentions as the offline judge decides them (``compute.abstention``): a pattern, or a sentence built from
a language's parts, that goes no further."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl
import pytest

from rag_compare.compute.abstention import abstains, sentences
from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.compute.words import normalized
from rag_compare.io.language_rules import builtin_languages

LANGUAGES = builtin_languages()


def abstained(
    answers: Sequence[str | None], questions: Sequence[str | None], language: str | None = "en"
) -> list[bool | None]:
    cases = pl.DataFrame(
        {
            "answer": normalized(pl.Series(list(answers), dtype=pl.String)),
            "question": pl.Series(list(questions), dtype=pl.String),
            "language": pl.Series([language] * len(answers), dtype=pl.String),
        }
    )
    return abstains(cases, LANGUAGES).to_list()


@pytest.mark.parametrize(
    ("answer", "question"),
    [
        ("Nothing in the passages you shared covers visitor parking.", "Is there visitor parking?"),
        ("Visitor parking is covered by none of the documents.", "Is there visitor parking?"),  # another order
        ("Dazu enthält der Kontext keine Informationen.", "Gibt es einen Zuschuss?"),
        ("Il contesto non fornisce informazioni su questo.", "L'azienda rimborsa l'asilo nido?"),
        (
            "Sorry, the material provided contains nothing on late-night taxis.",
            "Can I take a taxi home late?",
        ),  # "night"
        ("The handbook does not say. It only covers the pension fund.", "What is the pension match?"),
        ("I don\u2019t know how many visitor parking spaces there are.", "How many parking spaces for visitors?"),
    ],
)
def test_a_sentence_that_says_so_and_goes_no_further_abstains(answer: str, question: str) -> None:
    assert abstained([answer], [question]) == [True]


@pytest.mark.parametrize(
    ("answer", "question"),
    [
        (
            "It\u2019s not mentioned as a requirement; it\u2019s optional, though it can strengthen your application.",
            "Do I need it?",
        ),
        (
            "The context doesn't say it's part of your contract; it's set out in the benefits policy.",
            "Is it in my contract?",
        ),
        ("Im Handbuch wird das nicht erwähnt, die Firma zahlt 30 Euro.", "Wie viel zahlt die Firma?"),  # a number
        ("The passages mention the fee.", "Do the passages cover it?"),  # no negation
        ("The documents are not ready. Nobody mentions it.", "When?"),  # the parts in two sentences
        ("No, pets are not allowed in the office.", "Can I bring my dog?"),
    ],
)
def test_an_answer_that_goes_on_or_holds_no_abstaining_sentence_answers(answer: str, question: str) -> None:
    assert abstained([answer], [question]) == [False]


def test_without_a_question_an_answer_that_says_so_abstains() -> None:
    hedge = "It\u2019s not mentioned as a requirement; it\u2019s optional."
    assert abstained([hedge, hedge], [None, "Do I need it?"]) == [True, False]


def test_blank_abstains_and_an_unjudged_case_has_no_verdict() -> None:
    assert abstained(["", "  ", None], ["Q?"] * 3) == [True, True, None]
    assert abstained(["I don't know."], ["Q?"], language=None) == [None]


def test_a_pattern_across_sentences_makes_the_answer_one_abstaining_sentence() -> None:
    # the pattern's ".{0,40}" crosses the sentence end: no sentence says it alone
    answers = ["Ich konnte. Leider nichts finden, sorry.", "Ich konnte. Leider nichts finden, die Firma zahlt 30 Euro."]
    assert abstained(answers, ["Wie viel zahlt sie?"] * 2, language="de") == [True, False]


def test_a_language_without_parts_abstains_by_its_patterns_alone() -> None:
    bare = tuple(replace(language, abstention_parts=None) for language in LANGUAGES)
    cases = pl.DataFrame(
        {"answer": ["dazu enthält der kontext keine informationen."], "question": ["Zuschuss?"], "language": ["de"]}
    )
    assert abstains(cases, bare).to_list() == [False]
    assert abstains(cases, LANGUAGES).to_list() == [True]


def test_sentences_split_as_the_claims_do() -> None:
    split = pl.select(sentences(pl.lit("One. Two!  Three?\nFour: five; six"))).to_series().to_list()
    assert split == [["One.", "Two!", "Three?", "Four: five; six"]]


def test_the_judge_reads_abstentions_by_parts_and_answers_that_go_on() -> None:
    cases = pl.DataFrame(
        {
            "answer": [
                "None of the documents you provided addresses a dress code.",
                "Not mentioned; it's optional for staff.",
            ],
            "context": ["Staff may wear what they like; a tie is optional for staff."] * 2,
            "answerability": ["unanswerable", "answerable"],
            "question": ["What is the dress code?", "Is a tie required?"],
        }
    )
    verdicts = LexicalJudge().judge(cases)
    assert verdicts.get_column("abstained").to_list() == [True, False]
    assert verdicts.get_column("abstention_correct").to_list() == [True, True]
    assert LexicalJudge().abstentions(cases).get_column("abstained").to_list() == [True, False]
