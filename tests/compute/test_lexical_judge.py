"""The offline lexical judge: abstention, grounding against the context sent, and its fingerprint."""

from __future__ import annotations

from dataclasses import replace

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_compare.compute import grounding
from rag_compare.compute import lexical_judge as judge_module
from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.core.errors import ConfigError, ContractError
from rag_compare.core.protocols import Judge
from rag_compare.io.language_rules import Language, builtin_languages

ENGLISH = next(language for language in builtin_languages() if language.code == "en")


def with_english(english: Language) -> tuple[Language, ...]:
    """The shipped languages with ``english`` in place of the shipped English."""
    return tuple(english if language.code == "en" else language for language in builtin_languages())


HOTEL = "[hotel-1@v2] Hotel stays are capped at 180 euros per night, including taxes."
BIKE = "[bike-1@v2] Employees can lease a bicycle or e-bike worth up to 3,000 euros over 36 months."
MILEAGE = "[mile-1@v2] Business use of a private car is reimbursed at 0.35 euros per kilometre."
CONTEXT = "\n\n".join([HOTEL, BIKE, MILEAGE])


def judged(answer: str | None, context: str | None = CONTEXT, answerability: str = "answerable") -> dict[str, object]:
    """The verdicts of the default judge on one case."""
    cases = pl.DataFrame(
        {"answer": [answer], "context": [context], "answerability": [answerability]},
        schema={"answer": pl.String, "context": pl.String, "answerability": pl.String},
    )
    return LexicalJudge().judge(cases).row(0, named=True)


@pytest.mark.parametrize(
    ("answer", "grounded"),
    [
        ("Hotel stays are capped at 180 euros per night.", 1.0),
        ("Hotel stays are capped at 200 euros per night.", 0.0),  # 200 is not in the context, 180 is
        ("You can lease an e-bike worth up to 3000 euros.", 1.0),  # 3,000 in the context
        ("Hotels are capped at 180 euros. Flights are booked in business class.", 0.5),  # second invented
        ("Yes. Hotels are capped at 180 euros.", 1.0),  # "Yes." is no claim
        ("Mileage is reimbursed at 0.35 euros per kilometre.", 1.0),
        ("Mileage is reimbursed at 0.3 euros per kilometre.", 0.0),  # 0.3 is not 0.35
        ("The limit is 80 euros per night.", 0.0),  # 80 only inside 180
        ("The hotel cap is 180.", 0.0),  # "cap" is not "capped": 1 of 2 words
        ("Bicycles and e-bikes can be leased.", 1.0),  # plurals fold; "leased" is not "lease": 2 of 3 words
        ("Nightly taxes are included.", 0.0),  # "taxes" matches, "nightly" and "included" do not: 1 of 3
    ],
)
def test_grounded_share_of_supported_claims(answer: str, grounded: float) -> None:
    assert judged(answer)["grounded"] == grounded


@pytest.mark.parametrize(
    ("number", "context_number", "grounded"),
    [
        ("3,000", "3000", 1.0),
        ("3000", "3,000", 1.0),
        ("1,250,000", "1250000", 1.0),
        ("1250000", "1,250,000", 1.0),
        ("1234.5", "1,234.5", 1.0),
        ("300", "3,000", 0.0),  # part of a larger number
        ("000", "3,000", 0.0),
        ("1.5", "1.5", 1.0),
        ("1.5", "1.50", 0.0),  # a decimal stays as written
        ("5", "1.5", 0.0),
        ("2026", "2026-01", 1.0),
    ],
)
def test_numbers_are_whole_and_thousands_separators_do_not_count(
    number: str, context_number: str, grounded: float
) -> None:
    context = f"Bikes worth up to {context_number} euros are leased."
    assert judged(f"Bikes worth {number} euros.", context)["grounded"] == grounded
    assert judged(f"Bikes worth {number}.", context.replace(" euros", "."))["grounded"] == grounded  # before a dot


def test_words_count_whole_only() -> None:
    assert judged("The rate applies.", context="A separate applies.")["grounded"] == 0.0  # "rate" inside "separate"
    assert judged("The rate applies.", context="(Rate) applies.")["grounded"] == 1.0
    assert judged("A bus ride.", context="Buses ride.")["grounded"] == 0.0  # "bus" has 3 letters, not folded: 1 of 2
    assert judged("A bi rule.", context="Bis, rules.")["grounded"] == 0.0  # "bi" has 2 letters: "bis" is no plural


TRICKY_CONTEXT = "Separate rates: 12,500 (net). Buses' fares, e-bikes; 2026-01 caps;1.5 x15 rate_card ratess bis;"


@pytest.mark.parametrize(
    ("answer", "grounded"),
    [
        ("The rate is 12500.", 1.0),  # "rates:" folds to "rate"; 12,500 with its separator
        ("Bus fares and caps.", 1.0),  # "bus" is not "buses" but fare and cap are: 2 of 3
        ("E-bike fares: 1.5 and 15.", 1.0),  # 15 as in "x15"
        ("Rate card ratess; 2026 and 01 x15.", 1.0),  # "card" is inside "rate_card": 3 of 4
        ("The card is 500.", 0.0),  # "card" inside "rate_card", 500 inside 12,500
        ("Bi net.", 0.0),  # "bis" is no plural of the two-letter "bi": 1 of 2
        ("Rates are net. Buses run at 2,026 km.", 0.5),  # run and km are not there: 1 of 3
    ],
)
def test_occurrence_search_agrees_with_splitting_the_context_into_tokens(
    answer: str, grounded: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert judged(answer, TRICKY_CONTEXT)["grounded"] == grounded
    monkeypatch.setattr(grounding, "_ROUNDS", 0)  # every undecided word and number goes to the token split
    assert judged(answer, TRICKY_CONTEXT)["grounded"] == grounded


def test_min_overlap_decides_a_claim_with_some_unknown_words() -> None:
    cases = pl.DataFrame(
        {"answer": ["Hotel stays are capped at nightly rates."], "context": [HOTEL], "answerability": ["answerable"]}
    )  # content words: hotel, stay, capped, nightly, rate; the first three are in the context (3/5)
    assert LexicalJudge(min_overlap=0.6).judge(cases).item(0, "grounded") == 1.0
    assert LexicalJudge(min_overlap=0.7).judge(cases).item(0, "grounded") == 0.0


@pytest.mark.parametrize(
    "answer",
    [
        "I don't know.",
        "I don\u2019t know based on the handbook.",  # curly apostrophe
        "I do not know.",
        "I'm not sure about that.",
        "I\u2019m not sure.",
        "I cannot answer this question.",
        "Sorry, I can't answer that.",
        "I am unable to find that in the documents.",
        "There is no information about stock options.",
        "The provided context does not mention a sabbatical.",
        "The handbook doesn\u2019t say how much Northwind contributes.",
        "The passages do not cover this.",
        "That is not mentioned.",
        "I could not find a rule for this.",
        "The handbook says employees join the pension fund, but I DON'T KNOW the match.",
    ],
)
def test_abstention_phrasings(answer: str) -> None:
    verdict = judged(answer)
    assert (verdict["abstained"], verdict["grounded"]) == (True, None)


@pytest.mark.parametrize(
    "answer",
    ["Hotel stays are capped at 180 euros.", "The handbook is inconsistent: 0.35 or 0.30 euros.", "I know it."],
)
def test_answers_are_not_abstentions(answer: str) -> None:
    assert judged(answer)["abstained"] is False


@pytest.mark.parametrize(
    ("answer", "context", "expected"),
    [
        ("", CONTEXT, {"abstained": True, "grounded": None, "abstention_correct": False}),
        ("  \n ", CONTEXT, {"abstained": True, "grounded": None, "abstention_correct": False}),
        (None, CONTEXT, {"abstained": None, "grounded": None, "abstention_correct": None}),
        ("Hotels are capped at 180 euros.", None, {"abstained": False, "grounded": None, "abstention_correct": True}),
        ("Yes.", CONTEXT, {"abstained": False, "grounded": None, "abstention_correct": True}),  # no claim
        ("Yes, it is!", CONTEXT, {"abstained": False, "grounded": None, "abstention_correct": True}),  # stopwords
    ],
)
def test_missing_and_empty_answers_and_contexts(
    answer: str | None, context: str | None, expected: dict[str, object]
) -> None:
    assert judged(answer, context) == expected


@pytest.mark.parametrize(
    ("answer", "answerability", "correct"),
    [
        ("I don't know.", "unanswerable", True),
        ("I don't know.", "answerable", False),
        ("I don't know.", "conflict", False),  # conflict counts as answerable
        ("Hotels are capped at 180 euros.", "unanswerable", False),
        ("Hotels are capped at 180 euros.", "answerable", True),
        ("Hotels are capped at 180 euros.", "conflict", True),
        (None, "unanswerable", None),
    ],
)
def test_abstention_correct_follows_the_label(answer: str | None, answerability: str, correct: bool | None) -> None:
    assert judged(answer, answerability=answerability)["abstention_correct"] is correct


def test_output_is_a_new_frame_of_the_same_rows_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judge_module, "_SLICE_ROWS", 2)  # several slices, judged concurrently
    answers = [
        "Hotels are capped at 180 euros.",  # 1.0
        "I don't know.",  # abstained
        "Hotels are capped at 200 euros.",  # 0.0
        None,
        "Hotels are capped at 180 euros. Flights are business class.",  # 0.5
        "Yes.",
        "Mileage is reimbursed at 0.35 euros per kilometre.",  # 1.0
    ]
    cases = pl.DataFrame(
        {
            "case_id": [f"c{i}" for i in range(len(answers))],
            "answer": answers,
            "context": [CONTEXT] * len(answers),
            "answerability": ["answerable", "unanswerable", *["answerable"] * 5],
        }
    )
    before = cases.clone()
    verdicts = LexicalJudge().judge(cases)
    assert cases.equals(before)
    assert verdicts.schema == pl.Schema(
        {"abstained": pl.Boolean, "grounded": pl.Float64, "abstention_correct": pl.Boolean}
    )
    assert verdicts.get_column("grounded").to_list() == [1.0, None, 0.0, None, 0.5, None, 1.0]
    assert verdicts.get_column("abstained").to_list() == [False, True, False, None, False, False, False]
    assert verdicts.get_column("abstention_correct").to_list() == [True, True, True, None, True, True, True]
    assert LexicalJudge().judge(cases).equals(verdicts)


def test_empty_and_untyped_inputs() -> None:
    empty = LexicalJudge().judge(
        pl.DataFrame(schema={"answer": pl.String, "context": pl.String, "answerability": pl.String})
    )
    assert empty.height == 0
    assert empty.columns == ["abstained", "grounded", "abstention_correct"]
    nulls = LexicalJudge().judge(pl.DataFrame({"answer": [None], "context": [None], "answerability": ["answerable"]}))
    assert nulls.row(0) == (None, None, None)


def test_input_without_the_needed_columns_is_refused() -> None:
    with pytest.raises(ContractError) as excinfo:
        LexicalJudge().judge(pl.DataFrame({"answer": ["x"], "context": [1]}))
    assert {problem.column for problem in excinfo.value.problems} == {"context", "answerability"}


def test_fingerprint_names_every_setting() -> None:
    default: Judge = LexicalJudge()
    assert default.name == "lexical"
    assert len(default.fingerprint) == 64
    assert set(default.fingerprint) <= set("0123456789abcdef")
    assert LexicalJudge(min_overlap=0.6).fingerprint == default.fingerprint
    assert LexicalJudge(min_overlap=1).fingerprint == LexicalJudge(min_overlap=1.0).fingerprint
    others = {
        LexicalJudge(min_overlap=0.7).fingerprint,
        LexicalJudge(language="de").fingerprint,
        LexicalJudge(languages=(ENGLISH,)).fingerprint,
        LexicalJudge(languages=with_english(replace(ENGLISH, abstention_patterns=(r"\bno idea\b",)))).fingerprint,
        LexicalJudge(languages=with_english(replace(ENGLISH, stopwords=(*ENGLISH.stopwords, "euros")))).fingerprint,
        LexicalJudge(languages=with_english(replace(ENGLISH, plural_suffixes=("es", "s")))).fingerprint,
        LexicalJudge(languages=with_english(replace(ENGLISH, decimal_separator=","))).fingerprint,
    }
    assert len(others) == 7
    assert default.fingerprint not in others
    assert LexicalJudge(language="de-CH").fingerprint == LexicalJudge(language="de").fingerprint


def test_custom_settings_change_the_verdicts() -> None:
    cases = pl.DataFrame({"answer": ["No idea, sorry."], "context": [HOTEL], "answerability": ["unanswerable"]})
    assert LexicalJudge().judge(cases).row(0) == (False, 0.0, False)
    english = replace(ENGLISH, abstention_patterns=(*ENGLISH.abstention_patterns, r"\bno idea\b"))
    assert LexicalJudge(languages=with_english(english)).judge(cases).row(0) == (True, None, True)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"min_overlap": 0.0}, "min_overlap"),
        ({"min_overlap": 1.5}, "min_overlap"),
        ({"languages": ()}, "languages is empty"),
        ({"languages": (ENGLISH, ENGLISH)}, "en more than once"),
        ({"language": "sv"}, "'sv' has no rules: the judge knows de, en, es, fr, it, nl, pt"),
        ({"language": "German"}, "not a BCP 47 language tag"),
    ],
)
def test_bad_settings_are_refused(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        LexicalJudge(**settings)  # type: ignore[arg-type]


@given(st.lists(st.tuples(st.none() | st.text(max_size=60), st.none() | st.text(max_size=120)), max_size=8))
@settings(max_examples=40, deadline=None)
def test_grounded_is_a_share_or_null(rows: list[tuple[str | None, str | None]]) -> None:
    cases = pl.DataFrame(
        {"answer": [a for a, _ in rows], "context": [c for _, c in rows], "answerability": ["answerable"] * len(rows)},
        schema={"answer": pl.String, "context": pl.String, "answerability": pl.String},
    )
    verdicts = LexicalJudge().judge(cases)
    assert verdicts.height == len(rows)
    for grounded, abstained in zip(verdicts["grounded"], verdicts["abstained"], strict=True):
        assert grounded is None or 0.0 <= grounded <= 1.0
        assert grounded is None or abstained is False


@given(st.text(max_size=200))
@settings(max_examples=40, deadline=None)
def test_the_context_itself_as_answer_is_fully_grounded(text: str) -> None:
    assert judged(text, context=text)["grounded"] in (None, 1.0)


WORDS = st.sampled_from(["Hotel", "stays", "capped", "euros", "bus", "class", "e-bike", "Zürich", "taxes"])
NUMBERS = st.sampled_from(["180", "3,000", "0.35", "1.5", "2026-01", "12,345,678"])
SENTENCES = st.lists(st.one_of(WORDS, NUMBERS), min_size=1, max_size=8).map(lambda tokens: " ".join(tokens) + ".")


@given(st.lists(SENTENCES, min_size=1, max_size=6), st.data())
@settings(max_examples=40, deadline=None)
def test_sentences_copied_from_the_context_are_fully_grounded(sentences: list[str], data: st.DataObject) -> None:
    copied = data.draw(st.lists(st.sampled_from(sentences), min_size=1, max_size=3))
    assert judged(" ".join(copied), context="\n".join(sentences))["grounded"] == 1.0


@pytest.mark.parametrize(
    "context", ["Zürich.\nstays.", "Hotel.\nHotel.\nZürich.\nstays.", "Größe stays: Zürich stays."]
)
def test_a_word_after_a_character_past_ascii_is_found_where_it_is(context: str) -> None:
    """The search goes by byte offsets: a two-byte character before the word must not shift where it is looked
    for (a search counting characters put it one byte early, and the copied sentence was judged unsupported)."""
    assert judged("stays.", context=context)["grounded"] == 1.0


def test_records_are_judged_in_slices_of_one_size_a_multiple_of_the_threads() -> None:
    from rag_compare.compute.lexical_judge import _slice_size

    assert _slice_size(262_144, 2) == 65_536  # 4 slices: two rounds of two threads, none left alone
    assert _slice_size(1_000_000, 2) == 100_000
    assert _slice_size(150_001, 1) == 75_001  # at most 100,000 a slice: two of about one size
    assert _slice_size(0, 2) == 1
