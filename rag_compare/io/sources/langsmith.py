"""LangSmith runs exported as JSON lines (one root run with its ``child_runs`` a line) as source rows.

A line is a run as the ``langsmith`` SDK's ``Run`` serialises (``run.model_dump_json()`` of
``Client.read_run(run_id, load_child_runs=True)``, or of the runs LangChain's tracers collect). The runs
of a tree are read in the order the tree lists them (parent first, children in order). The answering
model call is the last run of type ``llm`` (or ``chat``); the retrieval is the last ``retriever`` run
before it (the last one at all when no model was called). A run of the tree that errored (the root
or any run below it) makes the case ``failed``, with the error and the ``run_type`` of the run where
it started (the first errored run with no errored run below it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rag_compare.core.errors import Problem, show_value
from rag_compare.io.sources.files import json_lines
from rag_compare.io.sources.rows import Skipped, SourceRows, source_frame
from rag_compare.io.sources.values import count, key_text, mapping

__all__ = ["ANSWER_KEYS", "QUESTION_KEYS", "read_langsmith"]

QUESTION_KEYS = ("question", "query", "input")
"""The root run's input that holds the question, the first present wins; else the retriever's ``query``."""
ANSWER_KEYS = ("output", "answer", "text")
"""The root run's output that holds the answer, the first present wins; else its first text output that
is not an input passed through, else the model call's generation."""
_MODEL_TYPES = ("llm", "chat")
_TRACEBACK = "Traceback (most recent call last)"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_WRITTEN_BY = "LangSmith runs as JSON lines (`run.model_dump_json()` of each root run with its child runs)"


def read_langsmith(path: Path, case_id_key: str) -> SourceRows:
    """The root runs of the JSON lines file ``path``; ``case_id_key`` is the ``extra.metadata`` key of the case id."""
    parsed, problems = json_lines(path, _WRITTEN_BY, "a LangSmith run")
    read = len(parsed) + len(problems)
    rows: list[dict[str, Any]] = []
    skipped: list[Skipped] = []
    for number, run in parsed:
        if not _is_run(run):
            expected = "a LangSmith run: an object with `id`, `run_type` and `inputs`"
            problems.append(Problem(expected, row=number, value=show_value(run)))
        elif run.get("parent_run_id"):
            reason = "a child run on a line of its own: export each root run with its `child_runs`"
            skipped.append(Skipped(number, reason, str(run["id"])))
        else:
            row = _row(number, run, case_id_key)
            if row is None:
                reason = "no question, retrieval or model call in this run (an indexing or other run)"
                skipped.append(Skipped(number, reason, str(run["id"])))
            else:
                rows.append(row)
    return SourceRows(source_frame(rows), read=read, unit="run", skipped=tuple(skipped), problems=tuple(problems))


def _is_run(run: Any) -> bool:
    return isinstance(run, dict) and "id" in run and isinstance(run.get("run_type"), str) and "inputs" in run


def _row(number: int, root: Mapping[str, Any], case_id_key: str) -> dict[str, Any] | None:
    """The source row of the run tree ``root``; ``None`` when it holds no question, retrieval or model call."""
    runs = list(_flattened(root))
    models = [index for index, run in enumerate(runs) if run.get("run_type") in _MODEL_TYPES]
    end = models[-1] if models else len(runs)
    retrievers = [run for run in runs[:end] if run.get("run_type") == "retriever"]
    model = runs[models[-1]] if models else None
    retriever = retrievers[-1] if retrievers else None
    question = _first_text(mapping(root.get("inputs")), QUESTION_KEYS)
    if question is None and retriever is not None:
        question = _first_text(mapping(retriever.get("inputs")), ("query",))
    if question is None and retriever is None and model is None:
        return None
    failure = _failure(root)
    key = mapping(mapping(root.get("extra")).get("metadata")).get(case_id_key)
    started, ended = _time(root.get("start_time")), _time(root.get("end_time"))
    return {
        "position": number,
        "source_id": str(root["id"]),
        "case_key": key_text(key),
        "question": question,
        "started_ns": None if started is None else (started - _EPOCH) // timedelta(microseconds=1) * 1000,
        "status": "ok" if failure is None else "failed",
        "error": None if failure is None else _error_text(failure),
        "failed_stage": None if failure is None else failure.get("run_type"),
        **_retrieved(retriever),
        "context": None if model is None else _context(mapping(model.get("inputs"))),
        "answer": _answer(root, model),
        "latency_ms": None if started is None or ended is None else (ended - started) / timedelta(milliseconds=1),
        **_tokens(root, [runs[index] for index in models]),
    }


def _flattened(run: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """``run`` and its descendants, parent first, children in the order the tree lists them."""
    yield run
    for child in run.get("child_runs") or ():
        if isinstance(child, Mapping):
            yield from _flattened(child)


def _failure(run: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The run where the error started: the first errored run (parents first, children in order) with no
    errored run below it; ``None`` when no run of the tree errored."""
    for child in run.get("child_runs") or ():
        if isinstance(child, Mapping):
            found = _failure(child)
            if found is not None:
                return found
    return run if run.get("error") else None


def _error_text(run: Mapping[str, Any]) -> str:
    """The run's error without the traceback LangChain appends to it."""
    error = str(run["error"])
    return error.split(_TRACEBACK, 1)[0].strip() or error.strip()


def _retrieved(retriever: Mapping[str, Any] | None) -> dict[str, Any]:
    """The retriever's documents: their texts, and their ids when every one has an id."""
    if retriever is None:
        return {}
    documents = [_lc(doc) for doc in mapping(retriever.get("outputs")).get("documents") or ()]
    documents = [doc for doc in documents if isinstance(doc, Mapping)]
    ids = [doc.get("id") or mapping(doc.get("metadata")).get("passage_id") for doc in documents]
    return {
        "retrieved_passage_ids": [str(item) for item in ids] if all(ids) else None,
        "retrieved_texts": [str(doc.get("page_content") or "") for doc in documents],
    }


def _context(inputs: Mapping[str, Any]) -> str | None:
    """What the model was sent: its messages' contents (or its prompts) joined by blank lines."""
    prompts = inputs.get("prompts")
    if isinstance(prompts, list) and all(isinstance(prompt, str) for prompt in prompts):
        return "\n\n".join(prompts)
    messages = inputs.get("messages")
    if not isinstance(messages, list):
        return None
    if messages and all(isinstance(batch, list) for batch in messages):
        messages = messages[0]
    contents = [_content(_lc(message)) for message in messages]
    return "\n\n".join(content for content in contents if content is not None)


def _answer(root: Mapping[str, Any], model: Mapping[str, Any] | None) -> str | None:
    """The root run's answer output, else the model call's first generation."""
    outputs = mapping(root.get("outputs"))
    inputs = mapping(root.get("inputs"))
    others = [value for key, value in outputs.items() if key not in inputs]
    for value in [*(outputs.get(key) for key in ANSWER_KEYS), *others]:
        text = value if isinstance(value, str) else _content(_lc(value))
        if text is not None:
            return text
    if model is None:
        return None
    generations = mapping(model.get("outputs")).get("generations") or [[]]
    first = generations[0][0] if generations and isinstance(generations[0], list) and generations[0] else None
    generation = mapping(first)
    text = generation.get("text")
    return text if isinstance(text, str) else _content(_lc(generation.get("message")))


def _tokens(root: Mapping[str, Any], models: Sequence[Mapping[str, Any]]) -> dict[str, int | None]:
    """The root's token totals (LangSmith's), else the sum over the model calls that report usage."""
    if isinstance(root.get("prompt_tokens"), int) or isinstance(root.get("completion_tokens"), int):
        return {
            "prompt_tokens": count(root.get("prompt_tokens")),
            "completion_tokens": count(root.get("completion_tokens")),
        }
    counts = [_usage(model) for model in models]
    reported = [count for count in counts if count is not None]
    if not reported:
        return {}
    return {
        "prompt_tokens": sum(count[0] for count in reported),
        "completion_tokens": sum(count[1] for count in reported),
    }


def _usage(model: Mapping[str, Any]) -> tuple[int, int] | None:
    """A model call's (prompt, completion) tokens: ``extra.metadata.usage_metadata`` (LangChain's tracer),
    else ``outputs.llm_output.token_usage``."""
    usage = mapping(mapping(mapping(model.get("extra")).get("metadata")).get("usage_metadata"))
    prompt, completion = count(usage.get("input_tokens")), count(usage.get("output_tokens"))
    if prompt is None and completion is None:
        usage = mapping(mapping(mapping(model.get("outputs")).get("llm_output")).get("token_usage"))
        prompt, completion = count(usage.get("prompt_tokens")), count(usage.get("completion_tokens"))
    return None if prompt is None and completion is None else (prompt or 0, completion or 0)


def _lc(value: Any) -> Any:
    """A LangChain object serialised as a constructor (``{"lc": 1, "kwargs": {...}}``) as its fields."""
    if isinstance(value, Mapping) and value.get("type") == "constructor" and isinstance(value.get("kwargs"), Mapping):
        return value["kwargs"]
    return value


def _content(message: Any) -> str | None:
    """A message's text content: a string, or its text parts joined."""
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, list):
        parts = [part if isinstance(part, str) else mapping(part).get("text") for part in content]
        return "".join(part for part in parts if isinstance(part, str))
    return content if isinstance(content, str) else None


def _first_text(values: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    return next((values[key] for key in keys if isinstance(values.get(key), str)), None)


def _time(value: Any) -> datetime | None:
    """An ISO 8601 time (naive ones are UTC), or ``None``."""
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None
    return None if moment is None else moment if moment.tzinfo else moment.replace(tzinfo=UTC)
