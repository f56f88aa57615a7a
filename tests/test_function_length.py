"""Every function fits on a screen: at most 60 lines from its ``def`` to its last line."""

from __future__ import annotations

import ast

from tests.helpers.data import ROOT

MOST_LINES = 60


def _lengths() -> dict[str, int]:
    package = ROOT / "rag_compare"
    found = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                found[f"{path.relative_to(package).as_posix()}:{node.name}"] = node.end_lineno - node.lineno + 1
    return found


def test_no_function_is_longer_than_a_screen() -> None:
    lengths = _lengths()
    assert "io/runs.py:freeze_records" in lengths  # the scan sees the package
    assert {name: lines for name, lines in lengths.items() if lines > MOST_LINES} == {}
