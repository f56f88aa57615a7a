"""A span of a trace as the OpenInference readers hold it, whichever file it came from (OTLP/JSON lines,
Phoenix's spans dataframe), and what both readings share."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Span", "Unreadable", "hex_id"]


@dataclass(frozen=True)
class Span:
    """One span, its ids in hex and its attributes as plain values keyed by their flat names."""

    trace_id: str
    span_id: str
    parent_id: str | None
    start_ns: int
    end_ns: int
    failed: bool
    status_message: str | None
    exception: str | None
    attributes: Mapping[str, Any]
    line: int

    @property
    def kind(self) -> str | None:
        kind = self.attributes.get("openinference.span.kind")
        return kind.upper() if isinstance(kind, str) else None


class Unreadable(ValueError):
    """A line or row that holds no span that can be read; the message says where it breaks."""


def hex_id(value: Any, size: int, name: str) -> str:
    """An id of ``size`` bytes in lower-case hex, from hex (the Collector) or base64 (protobuf's mapping)."""
    if isinstance(value, str):
        if len(value) == 2 * size and all(char in "0123456789abcdefABCDEF" for char in value):
            return value.lower()
        try:
            data = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            data = b""
        if len(data) == size:
            return data.hex()
    raise Unreadable(f"a span's `{name}` is not {size} bytes in hex or base64")
