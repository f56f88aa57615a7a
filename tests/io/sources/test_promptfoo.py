"""promptfoo results written by promptfoo's own command line (``tests/producers/promptfoo/``): the echo provider
answers five tests of ``tests.csv`` with the prompt it was sent; one more test's provider (``provider.js``) returns
an error."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from rag_compare import compare
from rag_compare.compute.freezing import import_run
from rag_compare.core.errors import InputFileError
from rag_compare.io.runs import load_run
from rag_compare.io.sources.promptfoo import read_promptfoo
from rag_compare.io.sources.rows import SOURCE_SCHEMA, SourceRows
from tests.helpers.data import EXAMPLE_CORPUS, ROOT
from tests.helpers.producers import PRODUCERS, promptfoo_eval

CONFIG = PRODUCERS / "promptfoo" / "promptfooconfig.yaml"
FAILING = "bike-lease@2026-01"  # its test's provider is provider.js, which returns this error:
PROVIDER_ERROR = "the model endpoint refused the request (HTTP 503 Service Unavailable)"
CAPTURED = ROOT / "runs" / "baseline.arrow"  # the example run captured offline (BM25, extractive generator)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return promptfoo_eval(CONFIG, tmp_path_factory.mktemp("promptfoo"))


@pytest.fixture(scope="module")
def produced(results: Path) -> dict[str, dict[str, Any]]:
    """promptfoo's own results, by case id."""
    table = json.loads(results.read_text(encoding="utf-8"))["results"]["results"]
    return {result["vars"]["case_id"]: result for result in table}


@pytest.fixture(scope="module")
def rows(results: Path) -> SourceRows:
    return read_promptfoo(results, "case_id")


def by_case(rows: SourceRows) -> dict[str, dict[str, Any]]:
    return {row["case_key"]: row for row in rows.frame.iter_rows(named=True)}


def test_every_result_is_a_row(rows: SourceRows, produced: dict[str, dict[str, Any]]) -> None:
    assert rows.frame.schema == SOURCE_SCHEMA
    assert (rows.read, rows.unit, rows.skipped, rows.problems) == (6, "result", (), ())  # 5 tests in the CSV, 1 inline
    assert sorted(rows.frame["case_key"].to_list()) == sorted(produced)
    assert sorted(rows.frame["position"].to_list()) == [1, 2, 3, 4, 5, 6]
    assert {row["source_id"] for row in by_case(rows).values()} == {result["id"] for result in produced.values()}


def test_ids_context_and_answer(rows: SourceRows, produced: dict[str, dict[str, Any]]) -> None:
    with (PRODUCERS / "promptfoo" / "tests.csv").open(encoding="utf-8", newline="") as stream:
        listed = {test["case_id"]: test["retrieved_passage_ids"].split(";") for test in csv.DictReader(stream)}
    with (ROOT / "corpora" / "handbook_passages.csv").open(encoding="utf-8", newline="") as stream:
        texts = {passage["passage_id"]: passage["text"] for passage in csv.DictReader(stream)}
    listed[FAILING] = ["bike-lease-1@2026-01"]  # the inline test of promptfooconfig.yaml
    for case_id, row in by_case(rows).items():
        result = produced[case_id]
        assert row["question"] == result["vars"]["question"]
        assert row["retrieved_passage_ids"] == listed[case_id]
        assert row["retrieved_texts"] is None  # the context var is the passages' texts joined: not a ranked list
        assert row["context"] == result["prompt"]["raw"]  # the prompt as rendered and sent
        assert row["context"].startswith("Answer the question from the handbook passages below.")
        assert all(texts[passage_id] in row["context"] for passage_id in listed[case_id])
        if case_id != FAILING:
            assert row["answer"] == result["response"]["output"]
            assert row["answer"] == row["context"]  # echo answers with the prompt it was sent


def test_an_errored_result_is_a_failed_row_that_keeps_its_vars(
    rows: SourceRows, produced: dict[str, dict[str, Any]]
) -> None:
    row, result = by_case(rows)[FAILING], produced[FAILING]
    assert result["error"] == PROVIDER_ERROR
    assert (row["status"], row["error"], row["failed_stage"], row["answer"]) == (
        "failed",
        PROVIDER_ERROR,
        "generate",
        None,
    )
    assert row["retrieved_passage_ids"] == ["bike-lease-1@2026-01"]
    others = rows.frame.filter(rows.frame["case_key"] != FAILING)
    assert others["status"].unique().to_list() == ["ok"]
    assert others["failed_stage"].null_count() == 5


def test_latency_and_tokens(rows: SourceRows, produced: dict[str, dict[str, Any]]) -> None:
    for case_id, row in by_case(rows).items():
        result = produced[case_id]
        assert row["latency_ms"] == result["latencyMs"]
        assert (row["prompt_tokens"], row["completion_tokens"]) == (0, 0)  # echo counts no tokens
        assert (row["prompt_tokens"], row["completion_tokens"]) == (
            result["tokenUsage"]["prompt"],
            result["tokenUsage"]["completion"],
        )


def test_the_case_id_var_is_chosen(results: Path) -> None:
    by_question = read_promptfoo(results, "question")
    assert by_question.frame["case_key"].to_list() == by_question.frame["question"].to_list()
    assert read_promptfoo(results, "ticket").frame["case_key"].null_count() == 6


def test_a_result_that_cannot_be_read_is_a_problem(results: Path, tmp_path: Path) -> None:
    document = json.loads(results.read_text(encoding="utf-8"))
    table = document["results"]["results"]
    table[1] = "not a result"
    table[3]["vars"]["retrieved_passage_ids"] = '["travel-meal-1@2026-01", '
    source = tmp_path / "results.json"
    source.write_text(json.dumps(document), encoding="utf-8")
    rows = read_promptfoo(source, "case_id")
    assert rows.read == 6
    assert [(problem.row, problem.column) for problem in rows.problems] == [(2, None), (4, "retrieved_passage_ids")]
    assert sorted(rows.frame["position"].to_list()) == [1, 3, 5, 6]


def test_a_file_of_several_providers_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    producers = PRODUCERS / "promptfoo"
    config.write_text(
        f"prompts: [file://{producers / 'prompt.txt'}]\n"
        "providers: [echo, {id: echo, label: second-echo}]\n"
        f"tests: file://{producers / 'tests.csv'}\n",
        encoding="utf-8",
    )
    results = promptfoo_eval(config, tmp_path)
    with pytest.raises(InputFileError, match="holds 2 runs") as raised:
        read_promptfoo(results, "case_id")
    assert "provider 'echo'" in str(raised.value)
    assert "provider 'second-echo'" in str(raised.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("case_id,question\na,b\n", "is not JSON"),
        ('{"results": {"version": 3}}', "no list `results.results`"),
        ('[{"vars": {}}]', "no list `results.results`"),
        ('{"results": {"results": []}}', "holds no results"),
    ],
)
def test_a_file_that_is_no_results_file_is_refused(tmp_path: Path, content: str, message: str) -> None:
    source = tmp_path / "results.json"
    source.write_text(content, encoding="utf-8")
    with pytest.raises(InputFileError, match=message):
        read_promptfoo(source, "case_id")


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="no such file"):
        read_promptfoo(tmp_path / "results.json", "case_id")


def test_the_results_import_and_compare_with_a_captured_run(
    results: Path, produced: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    imported = import_run(
        results,
        "promptfoo",
        EXAMPLE_CORPUS,
        {"name": "promptfoo-echo"},
        passages=ROOT / "corpora" / "handbook_passages.csv",
        output=tmp_path / "promptfoo.arrow",
    )
    assert (imported.imported.read, imported.imported.records.height, imported.imported.failed) == (6, 6, 1)
    records = {row["case_id"]: row for row in load_run(tmp_path / "promptfoo.arrow").records.iter_rows(named=True)}
    assert sorted(records) == sorted(produced)
    for case_id, record in records.items():
        assert record["context"] == produced[case_id]["prompt"]["raw"]
        assert record["context_passage_ids"] == record["retrieved_passage_ids"]  # every listed passage is in the prompt
    assert (records[FAILING]["status"], records[FAILING]["error"]) == ("failed", PROVIDER_ERROR)
    comparison = compare(CAPTURED, imported.run)
    statuses = dict(comparison.cases.select("case_id", pl.col("status").cast(pl.String)).iter_rows())
    assert statuses[FAILING] == "failed_in_candidate"
    # the captured run has 35 records, the 6 imported cases among them: 29 are missing from the import
    assert comparison.counts["missing_in_candidate"] == 29
    assert all(not statuses[case_id].startswith(("missing", "failed")) for case_id in produced if case_id != FAILING)
