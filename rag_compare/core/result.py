"""The result base class, and the strict JSON and terminal-safe text every result is rendered through."""

from __future__ import annotations

import io
import json
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from rag_compare.core.credentials import redactor

__all__ = [
    "CI_FORMATS",
    "DEFAULT_MAX_CASES",
    "FORMATS",
    "REPORT_FORMATS",
    "Report",
    "labelled",
    "shown_as_escapes",
    "terminal_safe",
    "to_json",
]

FORMATS = ("text", "json")
REPORT_FORMATS = ("markdown", "html")
"""What a comparison renders beyond ``FORMATS``: reports for people to read."""
CI_FORMATS = ("github", "junit")
"""What a comparison renders for a CI system, with a release gate's verdict: GitHub Actions workflow
commands (then the Markdown report) and JUnit XML."""
DEFAULT_MAX_CASES = 1_000
"""Cases a Markdown or HTML report lists per status by default: a report stays readable at any scale."""
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
"""What a terminal would obey rather than show: C0 and C1 controls (ESC starts an escape sequence) but
the newline and tab, DEL, and the bidirectional marks, embeddings, overrides and isolates."""


class Report(ABC):
    """A result: ``to_dict``, ``to_json``, ``render(format)``, and HTML in notebooks. It holds data; the
    report floor renders it for people (``rag_compare.report.rendering``). Each result's repr is one
    short line saying what it is (``<Run baseline (5f080d2f03f7): 34 cases: ok 33, failed 1>``), never its
    frames or its config."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready) describing the result."""

    def to_json(self) -> str:
        return to_json(self.to_dict())

    def render(self, format: str = "text") -> str:
        """The result as ``text`` (for a terminal) or ``json``."""
        if format not in FORMATS:
            raise ValueError(f"unknown format {format!r}; use one of {', '.join(FORMATS)}")
        return self.to_json() if format == "json" else self._rendered("text")

    def _repr_html_(self) -> str:
        return self._rendered("notebook")

    def _rendered(self, format: str) -> str:
        buffer = io.StringIO()
        self._write(buffer, format)
        return buffer.getvalue()

    def _write(self, stream: TextIO, format: str, **options: Any) -> None:
        """Write the result to ``stream`` as the report floor renders ``format``: ``text``, ``notebook``
        (HTML), or a comparison's ``markdown`` or ``html`` report (``options``: what it lists)."""
        # The one import up the floors (pyproject's layers contract lists it): results are rendered by
        # the report floor, which imports their types; imported here, when a result is rendered.
        from rag_compare.report.rendering import write

        write(self, stream, format, **options)


def labelled(name: object, fingerprint: object) -> str:
    """A run, an evaluator or a file as a result's repr names it: ``baseline (5f080d2f03f7)`` (a credential in
    the name redacted)."""
    return redactor()(f"{name} ({str(fingerprint)[:12]})")


def to_json(payload: Mapping[str, Any], *, compact: bool = False) -> str:
    """JSON with a stable layout: two-space indent (``compact``: no space at all, no final newline), keys in
    the order given, UTF-8 kept. Always strict JSON: a number that is not finite (NaN, an infinity) is
    written as null. Never a credential: every text, key and other value written as text (a path) is
    redacted (``credentials.redact``)."""
    redact = redactor()
    text = json.dumps(
        _shown(payload, redact),
        indent=None if compact else 2,
        separators=(",", ":") if compact else None,
        ensure_ascii=False,
        default=lambda value: redact(str(value)),
        allow_nan=False,
    )
    return text if compact else text + "\n"


def _shown(value: Any, redact: Callable[[str], str]) -> Any:
    """``value`` with, at any depth of dicts, lists and tuples, every float that is not finite as None and
    every text ``redact``-ed."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {redact(key) if isinstance(key, str) else key: _shown(item, redact) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_shown(item, redact) for item in value]
    return value


def terminal_safe(text: str) -> str:
    """``text`` with every control character a terminal would obey shown as its escape instead:
    ``\\x1b`` for ESC, ``\\u202e`` for a right-to-left override (newlines and tabs are kept)."""
    return shown_as_escapes(_UNSAFE, text)


def shown_as_escapes(characters: re.Pattern[str], text: str) -> str:
    """``text`` with each character ``characters`` matches written as its escape: ``\\x1b``, ``\\u202e``."""
    return characters.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
