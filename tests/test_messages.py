"""The library speaks Python: no message or docstring outside ``rag_compare/cli`` names a flag."""

from __future__ import annotations

import ast
import re

from tests.helpers.data import ROOT

_FLAG = re.compile(r"(?<![\w-])--[a-z]")
_REPORT_TEXT = ("--format json lists every case", "listed with --format json")
"""Text of the reports, which are read at the command line; the only flags the library may write."""


def _library_strings() -> list[tuple[str, int, str]]:
    package = ROOT / "rag_compare"
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.is_relative_to(package / "cli"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.append((str(path.relative_to(ROOT)), node.lineno, node.value))
    return found


def test_the_scan_sees_the_library_messages() -> None:
    texts = [text for _, _, text in _library_strings()]
    assert any("Pass `k` to choose the cut-off" in text for text in texts)
    assert any(text.startswith(" required passages (") for text in texts)  # the parts of an f-string too


def test_no_library_string_names_a_flag() -> None:
    flags = [
        f"{path}:{line}: {text!r}"
        for path, line, text in _library_strings()
        if _FLAG.search(text) and not any(phrase in text for phrase in _REPORT_TEXT)
    ]
    assert flags == []
