"""Plain-text tables and cells for a terminal.

Values from data are never read as markup: every cell is a ``rich.text.Text``. Text for a terminal
never carries a control character from data (``terminal_safe``), nor a credential: a cell is redacted
before it is cut to its column, so no part of one is left.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rag_compare.core.credentials import redact, redactor
from rag_compare.core.result import terminal_safe
from rag_compare.io.config import flatten

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from rag_compare.compute.comparison import Comparison

__all__ = [
    "AGGREGATE_HEADERS",
    "aggregate_cells",
    "config_diff_rows",
    "config_text",
    "k_text",
    "number_text",
    "p_value_text",
    "text_table",
]

TEXT_WIDTH = 100
_WRAPPED_WIDTH = 20
"""The narrowest a column that wraps is made, when a table is too wide: a few words a line."""
AGGREGATE_HEADERS = ("signal", "baseline", "candidate", "delta", "95% CI", "p", "p (Holm)", "n")


def text_table(headers: Sequence[str], rows: Iterable[Sequence[object]], title: str | None = None) -> str:
    """A plain-text table (no colour, control characters escaped) as a string, ``TEXT_WIDTH`` wide or
    wider: a cell wraps between words, and no word is ever cut (a case id, a path, a fingerprint is one)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    shown = redactor()
    cells = [[Text("" if cell is None else terminal_safe(shown(str(cell)))) for cell in row] for row in rows]
    table = Table(*headers, title=title, title_justify="left", box=None, pad_edge=False, show_edge=False)
    for row in cells:
        table.add_row(*row)
    buffer = io.StringIO()
    console = Console(file=buffer, width=TEXT_WIDTH, color_system=None, highlight=False, soft_wrap=False)
    _keep_words_whole(console, table, [[Text(header) for header in headers], *cells])
    console.print(table)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"


def _keep_words_whole(console: Console, table: Table, rows: Sequence[Sequence[Text]]) -> None:
    """Widen ``console`` to fit ``table``'s longest words (its ``rows``, headers first), and when the
    table is still too wide, fix its columns' widths: each gets its longest word (and ``_WRAPPED_WIDTH``,
    if it needs that much), and the room left goes to the columns needing least first, then in equal
    shares. (Rich alone would cut words short.)"""
    from rich.measure import Measurement

    unbounded = console.options.update_width(sys.maxsize)
    sizes = [[Measurement.get(console, unbounded, cell) for cell in column] for column in zip(*rows, strict=True)]
    most = [max(size.maximum for size in column) for column in sizes]
    least = [
        max(min(widest, _WRAPPED_WIDTH), *(size.minimum for size in column))
        for widest, column in zip(most, sizes, strict=True)
    ]
    padding = Measurement.get(console, unbounded, table).maximum - sum(most)
    room = max(TEXT_WIDTH - padding, sum(least))
    console.width = room + padding
    if sum(most) <= room:
        return
    spare = room - sum(least)
    by_need = sorted(range(len(sizes)), key=lambda index: most[index] - least[index])
    for shared, index in enumerate(by_need):
        given = min(most[index] - least[index], spare // (len(sizes) - shared))
        table.columns[index].width = least[index] + given
        spare -= given


def k_text(k: int | None) -> str:
    """A ranked-list cut-off as shown: the number, or ``list length`` when each list keeps its own."""
    return "list length" if k is None else str(k)


def config_diff_rows(comparison: Comparison, limit: int | None = None) -> list[tuple[str, str, str]]:
    """The config differences as shown: each side's value (``config_text``), ``null`` where the run's
    config holds the key with no value (``None``), ``(absent)`` where it does not hold the key."""
    configs = [flatten(run.config) for run in (comparison.baseline, comparison.candidate)]

    def shown(key: str, value: object, config: Mapping[str, Any]) -> str:
        return "null" if value is None and key in config else config_text(value, limit)

    return [
        (
            change["key"],
            shown(change["key"], change["baseline"], configs[0]),
            shown(change["key"], change["candidate"], configs[1]),
        )
        for change in comparison.config_diff
    ]


def config_text(value: object, limit: int | None = None) -> str:
    """A config value as shown (``(absent)`` for a key a run lacks), redacted, then cut to ``limit`` characters."""
    text = "(absent)" if value is None else redact(str(value))
    return text if limit is None or len(text) <= limit else text[: limit - 3] + "..."


def number_text(value: float | None, digits: int = 3) -> str:
    """A mean as shown: ``digits`` decimals, empty when there is none."""
    return "" if value is None else f"{value:.{digits}f}"


def p_value_text(value: float | None) -> str:
    """A p-value as shown: 3 decimals, ``<0.001`` below that, empty when there is none."""
    if value is None:
        return ""
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def aggregate_cells(row: Mapping[str, Any]) -> tuple[str, ...]:
    """An aggregates row as the cells of ``AGGREGATE_HEADERS`` (3 decimals, signed deltas, ``<0.001``)."""
    ci = "" if row["ci_low"] is None else f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"
    delta = "" if row["delta"] is None else f"{row['delta']:+.3f}"
    return (
        row["signal"],
        number_text(row["baseline"]),
        number_text(row["candidate"]),
        delta,
        ci,
        p_value_text(row["p_value"]),
        p_value_text(row["p_adjusted"]),
        f"{row['n']:,}",
    )
