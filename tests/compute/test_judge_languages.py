"""How the offline judge chooses each case's language, and what a language changes in its verdicts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest

from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.core.errors import ConfigError
from rag_compare.io.language_rules import builtin_languages, languages_with, load_language

GERMAN_QUESTION = "Wie hoch ist die Pauschale für das Fahrrad?"
ENGLISH_QUESTION = "How much is the bicycle allowance?"
# "1.000" is a thousand in German and one in English; "1,000" the other way round
THOUSAND_DE = "Die Pauschale beträgt 1.000 Euro im Jahr."


def cases(**columns: list[str | None]) -> pl.DataFrame:
    rows = len(next(iter(columns.values())))
    defaults: dict[str, list[str | None]] = {"answerability": ["answerable"] * rows, "context": [THOUSAND_DE] * rows}
    return pl.DataFrame(defaults | columns, schema=dict.fromkeys(defaults | columns, pl.String))


def grounded(frame: pl.DataFrame, judge: LexicalJudge | None = None) -> list[float | None]:
    return (judge or LexicalJudge()).judge(frame).get_column("grounded").to_list()


def test_the_language_column_then_the_setting_then_the_question_decide() -> None:
    frame = cases(
        question=[GERMAN_QUESTION, ENGLISH_QUESTION, ENGLISH_QUESTION, GERMAN_QUESTION],
        language=[None, None, "de-AT", "en"],
        answer=["Die Pauschale beträgt 1000 Euro im Jahr."] * 4,
    )
    # detected German; detected English; the column's de-AT (read as de); the column's en
    assert LexicalJudge().languages_of(frame).to_list() == ["de", "en", "de", "en"]
    assert grounded(frame) == [1.0, 0.0, 1.0, 0.0]  # 1000 is "1.000" in German only
    # the setting fills in where the column is empty, and never overrides it
    assert LexicalJudge(language="fr").languages_of(frame).to_list() == ["fr", "fr", "de", "en"]


def test_ambiguous_numbers_follow_the_cases_language() -> None:
    frame = cases(
        question=[ENGLISH_QUESTION] * 4,
        language=["en", "de", "en", "de"],
        context=["The allowance is 1,000 euros a year."] * 2 + ["The allowance is 1,5 euros a day."] * 2,
        answer=["The allowance is 1000 euros a year."] * 2 + ["The allowance is 1.5 euros a day."] * 2,
    )
    # "1,000" is a thousand in English, 1.000 in German; "1,5" is one and a half in both
    assert grounded(frame) == [1.0, 0.0, 1.0, 1.0]


def test_a_case_without_rules_is_not_judged_and_counted() -> None:
    frame = cases(
        question=["年假有几天", ENGLISH_QUESTION, ENGLISH_QUESTION, ENGLISH_QUESTION],
        language=[None, "sv", "zh-Hans", None],
        answer=["我不知道。", "Jag vet inte.", "I don't know.", "I don't know."],
        answerability=["unanswerable"] * 4,
    )
    judge = LexicalJudge()
    assert judge.languages_of(frame).to_list() == ["und", "sv", "zh", "en"]
    verdicts = judge.judge(frame)
    assert verdicts.row(0) == verdicts.row(1) == verdicts.row(2) == (None, None, None)
    assert verdicts.row(3) == (True, None, True)
    # the setting is trusted over the script: every case without a tag is read as German then
    assert LexicalJudge(language="de").languages_of(frame.drop("language")).to_list() == ["de"] * 4


def test_abstentions_of_every_language_count_whatever_the_cases_language() -> None:
    answers = ["I don't know.", "Das weiß ich leider nicht.", "Je ne sais pas.", "No lo sé."]
    frame = cases(question=[GERMAN_QUESTION] * 4, language=["de"] * 4, answer=answers)
    assert LexicalJudge().judge(frame).get_column("abstained").to_list() == [True] * 4


def test_stopwords_and_plurals_are_the_cases_languages() -> None:
    frame = cases(
        question=[GERMAN_QUESTION] * 2,
        language=["de", "en"],
        context=["Die Regeln gelten für alle Mitarbeiter."] * 2,
        answer=["Die Regel gilt auch für sie."] * 2,
    )
    # German: die, auch, für, sie are stopwords; "regel" is there as "regeln", "gilt" is not: 1 of 2 words.
    # English: die and für are there, regel (no English plural), gilt, auch and sie are not: 2 of 6 words.
    assert grounded(frame, LexicalJudge(min_overlap=0.5)) == [1.0, 0.0]


def test_a_users_language_file_adds_or_replaces_a_language(tmp_path: Path) -> None:
    english = (Path(__file__).parents[2] / "rag_compare" / "io" / "languages" / "en.toml").read_text(encoding="utf-8")
    swedish = tmp_path / "sv.toml"
    swedish.write_text(
        english.replace('code = "en"', 'code = "sv"')
        .replace('name = "English"', 'name = "Swedish"')
        .replace("abstention_patterns = [", "abstention_patterns = [\n    '''\\bjag vet inte\\b''',"),
        encoding="utf-8",
    )
    languages = languages_with([swedish])
    assert [language.code for language in languages] == [*(language.code for language in builtin_languages()), "sv"]
    frame = cases(question=["Hur många semesterdagar?"], language=["sv"], answer=["Jag vet inte."])
    assert LexicalJudge(languages=languages).judge(frame).row(0)[0] is True
    assert LexicalJudge(languages=languages).fingerprint != LexicalJudge().fingerprint
    # a file of a shipped code replaces that language, in its place
    german = tmp_path / "de.toml"
    german.write_text(english.replace('code = "en"', 'code = "de"'), encoding="utf-8")
    replaced = languages_with([german])
    assert [language.code for language in replaced] == [language.code for language in builtin_languages()]
    assert next(language for language in replaced if language.code == "de") == replace(load_language(german), code="de")
    with pytest.raises(ConfigError, match="several language files are for de"):
        languages_with([german, german])
