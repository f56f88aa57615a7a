"""OpenInference traces as OTLP/JSON lines, written by the real producers (tests/producers/make_openinference.py):
a LlamaIndex query engine (one query whose model raises, one reranked) and a LangChain chain (one whose model
raises), instrumented by OpenInference, exported with the OpenTelemetry SDK; and the same traces loaded into
Phoenix, whose spans dataframe is saved as Parquet and JSONL (tests/producers/make_phoenix.py). Expected values
are what the pipelines themselves reported (``expected.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from rag_compare import compare
from rag_compare.compute.freezing import import_run
from rag_compare.core.errors import InputFileError
from rag_compare.io.runs import load_run
from rag_compare.io.sources.openinference import read_openinference
from rag_compare.io.sources.rows import SOURCE_SCHEMA, SourceRows
from tests.helpers.data import EXAMPLE_CORPUS, ROOT
from tests.helpers.producers import PHOENIX_PYTHON, produce

CAPTURED = ROOT / "runs" / "baseline.arrow"  # captured over the example corpus: BM25, extractive generator


@pytest.fixture(scope="module")
def produced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return produce("make_openinference.py", tmp_path_factory.mktemp("openinference"))


@pytest.fixture(scope="module")
def phoenix(produced: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Phoenix's spans dataframe of the same traces, saved as Parquet and JSONL (tests/producers/make_phoenix.py)."""
    traces = str(produced / "traces_base64.jsonl")
    return produce("make_phoenix.py", tmp_path_factory.mktemp("phoenix"), traces, python=PHOENIX_PYTHON)


@pytest.fixture(scope="module")
def expected(produced: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((produced / "expected.json").read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def rows(produced: Path) -> SourceRows:
    return read_openinference(produced / "traces.jsonl", "case_id")


def by_case(rows: SourceRows) -> dict[str, dict[str, Any]]:
    return {row["case_key"]: row for row in rows.frame.iter_rows(named=True)}


def test_one_row_per_queried_trace_in_the_source_schema(rows: SourceRows, expected: dict[str, Any]) -> None:
    # 9 cases: 5 LlamaIndex queries (one raising, one reranked) and 4 LangChain ones (one raising).
    assert rows.frame.schema == pl.Schema(SOURCE_SCHEMA)
    assert rows.unit == "trace"
    assert sorted(by_case(rows)) == sorted(case["case_id"] for case in expected["cases"])
    assert rows.frame.height == len(expected["cases"]) == 9
    assert rows.frame.get_column("source_id").str.len_chars().to_list() == [32] * 9  # trace ids in hex
    assert rows.problems == ()


def test_the_index_build_is_skipped_and_counted(rows: SourceRows, expected: dict[str, Any]) -> None:
    assert rows.read == expected["traces"] == len(expected["cases"]) + expected["index_traces"]
    assert len(rows.skipped) == expected["index_traces"] >= 1
    assert {skipped.reason for skipped in rows.skipped} == {
        "no retriever, reranker or LLM span (an indexing or embedding trace)"
    }
    assert all(skipped.source_id for skipped in rows.skipped)


def test_questions_and_ranked_retrieval_as_the_pipelines_returned_them(
    rows: SourceRows, expected: dict[str, Any]
) -> None:
    found = by_case(rows)
    for case in expected["cases"]:
        row = found[case["case_id"]]
        assert row["question"] == case["question"]
        if "retrieved_passage_ids" not in case:  # LlamaIndex raised: the response (and its nodes) never came back
            assert row["retrieved_passage_ids"] is not None
            assert len(row["retrieved_passage_ids"]) == 3
            continue
        # LlamaIndex: `document.id` is the node id (the passage id); LangChain: `passage_id` in the metadata.
        assert row["retrieved_passage_ids"] == case["retrieved_passage_ids"], case["case_id"]
        assert row["retrieved_scores"] == case["retrieved_scores"], case["case_id"]  # LangChain: no scores (None)
        assert len(row["retrieved_texts"]) == len(case["retrieved_passage_ids"])


def test_a_rerankers_output_wins_over_the_retrieval_it_reranked(rows: SourceRows, expected: dict[str, Any]) -> None:
    # The retriever found 4 passages; StructuredLLMRerank kept 2, scored 1-10 by its model.
    reranked = next(case for case in expected["cases"] if case["case_id"] == "parental-leave-weeks@2026-01")
    row = by_case(rows)["parental-leave-weeks@2026-01"]
    assert row["retrieved_passage_ids"] == reranked["retrieved_passage_ids"]
    assert len(row["retrieved_passage_ids"]) == 2
    assert row["retrieved_scores"] == reranked["retrieved_scores"]


def test_the_context_is_the_prompt_the_model_received(rows: SourceRows, expected: dict[str, Any]) -> None:
    found = by_case(rows)
    for case in expected["cases"]:  # a LangChain prompt: its messages' contents, joined with newlines
        assert found[case["case_id"]]["context"] == case["prompt"], case["case_id"]
    assert rows.frame.get_column("context_passage_ids").null_count() == 9  # left to the common part


def test_answers_and_failures_as_the_pipelines_reported_them(rows: SourceRows, expected: dict[str, Any]) -> None:
    found = by_case(rows)
    for case in expected["cases"]:
        row = found[case["case_id"]]
        if "error" in case:
            assert (row["status"], row["error"], row["failed_stage"]) == ("failed", case["error"], "llm")
            assert row["answer"] is None  # LangChain's failed chat span holds an empty result, not an answer
        else:
            assert (row["status"], row["error"], row["failed_stage"]) == ("ok", None, None)
            assert row["answer"] == case["answer"]
    assert sorted(found[case["case_id"]]["status"] for case in expected["cases"]).count("failed") == 2


def test_latency_start_and_tokens(rows: SourceRows, expected: dict[str, Any]) -> None:
    found = by_case(rows)
    for case in expected["cases"]:
        row = found[case["case_id"]]
        assert row["latency_ms"] > 0
        assert row["started_ns"] > 0
        # The models' own usage, summed over a case's calls (the reranked case: reranker + answer); none when raised.
        assert (row["prompt_tokens"], row["completion_tokens"]) == (case["prompt_tokens"], case["completion_tokens"])
    assert rows.frame.get_column("started_ns").is_sorted()  # the cases were asked one after another


def test_base64_ids_give_the_same_rows(produced: Path, rows: SourceRows) -> None:
    # protobuf's own JSON mapping: ids in base64, enums by name (STATUS_CODE_ERROR).
    assert "STATUS_CODE_ERROR" in (produced / "traces_base64.jsonl").read_text(encoding="utf-8")
    base64_rows = read_openinference(produced / "traces_base64.jsonl", "case_id")
    assert base64_rows.frame.equals(rows.frame)
    assert (base64_rows.read, base64_rows.skipped) == (rows.read, rows.skipped)


# Phoenix keeps times to the microsecond and scores to 10 digits; pandas' JSON keeps milliseconds by default (epoch
# numbers), microseconds as ISO text with `date_unit="us"`.
@pytest.mark.parametrize(
    ("name", "time_ns"), [("spans.parquet", 1_000), ("spans.jsonl", 1_000_000), ("spans_iso.jsonl", 1_000)]
)
def test_phoenix_spans_give_the_rows_of_the_traces(phoenix: Path, rows: SourceRows, name: str, time_ns: int) -> None:
    read = read_openinference(phoenix / name, "case_id")

    assert (read.read, read.skipped[0].reason, read.problems) == (rows.read, rows.skipped[0].reason, ())
    mine, theirs = rows.frame.sort("source_id"), read.frame.sort("source_id")
    inexact = ["position", "started_ns", "latency_ms", "retrieved_scores"]
    assert theirs.drop(inexact).equals(mine.drop(inexact))
    for ours, phoenix_row in zip(mine.iter_rows(named=True), theirs.iter_rows(named=True), strict=True):
        assert abs(ours["started_ns"] - phoenix_row["started_ns"]) < time_ns
        assert ours["latency_ms"] == pytest.approx(phoenix_row["latency_ms"], abs=2 * time_ns / 1e6)
        assert ours["retrieved_scores"] == (
            None
            if phoenix_row["retrieved_scores"] is None
            else pytest.approx(phoenix_row["retrieved_scores"], rel=1e-9)
        )


def test_a_broken_phoenix_row_is_a_problem_at_its_line(phoenix: Path, rows: SourceRows, tmp_path: Path) -> None:
    lines = (phoenix / "spans.jsonl").read_text(encoding="utf-8").splitlines()
    broken = [*lines[:3], '{"context.span_id": "00f067aa0ba902b7", "start_time": 1}', "not json", *lines[3:]]
    (tmp_path / "spans.jsonl").write_text("\n".join(broken) + "\n", encoding="utf-8")

    read = read_openinference(tmp_path / "spans.jsonl", "case_id")

    assert [problem.row for problem in read.problems] == [4, 5]
    assert "`context.trace_id` is not 16 bytes in hex or base64" in read.problems[0].expected
    assert "as one JSON object (Expecting value)" in read.problems[1].expected
    assert read.frame.height == rows.frame.height


def test_another_metadata_key_or_none(produced: Path) -> None:
    assert read_openinference(produced / "traces.jsonl", "team").frame.get_column("case_key").unique().to_list() == [
        "handbook"
    ]
    assert read_openinference(produced / "traces.jsonl", "ticket").frame.get_column("case_key").null_count() == 9


def test_broken_lines_are_problems_at_their_line_and_the_rest_is_read(
    produced: Path, rows: SourceRows, tmp_path: Path
) -> None:
    lines = (produced / "traces.jsonl").read_text(encoding="utf-8").splitlines()
    bad_id = json.loads(lines[-1])
    bad_id["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] = "not-an-id"
    # Line 5 repeats a line holding token counts: its spans count once (the tokens are not summed twice).
    repeated = next(line for line in lines if "llm.token_count.prompt" in line)
    broken = [
        "{not json",
        *lines[:2],
        '{"resource": {}}',
        repeated,
        *lines[2:-1],
        "[1, 2]",
        json.dumps(bad_id),
        lines[-1],
    ]
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(broken) + "\n", encoding="utf-8")

    read = read_openinference(path, "case_id")

    # Broken: line 1, line 4, then after the repeat and the other len(lines) - 3 lines (5 to len(lines) + 2) the
    # array and the copy of the last line with a bad id; the last line itself (len(lines) + 5) is read.
    assert [problem.row for problem in read.problems] == [1, 4, len(lines) + 3, len(lines) + 4]
    assert "as one JSON object (Expecting property name" in read.problems[0].expected
    assert "no `resourceSpans` list" in read.problems[1].expected
    assert "`traceId` is not 16 bytes in hex or base64" in read.problems[3].expected
    assert read.frame.drop("position").equals(rows.frame.drop("position"))


def test_a_file_that_cannot_be_read_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="no such file"):
        read_openinference(tmp_path / "missing.jsonl", "case_id")
    (tmp_path / "empty.jsonl").write_text("\n  \n", encoding="utf-8")
    with pytest.raises(InputFileError, match="the file is empty"):
        read_openinference(tmp_path / "empty.jsonl", "case_id")
    (tmp_path / "text.jsonl").write_text("hello\nworld\n", encoding="utf-8")
    with pytest.raises(InputFileError, match="is not JSON lines: no line is JSON"):
        read_openinference(tmp_path / "text.jsonl", "case_id")
    (tmp_path / "pretty.json").write_text('{\n  "resourceSpans": []\n}\n', encoding="utf-8")
    with pytest.raises(InputFileError, match="holds one JSON document over several lines"):
        read_openinference(tmp_path / "pretty.json", "case_id")
    (tmp_path / "spans.parquet").write_text("not parquet", encoding="utf-8")
    with pytest.raises(InputFileError, match="cannot be read as Parquet"):
        read_openinference(tmp_path / "spans.parquet", "case_id")
    (tmp_path / "latin1.jsonl").write_bytes(b'{"a": "caf\xe9"}\n')
    with pytest.raises(InputFileError, match="is not UTF-8"):
        read_openinference(tmp_path / "latin1.jsonl", "case_id")


def test_the_traced_run_imports_and_compares_with_a_captured_one(
    produced: Path, expected: dict[str, Any], tmp_path: Path
) -> None:
    imported = import_run(
        produced / "traces.jsonl",
        "openinference",
        EXAMPLE_CORPUS,
        {"name": "traced"},
        passages=ROOT / "corpora" / "handbook_passages.csv",
        output=tmp_path / "traced.arrow",
    )
    records = {row["case_id"]: row for row in load_run(tmp_path / "traced.arrow").records.iter_rows(named=True)}
    assert (imported.imported.read, len(imported.imported.skipped), imported.imported.failed) == (10, 1, 2)
    for case in expected["cases"]:
        record = records[case["case_id"]]
        if "error" in case:
            assert (record["status"], record["error"]) == ("failed", case["error"])
        else:
            assert (record["status"], record["retrieved_passage_ids"]) == ("ok", case["retrieved_passage_ids"])
        # The passages whose text reached the prompt: every one retrieved (each pipeline sends all it retrieved).
        assert record["context_passage_ids"] == record["retrieved_passage_ids"]

    comparison = compare(load_run(CAPTURED), imported.run)

    statuses = dict(comparison.cases.select("case_id", pl.col("status").cast(pl.String)).iter_rows())
    # The captured run has 35 records, 9 of them traced: 26 missing in the traced run, its 2 failures failed there.
    assert comparison.counts["missing_in_candidate"] == 26
    failed = sorted(case["case_id"] for case in expected["cases"] if "error" in case)
    assert sorted(case_id for case_id, status in statuses.items() if status == "failed_in_candidate") == failed
