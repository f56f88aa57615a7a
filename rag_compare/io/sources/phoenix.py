"""Spans from Phoenix's spans dataframe (``get_spans_dataframe``), one span a row: ``context.trace_id``,
``context.span_id``, ``parent_id``, ``span_kind``, ``status_code``, ``status_message``, ``events``,
``start_time``, ``end_time`` and ``attributes.*`` columns, whose lists of objects (documents, messages)
are read back as OpenInference's flat names (``retrieval.documents.N.document.id``). A time is a timestamp,
ISO 8601 text, or an epoch number in seconds, milliseconds (pandas' ``to_json`` default), microseconds or
nanoseconds, told apart by its size."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from rag_compare.io.sources.spans import Span, Unreadable, hex_id
from rag_compare.io.sources.values import number, text

__all__ = ["phoenix_span"]

_ISO_FRACTION = re.compile(r"(.*[T ]\d\d:\d\d:\d\d)(?:\.(\d+))?(.*)")
_EPOCH_SCALES = ((1e17, 1), (1e14, 10**3), (1e11, 10**6), (0, 10**9))
"""A number of nanoseconds is at least 1e17 (after 1973), of microseconds 1e14, of milliseconds 1e11."""


def phoenix_span(record: Any, row: int) -> list[Span]:
    """The span of one row of Phoenix's spans dataframe (its ``attributes.*`` columns flattened back)."""
    if not isinstance(record, Mapping):
        raise Unreadable("the row is not an object")
    attributes: dict[str, Any] = {}
    for column, value in record.items():
        if column.startswith("attributes."):
            _flatten(attributes, column.removeprefix("attributes."), value)
    if isinstance(record.get("span_kind"), str):
        attributes.setdefault("openinference.span.kind", record["span_kind"])
    events = record.get("events")
    exceptions = [
        event["attributes"].get("exception.message")
        for event in (events if isinstance(events, list) else [])
        if isinstance(event, Mapping)
        and event.get("name") == "exception"
        and isinstance(event.get("attributes"), Mapping)
    ]
    return [
        Span(
            trace_id=hex_id(record.get("context.trace_id"), 16, "context.trace_id"),
            span_id=hex_id(record.get("context.span_id"), 8, "context.span_id"),
            parent_id=hex_id(record["parent_id"], 8, "parent_id") if record.get("parent_id") else None,
            start_ns=_epoch_ns(record.get("start_time"), "start_time"),
            end_ns=_epoch_ns(record.get("end_time"), "end_time"),
            failed=record.get("status_code") == "ERROR",
            status_message=text(record.get("status_message")) or None,
            exception=next((message for message in exceptions if isinstance(message, str)), None),
            attributes=attributes,
            line=row,
        )
    ]


def _flatten(flat: dict[str, Any], key: str, value: Any) -> None:
    """Put ``value`` under ``key`` in ``flat``; a list of objects as ``key.N.field`` (OpenInference's flat names)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return
    if isinstance(value, list) and value and all(isinstance(item, Mapping) for item in value):
        for index, item in enumerate(value):
            for field, inner in item.items():
                _flatten(flat, f"{key}.{index}.{field}", inner)
    else:
        flat[key] = value


def _epoch_ns(value: Any, name: str) -> int:
    """A time as nanoseconds since the epoch: from an ISO 8601 text, or from a number of seconds,
    milliseconds, microseconds or nanoseconds (told apart by its size)."""
    if isinstance(value, str):
        match = _ISO_FRACTION.fullmatch(value.strip())
        try:
            stamp = datetime.fromisoformat(match[1] + match[3] if match else value)
        except ValueError:
            raise Unreadable(f"`{name}` is not a time") from None
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=UTC)
        fraction = int((match[2] or "").ljust(9, "0")) if match else 0
        return int(stamp.timestamp()) * 10**9 + fraction
    if (amount := number(value)) is not None and math.isfinite(amount):
        scale = next(factor for bound, factor in _EPOCH_SCALES if abs(amount) >= bound)
        return int(value * scale)
    raise Unreadable(f"`{name}` is not a time")
