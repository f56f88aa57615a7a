"""Reading a Ragas ``EvaluationDataset`` saved as JSON lines (``to_jsonl``) or CSV (``to_csv``).

One row (a ``SingleTurnSample``) is one unit: ``user_input`` is the question, ``retrieved_contexts`` the
retrieved texts, ``retrieved_context_ids`` their ids when present, ``response`` the answer. The context
sent is the retrieved contexts joined with a blank line, as a Ragas sample holds what the generator was
given, not the prompt. ``reference`` (and ``reference_contexts``, ``reference_context_ids``) are labels:
the corpus holds those, so they stay out of the records. The case key is the column ``case_id_key``
when the file has one (Ragas' samples have no field for it: add it to ``to_pandas()`` before saving),
else null. Ragas has no failure column: every row is ``ok``, an empty ``response`` is no answer.

In CSV, Ragas writes a list as its Python repr (``['a', 'b']``): such a cell is read with
``ast.literal_eval`` and must be a list literal of strings (ids may be integers). A multi-turn sample (a
conversation in ``user_input``) or a row without ``user_input`` holds no single question and is skipped.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from rag_compare.core.errors import InputFileError, Problem
from rag_compare.io.sources.files import json_lines
from rag_compare.io.sources.rows import Skipped, SourceRows, source_frame
from rag_compare.io.sources.values import is_int, key_text
from rag_compare.io.tables import ROW, read_table, table_format

__all__ = ["CONTEXT_SEPARATOR", "read_ragas"]

CONTEXT_SEPARATOR = "\n\n"
"""What joins the retrieved contexts into the context sent."""
_WHAT = "Ragas dataset"
_WRITTEN_BY = "the Ragas dataset `EvaluationDataset.to_jsonl(PATH)` writes"
_LISTS = ("user_input", "retrieved_contexts", "retrieved_context_ids")
"""The CSV columns whose cells may hold a list literal (``user_input`` does in a multi-turn sample)."""


def read_ragas(path: Path, case_id_key: str) -> SourceRows:
    """The samples of the Ragas dataset at ``path`` (``.jsonl`` or ``.csv``), one row each."""
    kind = table_format(Path(path), _WHAT)
    if kind == "jsonl":
        units, problems = _json_lines(Path(path))
    elif kind == "csv":
        units, problems = list(_csv_rows(Path(path))), []
    else:
        raise InputFileError(f"{path}: a Ragas dataset is saved as .jsonl (`to_jsonl`) or .csv (`to_csv`).")
    if units and not any("user_input" in unit for _, unit in units):
        raise InputFileError(
            f"{path}: no row has `user_input`, so this is not a Ragas EvaluationDataset. "
            "Save one with `EvaluationDataset.to_jsonl(PATH)` or `to_csv(PATH)`."
        )
    rows: list[dict[str, Any]] = []
    skipped: list[Skipped] = []
    for position, unit in units:
        outcome = _sample(position, unit, case_id_key)
        if isinstance(outcome, Skipped):
            skipped.append(outcome)
        elif isinstance(outcome, Problem):
            problems.append(outcome)
        else:
            rows.append(outcome)
    return SourceRows(
        source_frame(rows),
        read=len(units) + len(problems),
        unit="row",
        skipped=tuple(skipped),
        problems=tuple(problems),
    )


def _json_lines(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], list[Problem]]:
    """Each non-blank line's JSON object by line number; a line that is not one is a problem."""
    parsed, problems = json_lines(path, _WRITTEN_BY, "a sample")
    units = [(number, value) for number, value in parsed if isinstance(value, dict)]
    problems += [
        Problem("a JSON object (one sample a line)", row=number, value=type(value).__name__)
        for number, value in parsed
        if not isinstance(value, dict)
    ]
    return units, problems


def _csv_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each CSV row by row number, its empty cells left out (as Ragas leaves out a field that is None)."""
    table = read_table(path, _WHAT)
    for row in table.iter_rows(named=True):
        position = row.pop(ROW)
        yield (
            position,
            {name: _literal(value) if name in _LISTS else value for name, value in row.items() if value is not None},
        )


def _literal(cell: str) -> Any:
    """A CSV cell that holds a list literal (Ragas writes a list's Python repr) as that list; else the text."""
    text = cell.strip()
    if not text.startswith("["):
        return cell
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return cell
    return value if isinstance(value, list) else cell


def _sample(position: int, unit: Mapping[str, Any], case_id_key: str) -> dict[str, Any] | Skipped | Problem:
    """One sample as a row of ``SOURCE_SCHEMA``, or why it is skipped or cannot be read."""
    question = unit.get("user_input")
    if question is None:
        return Skipped(position, "no `user_input`: the sample asks no question")
    if isinstance(question, list):
        return Skipped(position, "a multi-turn sample (a conversation), not a single question")
    if not isinstance(question, str):
        return Problem.at(position, "user_input", question, "the question as text")
    texts, ids, response = unit.get("retrieved_contexts"), unit.get("retrieved_context_ids"), unit.get("response")
    if texts is not None and not _strings(texts):
        return Problem.at(position, "retrieved_contexts", texts, "a list of strings (the retrieved texts)")
    if ids is not None and not (isinstance(ids, list) and all(_is_id(item) for item in ids)):
        return Problem.at(position, "retrieved_context_ids", ids, "a list of passage ids (strings or integers)")
    if ids is not None and texts is not None and len(ids) != len(texts):
        return Problem.at(position, "retrieved_context_ids", ids, f"one id per retrieved context ({len(texts)})")
    if response is not None and not isinstance(response, str):
        return Problem.at(position, "response", response, "the answer as text")
    return {
        "position": position,
        "case_key": key_text(unit.get(case_id_key)),
        "question": question,
        "status": "ok",
        "retrieved_passage_ids": None if ids is None else [str(item) for item in ids],
        "retrieved_texts": texts,
        "context": None if texts is None else CONTEXT_SEPARATOR.join(texts),
        "answer": response or None,
    }


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_id(value: Any) -> bool:
    return isinstance(value, str) or is_int(value)
