"""The library speaks Python: no message or docstring outside ``rag_compare/cli`` names a flag; and no
message or output anywhere counts with ``(s)``: ``core.listing.counted`` says ``1 violation``, ``2 violations``."""

from __future__ import annotations

import ast
import re

from tests.helpers.data import ROOT

_FLAG = re.compile(r"(?<![\w-])--[a-z]")
_REPORT_TEXT = ("--format json lists every case", "listed with --format json")
"""Text of the reports, which are read at the command line; the only flags the library may write."""


_MAYBE_PLURAL = re.compile(r"\w\((?:s|es)\)(?!://)")
"""``violation(s)``, ``match(es)``; not ``http(s)://``."""


def _library_strings(*, with_cli: bool = False) -> list[tuple[str, int, str]]:
    package = ROOT / "rag_compare"
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.is_relative_to(package / "cli") and not with_cli:
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


def test_no_message_or_output_counts_with_a_maybe_plural() -> None:
    templates = sorted((ROOT / "rag_compare").rglob("*.j2"))
    texts = _library_strings(with_cli=True) + [(str(path), 0, path.read_text(encoding="utf-8")) for path in templates]
    assert any(path.endswith("capture.py") for path, _, _ in texts)
    assert [f"{path}:{line}: {text!r}" for path, line, text in texts if _MAYBE_PLURAL.search(text)] == []
