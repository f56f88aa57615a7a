"""Capturing a run: every corpus case through a pipeline, everything it did recorded, then frozen.

``capture`` asks the retriever for ``top_k`` passages, builds the context, generates the answer and
records it all (see ``pipeline`` for the parts' protocols). With ``repeats`` each case is captured
that many times, each sample a record of its own with its ``repeat``. Samples run concurrently up to
a bound; each attempt at a sample has a timeout; a failed attempt is tried again after an exponential
backoff (or what a ``Retry-After`` header asks). A sample that still fails keeps its row, ``failed``
or ``timeout``, with the error, the stage it failed at and whatever the stages before it gave. Each
finished sample goes to a checkpoint beside the output at once, so an interrupted capture (Ctrl-C, a
killed process) run again with the same settings captures only the samples not yet finished.

Sync parts run in worker threads. Python cannot stop a thread, so a sync part that hangs past the
timeout is recorded as a timeout and left to finish on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, Unpack

import polars as pl

from rag_compare.compute.freezing import freeze_run
from rag_compare.core.contract import KNOWLEDGE_BASE
from rag_compare.core.credentials import credential_in, credential_values, redact
from rag_compare.core.digest import json_digest
from rag_compare.core.errors import CaptureError, ConfigError, RagCompareError, show_value
from rag_compare.core.progress import progress_bar
from rag_compare.core.protocols import (
    K_EXPECTED,
    Case,
    CaseFailure,
    Context,
    ContextBuilder,
    Generation,
    Generator,
    Passage,
    Retriever,
    callable_name,
    is_k,
)
from rag_compare.io.config import RESERVED_KEYS, check_config, refuse_credential_paths
from rag_compare.io.corpus import Corpus, load_corpus
from rag_compare.io.credential_scan import credential_cells
from rag_compare.io.outputs import check_output
from rag_compare.io.run_directory import RUN_DIRECTORY, is_directory_output
from rag_compare.io.runs import Run
from rag_compare.llm.dispatch import run_concurrently, run_sync
from rag_compare.llm.limits import LimitKeywords, Limits, backoff_wait, limits_from, retry_after
from rag_compare.llm.transport import describe, refusals, refused_error
from rag_compare.pipeline.checkpoint import Checkpoint, Sample, checkpoint_path, sample_of
from rag_compare.pipeline.context_builder import BudgetContextBuilder

__all__ = ["CAPTURE_COLUMNS", "CAPTURE_LIMITS", "capture"]

CAPTURE_COLUMNS: dict[str, pl.DataType] = {
    "case_id": pl.String(),
    "status": pl.String(),
    "error": pl.String(),
    "retrieved_passage_ids": pl.List(pl.String()),
    "retrieved_scores": pl.List(pl.Float64()),
    "context": pl.String(),
    "context_passage_ids": pl.List(pl.String()),
    "answer": pl.String(),
    "latency_ms": pl.Float64(),
    "prompt_tokens": pl.Int64(),
    "completion_tokens": pl.Int64(),
    "retrieved_metadata": pl.String(),
    "prompt_messages": pl.String(),
    "failed_stage": pl.String(),
    "attempts": pl.Int64(),
}
"""The records a capture makes: the run-records contract, then ``retrieved_metadata`` (JSON, one
object per retrieved passage), ``prompt_messages`` (JSON, the exact messages sent, when the generator
tells), ``failed_stage`` (retrieve, context or generate) and ``attempts``."""
_SAMPLE_KEYS = {"case_id": pl.String(), "repeat": pl.Int64()}
"""What names a sample: its case and repeat (a ``Sample``)."""
_SAMPLE_COLUMNS = {**CAPTURE_COLUMNS, "repeat": pl.Int64()}
"""A sample's record (in the checkpoint, and in a run of several repeats): ``CAPTURE_COLUMNS`` and its
``repeat``."""
CAPTURE_LIMITS = Limits(concurrency=4, timeout=120.0, max_retries=2)
"""The limits of a capture unless it is given others."""
_PIPELINE_KEYS = ("top_k", "retriever", "context_builder", "generator", "capture")
_T = TypeVar("_T")


def capture(
    corpus: str | Path | pl.DataFrame | Corpus,
    retriever: Retriever,
    generator: Generator,
    *,
    top_k: int = 5,
    repeats: int = 1,
    context_builder: ContextBuilder | None = None,
    config: Mapping[str, Any] | None = None,
    output: str | Path | None = None,
    buckets: int | None = None,
    limits: Limits | None = None,
    include_unreviewed: bool = False,
    progress: bool = False,
    **deprecated: Unpack[LimitKeywords],
) -> Run:
    """Run every case of ``corpus`` through the pipeline and freeze what happened (see the module).

    ``context_builder`` defaults to joining every retrieved passage as ``[id] text``. ``config`` adds
    keys to the run config (``name``, free keys); capture records ``top_k``, ``model``, ``prompt``,
    each part's ``config`` and, unless ``config`` sets it, ``knowledge_base``: the passages file the
    retriever's config names (``passages.path``, as ``BM25Retriever`` records it), as it was given. With
    ``output`` the run is written there, and the checkpoint ``OUTPUT.checkpoint.jsonl`` lets the same call
    resume; it is deleted once the run is frozen. An ``output`` ending in ``/``, or ``buckets``, makes a run
    directory (see ``freeze_run``).
    ``repeats`` (1 or more) captures each case that many times: each sample is a record with its
    ``repeat`` (0, 1, ...; the ``Case`` the parts get says it too), in corpus order then by repeat.
    With one repeat the run has no ``repeat`` column. The number of repeats is not part of the run
    config, so a checkpoint resumes with another ``repeats``: the missing samples are captured, and
    samples beyond ``repeats`` are left out of the run (and kept in the checkpoint).
    Unreviewed synthetic cases are not gold: they are left out (listed in the config under
    ``capture.unreviewed_left_out``) unless ``include_unreviewed``. With ``progress`` a bar with an
    ETA is drawn on a terminal. ``limits`` bounds the samples run at once, each attempt's time, the
    retries and their backoff (default ``CAPTURE_LIMITS``; the separate ``concurrency``, ``timeout``,
    ``max_retries`` and ``backoff`` keywords are deprecated).

    A credential (see ``credentials``) never reaches the checkpoint: a case whose corpus text (or the
    path of ``corpus`` or ``output``, which the run stores) holds one is refused before anything runs,
    and a record that holds one (an answer, context, retrieved id...) stops the capture with a
    ``CaptureError`` before it is written; error texts are kept redacted.
    """
    limits = limits_from("capture", limits, CAPTURE_LIMITS, deprecated)
    _check_arguments(corpus, output, top_k, repeats)
    loaded = corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
    left_out = [] if include_unreviewed else _unreviewed(loaded.frame)
    cases = loaded.frame.filter(~pl.col("case_id").is_in(left_out))
    builder = context_builder if context_builder is not None else BudgetContextBuilder()
    run_config = _run_config(config or {}, top_k, limits, (retriever, builder, generator), left_out)
    secrets = credential_values(os.environ)
    _refuse_credentials(cases, secrets, lambda column: f"corpus column '{column}'")
    checkpoint = _opened_checkpoint(output, buckets, run_config, loaded.fingerprint)
    with _until_frozen(checkpoint):
        done = _resumed(checkpoint, secrets)
        samples = _samples(cases, repeats, done)
        runner = _Runner(retriever, builder, generator, top_k, limits)
        _run_samples(runner, samples, done, checkpoint, secrets, progress=progress, repeats=repeats)
        records = _in_corpus_order(done, loaded.frame, repeats)
        return freeze_run(
            records, loaded, run_config, output=output, buckets=buckets, include_unreviewed=include_unreviewed
        )


def _check_arguments(
    corpus: str | Path | pl.DataFrame | Corpus, output: str | Path | None, top_k: int, repeats: int
) -> None:
    """Refuse, before any work, a path the run would store that holds a credential, or a ``top_k`` or a number
    of ``repeats`` that is not a usable whole number."""
    refuse_credential_paths({"corpus": corpus.source if isinstance(corpus, Corpus) else corpus, "output": output})
    if not is_k(top_k):
        raise ConfigError(f"top_k must be {K_EXPECTED}, got {top_k!r}.")
    if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 1:
        raise ConfigError(f"`repeats` must be a whole number of 1 or more (the samples per case), got {repeats!r}.")


def _unreviewed(corpus: pl.DataFrame) -> list[str]:
    """The ids of the corpus' unreviewed synthetic cases: not gold, so not captured."""
    unreviewed = pl.col("origin").eq("synthetic") & ~pl.col("reviewed")
    return corpus.filter(unreviewed).get_column("case_id").to_list()


def _opened_checkpoint(
    output: str | Path | None, buckets: int | None, run_config: Mapping[str, Any], corpus_fingerprint: str
) -> Checkpoint | None:
    """The checkpoint beside ``output`` (refused if ``output`` exists; a run directory or a file, as ``buckets``
    and its trailing ``/`` say), for these settings and this corpus; ``None`` without an ``output``."""
    if output is None:
        return None
    directory = is_directory_output(output, buckets)
    check_output(output, RUN_DIRECTORY if directory else "frozen run", folder=directory)
    settings = json_digest({"config": run_config, "corpus": corpus_fingerprint})
    return Checkpoint.open(checkpoint_path(Path(output)), settings)


@contextlib.contextmanager
def _until_frozen(checkpoint: Checkpoint | None) -> Iterator[None]:
    """Close ``checkpoint`` however the capture ends; delete it once the run is frozen (the block ended
    without an error)."""
    if checkpoint is None:
        yield
        return
    try:
        yield
    finally:
        checkpoint.close()
    checkpoint.remove()


def _in_corpus_order(done: Mapping[Sample, dict[str, Any]], corpus: pl.DataFrame, repeats: int) -> pl.DataFrame:
    """The finished records of the first ``repeats`` samples as a frame, in the corpus' case order, then
    by repeat; with one repeat without the ``repeat`` column."""
    samples = pl.DataFrame(list(done), schema=_SAMPLE_KEYS, orient="row").with_row_index("at")
    order = (
        samples.filter(pl.col("repeat") < repeats)
        .join(corpus.select("case_id").with_row_index("position"), on="case_id")
        .sort("position", "repeat")
        .get_column("at")
    )
    # The rows are ordered before the frame is made from them: sorting the frame leaves stray bits past the
    # end of its validity bitmaps, which would change the frozen bytes (and fingerprint) of equal records.
    records = list(done.values())
    schema = _SAMPLE_COLUMNS if repeats > 1 else CAPTURE_COLUMNS
    return pl.DataFrame([records[at] for at in order], schema=schema)


def _resumed(checkpoint: Checkpoint | None, secrets: Mapping[str, str]) -> dict[Sample, dict[str, Any]]:
    """The records an earlier capture left in ``checkpoint``, by sample; refused if one holds a credential."""
    done = {} if checkpoint is None else dict(checkpoint.records)
    if checkpoint is not None and done:
        path = checkpoint.path
        _refuse_credentials(
            pl.DataFrame(list(done.values()), schema=_SAMPLE_COLUMNS),
            secrets,
            lambda column: f"column '{column}' in {path} (an earlier capture wrote it there: delete that file)",
        )
    return done


def _run_samples(
    runner: _Runner,
    samples: Sequence[Case],
    done: dict[Sample, dict[str, Any]],
    checkpoint: Checkpoint | None,
    secrets: Mapping[str, str],
    *,
    progress: bool,
    repeats: int,
) -> None:
    """Run ``samples``, each finished record checked for credentials, kept in ``done`` and checkpointed."""
    what = f"{len(samples)} samples ({repeats} repeats a case)" if repeats > 1 else f"{len(samples)} cases"
    with progress_bar(f"capturing {what}" if progress else None, len(samples)) as advance:

        def finished(record: dict[str, Any]) -> None:
            _refuse_record_credentials(record, secrets)
            done[sample_of(record)] = record
            if checkpoint is not None:
                checkpoint.append(record)
            advance()

        run_sync(runner.run_all(samples, finished))


def _refuse_credentials(frame: pl.DataFrame, secrets: Mapping[str, str], where: Callable[[str], str]) -> None:
    """Stop the capture at the first case of ``frame`` (corpus rows or records) holding a credential;
    ``where(column)`` says where it is in the message."""
    cells = credential_cells(frame, secrets)
    if cells:
        row, column, found = cells[0]
        case_id = None if row is None else frame.get_column("case_id")[row - 1]
        raise _credential_error(case_id, where(column), found)


def _refuse_record_credentials(record: Mapping[str, Any], secrets: Mapping[str, str]) -> None:
    """Stop the capture if a finished case's record holds a credential in any text, list items included."""
    for column, value in record.items():
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and (found := credential_in(text, secrets)) is not None:
                raise _credential_error(record["case_id"], f"column '{column}'", found)


def _credential_error(case_id: str | None, where: str, found: str) -> CaptureError:
    case = "a case" if case_id is None else f"case {show_value(case_id)}"
    return CaptureError(
        f"{case}: {where} holds {found}, which never enters a checkpoint or a run; nothing was frozen. "
        "Remove it (a pipeline part returning a key, a corpus cell quoting one) and run again."
    )


def _run_config(
    config: Mapping[str, Any],
    top_k: int,
    limits: Limits,
    parts: tuple[Retriever, ContextBuilder, Generator],
    left_out: list[str],
) -> dict[str, Any]:
    """The user's keys, then what the capture itself decides (with the unreviewed cases ``left_out``);
    refused early when it cannot be frozen."""
    taken = [key for key in (*RESERVED_KEYS, *_PIPELINE_KEYS) if key in config]
    if taken:
        raise ConfigError(
            f"the config sets {', '.join(taken)}, which capture records itself. Remove them "
            "(set top_k and the parts' settings through capture's own arguments)."
        )
    retriever, builder, generator = parts
    generator_config, retriever_config = _part_config(generator), _part_config(retriever)
    run_config = {
        "model": generator_config.get("model", generator_config.get("kind")),
        "prompt": generator_config.get("prompt_template"),
        KNOWLEDGE_BASE: _knowledge_base(retriever_config),
        **config,
        "top_k": top_k,
        "retriever": retriever_config,
        "context_builder": _part_config(builder),
        "generator": generator_config,
        "capture": {"timeout": limits.timeout, "max_retries": limits.max_retries},
    }
    check_config(run_config)
    if left_out:
        run_config["capture"]["unreviewed_left_out"] = left_out
    return {key: value for key, value in run_config.items() if value is not None}


def _knowledge_base(retriever: Mapping[str, Any]) -> str | None:
    """The passages file a retriever's config names under ``passages.path`` (as ``BM25Retriever`` records the
    file it was given), else ``None`` (also for passages given as a frame, ``<frame>``)."""
    passages = retriever.get("passages")
    path = passages.get("path") if isinstance(passages, Mapping) else None
    return path if isinstance(path, str) and path != "<frame>" else None


def _part_config(part: object) -> dict[str, Any]:
    """A pipeline part's ``config`` when it has one, else the name of its callable."""
    config = getattr(part, "config", None)
    return dict(config) if isinstance(config, Mapping) else {"callable": callable_name(part)}


def _samples(frame: pl.DataFrame, repeats: int, done: Mapping[Sample, object]) -> list[Case]:
    """The pipeline's view of each sample of the cases of ``frame`` not yet ``done``, case by case, then
    by repeat: id, question, source version, user metadata and repeat, no labels."""
    from rag_compare.core.contract import CORPUS_COLUMNS

    metadata = [name for name in frame.columns if name not in {spec.name for spec in CORPUS_COLUMNS}]
    finished = pl.DataFrame(list(done), schema=_SAMPLE_KEYS, orient="row")
    pending = (
        frame.select("case_id", "question", "source_version", *metadata)
        .join(pl.DataFrame({"repeat": range(repeats)}, schema={"repeat": pl.Int64()}), how="cross")
        .join(finished, on=["case_id", "repeat"], how="anti", maintain_order="left")
    )
    return [
        Case(
            row["case_id"],
            row["question"],
            row["source_version"],
            {name: row[name] for name in metadata},
            row["repeat"],
        )
        for row in pending.iter_rows(named=True)
    ]


@dataclass
class _Runner:
    """Runs cases through the parts, each attempt timed out, retried, and recorded whatever happens."""

    retriever: Retriever
    builder: ContextBuilder
    generator: Generator
    top_k: int
    limits: Limits
    threads: ThreadPoolExecutor = field(init=False)

    async def run_all(self, cases: Sequence[Case], finished: Callable[[dict[str, Any]], None]) -> None:
        self.threads = ThreadPoolExecutor(self.limits.concurrency, thread_name_prefix="rag-compare-capture")
        slots = asyncio.Semaphore(self.limits.concurrency)

        async def one(case: Case) -> None:
            async with slots:
                record = await self.run_case(case)
            finished(record)

        try:
            await run_concurrently(one(case) for case in cases)
        finally:
            self.threads.shutdown(wait=False, cancel_futures=True)
            for part in (self.retriever, self.builder, self.generator):
                closer = getattr(part, "aclose", None)
                if closer is not None:
                    await closer()

    async def run_case(self, case: Case) -> dict[str, Any]:
        """The record of ``case``: from its first successful attempt, else from its last failed one."""
        attempts = 0
        while True:
            attempts += 1
            record = _empty_record(case, attempts)
            started = time.perf_counter()
            wait: float | None = None
            final = attempts > self.limits.max_retries
            try:
                await asyncio.wait_for(self._attempt(case, record), self.limits.timeout)
            except TimeoutError:
                record |= {"status": "timeout", "error": f"no result within {self.limits.timeout:g} s"}
            except CaseFailure as error:
                record |= {"status": "failed", "error": str(error) or type(error).__name__}
                final = True  # a part said: do not try again
            except RagCompareError:
                raise
            except refusals() as error:
                raise refused_error(error) from None
            except Exception as error:
                record |= {"status": "failed", "error": _describe(error)}
                wait = retry_after(error)
            if record["error"] is not None:
                record["error"] = redact(record["error"])
            record["latency_ms"] = round((time.perf_counter() - started) * 1000, 1)
            if final or record["status"] == "ok":
                return record
            await asyncio.sleep(backoff_wait(self.limits, attempts, wait))

    async def _attempt(self, case: Case, record: dict[str, Any]) -> None:
        """Fill ``record`` stage by stage; ``failed_stage`` names the stage running when it stops."""
        with _stage(record, "retrieve"):
            passages = _passages(await self._call(self.retriever, case, self.top_k))
            scores = [passage.score for passage in passages]
            record |= {
                "retrieved_passage_ids": [passage.passage_id for passage in passages],
                "retrieved_scores": None if None in scores else scores,
                "retrieved_metadata": json.dumps([dict(passage.metadata) for passage in passages], default=str),
            }
        with _stage(record, "context"):
            context = _context(await self._call(self.builder, case, passages))
            ids = None if context.passage_ids is None else list(context.passage_ids)
            record |= {"context": context.text, "context_passage_ids": ids}
        with _stage(record, "generate"):
            generation = _generation(await self._call(self.generator, case, context))
            record |= {
                "answer": generation.answer,
                "prompt_tokens": generation.prompt_tokens,
                "completion_tokens": generation.completion_tokens,
                "prompt_messages": None if generation.messages is None else json.dumps(list(generation.messages)),
            }
        record["status"] = "ok"

    async def _call(self, part: Callable[..., Any], *args: Any) -> Any:
        """``part(*args)``: awaited when it is async, else run in a worker thread."""
        if _is_async(part):
            return await part(*args)
        result = await asyncio.get_running_loop().run_in_executor(self.threads, lambda: part(*args))
        return await result if inspect.isawaitable(result) else result


def _is_async(part: Callable[..., Any]) -> bool:
    """Whether calling ``part`` gives a coroutine: an async function, or an object with an async ``__call__``."""
    return inspect.iscoroutinefunction(part) or inspect.iscoroutinefunction(type(part).__call__)


def _empty_record(case: Case, attempts: int) -> dict[str, Any]:
    return dict.fromkeys(CAPTURE_COLUMNS) | {
        "case_id": case.case_id,
        "status": None,
        "attempts": attempts,
        "repeat": case.repeat,
    }


@contextlib.contextmanager
def _stage(record: dict[str, Any], stage: str) -> Iterator[None]:
    record["failed_stage"] = stage
    yield
    record["failed_stage"] = None


def _describe(error: BaseException) -> str:
    """The error of a failed attempt, in one line."""
    if type(error).__module__.startswith("openai"):
        return describe(error)
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _passages(found: object) -> list[Passage]:
    """A retriever's result as ``Passage`` objects; a result of another shape stops the capture."""
    if isinstance(found, str | bytes) or not isinstance(found, Sequence | Iterator):
        raise _shape_error("retriever", "a list of passages", found)
    passages = []
    for item in found:
        if isinstance(item, Passage):
            passages.append(item)
        elif isinstance(item, str):
            passages.append(Passage(item))
        elif isinstance(item, Mapping) and isinstance(item.get("passage_id"), str):
            rest = {key: value for key, value in item.items() if key not in {"passage_id", "score", "text"}}
            score = item.get("score")
            passages.append(
                Passage(item["passage_id"], None if score is None else float(score), str(item.get("text") or ""), rest)
            )
        else:
            raise _shape_error("retriever", "passages (Passage, a mapping with passage_id, or an id)", item)
    return passages


def _context(built: object) -> Context:
    if isinstance(built, Context):
        return built
    if isinstance(built, str):
        return Context(built)
    raise _shape_error("context builder", "a Context or the context text", built)


def _generation(generated: object) -> Generation:
    if isinstance(generated, Generation):
        return generated
    if isinstance(generated, str):
        return Generation(generated)
    if isinstance(generated, Mapping) and isinstance(generated.get("answer"), str):
        known = {"answer", "prompt_tokens", "completion_tokens", "messages"}
        return Generation(**{key: value for key, value in generated.items() if key in known})
    raise _shape_error("generator", "a Generation, a mapping with an answer, or the answer text", generated)


def _shape_error(part: str, expected: str, got: object) -> ConfigError:
    return ConfigError(
        f"the {part} returned {type(got).__name__} {show_value(str(got))}; a {part} returns {expected} "
        "(see rag_compare.core.protocols)."
    )
