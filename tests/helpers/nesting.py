"""Documents nested to a chosen depth, written by hand: no real producer writes them, but a hostile file may
(``core.nesting``). Levels alternate lists and objects, so a reader meets both."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

DEEP = "<deep>"
"""The value of a template that ``nested_json`` nests."""


def nested_json(template: Any, depth: int) -> str:
    """The JSON text of ``template`` with its ``DEEP`` value replaced so that the whole text nests ``depth``
    levels: as many lists and objects as the levels ``template`` leaves."""
    levels = depth - _enclosing(template)
    assert levels >= 1, f"the template already nests {depth - levels} levels around {DEEP!r}"
    opening = "".join("[" if level % 2 == 0 else '{"a": ' for level in range(levels))
    closing = "".join("]" if level % 2 == 0 else "}" for level in reversed(range(levels)))
    return json.dumps(template).replace(json.dumps(DEEP), f"{opening}1{closing}")


def nested_toml(levels: int) -> str:
    """A TOML value nesting ``levels`` levels: arrays and inline tables."""
    opening = "".join("[" if level % 2 == 0 else "{ a = " for level in range(levels))
    closing = "".join("]" if level % 2 == 0 else " }" for level in reversed(range(levels)))
    return f"{opening}1{closing}"


def nested_type(levels: int) -> pa.DataType:
    """An Arrow type nesting ``levels`` levels: lists and structs of text."""
    nested: pa.DataType = pa.string()
    for level in range(levels):
        nested = pa.list_(nested) if level % 2 == 0 else pa.struct([("a", nested)])
    return nested


def _enclosing(value: Any) -> int:
    """How many lists and objects hold ``DEEP`` in ``value``."""
    items = value.values() if isinstance(value, Mapping) else value if isinstance(value, list) else None
    if items is None:
        return 0 if value == DEEP else -1
    inner = max((_enclosing(item) for item in items), default=-1)
    return -1 if inner < 0 else inner + 1
