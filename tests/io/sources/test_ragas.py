"""``read_ragas`` over the files Ragas itself writes (``tests/producers/make_ragas.py``), and broken copies of them.

The producer answers five handbook cases; its generator fails on one (an empty response: Ragas has no failure
column, so that row is ``ok`` with no answer). ``expected.json`` holds the samples as the Ragas objects hold them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from rag_compare import compare
from rag_compare.compute.freezing import import_run
from rag_compare.core.errors import InputFileError
from rag_compare.io.sources.ragas import CONTEXT_SEPARATOR, read_ragas
from rag_compare.io.sources.rows import SOURCE_SCHEMA, Skipped
from tests.helpers.data import EXAMPLE_CORPUS, ROOT

CAPTURED = ROOT / "runs" / "baseline.arrow"
"""A run captured by rag-compare over the example corpus (all 35 reviewed cases)."""


@pytest.fixture(scope="module")
def made(ragas_made: Path) -> Path:
    return ragas_made


@pytest.fixture(scope="module")
def expected(made: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((made / "expected.json").read_text(encoding="utf-8"))
    return loaded


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_the_samples_are_read_as_ragas_holds_them(made: Path, expected: dict[str, Any]) -> None:
    rows = read_ragas(made / "dataset.jsonl", "case_id")
    assert (rows.read, rows.unit, rows.skipped, rows.problems) == (5, "row", (), ())
    assert rows.frame.schema == pl.Schema(SOURCE_SCHEMA)
    cases = expected["cases"]
    frame = rows.frame
    assert frame.get_column("position").to_list() == [1, 2, 3, 4, 5]
    assert frame.get_column("question").to_list() == [case["user_input"] for case in cases]
    assert frame.get_column("retrieved_passage_ids").to_list() == [case["retrieved_context_ids"] for case in cases]
    assert frame.get_column("retrieved_texts").to_list() == [case["retrieved_contexts"] for case in cases]
    assert frame.get_column("context").to_list() == [
        CONTEXT_SEPARATOR.join(case["retrieved_contexts"]) for case in cases
    ]
    # The response is the answer; the generator's failed case has an empty response: no answer, still ok.
    assert frame.get_column("answer").to_list() == [case["response"] or None for case in cases]
    failed = [case["case_id"] for case in cases].index(expected["generator_fails"])
    assert cases[failed]["response"] == ""
    assert frame.get_column("status").to_list() == ["ok"] * 5
    # Ragas' samples have no field for a case id: the keys are null (the run matches by question instead).
    assert frame.get_column("case_key").to_list() == [None] * 5
    assert frame.select(pl.col("retrieved_scores", "context_passage_ids", "source_id").is_null().all()).row(0) == (
        True,
        True,
        True,
    )


def test_csv_and_json_lines_read_alike(made: Path) -> None:
    assert read_ragas(made / "dataset.csv", "case_id").frame.equals(read_ragas(made / "dataset.jsonl", "case_id").frame)


@pytest.mark.parametrize("name", ["dataset_ids.csv", "dataset_ids.jsonl"])
def test_a_case_id_column_added_to_the_dataset_is_the_case_key(made: Path, expected: dict[str, Any], name: str) -> None:
    rows = read_ragas(made / name, "case_id")
    assert rows.frame.get_column("case_key").to_list() == [case["case_id"] for case in expected["cases"]]
    without = rows.frame.drop("case_key")
    assert without.equals(read_ragas(made / "dataset.jsonl", "case_id").frame.drop("case_key"))
    # Another key names no column: null keys.
    assert read_ragas(made / name, "test_id").frame.get_column("case_key").null_count() == 5


def test_a_results_table_reads_as_its_dataset(made: Path) -> None:
    """``EvaluationResult.to_pandas()`` is the dataset plus metric columns, which a reader ignores."""
    assert read_ragas(made / "result.csv", "case_id").frame.equals(read_ragas(made / "dataset.csv", "case_id").frame)


def test_a_broken_line_is_a_problem_with_its_line_number(made: Path, tmp_path: Path) -> None:
    original = lines(made / "dataset.jsonl")
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([*original[:2], '{"user_input": "cut sh', "", "[1, 2]", *original[2:]]) + "\n")
    rows = read_ragas(broken, "case_id")
    # Lines 3 (not JSON) and 5 (not an object) are problems; line 4 is blank; the samples are lines 1, 2, 6, 7, 8.
    assert [(problem.row, problem.expected) for problem in rows.problems] == [
        (3, "a sample as one JSON object (Unterminated string starting at)"),
        (5, "a JSON object (one sample a line)"),
    ]
    assert rows.frame.get_column("position").to_list() == [1, 2, 6, 7, 8]
    assert rows.read == 7


def test_a_multi_turn_sample_or_one_without_a_question_is_skipped(made: Path, tmp_path: Path) -> None:
    conversation = {"user_input": [{"content": "Hi", "type": "human"}], "reference": "Hello"}
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join([lines(made / "dataset.jsonl")[0], json.dumps(conversation), '{"response": "x"}']))
    rows = read_ragas(path, "case_id")
    assert rows.skipped == (
        Skipped(2, "a multi-turn sample (a conversation), not a single question"),
        Skipped(3, "no `user_input`: the sample asks no question"),
    )
    assert (rows.frame.height, rows.read, rows.problems) == (1, 3, ())


def csv_with(made: Path, tmp_path: Path, row: int, column: str, cell: str) -> Path:
    """Ragas' CSV with the cell at data row ``row`` of ``column`` replaced."""
    frame = pl.read_csv(made / "dataset.csv", infer_schema=False)
    frame = frame.with_columns(
        pl.when(pl.int_range(1, frame.height + 1) == row).then(pl.lit(cell)).otherwise(pl.col(column)).alias(column)
    )
    path = tmp_path / "edited.csv"
    frame.write_csv(path)
    return path


@pytest.mark.parametrize(
    ("column", "cell", "expected"),
    [
        ("retrieved_context_ids", "a;b", "a list of passage ids (strings or integers)"),
        ("retrieved_context_ids", "['a', None]", "a list of passage ids (strings or integers)"),
        ("retrieved_contexts", "[{'text': 'a'}, 'b']", "a list of strings (the retrieved texts)"),
        ("retrieved_contexts", "[__import__('os').getcwd(), 'b']", "a list of strings (the retrieved texts)"),
        ("retrieved_context_ids", "['only-one']", "one id per retrieved context (2)"),
    ],
)
def test_a_csv_list_cell_must_be_a_list_literal_of_strings(
    made: Path, tmp_path: Path, column: str, cell: str, expected: str
) -> None:
    rows = read_ragas(csv_with(made, tmp_path, 2, column, cell), "case_id")
    assert [(problem.row, problem.column, problem.expected) for problem in rows.problems] == [(2, column, expected)]
    assert rows.frame.get_column("position").to_list() == [1, 3, 4, 5]


def test_integer_context_ids_are_read_as_text(made: Path, tmp_path: Path) -> None:
    rows = read_ragas(csv_with(made, tmp_path, 1, "retrieved_context_ids", "[7, 'b']"), "case_id")
    assert rows.frame.get_column("retrieved_passage_ids")[0].to_list() == ["7", "b"]


def test_an_empty_list_is_nothing_retrieved_and_an_empty_cell_not_recorded(made: Path, tmp_path: Path) -> None:
    edited = pl.read_csv(made / "dataset.csv", infer_schema=False).with_columns(
        retrieved_contexts=pl.Series(["[]", None, "[]", "[]", "[]"]),
        retrieved_context_ids=pl.Series(["[]", None, "[]", "[]", "[]"]),
    )
    edited.write_csv(tmp_path / "empty.csv")
    frame = read_ragas(tmp_path / "empty.csv", "case_id").frame
    assert frame.get_column("retrieved_texts").to_list()[:2] == [[], None]
    assert frame.get_column("context").to_list()[:2] == ["", None]


def test_a_file_that_is_not_a_ragas_dataset_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text('{"question": "q", "answer": "a"}\n')
    with pytest.raises(InputFileError, match="no row has `user_input`"):
        read_ragas(other, "case_id")
    with pytest.raises(InputFileError, match="no such file"):
        read_ragas(tmp_path / "missing.jsonl", "case_id")
    (tmp_path / "blank.jsonl").write_text("\n\n")
    with pytest.raises(InputFileError, match="empty"):
        read_ragas(tmp_path / "blank.jsonl", "case_id")
    with pytest.raises(InputFileError, match=r"saved as \.jsonl"):
        read_ragas(tmp_path / "data.parquet", "case_id")


@pytest.mark.parametrize(("name", "options"), [("dataset.jsonl", {"match_question": True}), ("dataset_ids.csv", {})])
def test_an_imported_ragas_run_compares_with_a_captured_one(
    made: Path, expected: dict[str, Any], tmp_path: Path, name: str, options: dict[str, Any]
) -> None:
    imported = import_run(
        made / name, "ragas", EXAMPLE_CORPUS, {"name": "ragas"}, output=tmp_path / "r.arrow", **options
    )
    cases = expected["cases"]
    records = imported.run.records
    assert records.get_column("case_id").to_list() == [case["case_id"] for case in cases]
    assert records.get_column("retrieved_passage_ids").to_list() == [case["retrieved_context_ids"] for case in cases]
    assert records.get_column("context").to_list() == [
        CONTEXT_SEPARATOR.join(case["retrieved_contexts"]) for case in cases
    ]
    assert records.get_column("answer").to_list() == [case["response"] or None for case in cases]
    # Every retrieved text is in the context sent (it is their join), so every retrieved id reached it.
    assert records.get_column("context_passage_ids").to_list() == [case["retrieved_context_ids"] for case in cases]
    assert imported.imported.to_dict()["cases"] == 5
    assert imported.imported.failed == 0
    statuses = dict(
        compare(CAPTURED, tmp_path / "r.arrow").cases.select("case_id", pl.col("status").cast(pl.String)).rows()
    )
    # The five cases meet the captured run's; the captured run's other 30 are missing from the import.
    assert {case["case_id"] for case in cases} == {
        case for case, status in statuses.items() if not status.startswith("missing")
    }
    assert list(statuses.values()).count("missing_in_candidate") == 30
    # The toy pipeline answers the unanswerable case, where the captured run abstained.
    assert statuses["ceo-salary@2026-01"] == "regressed"
