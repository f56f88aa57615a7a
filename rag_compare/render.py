"""Shared rendering helpers: stable JSON, and plain-text tables for a terminal.

Values from data are never read as markup: every cell is a ``rich.text.Text``. Text for a terminal
never carries a control character from data (``terminal_safe``).
"""

from __future__ import annotations

import html
import io
import json
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "AGGREGATE_HEADERS",
    "DEFAULT_MAX_CASES",
    "FORMATS",
    "REPORT_FORMATS",
    "Report",
    "aggregate_cells",
    "config_text",
    "counts_line",
    "k_text",
    "terminal_safe",
    "text_table",
    "to_json",
]

FORMATS = ("text", "json")
REPORT_FORMATS = ("markdown", "html")
"""What a comparison renders beyond ``FORMATS``: reports for people to read."""

TEXT_WIDTH = 100
DEFAULT_MAX_CASES = 1_000
"""Cases a Markdown or HTML report lists per status by default: a report stays readable at any scale."""
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
"""What a terminal would obey rather than show: C0 and C1 controls (ESC starts an escape sequence) but
the newline and tab, DEL, and the bidirectional marks, embeddings, overrides and isolates."""
AGGREGATE_HEADERS = ("signal", "baseline", "candidate", "delta", "95% CI", "p", "p (Holm)", "n")


class Report(ABC):
    """A result that renders itself: ``to_dict``, ``to_json``, ``render(format)``, and HTML in notebooks."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready) describing the result."""

    @abstractmethod
    def _text(self) -> str:
        """The result for a terminal."""

    def to_json(self) -> str:
        return to_json(self.to_dict())

    def render(self, format: str = "text") -> str:
        """The result as ``text`` (for a terminal) or ``json``."""
        if format not in FORMATS:
            raise ValueError(f"unknown format {format!r}; use one of {', '.join(FORMATS)}")
        return self.to_json() if format == "json" else terminal_safe(self._text())

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(self._text())}</pre>"


def to_json(payload: Mapping[str, Any]) -> str:
    """JSON with a stable layout: two-space indent, keys in the order given, UTF-8 kept. Always strict
    JSON: a number that is not finite (NaN, an infinity) is written as null."""
    return json.dumps(_finite(payload), indent=2, ensure_ascii=False, default=str, allow_nan=False) + "\n"


def _finite(value: Any) -> Any:
    """``value`` with every float that is not finite, at any depth of dicts, lists and tuples, as None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def terminal_safe(text: str) -> str:
    """``text`` with every control character a terminal would obey shown as its escape instead:
    ``\\x1b`` for ESC, ``\\u202e`` for a right-to-left override (newlines and tabs are kept)."""
    return _UNSAFE.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def text_table(headers: Sequence[str], rows: Iterable[Sequence[object]], title: str | None = None) -> str:
    """A plain-text table (no colour, fixed width, control characters escaped) as a string."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(*headers, title=title, title_justify="left", box=None, pad_edge=False, show_edge=False)
    for row in rows:
        table.add_row(*(Text("" if cell is None else terminal_safe(str(cell))) for cell in row))
    buffer = io.StringIO()
    Console(file=buffer, width=TEXT_WIDTH, color_system=None, highlight=False, soft_wrap=False).print(table)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"


def counts_line(counts: Mapping[str, int], separator: str = " · ") -> str:
    """``a 3 · b 1`` for a mapping of counts, or ``none`` when empty."""
    return separator.join(f"{key} {value}" for key, value in counts.items()) or "none"


def k_text(k: int | None) -> str:
    """A ranked-list cut-off as shown: the number, or ``list length`` when each list keeps its own."""
    return "list length" if k is None else str(k)


def config_text(value: object, limit: int | None = None) -> str:
    """A config value as shown (``(absent)`` for a key a run lacks), cut to ``limit`` characters."""
    text = "(absent)" if value is None else str(value)
    return text if limit is None or len(text) <= limit else text[: limit - 3] + "..."


def _number(value: float | None, digits: int = 3) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    if value is None:
        return ""
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def aggregate_cells(row: Mapping[str, Any]) -> tuple[str, ...]:
    """An aggregates row as the cells of ``AGGREGATE_HEADERS`` (3 decimals, signed deltas, ``<0.001``)."""
    ci = "" if row["ci_low"] is None else f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"
    delta = "" if row["delta"] is None else f"{row['delta']:+.3f}"
    return (
        row["signal"],
        _number(row["baseline"]),
        _number(row["candidate"]),
        delta,
        ci,
        _p(row["p_value"]),
        _p(row["p_adjusted"]),
        f"{row['n']:,}",
    )
