"""The offline BM25 retriever: scores against the Lucene formula by hand, version filtering, settings."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl
import pytest

from rag_compare.core.errors import ConfigError, ContractError, InputFileError, SecretInConfigError
from rag_compare.core.protocols import Case, CaseFailure
from rag_compare.pipeline.bm25 import BM25Retriever
from tests.helpers.credential_shapes import KEY_SHAPES, named_with, secret_parts
from tests.helpers.data import ROOT

Write = Callable[[str, str | bytes], Path]

# The Lucene formula as bm25s (and Lucene 8 on) computes it: per question term, idf * tf / (tf + norm(dl)), with
# idf = ln(1 + (N - df + 0.5) / (df + 0.5)) and norm(dl) = k1 * (1 - b + b * dl / avgdl). The textbook form multiplies
# the tf part by (k1 + 1) = 2.5, a constant that changes no ranking; bm25s leaves it out, so the scores are 1 / 2.5 of it.
# After tokenising (lower case, words of 2+ characters), dropping stopwords and stemming, version v1 holds:
#   a@v1  [meal, meal, hotel]           dl 3
#   b@v1  [meal, train]                 dl 2
#   c@v1  [hotel, desk, bike, lunch]    dl 4
#   d@v1  [train, bike]                 dl 2
# N = 4, avgdl = 11 / 4 = 2.75, k1 = 1.5, b = 0.75; the question "Meals, hotels or the desk?" is [meal, hotel, desk].
#   idf(meal) = idf(hotel) = ln(1 + (4 - 2 + 0.5) / (2 + 0.5)) = ln 2 = 0.693147
#   idf(desk) = ln(1 + (4 - 1 + 0.5) / (1 + 0.5)) = ln(3.333333) = 1.203973
#   norm(2) = 1.5 * (0.25 + 0.75 * 2 / 2.75) = 1.193182, norm(3) = 1.602273, norm(4) = 2.011364
#   a: meal 2 / (2 + 1.602273) = 0.555205; hotel 1 / (1 + 1.602273) = 0.384279
#      0.693147 * (0.555205 + 0.384279) = 0.651201
#   c: hotel and desk 1 / (1 + 2.011364) = 0.332075 each; 0.332075 * (0.693147 + 1.203973) = 0.629987
#   b: meal 1 / (1 + 1.193182) = 0.455959; 0.693147 * 0.455959 = 0.316046
#   d: no term of the question, left out.
# Version v2 matches the question better (a@v2 has meal 3 times) but is never returned for a v1 case;
# z-bike@v2 and y-bike@v2 tie on "bike" and come back in file order.
PASSAGES = pl.DataFrame(
    {
        "passage_id": ["a@v1", "b@v1", "c@v1", "d@v1", "a@v2", "z-bike@v2", "y-bike@v2"],
        "source_version": ["v1", "v1", "v1", "v1", "v2", "v2", "v2"],
        "text": [
            "Meals: a meal and a hotel.",
            "The meal on the train.",
            "A hotel desk, a bike and lunch.",
            "Train or bike.",
            "Meal, meal, meal: hotel desk.",
            "A bike.",
            "The bike.",
        ],
        "section": ["food", "food", "office", "commute", "food", "commute", "commute"],
    }
)
QUESTION = "Meals, hotels or the desk?"


def case(question: str, version: str = "v1") -> Case:
    return Case(case_id=f"q@{version}", question=question, source_version=version)


def test_scores_and_ranking_follow_the_lucene_formula() -> None:
    found = BM25Retriever(PASSAGES)(case(QUESTION), top_k=5)
    assert [(p.passage_id, p.score) for p in found] == [("a@v1", 0.6512), ("c@v1", 0.63), ("b@v1", 0.316)]
    assert found[0].text == "Meals: a meal and a hotel."
    assert dict(found[0].metadata) == {"source_version": "v1", "section": "food"}


def test_only_passages_of_the_case_version_come_back() -> None:
    by_version = BM25Retriever(PASSAGES)
    assert all(p.passage_id.endswith("@v1") for p in by_version(case(QUESTION), top_k=7))
    assert by_version(case(QUESTION, "v2"), top_k=1)[0].passage_id == "a@v2"
    assert BM25Retriever(PASSAGES, by_source_version=False)(case(QUESTION), top_k=1)[0].passage_id == "a@v2"


def test_top_k_cuts_and_ties_keep_file_order() -> None:
    retriever = BM25Retriever(PASSAGES)
    assert [p.passage_id for p in retriever(case(QUESTION), top_k=2)] == ["a@v1", "c@v1"]
    tied = retriever(case("A bike?", "v2"), top_k=3)
    assert [p.passage_id for p in tied] == ["z-bike@v2", "y-bike@v2"]
    assert tied[0].score == tied[1].score


@pytest.mark.parametrize("question", ["A sofa?", "Is it the?", ""])
def test_question_matching_no_passage_finds_nothing(question: str) -> None:
    assert BM25Retriever(PASSAGES)(case(question), top_k=3) == []


def test_unknown_source_version_fails_the_case() -> None:
    with pytest.raises(CaseFailure, match=r"no passages of source version 'v3'.*'v1', 'v2'"):
        BM25Retriever(PASSAGES)(case(QUESTION, "v3"), top_k=3)


def test_passages_of_stopwords_only_are_never_found() -> None:
    passages = pl.DataFrame({"passage_id": ["p1", "p2"], "source_version": ["v1", "v1"], "text": ["It is.", "A"]})
    assert BM25Retriever(passages)(case("Is it?"), top_k=3) == []


def test_config_records_the_settings(write: Write) -> None:
    path = write("passages.csv", PASSAGES.write_csv())
    retriever = BM25Retriever(path, by_source_version=False, k1=1.2, b=0.5, stemmer=None, stopwords=None)
    assert retriever.config == {
        "kind": "bm25",
        "library": "bm25s 0.3.16",
        "method": "lucene",
        "k1": 1.2,
        "b": 0.5,
        "stemmer": None,
        "stopwords": None,
        "by_source_version": False,
        "passages": {"path": str(path), "count": 7},
    }
    assert BM25Retriever(PASSAGES).config["passages"] == {"path": "<frame>", "count": 7}


def test_without_stemmer_and_stopwords_words_must_match_exactly() -> None:
    found = BM25Retriever(PASSAGES, stemmer=None, stopwords=None)(case("the hotels"), top_k=5)
    assert [p.passage_id for p in found] == ["b@v1"]  # "the" only; "hotels" is not "hotel"


def test_bad_passages_are_refused(write: Write, tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="text"):
        BM25Retriever(write("p.csv", "passage_id,source_version\np1,v1\n"))
    with pytest.raises(InputFileError, match="no such passages file"):
        BM25Retriever(tmp_path / "missing.csv")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"k1": -1}, "k1 must be"),
        ({"b": 1.5}, "b must be"),
        ({"method": "bm25+"}, "method must be one of lucene, robertson, atire"),
        ({"stemmer": "klingon"}, "stemmer 'klingon' is not a PyStemmer algorithm"),
        ({"stopwords": "klingon"}, "stopwords 'klingon' is not a stopword list"),
    ],
)
def test_bad_settings_are_config_errors(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        BM25Retriever(PASSAGES, **settings)  # type: ignore[arg-type]


@pytest.mark.parametrize("top_k", [0, -1])
def test_top_k_must_be_positive(top_k: int) -> None:
    with pytest.raises(ConfigError, match="top_k must be"):
        BM25Retriever(PASSAGES)(case(QUESTION), top_k=top_k)


def test_calls_from_many_threads_match_calls_in_turn() -> None:
    retriever = BM25Retriever(ROOT / "corpora" / "handbook_passages.csv")
    corpus = pl.read_csv(ROOT / "corpora" / "handbook.csv")
    cases = [Case(c, q, v) for c, q, v in corpus.select("case_id", "question", "source_version").iter_rows()] * 10
    in_turn = [retriever(c, 5) for c in cases]
    with ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(lambda c: retriever(c, 5), cases)) == in_turn


def test_example_questions_find_their_required_passages() -> None:
    retriever = BM25Retriever(ROOT / "corpora" / "handbook_passages.csv")
    found = retriever(
        Case("meal-allowance-daily@2026-01", "What is the daily meal allowance when I travel for work?", "2026-01"), 3
    )
    assert "travel-meal-1@2026-01" in [p.passage_id for p in found]
    assert all(p.metadata["source_version"] == "2026-01" for p in found)


@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_a_passages_path_holding_a_credential_is_refused_as_the_run_config_records_it(
    tmp_path: Path, secret: str
) -> None:
    passages = named_with(secret, tmp_path, ".parquet")
    PASSAGES.write_parquet(passages)
    with pytest.raises(SecretInConfigError) as raised:
        BM25Retriever(passages)
    assert str(raised.value).startswith("the path of `passages` holds a credential")
    assert not any(form in str(raised.value) for form in secret_parts(secret))
