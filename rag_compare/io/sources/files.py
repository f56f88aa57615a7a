"""Reading another tool's file as text, as one JSON document, or as JSON lines, with the messages every
format shares: a path that is not a regular file, text that is not UTF-8, an empty file, a line that is not
JSON, JSON nested too deep (``core.nesting``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rag_compare.core.errors import InputFileError, Problem
from rag_compare.core.input_paths import check_input
from rag_compare.core.nesting import load_json

__all__ = ["json_lines", "read_json", "read_text"]


def read_text(path: Path, written_by: str) -> str:
    """The UTF-8 text of ``path``; ``written_by`` says which file is meant ("the file `promptfoo eval -o
    results.json` writes") in the ``InputFileError`` raised when it is not a regular file, not UTF-8 or empty."""
    check_input(path, "file", fix=f"Give the path of {written_by}.")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputFileError(
            f"{path}: is not UTF-8 text (byte {error.start}). Give {written_by}, saved as UTF-8."
        ) from None
    if not text.strip():
        raise InputFileError(f"{path}: the file is empty. Give {written_by}.")
    return text


def read_json(path: Path, written_by: str) -> Any:
    """The one JSON document of ``path`` (see ``read_text``); ``InputFileError`` when it is not JSON,
    ``NestingError`` when it nests too deep."""
    try:
        return load_json(read_text(path, written_by), str(path))
    except json.JSONDecodeError as error:
        raise InputFileError(f"{path}: is not JSON ({error.msg} on line {error.lineno}). Give {written_by}.") from None


def json_lines(path: Path, written_by: str, unit: str) -> tuple[list[tuple[int, Any]], list[Problem]]:
    """Each non-blank line of ``path`` parsed, by line number, and a problem for each line that is not
    JSON (``unit`` a line, e.g. "a LangSmith run"). A file where no line is JSON is an ``InputFileError``:
    not JSON at all, or one JSON document written over several lines; a line nested too deep a
    ``NestingError``."""
    text = read_text(path, written_by)
    parsed: list[tuple[int, Any]] = []
    problems: list[Problem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            parsed.append((number, load_json(line, str(path), line=number)))
        except json.JSONDecodeError as error:
            problems.append(Problem(f"{unit} as one JSON object ({error.msg})", row=number))
    if not parsed:
        try:
            load_json(text, str(path))
        except json.JSONDecodeError:
            found = "is not JSON lines: no line is JSON"
        else:
            found = "holds one JSON document over several lines"
        raise InputFileError(f"{path}: {found}. Give {written_by}: {unit} a line.")
    return parsed, problems
