"""Geometry of the report's charts, computed here and drawn as inline SVG by the HTML template.

Each chart is a frozen dataclass of plain numbers and labels in SVG user units (the template scales
the drawing to the page's width). Every mark carries a ``tone`` the stylesheet colours for light and
dark mode: ``better``, ``worse``, ``unclear`` (a move whose interval holds zero), ``failed``,
``missing``, ``mixed`` or ``same``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rag_compare.core.signals import ALL_SIGNALS

__all__ = [
    "CategoryGrid",
    "DeltaChart",
    "StatusChart",
    "category_grid",
    "delta_chart",
    "delta_tone",
    "status_chart",
    "tone_of",
]

_CHAR_WIDTH = 7.0
"""Width of one character of the charts' 12-unit labels, generous, so labels never overlap."""
_ROW = 24.0
_GAP = 12.0
_DIRECTION = {signal.name: signal.higher_is_better for signal in ALL_SIGNALS}


def tone_of(status: str) -> str:
    """The tone a case status is drawn in."""
    if status.startswith(("failed", "judge_failed")):
        return "failed"
    if status.startswith("missing"):
        return "missing"
    return {"improved": "better", "regressed": "worse", "mixed": "mixed"}.get(status, "same")


def _label_width(labels: Sequence[str]) -> float:
    return max((len(label) for label in labels), default=0) * _CHAR_WIDTH + _GAP


@dataclass(frozen=True)
class StatusBar:
    status: str
    count: int
    tone: str
    y: float
    width: float


@dataclass(frozen=True)
class StatusChart:
    """One horizontal bar per status, longest bar for the largest count."""

    width: float
    height: float
    label_width: float
    bar_height: float
    bars: tuple[StatusBar, ...]


def status_chart(counts: Mapping[str, int], *, bars_width: float = 360.0) -> StatusChart:
    """Bars for the statuses with at least one case, in the order of ``counts``."""
    shown = [(status, count) for status, count in counts.items() if count]
    label_width = _label_width([status for status, _ in shown])
    largest = max((count for _, count in shown), default=1)
    bars = tuple(
        StatusBar(status, count, tone_of(status), index * _ROW, max(1.0, bars_width * count / largest))
        for index, (status, count) in enumerate(shown)
    )
    count_room = _CHAR_WIDTH * (len(f"{largest:,}") + 1) + _GAP
    return StatusChart(label_width + bars_width + count_room, len(bars) * _ROW, label_width, _ROW - 6, bars)


@dataclass(frozen=True)
class DeltaRow:
    signal: str
    y: float
    x: float
    low: float | None
    high: float | None
    tone: str
    label: str


@dataclass(frozen=True)
class DeltaChart:
    """Each signal's paired delta as a dot, its 95% interval as a line, around a zero line."""

    width: float
    height: float
    label_width: float
    plot_width: float
    zero: float
    ticks: tuple[tuple[float, str], ...]
    rows: tuple[DeltaRow, ...]


def delta_chart(aggregates: Sequence[Mapping[str, Any]], *, plot_width: float = 320.0) -> DeltaChart:
    """The chart of ``aggregates`` rows (one scope, rows with a delta), on a symmetric axis."""
    rows = [row for row in aggregates if row["delta"] is not None]
    reach = max(
        (abs(value) for row in rows for value in (row["delta"], row["ci_low"], row["ci_high"]) if value is not None),
        default=0.0,
    )
    extent = _nice_extent(reach)
    label_width = _label_width([row["signal"] for row in rows])
    half = plot_width / 2

    def x(value: float) -> float:
        return label_width + half + half * value / extent

    drawn = []
    for index, row in enumerate(rows):
        low, high = row["ci_low"], row["ci_high"]
        interval = "" if low is None else f" [{low:+.3f}, {high:+.3f}]"
        drawn.append(
            DeltaRow(
                row["signal"],
                _ROW * (index + 1),
                x(row["delta"]),
                None if low is None else x(low),
                None if high is None else x(high),
                delta_tone(row["signal"], row["delta"], low, high),
                f"{row['delta']:+.3f}{interval}",
            )
        )
    ticks = tuple(
        (x(value), f"{value:+g}" if value else "0") for value in (-extent, -extent / 2, 0.0, extent / 2, extent)
    )
    text_room = _CHAR_WIDTH * 24
    return DeltaChart(
        label_width + plot_width + text_room,
        _ROW * (len(rows) + 1.5),
        label_width,
        plot_width,
        x(0.0),
        ticks,
        tuple(drawn),
    )


def _nice_extent(reach: float) -> float:
    """The smallest of 0.05, 0.1, 0.25, 0.5, 1 (then powers of ten) that holds ``reach``."""
    for extent in (0.05, 0.1, 0.25, 0.5, 1.0):
        if reach <= extent:
            return extent
    return float(10 ** math.ceil(math.log10(reach)))


def delta_tone(signal: str, delta: float, low: float | None = None, high: float | None = None) -> str:
    """``better`` or ``worse`` by the signal's good direction, ``same`` for no move, and ``unclear``
    when an interval (``low``, ``high``) is given and holds zero."""
    if delta == 0:
        return "same"
    if low is not None and high is not None and low <= 0 <= high:
        return "unclear"
    return "better" if (delta > 0) == _DIRECTION.get(signal, True) else "worse"


@dataclass(frozen=True)
class GridCell:
    x: float
    y: float
    tone: str
    strength: float
    """How strongly to fill the cell: |delta| on a 0-1 scale, at least a faint tint for any move."""
    label: str


@dataclass(frozen=True)
class CategoryGrid:
    """Paired deltas per signal (rows) and group (columns), coloured by whether the move is good."""

    width: float
    height: float
    label_width: float
    header_height: float
    cell_width: float
    cell_height: float
    columns: tuple[tuple[float, str], ...]
    rows: tuple[tuple[float, str], ...]
    cells: tuple[GridCell, ...]


def category_grid(breakdowns: Sequence[Mapping[str, Any]], *, cell_width: float = 64.0) -> CategoryGrid:
    """The grid of ``breakdowns`` rows of one grouping (``group``, ``signal``, ``delta``)."""
    groups = sorted({row["group"] for row in breakdowns})
    present = {row["signal"] for row in breakdowns}
    signals = [signal.name for signal in ALL_SIGNALS if signal.name in present]
    label_width = _label_width(signals)
    header_height = _label_width(groups) * 0.6 + _GAP
    cell_height = _ROW
    columns = tuple((label_width + cell_width * (index + 0.5), group) for index, group in enumerate(groups))
    rows = tuple((header_height + cell_height * (index + 0.5), signal) for index, signal in enumerate(signals))
    cells = tuple(
        GridCell(
            label_width + cell_width * groups.index(row["group"]),
            header_height + cell_height * signals.index(row["signal"]),
            delta_tone(row["signal"], row["delta"]),
            0.0 if row["delta"] == 0 else min(1.0, 0.15 + abs(row["delta"])),
            f"{row['delta']:+.2f}",
        )
        for row in breakdowns
    )
    overhang = _label_width(groups) * 0.82
    return CategoryGrid(
        label_width + cell_width * len(groups) + overhang,
        header_height + cell_height * len(signals),
        label_width,
        header_height,
        cell_width,
        cell_height,
        columns,
        rows,
        cells,
    )
