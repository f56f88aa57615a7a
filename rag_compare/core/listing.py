"""Lists as one piece of text: counts (``ok 3 · failed 1``) and a long list cut short (``a, b … and 8 more``).

Only the standard library: errors use it too (a Polars series is cut without being copied whole).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

__all__ = ["counted", "counts_line", "truncated"]


def counted(count: int, noun: str) -> str:
    """``1 trace``, ``2 traces``: ``count`` and ``noun``, plural (an ``s`` added) unless ``count`` is 1."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def counts_line(counts: Mapping[str, int], separator: str = " · ") -> str:
    """``a 3 · b 1`` for a mapping of counts, or ``none`` when empty."""
    return separator.join(f"{key} {value}" for key, value in counts.items()) or "none"


def truncated(
    items: Sequence[object] | pl.Series,
    limit: int = 10,
    *,
    separator: str = ", ",
    prefix: str = " ",
    suffix: str = "",
    total: int | None = None,
) -> str:
    """The first ``limit`` of ``items`` joined by ``separator``; the rest, if any, said as ``… and N more``
    between ``prefix`` and ``suffix`` (``suffix`` may say where every item is listed). ``total`` counts
    the items when ``items`` holds only the first ones. Only the items shown are made text."""
    shown = separator.join(str(item) for item in items[:limit])
    hidden = (len(items) if total is None else total) - limit
    return f"{shown}{prefix}… and {hidden} more{suffix}" if hidden > 0 else shown
