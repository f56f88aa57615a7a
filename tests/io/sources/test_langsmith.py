"""LangSmith runs written by LangChain's own tracer (``tests/producers/make_langsmith.py``): a retrieval chain over the
example passages, one case whose chat model raises, one whose chain retrieves twice; ``expected.json`` holds what
the runs themselves recorded."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from rag_compare import compare
from rag_compare.compute.freezing import import_run
from rag_compare.core.errors import InputFileError
from rag_compare.io.runs import load_run
from rag_compare.io.sources.langsmith import read_langsmith
from rag_compare.io.sources.rows import SOURCE_SCHEMA, SourceRows
from tests.helpers.data import EXAMPLE_CORPUS, ROOT
from tests.helpers.producers import produce

FAILING = "bike-lease@2026-01"  # its chat model raises ConnectionError(...) in make_langsmith.py
TWO_RETRIEVALS = "flight-class@2026-01"  # retrieves 6 candidates first, then the 3 passages it sends
CAPTURED = ROOT / "runs" / "baseline.arrow"  # the example run captured offline (BM25, extractive generator)


@pytest.fixture(scope="module")
def produced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return produce("make_langsmith.py", tmp_path_factory.mktemp("langsmith"))


@pytest.fixture(scope="module")
def expected(produced: Path) -> dict[str, dict[str, Any]]:
    cases = json.loads((produced / "expected.json").read_text(encoding="utf-8"))
    return {case["case_id"]: case for case in cases}


@pytest.fixture(scope="module")
def rows(produced: Path) -> SourceRows:
    return read_langsmith(produced / "runs.jsonl", "case_id")


def by_case(rows: SourceRows) -> dict[str, dict[str, Any]]:
    return {row["case_key"]: row for row in rows.frame.iter_rows(named=True)}


def test_every_root_run_is_a_row_in_file_order(rows: SourceRows, expected: dict[str, dict[str, Any]]) -> None:
    assert rows.frame.schema == SOURCE_SCHEMA
    assert (rows.read, rows.unit, rows.skipped, rows.problems) == (7, "run", (), ())  # 7 cases, one root run a line
    assert rows.frame["case_key"].to_list() == list(expected)
    assert rows.frame["position"].to_list() == [1, 2, 3, 4, 5, 6, 7]
    assert rows.frame["source_id"].to_list() == [case["id"] for case in expected.values()]
    assert rows.frame["started_ns"].is_sorted()  # the chain was invoked case after case


def test_question_retrieval_context_and_answer_are_the_runs_own(
    rows: SourceRows, expected: dict[str, dict[str, Any]]
) -> None:
    for case_id, row in by_case(rows).items():
        case = expected[case_id]
        assert row["question"] == case["question"]
        assert row["retrieved_passage_ids"] == case["retrieved_passage_ids"]
        assert len(row["retrieved_passage_ids"]) == 3  # TOP_K of the context retriever
        assert row["retrieved_texts"] == case["retrieved_texts"]
        assert row["context"] == "\n\n".join(case["messages"])  # the system message (with the passages), the question
        assert all(text in row["context"] for text in row["retrieved_texts"])
        assert row["context_passage_ids"] is None  # derived by the import from the texts found in the context
        assert row["answer"] == case["answer"]


def test_the_retrieval_is_the_last_before_the_model_call(rows: SourceRows, expected: dict[str, dict[str, Any]]) -> None:
    case = expected[TWO_RETRIEVALS]
    assert case["retrievers"] == ["broad_retriever", "context_retriever"]  # the broad one comes first
    assert by_case(rows)[TWO_RETRIEVALS]["retrieved_passage_ids"] == case["retrieved_passage_ids"]


def test_a_model_that_raised_makes_a_failed_row_that_keeps_its_retrieval(
    rows: SourceRows, expected: dict[str, dict[str, Any]]
) -> None:
    row, case = by_case(rows)[FAILING], expected[FAILING]
    assert "Traceback (most recent call last)" in case["error"]  # LangChain records the exception, then its traceback
    assert row["status"] == "failed"
    assert row["error"] == "ConnectionError('the model endpoint is unreachable (connection refused)')"
    assert case["error"].startswith(row["error"])
    assert row["failed_stage"] == "llm"  # the chat model's run; the root chain failed with it
    assert (row["answer"], row["prompt_tokens"], row["completion_tokens"]) == (None, None, None)
    assert row["retrieved_passage_ids"] == case["retrieved_passage_ids"]
    assert row["context"] == "\n\n".join(case["messages"])
    others = rows.frame.filter(rows.frame["case_key"] != FAILING)
    assert others["status"].unique().to_list() == ["ok"]
    assert others["error"].null_count() == others.height


def test_latency_and_tokens(rows: SourceRows, expected: dict[str, dict[str, Any]]) -> None:
    for case_id, row in by_case(rows).items():
        case = expected[case_id]
        started, ended = datetime.fromisoformat(case["start_time"]), datetime.fromisoformat(case["end_time"])
        assert row["latency_ms"] == pytest.approx((ended - started).total_seconds() * 1000)
        assert row["latency_ms"] > 0
        assert (row["prompt_tokens"], row["completion_tokens"]) == (case["prompt_tokens"], case["completion_tokens"])
    assert by_case(rows)["meal-allowance-daily@2026-01"]["prompt_tokens"] == 180  # the first case's usage


def test_a_key_the_metadata_lacks_leaves_the_case_key_empty(produced: Path) -> None:
    rows = read_langsmith(produced / "runs.jsonl", "ticket")
    assert rows.frame["case_key"].null_count() == 7
    assert rows.frame["question"].null_count() == 0


def test_a_broken_line_is_a_problem_with_its_line_number(produced: Path, tmp_path: Path) -> None:
    lines = (produced / "runs.jsonl").read_text(encoding="utf-8").splitlines()
    source = tmp_path / "runs.jsonl"
    source.write_text("\n".join([lines[0], lines[1][:200], '["not", "a run"]', *lines[2:]]) + "\n", encoding="utf-8")
    rows = read_langsmith(source, "case_id")
    assert rows.read == 8  # the 7 runs, the second cut short, and a line that is JSON but no run
    assert [(problem.row, problem.expected.split(" (")[0]) for problem in rows.problems] == [
        (2, "a LangSmith run as one JSON object"),
        (3, "a LangSmith run: an object with `id`, `run_type` and `inputs`"),
    ]
    assert rows.frame["position"].to_list() == [1, 4, 5, 6, 7, 8]  # the run cut short on line 2 is not a row
    assert rows.frame["case_key"][1] == "hotel-cap@2026-01"


def test_a_child_run_on_its_own_line_is_skipped(produced: Path, tmp_path: Path) -> None:
    first = (produced / "runs.jsonl").read_text(encoding="utf-8").splitlines()[0]
    child = json.loads(first)["child_runs"][0]
    source = tmp_path / "runs.jsonl"
    source.write_text(first + "\n" + json.dumps(child) + "\n", encoding="utf-8")
    rows = read_langsmith(source, "case_id")
    assert rows.frame.height == 1
    assert [(skip.position, skip.source_id) for skip in rows.skipped] == [(2, child["id"])]
    assert "child run" in rows.skipped[0].reason


def test_a_run_with_no_question_retrieval_or_model_call_is_skipped(produced: Path, tmp_path: Path) -> None:
    first = json.loads((produced / "runs.jsonl").read_text(encoding="utf-8").splitlines()[0])
    indexing = {**first, "name": "index passages", "inputs": {"passages": 53}, "child_runs": []}
    source = tmp_path / "runs.jsonl"
    source.write_text(json.dumps(indexing) + "\n", encoding="utf-8")
    rows = read_langsmith(source, "case_id")
    assert (rows.read, rows.frame.height, [skip.position for skip in rows.skipped]) == (1, 0, [1])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("case_id,question\na,b\n", "is not JSON lines"),
        ('[\n  {"id": "a",\n   "run_type": "chain"}\n]\n', "holds one JSON document over several lines"),
        ("\n\n", "the file is empty"),
    ],
)
def test_a_file_that_is_not_json_lines_is_refused(tmp_path: Path, content: str, message: str) -> None:
    source = tmp_path / "runs.jsonl"
    source.write_text(content, encoding="utf-8")
    with pytest.raises(InputFileError, match=message):
        read_langsmith(source, "case_id")


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="no such file"):
        read_langsmith(tmp_path / "absent.jsonl", "case_id")


def test_the_runs_import_and_compare_with_a_captured_run(
    produced: Path, expected: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    imported = import_run(
        produced / "runs.jsonl",
        "langsmith",
        EXAMPLE_CORPUS,
        {"name": "langchain-chain"},
        passages=ROOT / "corpora" / "handbook_passages.csv",
        output=tmp_path / "langsmith.arrow",
    )
    assert (imported.imported.read, imported.imported.records.height, imported.imported.failed) == (7, 7, 1)
    records = {row["case_id"]: row for row in load_run(tmp_path / "langsmith.arrow").records.iter_rows(named=True)}
    assert sorted(records) == sorted(expected)
    for case_id, record in records.items():
        assert record["retrieved_passage_ids"] == expected[case_id]["retrieved_passage_ids"]
        assert record["context_passage_ids"] == expected[case_id]["retrieved_passage_ids"]  # all 3 are sent
        assert record["answer"] == expected[case_id]["answer"]
    assert (records[FAILING]["status"], records[FAILING]["failed_stage"]) == ("failed", "llm")
    comparison = compare(CAPTURED, imported.run)
    statuses = dict(comparison.cases.select("case_id", pl.col("status").cast(pl.String)).iter_rows())
    assert statuses[FAILING] == "failed_in_candidate"
    # the captured run has 35 records, the 7 imported cases among them: 28 are missing from the import
    assert comparison.counts["missing_in_candidate"] == 28
    assert all(not statuses[case_id].startswith(("missing", "failed")) for case_id in expected if case_id != FAILING)
