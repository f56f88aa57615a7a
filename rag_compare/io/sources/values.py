"""Values of a parsed JSON document read as what a source row holds: a value of another type is absent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["count", "is_int", "key_text", "mapping", "number", "text"]


def is_int(value: Any) -> bool:
    """Whether ``value`` is an integer (``True`` is not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is an object, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def text(value: Any) -> str | None:
    """``value`` when it is text, else ``None``."""
    return value if isinstance(value, str) else None


def number(value: Any) -> float | None:
    """``value`` as a float when it is a number (not a boolean), else ``None``."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def count(value: Any) -> int | None:
    """``value`` when it is an integer (not a boolean), else ``None``."""
    return value if is_int(value) else None


def key_text(value: Any) -> str | None:
    """A case key as read (text, or a number as its text); ``None`` for a missing or blank one."""
    return None if value is None or str(value).strip() == "" else str(value)
