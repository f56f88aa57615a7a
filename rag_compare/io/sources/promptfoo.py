"""promptfoo's results file (``promptfoo eval -o results.json``) as source rows: one row per result.

A result is one test case run through one prompt and one provider (``results.results[]``). The file
must hold one run: every result of the same column of promptfoo's table (``promptIdx``: one prompt
with one provider; a test that overrides its provider stays in its column). The case id, the
question and the retrieved passage ids are the test's ``vars``; the context is the prompt as rendered
and sent (``prompt.raw``); the answer is ``response.output``. A result whose provider returned an
error and no output is ``failed`` at the ``generate`` stage; an error with an output (an assertion
that raised) is a grading matter and the row stays ``ok``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare.core.contract import ColumnSpec
from rag_compare.core.errors import InputFileError, Problem, show_value
from rag_compare.io.columns import coerce_columns
from rag_compare.io.sources.files import read_json
from rag_compare.io.sources.rows import SourceRows, source_frame
from rag_compare.io.sources.values import count, key_text, mapping, number, text
from rag_compare.io.tables import ROW

__all__ = ["IDS_VAR", "QUESTION_VARS", "SCORES_VAR", "load_results", "read_promptfoo"]

QUESTION_VARS = ("question", "query", "input")
"""The vars that may hold the question, the first present wins."""
IDS_VAR = "retrieved_passage_ids"
"""The var listing the retrieved passage ids, best first: a JSON array or ids separated by ``;``."""
SCORES_VAR = "retrieved_scores"
"""The var listing the retrieval scores, same order and form as ``IDS_VAR``."""
_LIST_VARS = (ColumnSpec(IDS_VAR, "text_list"), ColumnSpec(SCORES_VAR, "float_list"))


def read_promptfoo(path: Path, case_id_key: str) -> SourceRows:
    """The results of the promptfoo results file ``path``; ``case_id_key`` is the var holding the case id."""
    results = load_results(path)
    rows: list[dict[str, Any]] = []
    problems: list[Problem] = []
    for position, result in enumerate(results, start=1):
        if isinstance(result, Mapping) and isinstance(result.get("vars", {}), Mapping):
            rows.append(_row(position, result, case_id_key))
        else:
            expected = "a promptfoo result: an object with `vars`, `prompt` and `response`"
            problems.append(Problem(expected, row=position, value=show_value(result)))
    rows, list_problems = _with_lists(rows)
    return SourceRows(source_frame(rows), read=len(results), unit="result", problems=(*problems, *list_problems))


def load_results(path: Path) -> list[Any]:
    """``results.results`` of the file, one run's; ``InputFileError`` when it is missing, not JSON, not that shape
    or holds several runs."""
    document = read_json(path, "the JSON file `promptfoo eval -o results.json` writes")
    results = document.get("results") if isinstance(document, dict) else None
    table = results.get("results") if isinstance(results, dict) else None
    if not isinstance(table, list):
        raise InputFileError(
            f"{path}: is not a promptfoo results file (no list `results.results` in it). "
            "Give the JSON file `promptfoo eval -o results.json` wrote."
        )
    if not table:
        raise InputFileError(f"{path}: holds no results (`results.results` is empty). Evaluate at least one test.")
    _refuse_several_runs(path, table)
    return table


def _refuse_several_runs(path: Path, results: list[Any]) -> None:
    """Refuse a file whose results come from more than one prompt and provider (several runs)."""
    columns = {result.get("promptIdx") for result in results if isinstance(result, Mapping)}
    if len(columns) <= 1:
        return
    named = {result.get("promptIdx"): _column_name(result) for result in results if isinstance(result, Mapping)}
    listed = "".join(f"\n  - {named[index]}" for index in sorted(named, key=str))
    raise InputFileError(
        f"{path}: holds {len(columns)} runs (one per prompt and provider, promptfoo's columns):{listed}\n"
        "A run is one prompt with one provider: evaluate each into its own results file and import them one by one."
    )


def _column_name(result: Mapping[str, Any]) -> str:
    provider = mapping(result.get("provider"))
    label = mapping(result.get("prompt")).get("label")
    return f"provider {show_value(provider.get('label') or provider.get('id'))} with prompt {show_value(label)}"


def _row(position: int, result: Mapping[str, Any], case_id_key: str) -> dict[str, Any]:
    """The source row of one result (its list vars still as given, see ``_with_lists``)."""
    variables = mapping(result.get("vars"))
    response = mapping(result.get("response"))
    output = response.get("output")
    error = result.get("error") or response.get("error")
    failed = output is None and bool(error)
    usage = mapping(result.get("tokenUsage"))
    key = variables.get(case_id_key)
    return {
        "position": position,
        "source_id": text(result.get("id")),
        "case_key": key_text(key),
        "question": next((variables[name] for name in QUESTION_VARS if isinstance(variables.get(name), str)), None),
        "status": "failed" if failed else "ok",
        "error": str(error) if failed else None,
        "failed_stage": "generate" if failed else None,
        IDS_VAR: _list_cell(variables.get(IDS_VAR)),
        SCORES_VAR: _list_cell(variables.get(SCORES_VAR)),
        "context": text(mapping(result.get("prompt")).get("raw")),
        "answer": output if isinstance(output, str) or output is None else json.dumps(output, ensure_ascii=False),
        "latency_ms": number(result.get("latencyMs")),
        "prompt_tokens": count(usage.get("prompt")),
        "completion_tokens": count(usage.get("completion")),
    }


def _with_lists(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Problem]]:
    """``rows`` with their list vars read (a JSON array or ``;``-separated), without those that hold a bad one."""
    if not rows:
        return rows, []
    cells = {spec.name: [row[spec.name] for row in rows] for spec in _LIST_VARS}
    frame = pl.DataFrame(
        {ROW: [row["position"] for row in rows], **cells},
        schema={ROW: pl.Int64, **{spec.name: pl.String for spec in _LIST_VARS}},
    )
    read, problems = coerce_columns(frame, _LIST_VARS)
    bad = {problem.row for problem in problems}
    lists = read.drop(ROW).iter_rows(named=True)
    return [{**row, **parsed} for row, parsed in zip(rows, lists, strict=True) if row["position"] not in bad], problems


def _list_cell(value: Any) -> str | None:
    """A list var as the text of a list cell (promptfoo expands a var holding a list into several tests)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)
