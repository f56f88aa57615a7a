"""Spans from OTLP/JSON: one ``ExportTraceServiceRequest`` (``resourceSpans[].scopeSpans[].spans[]``), as the
OpenTelemetry Collector's file exporter writes it a line. Ids may be hex (the Collector) or base64
(protobuf's own JSON mapping); status codes numbers or names; attribute values OTLP ``AnyValue`` objects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rag_compare.io.sources.spans import Span, Unreadable, hex_id
from rag_compare.io.sources.values import mapping, text

__all__ = ["spans_of_request"]

_ERROR_CODES = (2, "STATUS_CODE_ERROR")


def spans_of_request(request: Any, line: int) -> list[Span]:
    """The spans of one export request (a parsed line); ``Unreadable`` when it is not one."""
    if not isinstance(request, dict) or not isinstance(request.get("resourceSpans"), list):
        raise Unreadable("the line has no `resourceSpans` list")
    return [
        _span(span, line)
        for resource in request["resourceSpans"]
        for scope in _items(resource, "scopeSpans")
        for span in _items(scope, "spans")
    ]


def _items(parent: Any, key: str) -> list[Any]:
    items = parent.get(key, []) if isinstance(parent, dict) else None
    if not isinstance(items, list):
        raise Unreadable(f"`{key}` is not a list")
    return items


def _span(span: Any, line: int) -> Span:
    if not isinstance(span, dict):
        raise Unreadable("a span is not an object")
    status = span.get("status") or {}
    attributes = _attributes(span.get("attributes", []))
    try:
        start_ns, end_ns = int(span["startTimeUnixNano"]), int(span["endTimeUnixNano"])
    except (KeyError, TypeError, ValueError):
        raise Unreadable("a span has no `startTimeUnixNano` and `endTimeUnixNano`") from None
    return Span(
        trace_id=hex_id(span.get("traceId"), 16, "traceId"),
        span_id=hex_id(span.get("spanId"), 8, "spanId"),
        parent_id=hex_id(span["parentSpanId"], 8, "parentSpanId") if span.get("parentSpanId") else None,
        start_ns=start_ns,
        end_ns=end_ns,
        failed=isinstance(status, dict) and status.get("code") in _ERROR_CODES,
        status_message=text(mapping(status).get("message")) or None,
        exception=_exception_message(span.get("events", [])),
        attributes=attributes,
        line=line,
    )


def _attributes(items: Any) -> dict[str, Any]:
    if not isinstance(items, list):
        raise Unreadable("a span's `attributes` is not a list")
    try:
        return {item["key"]: _value(item.get("value") or {}) for item in items}
    except (KeyError, TypeError, AttributeError, ValueError):
        raise Unreadable("an attribute is not a {key, value} object") from None


def _value(value: Mapping[str, Any]) -> Any:
    """An OTLP ``AnyValue`` as a plain value (``intValue`` is a string in JSON)."""
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [_value(item) for item in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return {item["key"]: _value(item.get("value") or {}) for item in value["kvlistValue"].get("values", [])}
    return value.get("bytesValue")


def _exception_message(events: Any) -> str | None:
    for event in events if isinstance(events, list) else []:
        if isinstance(event, dict) and event.get("name") == "exception":
            message = _attributes(event.get("attributes", [])).get("exception.message")
            if isinstance(message, str):
                return message
    return None
