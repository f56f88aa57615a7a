"""One definition of a word and of a number, shared by the offline judge, answer completeness and the
extractive generator."""

from __future__ import annotations

import unicodedata

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_compare.compute import words as words_module
from rag_compare.compute.completeness import answer_completeness
from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.compute.words import WORD_PATTERN, fold_plural, is_content_word, normalized, words_of
from rag_compare.core.protocols import Case, Context
from rag_compare.pipeline.extractive import DEFAULT_ABSTENTION, ExtractiveGenerator


def content_words(text: str) -> list[str]:
    words = pl.DataFrame({"word": normalized(pl.Series([text]))}).select(pl.col("word").str.extract_all(WORD_PATTERN))
    words = words.explode("word")
    return words.filter(is_content_word(pl.col("word"))).select(fold_plural(pl.col("word"))).to_series().to_list()


def grounded(answer: str, context: str) -> float | None:
    cases = pl.DataFrame({"answer": [answer], "context": [context], "answerability": ["answerable"]})
    return LexicalJudge().judge(cases).item(0, "grounded")


def kept(answer: str, passage: str) -> float | None:
    records = pl.DataFrame({"answer": [answer], "required_passage_ids": [["p"]]})
    return answer_completeness(records, pl.DataFrame({"passage_id": ["p"], "text": [passage]})).item(0)


def test_content_words_start_with_a_letter_are_two_characters_or_more_and_no_stopwords() -> None:
    # "3rd" starts with a digit; "_" is no letter, so "x_ray" is "x" (one character) and "ray"
    assert content_words("The 3rd e-bike: x_ray rates, a Cap of 2") == ["bike", "ray", "rate", "cap"]
    # letters past ASCII are letters: "Köln" is one word, "É" one character (no word), "Straße" folded
    assert content_words("É Köln STRASSE Straße") == ["köln", "strasse", "strasse"]


@pytest.mark.parametrize(
    ("answer", "source"),
    [("12345678 euros", "12,345,678 euros"), ("3,000 euros", "3000 euros"), ("3\u202f000 euros", "3,000 euros")],
)
def test_the_judge_and_completeness_read_numbers_alike(answer: str, source: str) -> None:
    assert grounded(answer, source) == 1.0
    assert kept(answer, source) == 1.0
    assert kept("1,345,678 euros", "12,345,678 euros") == 0.0


def test_the_judge_and_completeness_read_words_alike() -> None:
    # "Köln" is one word for both: its pieces "k" and "ln" do not make it
    assert grounded("Köln.", "Die Stadt K ln.") == 0.0
    assert kept("Köln", "K ln") == 0.0
    assert grounded("KÖLN.", "Die Stadt Köln.") == 1.0
    assert kept("köln", "KÖLN") == 1.0


def test_the_extractive_generator_reads_words_as_the_judge_does() -> None:
    # "Köln" is one word, not "k" and "ln": for the judge and for the generator
    assert grounded("The Köln rule.", "The K ln rule.") == 0.0
    generate = ExtractiveGenerator(min_overlap=1.0)
    answer = generate(Case("c", "The Köln rule?", "v1"), Context("The K ln rule.")).answer
    assert answer == DEFAULT_ABSTENTION
    assert generate(Case("c", "The Köln rule?", "v1"), Context("The KÖLN rule.")).answer == "The KÖLN rule."


APOSTROPHES = "\u2019\u02bc`\u00b4\u2018\u201b"


def read_as_python_does(text: str) -> str:
    """The normalisation written with the standard library: apostrophes, NFKC, casefold, spaces, format
    characters."""
    for apostrophe in APOSTROPHES:
        text = text.replace(apostrophe, "'")
    text = unicodedata.normalize("NFKC", text).casefold()
    kept = (" " if unicodedata.category(char) == "Zs" else char for char in text)
    return "".join(char for char in kept if unicodedata.category(char) != "Cf")


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("I don\u2019t\u00a0know", "i don't know"),
        ("I don\u02bct know", "i don't know"),
        ("l\u00b4entreprise l`ami l\u2018a", "l'entreprise l'ami l'a"),
        ("1\u202f000 et 2\u2009000", "1 000 et 2 000"),
        ("STRAẞE Straße", "strasse strasse"),
        ("Kö\u00adln", "köln"),
        ("ﬁnal ① Ⅻ", "final 1 xii"),
        ("Cafe\u0301", "café"),
        ("ΣΟΦΌΣ", "σοφόσ"),  # casefold makes the final sigma a sigma
    ],
)
def test_normalized_text(text: str, read: str) -> None:
    assert normalized(pl.Series([text])).item() == read == read_as_python_does(text)


# characters this Python's Unicode tables know: Polars reads newer ones (U+1CCD6 is "A" to it, unknown here)
KNOWN_CHARACTERS = st.characters(exclude_categories=("Cn", "Cs"))


@given(st.lists(st.none() | st.text(alphabet=KNOWN_CHARACTERS, max_size=40), max_size=6))
@settings(max_examples=300, deadline=None)
def test_normalized_text_is_the_standard_librarys_reading(texts: list[str | None]) -> None:
    expected = [None if text is None else read_as_python_does(text) for text in texts]
    assert normalized(pl.Series(texts, dtype=pl.String)).to_list() == expected


def test_the_case_folds_cover_every_character() -> None:
    # the folds are gathered below U+20000 to keep the first judging quick: nothing above it folds apart
    assert all(chr(code).lower().casefold() == chr(code).lower() for code in range(0x20000, 0x110000))


def test_text_is_normalised_again_only_where_nfkc_may_change_it() -> None:
    # Latin-1 text is NFKC-normalised only if it holds one of the few characters NFKC changes there
    latin1 = [chr(code) for code in range(256)]
    flagged = pl.Series(latin1).str.contains(words_module._NOT_NFKC_STABLE).to_list()
    assert flagged == [unicodedata.normalize("NFKC", char) != char for char in latin1]
    assert pl.Series(["\u0101", "e\u0301"]).str.contains(words_module._NOT_NFKC_STABLE).to_list() == [True, True]


@given(st.lists(st.none() | st.text(alphabet=st.characters(max_codepoint=127), max_size=40), max_size=6))
@settings(max_examples=300, deadline=None)
def test_the_words_of_ascii_text_are_found_alike_both_ways(texts: list[str | None]) -> None:
    frame = pl.DataFrame({"text": texts}, schema={"text": pl.String})
    found = frame.select(
        quick=words_of(pl.col("text"), ascii_only=True).list.filter(pl.element() != ""),
        full=words_of(pl.col("text")),
    )
    assert found.get_column("quick").to_list() == found.get_column("full").to_list()


def test_the_words_of_ascii_text_split_at_every_character_but_letters_and_digits() -> None:
    text = "a_b\tc\x00d~e.F9"
    assert pl.select(words_of(pl.lit(text), ascii_only=True)).item().to_list() == ["a", "b", "c", "d", "e", "F9"]
    assert pl.select(words_of(pl.lit(text))).item().to_list() == ["a", "b", "c", "d", "e", "F9"]
