"""Reading a DeepEval test run file: what ``deepeval`` writes to ``.deepeval/.latest_test_run.json`` (the
run under ``testRunData``) or ``.deepeval/.latest_run_full.json`` (the run itself).

One entry of ``testCases`` (an ``LLMTestCase`` as DeepEval saves it) is one unit: ``input`` is the
question, ``retrievalContext`` the retrieved texts (DeepEval keeps no passage ids: map them with a
passages file), ``actualOutput`` the answer, ``name`` its source id, ``metadata`` (the test case's
``additional_metadata``) holds the case key; ``completionTime`` (seconds) gives the latency and
``inputTokenCount`` / ``outputTokenCount`` the tokens. The context sent is the retrieval context joined
with a blank line. ``expectedOutput`` and ``context`` (DeepEval's ideal context) are labels, which the
corpus holds, so they stay out of the records.

DeepEval records no failed request: a test case is what the pipeline returned, and ``success`` or a
metric's ``error`` in ``metricsData`` say how its metrics went, not the pipeline. So every test case is
``ok`` (a metric that errored is not a failed case). A conversational test case holds turns, not a single
question, and is skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rag_compare.core.errors import InputFileError, Problem
from rag_compare.io.sources.files import read_json
from rag_compare.io.sources.ragas import CONTEXT_SEPARATOR
from rag_compare.io.sources.rows import Skipped, SourceRows, source_frame
from rag_compare.io.sources.values import is_int, key_text

__all__ = ["load_test_run", "read_deepeval"]

_TOKENS = ("inputTokenCount", "outputTokenCount")
_RUN_KEY = "testRunData"
"""The key ``.latest_test_run.json`` holds the test run under."""


def read_deepeval(path: Path, case_id_key: str) -> SourceRows:
    """The test cases of the DeepEval test run file at ``path``, one row each."""
    run = load_test_run(Path(path))
    cases, conversations = run["testCases"], run.get("conversationalTestCases") or []
    rows: list[dict[str, Any]] = []
    problems: list[Problem] = []
    for position, case in enumerate(cases, start=1):
        outcome = _test_case(position, case, case_id_key)
        if isinstance(outcome, Problem):
            problems.append(outcome)
        else:
            rows.append(outcome)
    skipped = tuple(
        Skipped(len(cases) + index, "a conversational test case (turns), not a single question", _name(case))
        for index, case in enumerate(conversations, start=1)
    )
    return SourceRows(
        source_frame(rows),
        read=len(cases) + len(conversations),
        unit="test case",
        skipped=skipped,
        problems=tuple(problems),
    )


def load_test_run(path: Path) -> Mapping[str, Any]:
    """The test run object of the file, with its ``testCases`` list."""
    data = read_json(path, "the test run file DeepEval writes (.deepeval/.latest_test_run.json)")
    run = data.get(_RUN_KEY, data) if isinstance(data, dict) else None
    if not isinstance(run, dict) or not isinstance(run.get("testCases"), list):
        raise InputFileError(
            f"{path}: has no `testCases` list, so it is not a DeepEval test run. Give the file DeepEval "
            "writes after `deepeval.evaluate(...)` or `deepeval test run` (.deepeval/.latest_test_run.json)."
        )
    return run


def _test_case(position: int, case: Any, case_id_key: str) -> dict[str, Any] | Problem:
    """One test case as a row of ``SOURCE_SCHEMA``, or why it cannot be read."""
    if not isinstance(case, dict):
        return Problem("a test case object", row=position, value=type(case).__name__)
    question, answer, texts = case.get("input"), case.get("actualOutput"), case.get("retrievalContext")
    if not isinstance(question, str):
        return Problem.at(position, "input", question, "the question as text")
    if answer is not None and not isinstance(answer, str):
        return Problem.at(position, "actualOutput", answer, "the answer as text")
    if texts is not None and not (isinstance(texts, list) and all(isinstance(text, str) for text in texts)):
        return Problem.at(position, "retrievalContext", texts, "a list of strings (the retrieved texts)")
    seconds, tokens = case.get("completionTime"), {name: case.get(name) for name in _TOKENS}
    if seconds is not None and not (is_int(seconds) or isinstance(seconds, float)):
        return Problem.at(position, "completionTime", seconds, "a number of seconds")
    for name, value in tokens.items():
        if value is not None and not is_int(value):
            return Problem.at(position, name, value, "a whole number of tokens")
    metadata = case.get("metadata")
    return {
        "position": position,
        "source_id": _name(case),
        "case_key": key_text(metadata.get(case_id_key) if isinstance(metadata, dict) else None),
        "question": question,
        "status": "ok",
        "retrieved_texts": texts,
        "context": None if texts is None else CONTEXT_SEPARATOR.join(texts),
        "answer": answer or None,
        "latency_ms": None if seconds is None else float(seconds) * 1000,
        "prompt_tokens": tokens["inputTokenCount"],
        "completion_tokens": tokens["outputTokenCount"],
    }


def _name(case: Any) -> str | None:
    name = case.get("name") if isinstance(case, dict) else None
    return name if isinstance(name, str) else None
