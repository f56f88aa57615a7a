"""``read_deepeval`` over the test run files DeepEval itself writes (``tests/producers/make_deepeval.py``), and
edited copies of them.

The producer's metrics raise on the unanswerable case (no expected output) and Exact Match on the empty answer:
DeepEval records each metric's error, yet the pipeline answered, so the case is ``ok``. ``expected.json`` holds DeepEval's own test results.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from rag_compare import compare
from rag_compare.compute.freezing import import_run
from rag_compare.core.errors import InputFileError, Problem
from rag_compare.io.sources.deepeval import read_deepeval
from rag_compare.io.sources.ragas import CONTEXT_SEPARATOR
from rag_compare.io.sources.rows import SOURCE_SCHEMA, Skipped
from tests.helpers.data import EXAMPLE_CORPUS, ROOT

LATEST = ".deepeval/.latest_test_run.json"
FULL = ".deepeval/.latest_run_full.json"


@pytest.fixture(scope="module")
def made(deepeval_made: Path) -> Path:
    return deepeval_made


@pytest.fixture(scope="module")
def expected(made: Path) -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads((made / "expected.json").read_text(encoding="utf-8"))
    return loaded


@pytest.fixture
def edited(made: Path, tmp_path: Path) -> Callable[[Callable[[dict[str, Any]], None]], Path]:
    """A copy of DeepEval's ``.latest_run_full.json`` changed by ``change`` (given the test run object)."""

    def _edited(change: Callable[[dict[str, Any]], None]) -> Path:
        run = json.loads((made / FULL).read_text(encoding="utf-8"))
        change(run)
        path = tmp_path / "run.json"
        path.write_text(json.dumps(run), encoding="utf-8")
        return path

    return _edited


@pytest.mark.parametrize("name", [LATEST, FULL])
def test_the_test_cases_are_read_as_deepeval_reported_them(
    made: Path, expected: list[dict[str, Any]], name: str
) -> None:
    rows = read_deepeval(made / name, "case_id")
    assert (rows.read, rows.unit, rows.skipped, rows.problems) == (5, "test case", (), ())
    assert rows.frame.schema == pl.Schema(SOURCE_SCHEMA)
    frame = rows.frame
    assert frame.get_column("position").to_list() == [1, 2, 3, 4, 5]
    assert frame.get_column("source_id").to_list() == [test["name"] for test in expected]
    assert frame.get_column("case_key").to_list() == [test["metadata"]["case_id"] for test in expected]
    assert frame.get_column("question").to_list() == [test["input"] for test in expected]
    assert frame.get_column("retrieved_texts").to_list() == [test["retrieval_context"] for test in expected]
    assert frame.get_column("context").to_list() == [
        CONTEXT_SEPARATOR.join(test["retrieval_context"]) for test in expected
    ]
    assert frame.get_column("answer").to_list() == [test["actual_output"] or None for test in expected]
    # DeepEval keeps no passage ids: they are mapped from the texts with a passages file.
    assert frame.get_column("retrieved_passage_ids").null_count() == 5


def test_a_metric_that_errored_is_not_a_failed_case(made: Path, expected: list[dict[str, Any]]) -> None:
    errored = [test["name"] for test in expected if any(metric["error"] for metric in test["metrics"])]
    # The metrics raise without an expected output (ceo-salary) or an answer (hotel-approval, Exact Match).
    assert errored == ["hotel-approval", "ceo-salary"]
    assert [test["success"] for test in expected if test["name"] in errored] == [False, False]
    frame = read_deepeval(made / LATEST, "case_id").frame
    assert frame.get_column("status").to_list() == ["ok"] * 5
    assert frame.select(pl.col("error", "failed_stage").null_count()).row(0) == (5, 5)


def test_latency_and_tokens_come_from_the_test_case(edited: Callable[..., Path]) -> None:
    def timed(run: dict[str, Any]) -> None:
        run["testCases"][1].update(completionTime=1.25, inputTokenCount=120, outputTokenCount=8)

    frame = read_deepeval(edited(timed), "case_id").frame
    # 1.25 seconds is 1250 ms; the other cases recorded neither.
    assert frame.get_column("latency_ms").to_list() == [None, 1250.0, None, None, None]
    assert frame.get_column("prompt_tokens").to_list()[1] == 120
    assert frame.get_column("completion_tokens").to_list()[1] == 8


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda case: case.update(input=None), Problem.at(2, "input", None, "the question as text")),
        (lambda case: case.update(actualOutput=["a"]), Problem.at(2, "actualOutput", ["a"], "the answer as text")),
        (
            lambda case: case.update(retrievalContext="one text"),
            Problem.at(2, "retrievalContext", "one text", "a list of strings (the retrieved texts)"),
        ),
        (
            lambda case: case.update(inputTokenCount=1.5),
            Problem.at(2, "inputTokenCount", 1.5, "a whole number of tokens"),
        ),
        (
            lambda case: case.update(completionTime="fast"),
            Problem.at(2, "completionTime", "fast", "a number of seconds"),
        ),
    ],
)
def test_a_test_case_that_cannot_be_read_is_a_problem_at_its_position(
    edited: Callable[..., Path], change: Callable[[dict[str, Any]], None], problem: Problem
) -> None:
    rows = read_deepeval(edited(lambda run: change(run["testCases"][1])), "case_id")
    assert rows.problems == (problem,)
    assert rows.frame.get_column("position").to_list() == [1, 3, 4, 5]
    assert rows.read == 5


def test_a_test_case_that_is_not_an_object_is_a_problem(edited: Callable[..., Path]) -> None:
    rows = read_deepeval(edited(lambda run: run["testCases"].insert(0, "stray")), "case_id")
    assert rows.problems == (Problem("a test case object", row=1, value="str"),)
    assert rows.frame.height == 5


def test_a_conversational_test_case_is_skipped(edited: Callable[..., Path]) -> None:
    def converse(run: dict[str, Any]) -> None:
        run["conversationalTestCases"] = [{"name": "chat", "turns": [{"role": "user", "content": "Hi"}]}]

    rows = read_deepeval(edited(converse), "case_id")
    # Numbered after the five test cases.
    assert rows.skipped == (Skipped(6, "a conversational test case (turns), not a single question", "chat"),)
    assert (rows.read, rows.frame.height) == (6, 5)


def test_a_file_that_is_not_a_deepeval_test_run_is_refused(tmp_path: Path, edited: Callable[..., Path]) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"testCases": [\n  {"input": "q",\n')
    with pytest.raises(InputFileError, match=r"is not JSON .* on line 3"):
        read_deepeval(broken, "case_id")
    with pytest.raises(InputFileError, match="has no `testCases` list"):
        read_deepeval(edited(lambda run: run.pop("testCases")), "case_id")
    with pytest.raises(InputFileError, match="no such file"):
        read_deepeval(tmp_path / "missing.json", "case_id")


def test_an_imported_deepeval_run_maps_texts_to_ids_and_compares_with_a_captured_one(
    made: Path, expected: list[dict[str, Any]], tmp_path: Path
) -> None:
    passages = ROOT / "corpora" / "handbook_passages.csv"
    output = tmp_path / "deepeval.arrow"
    imported = import_run(
        made / LATEST, "deepeval", EXAMPLE_CORPUS, {"name": "deepeval"}, passages=passages, output=output
    )
    records = imported.run.records
    assert records.get_column("case_id").to_list() == [test["metadata"]["case_id"] for test in expected]
    # DeepEval keeps texts only: the knowledge base gives back the ids the pipeline retrieved.
    assert records.get_column("retrieved_passage_ids").to_list() == [test["retrieved_ids"] for test in expected]
    assert imported.imported.unmatched == ()
    assert records.get_column("answer").to_list() == [test["actual_output"] or None for test in expected]
    assert records.get_column("status").to_list() == ["ok"] * 5  # metrics errored on two cases; none failed
    comparison = compare(ROOT / "runs" / "baseline.arrow", output)
    statuses = dict(comparison.cases.select("case_id", pl.col("status").cast(pl.String)).rows())
    assert {test["metadata"]["case_id"] for test in expected} == {
        case for case, status in statuses.items() if not status.startswith("missing")
    }
    assert statuses["ceo-salary@2026-01"] == "regressed"  # answered where the captured run abstained
