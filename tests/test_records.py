"""Run records: validated against their contract and the corpus, then joined with the labels."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from rag_compare.corpus import load_corpus
from rag_compare.errors import ContractError, Problem
from rag_compare.records import RECORD_NAMES, join_labels

Write = Callable[[str, str | bytes], Path]


def _problems(records: Path | pl.DataFrame, corpus: Path, environ: dict[str, str] | None = None) -> list[Problem]:
    with pytest.raises(ContractError) as excinfo:
        join_labels(records, load_corpus(corpus), environ or {})
    return list(excinfo.value.problems)


def test_records_are_typed_defaulted_and_joined(small_records: Path, small_corpus: Path) -> None:
    frame = join_labels(small_records, load_corpus(small_corpus), {})
    assert frame.columns[: len(RECORD_NAMES)] == list(RECORD_NAMES)
    assert frame.columns[-1] == "team"  # the records' own metadata comes last
    assert frame["case_id"].to_list() == ["hotel@v2", "meal@v2", "mileage@v2"]
    assert frame["status"].to_list() == ["ok", "failed", "ok"]
    assert frame["answerability"].to_list() == ["answerable", "answerable", "conflict"]
    assert frame["required_passage_ids"].to_list() == [["hotel-1", "hotel-exc-1"], ["meal-1"], ["mile-1", "mile-2"]]
    assert frame.schema["retrieved_scores"] == pl.List(pl.Float64)
    assert frame.schema["prompt_tokens"] == pl.Int64
    assert frame["context"].to_list() == ["[hotel-1] 150", None, None]


def test_every_record_problem_is_reported(write: Write, small_corpus: Path) -> None:
    records = write(
        "records.csv",
        "case_id,status,retrieved_passage_ids,retrieved_scores,latency_ms,prompt_tokens\n"
        "hotel@v2,ok,a;b,1.0,12,3\n"  # one score for two ids
        "nope@v2,ok,,,,\n"  # not in the corpus
        "meal@v2,crashed,,,fast,\n"  # unknown status, latency not a number
        "meal@v2,ok,,,-5,2.5\n"  # duplicate id, negative latency, fractional tokens
        ',ok,"[""a"", ",,,\n',  # blank id, broken JSON list
    )
    found = {(p.row, p.column) for p in _problems(records, small_corpus)}
    assert found == {
        (1, "retrieved_scores"),
        (2, "case_id"),
        (3, "status"),
        (3, "latency_ms"),
        (3, "case_id"),
        (4, "case_id"),
        (4, "latency_ms"),
        (4, "prompt_tokens"),
        (5, "case_id"),
        (5, "retrieved_passage_ids"),
    }


def test_unknown_case_names_the_corpus(write: Write, small_corpus: Path) -> None:
    (problem,) = _problems(write("r.jsonl", '{"case_id": "nope@v2"}\n'), small_corpus)
    assert (problem.row, problem.column, problem.value) == (1, "case_id", "'nope@v2'")
    assert f"a case id of the corpus {small_corpus}" == problem.expected


def test_records_column_may_not_shadow_a_corpus_column(write: Write, small_corpus: Path) -> None:
    (problem,) = _problems(write("r.jsonl", '{"case_id": "meal@v2", "question": "mine"}\n'), small_corpus)
    assert problem.column == "question"
    assert "labels come from the corpus" in problem.expected


def test_environment_secret_in_a_text_cell_is_refused_without_quoting_it(write: Write, small_corpus: Path) -> None:
    secret = "sk-live-0123456789"
    records = write("r.jsonl", f'{{"case_id": "meal@v2", "answer": "key is {secret}"}}\n')
    (problem,) = _problems(records, small_corpus, {"OPENAI_API_KEY": secret})
    assert (problem.row, problem.column, problem.value) == (1, "answer", None)
    assert "OPENAI_API_KEY" in problem.expected
    assert secret not in str(problem)


def test_missing_case_id_column_is_refused(write: Write, small_corpus: Path) -> None:
    (problem,) = _problems(write("r.csv", "id,answer\nmeal@v2,x\n"), small_corpus)
    assert problem.column == "case_id"
    assert problem.row is None


def test_frame_input_is_not_modified(small_corpus: Path) -> None:
    records = pl.DataFrame({"case_id": ["meal@v2"], "retrieved_passage_ids": [["meal-1"]]})
    before = records.clone()
    frame = join_labels(records, load_corpus(small_corpus), {})
    assert records.equals(before)
    assert frame["retrieved_passage_ids"].to_list() == [["meal-1"]]
