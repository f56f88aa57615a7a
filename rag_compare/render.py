"""Shared rendering helpers: stable JSON, and plain-text tables for a terminal.

Values from data are never read as markup: every cell is a ``rich.text.Text``.
"""

from __future__ import annotations

import html
import io
import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["FORMATS", "Report", "counts_line", "text_table", "to_json"]

FORMATS = ("text", "json")

TEXT_WIDTH = 100


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
        return self.to_json() if format == "json" else self._text()

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(self._text())}</pre>"


def to_json(payload: Mapping[str, Any]) -> str:
    """JSON with a stable layout: two-space indent, keys in the order given, UTF-8 kept."""
    return json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n"


def text_table(headers: Sequence[str], rows: Iterable[Sequence[object]], title: str | None = None) -> str:
    """A plain-text table (no colour, fixed width) as a string."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(*headers, title=title, title_justify="left", box=None, pad_edge=False, show_edge=False)
    for row in rows:
        table.add_row(*(Text("" if cell is None else str(cell)) for cell in row))
    buffer = io.StringIO()
    Console(file=buffer, width=TEXT_WIDTH, color_system=None, highlight=False, soft_wrap=False).print(table)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"


def counts_line(counts: Mapping[str, int]) -> str:
    """``a 3 · b 1`` for a mapping of counts, or ``none`` when empty."""
    return " · ".join(f"{key} {value}" for key, value in counts.items()) or "none"
