"""Run records: validated against their contract and the corpus, then joined with the labels."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import Result

from rag_compare.core.errors import ContractError, Problem
from rag_compare.io.corpus import load_corpus
from rag_compare.io.records import RECORD_NAMES, join_labels
from tests.helpers.credential_shapes import KEY_SHAPES, OPENAI_KEY
from tests.helpers.data import SMALL_CORPUS

Cli = Callable[..., Result]

Write = Callable[[str, str | bytes], Path]


def _problems(records: Path | pl.DataFrame, corpus: Path, environ: dict[str, str] | None = None) -> list[Problem]:
    with pytest.raises(ContractError) as excinfo:
        join_labels(records, load_corpus(corpus), environ or {})
    return list(excinfo.value.problems)


def test_records_are_typed_defaulted_and_joined(small_records: Path, small_corpus: Path) -> None:
    frame = join_labels(small_records, load_corpus(small_corpus), {})
    without_repeat = [name for name in RECORD_NAMES if name != "repeat"]  # records without it get none
    assert frame.columns[: len(without_repeat)] == without_repeat
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


@pytest.mark.parametrize(
    ("record", "column", "secret"),
    [
        pytest.param({"answer": f"use {OPENAI_KEY}"}, "answer", OPENAI_KEY, id="text"),
        pytest.param({"retrieved_passage_ids": ["meal-1", OPENAI_KEY]}, "retrieved_passage_ids", OPENAI_KEY, id="list"),
        pytest.param(
            {"trace": {"headers": {"x": KEY_SHAPES["bearer"]}}}, "trace", KEY_SHAPES["bearer"][7:], id="struct"
        ),
        pytest.param({"spans": [{"attrs": {"k": KEY_SHAPES["aws"]}}]}, "spans", KEY_SHAPES["aws"], id="list-of-struct"),
        pytest.param(
            {"prompt_messages": json.dumps([{"content": KEY_SHAPES["github"]}])},
            "prompt_messages",
            KEY_SHAPES["github"],
            id="json-text",
        ),
    ],
)
def test_freeze_refuses_a_credential_in_any_column(
    cli: Cli, write: Write, small_corpus: Path, tmp_path: Path, record: dict[str, Any], column: str, secret: str
) -> None:
    records = write("r.jsonl", json.dumps({"case_id": "meal@v2", **record}) + "\n")
    output = tmp_path / "run.arrow"
    result = cli("freeze", records, "--corpus", small_corpus, "--output", output)
    assert result.exit_code == 2, result.output
    assert f"row 1, column '{column}'" in result.output
    assert "credential" in result.output
    assert secret not in result.output
    assert not output.exists()


def test_freeze_refuses_a_credential_in_a_corpus_column_of_the_run(cli: Cli, write: Write, tmp_path: Path) -> None:
    secret = KEY_SHAPES["huggingface"]
    corpus = write("corpus.csv", SMALL_CORPUS + f"tok@v2,Is {secret} valid?,unanswerable,v2,,,\n")
    records = write("r.jsonl", '{"case_id": "meal@v2"}\n{"case_id": "tok@v2"}\n')
    output = tmp_path / "run.arrow"
    result = cli("freeze", records, "--corpus", corpus, "--output", output)
    assert result.exit_code == 2, result.output
    assert "row 2, column 'question (from the corpus)'" in result.output
    assert secret not in result.output
    assert not output.exists()
    other = write("other.jsonl", '{"case_id": "meal@v2"}\n')  # a case the run does not hold does not matter
    assert cli("freeze", other, "--corpus", corpus, "--output", output).exit_code == 0


def test_freeze_accepts_ordinary_words_shaped_like_key_prefixes(cli: Cli, write: Write, small_corpus: Path,
                                                                tmp_path: Path) -> None:  # fmt: skip
    answer = "sk-learn and a task-abcdefghijklmnopqrstuvwxyz0123456789 with the bearer of news abcdefghijk"
    records = write("r.jsonl", json.dumps({"case_id": "meal@v2", "answer": answer}) + "\n")
    assert cli("freeze", records, "--corpus", small_corpus, "--output", tmp_path / "run.arrow").exit_code == 0


# Samples of SMALL_CORPUS's cases, one table in three formats: meal@v2 twice (repeats 0 and 1), hotel@v2 once.
SAMPLES = pl.DataFrame({"case_id": ["meal@v2", "meal@v2", "hotel@v2"], "repeat": [0, 1, 0], "answer": ["a", "b", "c"]})


def _written(frame: pl.DataFrame, tmp_path: Path, suffix: str) -> Path:
    path = tmp_path / f"records{suffix}"
    {".csv": frame.write_csv, ".jsonl": frame.write_ndjson, ".parquet": frame.write_parquet}[suffix](path)
    return path


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_samples_of_a_case_are_told_apart_by_repeat(tmp_path: Path, small_corpus: Path, suffix: str) -> None:
    frame = join_labels(_written(SAMPLES, tmp_path, suffix), load_corpus(small_corpus), {})
    assert frame.columns[:3] == ["case_id", "repeat", "status"]  # repeat right after the case id
    assert frame.schema["repeat"] == pl.Int64
    assert frame.select("case_id", "repeat").rows() == [("meal@v2", 0), ("meal@v2", 1), ("hotel@v2", 0)]
    assert frame["question"].to_list() == ["What is the meal allowance?"] * 2 + ["What is the hotel cap?"]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_a_case_given_twice_without_repeat_is_refused_naming_both_rows(
    tmp_path: Path, small_corpus: Path, suffix: str
) -> None:
    problems = _problems(_written(SAMPLES.drop("repeat"), tmp_path, suffix), small_corpus)
    assert [(p.row, p.column, p.value) for p in problems] == [(1, "case_id", "'meal@v2'"), (2, "case_id", "'meal@v2'")]
    assert problems[0].expected.startswith("a case id given once: it is in rows 1, 2")
    assert "'repeat' column" in problems[0].expected


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_every_pair_given_twice_is_reported_with_the_other_problems(
    tmp_path: Path, small_corpus: Path, suffix: str
) -> None:
    # Rows 1 and 3 are both repeat 0 of meal@v2, rows 2 and 4 both repeat 1; row 5 is hotel@v2's repeat 0 with a
    # negative latency; row 6 repeats nothing (hotel@v2, 1).
    samples = pl.DataFrame(
        {
            "case_id": ["meal@v2", "meal@v2", "meal@v2", "meal@v2", "hotel@v2", "hotel@v2"],
            "repeat": [0, 1, 0, 1, 0, 1],
            "latency_ms": [1.0, 1.0, 1.0, 1.0, -5.0, 1.0],
        }
    )
    problems = _problems(_written(samples, tmp_path, suffix), small_corpus)
    assert [(p.row, p.column) for p in problems] == [(1, "case_id"), (2, "case_id"), (3, "case_id"),
                                                     (4, "case_id"), (5, "latency_ms")]  # fmt: skip
    assert problems[0].expected == "a (case_id, repeat) pair given once: repeat 0 of this case is in rows 1, 3"
    assert problems[1].expected == "a (case_id, repeat) pair given once: repeat 1 of this case is in rows 2, 4"


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("-1", "a sample number: a whole number of 0 or more"),
        ("", "a value (this column may not be empty)"),
        ("1.5", "a whole number"),
        ("two", "a whole number"),
    ],
)
def test_a_repeat_that_is_no_sample_number_is_refused(
    write: Write, small_corpus: Path, cell: str, expected: str
) -> None:
    records = write("r.csv", f"case_id,repeat\nmeal@v2,0\nmeal@v2,{cell}\n")
    (problem,) = _problems(records, small_corpus)
    assert (problem.row, problem.column, problem.expected) == (2, "repeat", expected)


def test_a_null_or_float_repeat_in_json_lines_is_refused(write: Write, small_corpus: Path) -> None:
    records = write("r.jsonl", '{"case_id": "meal@v2", "repeat": null}\n{"case_id": "hotel@v2", "repeat": 0.5}\n')
    assert {(p.row, p.column) for p in _problems(records, small_corpus)} == {(1, "repeat"), (2, "repeat")}
