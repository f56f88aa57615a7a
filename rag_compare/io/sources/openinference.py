"""OpenInference traces, one trace a case: OTLP/JSON lines, or Phoenix's spans dataframe.

- OTLP/JSON lines: one ``ExportTraceServiceRequest`` a line (``resourceSpans[].scopeSpans[].spans[]``), as
  the OpenTelemetry Collector's file exporter writes it; ids may be hex (the Collector) or base64
  (protobuf's own JSON mapping), enums numbers or names, and a trace's spans may be spread over lines.
- Phoenix's spans dataframe (``get_spans_dataframe``) saved as Parquet (``.parquet``, ``.pq``) or as JSON
  lines (a JSONL file whose first object has ``context.span_id``): one span a row, ``context.trace_id``,
  ``context.span_id``, ``parent_id``, ``span_kind``, ``status_code``, ``status_message``, ``events``,
  ``start_time``, ``end_time`` and ``attributes.*`` columns, whose lists of objects (documents, messages)
  are read as OpenInference's flat names (``retrieval.documents.N.document.id``). A time is a timestamp,
  ISO 8601 text, or an epoch number in seconds, milliseconds (pandas' ``to_json`` default),
  microseconds or nanoseconds, told apart by its size.

A span written twice (the same trace and span id) counts once. A line or row that holds no readable span
(not JSON, not an export request, a span without ids or times) is a problem at its line or row; the
others are read. So is a trace whose attribute holds JSON text nested too deep (``core.nesting``), at its
first line or row.

How a trace becomes a row (attribute names are OpenInference's):

- root: the span without a parent (the earliest, if several). ``source_id`` is the trace id in hex,
  ``position`` the first line (or row) holding one of its spans, ``started_ns`` the root's start and
  ``latency_ms`` its end minus its start.
- question: the root's ``input.value``; when that is a JSON object, its ``query``, ``input`` or
  ``question`` field. A trace without a root, without a root ``input.value``, or without a RETRIEVER,
  RERANKER or LLM span (an indexing or embedding trace) is skipped with the reason.
- ``case_key``: the ``metadata`` attribute (a JSON object, as ``using_metadata`` sets it) under
  ``case_id_key``, on the root first, then on the other spans in start order.
- the answering LLM call: the last LLM span to start that holds ``llm.input_messages`` or ``llm.prompts``.
  ``context`` is its ``llm.input_messages.N.message.content``, else its ``llm.prompts``, joined in order
  with a newline.
- retrieved: the RETRIEVER spans holding ``retrieval.documents.N.document.*`` and the RERANKER spans
  holding ``reranker.output_documents.N.document.*``. Nested retriever spans of which one holds the
  documents are one retrieval; of several, the last to end before the answering LLM call started counts
  (so a reranker's output wins over the retrieval it reranked), else the last to end. A passage's id is
  its ``document.id``, else the ``passage_id`` in its ``document.metadata``; the id list is null unless
  every passage has one (the texts, ``document.content``, are then mapped to ids by the caller); the
  scores (``document.score``) are null unless every passage has one. ``context_passage_ids`` is left
  null: the caller derives it from the retrieved texts found in the context.
- ``answer``: the root's ``output.value``, else the answering LLM span's
  ``llm.output_messages.N.message.content`` (joined with a newline), else its ``output.value``; an
  ``output.value`` that is a JSON object gives its ``answer``, ``output``, ``result`` or ``response`` field
  (a chat model's serialised result has none: no answer).
- failure: a span with status ERROR (code 2; Phoenix's ``status_code`` ``ERROR``) makes the case
  ``failed``. The span it started in is the ERROR span without an ERROR child (the first to start, if
  several): ``error`` is its first ``exception`` event's ``exception.message``, else its status message;
  ``failed_stage`` its span kind in lower case (``llm``, ``retriever``...).
- tokens: ``llm.token_count.prompt`` and ``llm.token_count.completion`` summed over the LLM spans; null
  when no span holds them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare.core.errors import NestingError, Problem, show_value, sorted_problems
from rag_compare.core.nesting import load_json
from rag_compare.io.sources.files import json_lines
from rag_compare.io.sources.otlp import spans_of_request
from rag_compare.io.sources.phoenix import phoenix_span
from rag_compare.io.sources.rows import Skipped, SourceRows, source_frame
from rag_compare.io.sources.spans import Span, Unreadable
from rag_compare.io.sources.values import key_text, mapping, number, text
from rag_compare.io.tables import ROW, read_table

__all__ = ["read_openinference"]

_REQUEST = "an OTLP ExportTraceServiceRequest as JSON (resourceSpans[].scopeSpans[].spans[])"
_PHOENIX_ROW = "a span of Phoenix's spans dataframe (context.trace_id, context.span_id, start_time, end_time, ...)"
_PARQUET_SUFFIXES = (".parquet", ".pq")
_WRITTEN_BY = (
    "OpenInference traces: the OTLP/JSON lines the OpenTelemetry Collector's file exporter writes, or Phoenix's "
    "spans dataframe saved as Parquet or JSON lines"
)
_QUESTION_FIELDS = ("query", "input", "question")
_ANSWER_FIELDS = ("answer", "output", "result", "response")
_RETRIEVAL_KINDS = {"RETRIEVER": "retrieval.documents", "RERANKER": "reranker.output_documents"}
_INDEXED = re.compile(r"(\d+)\.(.+)")


def read_openinference(path: Path, case_id_key: str) -> SourceRows:
    """The traces in ``path`` as source rows, one per trace that holds a query: OTLP/JSON lines, or Phoenix's
    spans dataframe as Parquet or JSON lines (see the module).

    ``case_id_key`` is the key of the ``metadata`` attribute that holds the case id. Raises
    ``InputFileError`` when the file is missing, empty, or not JSON lines (or Parquet) at all.
    """
    units, problems, parse, expected = _units(Path(path))
    spans: list[Span] = []
    for position, unit in units:
        try:
            spans.extend(parse(unit, position))
        except Unreadable as error:
            problems.append(Problem(f"{expected}; {error}", row=position, value=show_value(unit)))
    rows: list[dict[str, Any]] = []
    skipped: list[Skipped] = []
    traces = _by_trace(spans)
    for trace in traces:
        try:
            row = _trace_row(trace, case_id_key)
        except Unreadable as error:
            problems.append(
                Problem(f"a trace whose attributes can be read; {error}", row=min(span.line for span in trace))
            )
            continue
        if isinstance(row, Skipped):
            skipped.append(row)
        else:
            rows.append(row)
    return SourceRows(
        source_frame(rows),
        read=len(traces),
        unit="trace",
        skipped=tuple(skipped),
        problems=tuple(sorted_problems(problems)),
    )


_Parse = Callable[[Any, int], list[Span]]


def _units(path: Path) -> tuple[list[tuple[int, Any]], list[Problem], _Parse, str]:
    """The file's units (parsed lines or rows, numbered), the lines that are not JSON, how a unit becomes
    spans, and what a unit must be."""
    if path.suffix.lower() in _PARQUET_SUFFIXES:
        table = read_table(path, "Phoenix spans")
        times = [name for name, dtype in table.schema.items() if isinstance(dtype, pl.Datetime)]
        records = table.with_columns(pl.col(name).dt.epoch("ns") for name in times).to_dicts()
        return [(record.pop(ROW), record) for record in records], [], phoenix_span, _PHOENIX_ROW
    parsed, problems = json_lines(path, _WRITTEN_BY, "an OTLP export request (or a Phoenix span)")
    first = next((value for _, value in parsed if isinstance(value, Mapping)), None)
    if first is not None and "context.span_id" in first:
        return parsed, problems, phoenix_span, _PHOENIX_ROW
    return parsed, problems, spans_of_request, _REQUEST


def _by_trace(spans: Iterable[Span]) -> list[list[Span]]:
    """The spans grouped by trace (traces in the order their first span appears), each in start order; a
    span exported twice (the same trace and span id) counts once, as first written."""
    traces: dict[str, dict[str, Span]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, {}).setdefault(span.span_id, span)
    return [sorted(trace.values(), key=lambda span: span.start_ns) for trace in traces.values()]


def _trace_row(trace: Sequence[Span], case_id_key: str) -> dict[str, Any] | Skipped:
    """The source row of one trace, or why it is skipped."""
    position, trace_id = min(span.line for span in trace), trace[0].trace_id
    roots = [span for span in trace if span.parent_id is None]
    if not roots:
        return Skipped(position, "no root span in the file", trace_id)
    root = roots[0]
    if not any(span.kind in (*_RETRIEVAL_KINDS, "LLM") for span in trace):
        return Skipped(position, "no retriever, reranker or LLM span (an indexing or embedding trace)", trace_id)
    question = _field(root.attributes.get("input.value"), _QUESTION_FIELDS)
    if question is None:
        return Skipped(position, "no query: the root span has no `input.value`", trace_id)
    llm = _answering_llm(trace)
    failure = _failure(trace)
    ids, texts, scores = _retrieval(trace, llm.start_ns if llm else None)
    return {
        "position": position,
        "source_id": trace_id,
        "case_key": _case_key(root, trace, case_id_key),
        "question": question,
        "started_ns": root.start_ns,
        "status": "ok" if failure is None else "failed",
        "error": failure[0] if failure else None,
        "failed_stage": failure[1] if failure else None,
        "retrieved_passage_ids": ids,
        "retrieved_texts": texts,
        "retrieved_scores": scores,
        "context": _context(llm),
        "answer": _field(root.attributes.get("output.value"), _ANSWER_FIELDS) or _llm_answer(llm),
        "latency_ms": (root.end_ns - root.start_ns) / 1e6,
        "prompt_tokens": _token_sum(trace, "llm.token_count.prompt"),
        "completion_tokens": _token_sum(trace, "llm.token_count.completion"),
    }


def _json_object(value: Any) -> dict[str, Any] | None:
    """``value`` when it is a mapping or the JSON text of an object, else None; ``Unreadable`` when that
    text nests too deep to read."""
    if isinstance(value, str):
        try:
            value = load_json(value, "an attribute's JSON text", line=None)
        except json.JSONDecodeError:
            return None
        except NestingError as error:
            raise Unreadable(str(error)) from None
    return dict(value) if isinstance(value, Mapping) else None


def _field(value: Any, fields: Sequence[str]) -> str | None:
    """``value`` as text; when it is a JSON object, its first text field among ``fields`` (or None)."""
    if not isinstance(value, str) or not value.strip():
        return None
    parsed = _json_object(value)
    if parsed is None:
        return value
    return next((parsed[name] for name in fields if isinstance(parsed.get(name), str)), None)


def _case_key(root: Span, trace: Sequence[Span], case_id_key: str) -> str | None:
    keys = (
        key_text(mapping(_json_object(span.attributes.get("metadata"))).get(case_id_key)) for span in (root, *trace)
    )
    return next((key for key in keys if key is not None), None)


def _answering_llm(trace: Sequence[Span]) -> Span | None:
    """The last LLM span to start that holds the prompt it was sent."""
    sent = [
        span
        for span in trace
        if span.kind == "LLM" and any(key.startswith(("llm.input_messages.", "llm.prompts")) for key in span.attributes)
    ]
    return sent[-1] if sent else None


def _failure(trace: Sequence[Span]) -> tuple[str | None, str | None] | None:
    """The error and stage of the ERROR span the failure started in, or None when no span failed."""
    failed = [span for span in trace if span.failed]
    parents = {span.parent_id for span in failed}
    origin = next((span for span in failed if span.span_id not in parents), None)
    if origin is None:
        return None
    return origin.exception or origin.status_message, origin.kind.lower() if origin.kind else None


def _retrieval(
    trace: Sequence[Span], llm_start: int | None
) -> tuple[list[str] | None, list[str] | None, list[float] | None]:
    """Ids, texts and scores of the retrieval that counts (see the module's docstring), else nulls."""
    found = [
        (span, documents)
        for span in trace
        if span.kind in _RETRIEVAL_KINDS and (documents := _indexed(span.attributes, _RETRIEVAL_KINDS[span.kind]))
    ]
    if not found:
        return None, None, None
    before = [item for item in found if llm_start is None or item[0].end_ns <= llm_start] or found
    documents = max(before, key=lambda item: item[0].end_ns)[1]
    ids = [
        key_text(document.get("document.id"))
        or key_text(mapping(_json_object(document.get("document.metadata"))).get("passage_id"))
        for document in documents
    ]
    texts = [text(document.get("document.content")) for document in documents]
    scores = [number(document.get("document.score")) for document in documents]
    return (
        [identifier for identifier in ids if identifier is not None] if None not in ids else None,
        [content for content in texts if content is not None] if None not in texts else None,
        [score for score in scores if score is not None] if None not in scores else None,
    )


def _indexed(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The items of a flattened list attribute (``prefix.N.field``), in the order of N."""
    items: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if key.startswith(prefix + ".") and (match := _INDEXED.fullmatch(key[len(prefix) + 1 :])):
            items.setdefault(int(match[1]), {})[match[2]] = value
    return [items[index] for index in sorted(items)]


def _joined(span: Span, prefix: str, field: str | None = None) -> str | None:
    """The texts of a list attribute (flattened ``prefix.N.field``, or a plain list) joined with newlines."""
    if field is None:
        value = span.attributes.get(prefix)
        texts = [item for item in value if isinstance(item, str)] if isinstance(value, list) else []
    else:
        texts = [item[field] for item in _indexed(span.attributes, prefix) if isinstance(item.get(field), str)]
    return "\n".join(texts) if texts else None


def _context(llm: Span | None) -> str | None:
    if llm is None:
        return None
    return _joined(llm, "llm.input_messages", "message.content") or _joined(llm, "llm.prompts")


def _llm_answer(llm: Span | None) -> str | None:
    if llm is None:
        return None
    return _joined(llm, "llm.output_messages", "message.content") or _field(
        llm.attributes.get("output.value"), _ANSWER_FIELDS
    )


def _token_sum(trace: Sequence[Span], key: str) -> int | None:
    """``key`` summed over the LLM spans that hold it (a whole float counts: Phoenix's frame holds floats)."""
    counts = [number(span.attributes.get(key)) for span in trace if span.kind == "LLM"]
    whole = [int(value) for value in counts if value is not None and value.is_integer()]
    return sum(whole) if whole else None
