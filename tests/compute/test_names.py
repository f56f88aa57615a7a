"""Names as the offline judge reads them (``compute.names``), and a name the context and the question both
lack making its claim unsupported."""

from __future__ import annotations

import polars as pl
import pytest

from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.compute.names import names_of, shares_piece
from rag_compare.io.language_rules import NameRules, builtin_languages

RULES = {language.code: language.names for language in builtin_languages()}


def names(answer: str, code: str = "en") -> list[str]:
    rules = RULES[code]
    assert rules is not None
    return names_of(pl.Series([answer], dtype=pl.String), rules).get_column("token").to_list()


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("The office is in Leeds, on Wellington Street.", ["leeds", "wellington", "street"]),
        ("Leeds is where the office is.", []),  # the first word of a sentence is any word
        ("Offices close early. Leeds closes at noon.", []),
        ("New York hosts the conference.", ["york"]),  # of a name opening a sentence, the words after the first
        ("IBM supplies the laptops. The IT desk sets them up.", ["ibm", "it"]),  # a capital past the first letter
        ("JobRad runs the scheme.", ["jobrad"]),
        ("La sede si trova a Forlì, nell\u2019Azienda.", ["forlì", "azienda"]),  # accents; after an apostrophe
        ("THE OFFICE IS IN LEEDS. It opens at nine.", []),  # a sentence in capitals holds no names
        ("Ask Ms Okafor\nSheffield is next.", ["ms", "okafor"]),  # a line break opens a sentence
        (
            "She met Herr Y\u0131lmaz and STRASSE Müller.",
            ["herr", "y\u0131lmaz", "strasse", "müller"],
        ),  # read as the judge reads
        ("I don't know.", []),
        ("", []),
    ],
)
def test_capitals_mark_names_where_the_language_capitalises_only_names(answer: str, expected: list[str]) -> None:
    assert names(answer) == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Die Arbeitskleidung liefert die Firma Engelbert Strauss.", ["engelbert", "strauss"]),  # a cue, a run
        ("Frau Weiß und Herr Brandt sind Ersthelfer.", ["weiss", "brandt"]),  # the run ends at a lower-case word
        ("Die Schulung findet im Haus Seeblick statt.", ["seeblick"]),
        ("Düsseldorf ist der Ort, nicht Regensburg.", ["düsseldorf", "regensburg"]),  # place-name endings
        ("Die Abrechnung muss nach Reiseende erfolgen.", []),  # nouns are capitalised: no cue, no name
        ("Die Burg ist alt.", []),  # an ending needs two letters before it
        ("Das IT-Team nutzt JobRad.", ["it", "jobrad"]),
    ],
)
def test_german_names_follow_cues_and_endings(answer: str, expected: list[str]) -> None:
    assert names(answer, "de") == expected


def test_cues_and_endings_apply_where_capitals_mark_names_too() -> None:
    rules = NameRules(capitals="names", cues=("ms",), endings=("ford",))
    found = names_of(pl.Series(["Bradford is big. Ask for Ms Lee."]), rules)
    assert found.get_column("token").to_list() == ["bradford", "ms", "lee"]
    assert names_of(pl.Series([None, "no capitals here"], dtype=pl.String), rules).height == 0


def test_a_piece_is_the_first_or_last_letters_of_a_word() -> None:
    tokens = pl.Series(["seeblick", "seeblick", "teilzeit", "köln"])
    hay = pl.Series(["im haus rheinblick", "der seeblick-weg", "teilzeitarbeit", None])
    shared = pl.select(shares_piece(pl.lit(tokens), pl.lit(hay), 6)).to_series().to_list()
    assert shared == [False, True, True, False]


def judged(answer: str, context: str, question: str, language: str = "en") -> float | None:
    cases = pl.DataFrame(
        {
            "answer": [answer],
            "context": [context],
            "answerability": ["answerable"],
            "question": [question],
            "language": [language],
        }
    )
    grounded: float | None = LexicalJudge().judge(cases).item(0, "grounded")
    return grounded


OFFICE = "The northern regional office is in Leeds, on Wellington Street. It is open Monday to Friday."


@pytest.mark.parametrize(
    ("answer", "question", "grounded"),
    [
        ("The northern regional office is in Leeds, on Wellington Street.", "Where is it?", 1.0),
        ("The northern regional office is in Sheffield, on Wellington Street.", "Where is it?", 0.0),
        ("The northern regional office is in Sheffield, on Wellington Street.", "Is it in Sheffield?", 1.0),
        ("The northern regional office is in sheffield, on Wellington Street.", "Where is it?", 1.0),  # no capital
        ("Sheffield has the northern regional office, on Wellington Street.", "Where is it?", 1.0),  # opens it
        ("The office is open Monday to Friday. Ms Adeyemi runs it.", "Who runs it?", 0.5),
        ("The regional office is open Monday to Friday, in Leeds.", "Where is it?", 1.0),
    ],
)
def test_a_name_the_context_and_the_question_lack_makes_its_claim_unsupported(
    answer: str, question: str, grounded: float
) -> None:
    assert judged(answer, OFFICE, question) == grounded


def test_what_names_cannot_catch() -> None:
    # a swapped common noun, and a name the context holds elsewhere, pass on their words
    assert judged("The northern regional warehouse is in Leeds, on Wellington Street.", OFFICE, "Where?") == 1.0
    context = OFFICE + " The southern office is in Sheffield."
    assert judged("The northern regional office is in Sheffield, on Wellington Street.", context, "Where?") == 1.0


def test_german_names_need_a_cue_or_an_ending_and_no_shared_piece() -> None:
    context = "Die Brandschutzschulung findet im Haus Rheinblick im dritten Stock statt."
    question = "Wo findet die Brandschutzschulung statt?"
    assert (
        judged("Die Brandschutzschulung findet im Haus Seeblick im dritten Stock statt.", context, question, "de")
        == 0.0
    )
    assert judged("Die Brandschutzschulung findet im dritten Stock statt, im Gebäude.", context, question, "de") == 1.0
    # its first six letters are the context's: "Rheinblickhaus" is a compound of the context's name, not another
    assert judged("Die Brandschutzschulung findet im Haus Rheinblickhaus statt.", context, question, "de") == 1.0
