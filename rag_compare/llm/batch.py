"""Sending a column of prompts through a chat model: ``batch_generate``.

Each distinct prompt is sent once (concurrently up to a bound, timed out, retried, cached: see
``dispatch`` and ``limits``); the frame comes back with the model's output beside each prompt, and a failure as a
null output with its error in the column beside it. The caller's frame is not modified.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Unpack

import polars as pl

from rag_compare.core.errors import ConfigError
from rag_compare.llm.dispatch import send_to_endpoint
from rag_compare.llm.limits import LimitKeywords, Limits, limits_from
from rag_compare.llm.transport import chat_body

__all__ = ["batch_generate"]


def batch_generate(
    frame: pl.DataFrame,
    column: str,
    output_column: str,
    *,
    model: str,
    system: str | None = None,
    base_url: str | None = None,
    temperature: float | None = 0.0,
    seed: int | None = None,
    max_tokens: int | None = None,
    limits: Limits | None = None,
    cache: str | Path | bool = True,
    progress: bool = False,
    api_key: str | None = None,
    client: Any = None,
    **deprecated: Unpack[LimitKeywords],
) -> pl.DataFrame:
    """``frame`` with ``output_column`` (the reply to the prompt in ``column``, as the user message
    after ``system``) and ``<output_column>_error`` (why a reply is null; a null prompt is not sent).

    ``limits``: concurrency, timeout, retries and backoff (default ``Limits()``; the separate
    ``concurrency``, ``timeout``, ``max_retries`` and ``backoff`` keywords are deprecated). ``cache``: a
    file path, ``True`` for the default reply cache, ``False`` for none. ``client`` (an
    ``openai.AsyncOpenAI``) replaces ``base_url`` and ``api_key``.
    """
    error_column = f"{output_column}_error"
    _check_columns(frame, column, (output_column, error_column))
    if not model.strip():
        raise ConfigError("batch_generate needs a model: pass model= (the name the endpoint serves).")
    limits = limits_from("batch_generate", limits, Limits(), deprecated)
    prompts = frame.get_column(column).drop_nulls().unique(maintain_order=True).to_list()
    head = [{"role": "system", "content": system}] if system else []
    settings = {"temperature": temperature, "seed": seed, "max_tokens": max_tokens}
    bodies = [chat_body(model, [*head, {"role": "user", "content": prompt}], **settings) for prompt in prompts]
    label = f"generating {len(bodies)} replies" if progress else None
    outcomes = send_to_endpoint(
        bodies, client=client, base_url=base_url, api_key=api_key, limits=limits, cache=cache, progress=label
    )
    replies = pl.DataFrame(
        {
            column: prompts,
            output_column: [None if outcome.reply is None else outcome.reply["content"] for outcome in outcomes],
            error_column: [outcome.error for outcome in outcomes],
        },
        schema={column: pl.String, output_column: pl.String, error_column: pl.String},
    )
    joined = frame.join(replies, on=column, how="left", nulls_equal=False, maintain_order="left")
    return joined.with_columns(
        pl.when(pl.col(column).is_null()).then(pl.lit("no prompt")).otherwise(pl.col(error_column)).alias(error_column)
    )


def _check_columns(frame: pl.DataFrame, column: str, outputs: tuple[str, ...]) -> None:
    if column not in frame.columns:
        raise ConfigError(f"the frame has no column {column!r}; its columns: {', '.join(frame.columns)}.")
    if frame.schema[column] != pl.String:
        raise ConfigError(f"column {column!r} holds {frame.schema[column]}, not text; cast it to pl.String first.")
    taken = [name for name in outputs if name in frame.columns]
    if taken:
        raise ConfigError(f"the frame already has {', '.join(taken)}; choose another output_column.")
