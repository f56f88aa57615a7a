"""Sending many chat-completions requests: concurrently up to a bound, timed out, retried, cached, and
every failure kept as data.

``send_all`` takes request bodies and gives one ``Outcome`` per body, in order, whatever happens: a
reply that passed validation, or the error that ended its last attempt (see ``transport`` for one
attempt and ``limits`` for what is retried and how long to wait). Other 4xx answers are the case's own
failure, not retried. An endpoint that refuses the credentials, the model or the route (401, 403, 404)
stops everything with an ``EndpointError`` (or the subclass the caller names): no case could succeed.
Replies are cached as soon as they arrive, so an interrupted run loses nothing it has paid for.
``send_to_endpoint`` is the one way the judge, batch generation and drafting call an endpoint: it opens
the client and the reply cache a user's settings name and sends through ``send_all``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from rag_compare.core.errors import EndpointError, RagCompareError
from rag_compare.llm.cache import ReplyCache, opened_cache, request_key
from rag_compare.llm.endpoint import client_factory, endpoint_name
from rag_compare.llm.limits import Limits, backoff_wait, retry_after, retryable
from rag_compare.llm.progress import progress_bar
from rag_compare.llm.transport import complete, describe, refusals, refused_error

__all__ = ["Outcome", "run_concurrently", "run_sync", "send_all", "send_to_endpoint"]

_T = TypeVar("_T")


@dataclass(frozen=True)
class Outcome:
    """What became of one request: ``reply`` (``content``, ``prompt_tokens``, ``completion_tokens``)
    or ``error``; ``cached`` when the reply came from the cache; ``sent``: HTTP requests made for it."""

    reply: Mapping[str, Any] | None
    error: str | None
    cached: bool
    sent: int


def run_sync(coroutine: Awaitable[_T]) -> _T:
    """Run ``coroutine`` to its end, also from code that already runs an event loop (a notebook)."""

    async def wrapped() -> _T:
        return await coroutine

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wrapped())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, wrapped()).result()


def send_all(
    client: Callable[[], Any],
    bodies: Sequence[Mapping[str, Any]],
    *,
    endpoint: str,
    limits: Limits,
    cache: ReplyCache | None,
    progress: str | None = None,
    close_client: bool = False,
    refused: type[EndpointError] = EndpointError,
) -> list[Outcome]:
    """One ``Outcome`` per body of ``bodies``, sent through the ``openai.AsyncOpenAI`` that ``client()``
    gives (called only when a body is not in the cache).

    ``endpoint`` names where requests go (it is part of the cache key); ``progress``, when given, is
    the label of a progress bar drawn on a terminal. With ``close_client`` the client is closed in the
    event loop it was used in, once every request is done. An endpoint that refuses the requests
    themselves raises ``refused``.
    """
    keys = [request_key(endpoint, body) for body in bodies]
    stored = {} if cache is None else cache.get_many(keys)
    outcomes: list[Outcome | None] = [Outcome(stored[key], None, True, 0) if key in stored else None for key in keys]
    pending = [index for index, outcome in enumerate(outcomes) if outcome is None]
    if not pending:
        return [outcome for outcome in outcomes if outcome is not None]
    sender = _Sender(client(), limits, cache, refused)
    with progress_bar(progress, len(pending)) as advance:

        async def send(index: int) -> None:
            outcomes[index] = await sender.send(bodies[index], keys[index])
            advance()

        async def send_pending() -> None:
            try:
                await run_concurrently(send(index) for index in pending)
            finally:
                if close_client:
                    await sender.client.close()

        run_sync(send_pending())
    return [outcome for outcome in outcomes if outcome is not None]


async def run_concurrently(coroutines: Iterable[Coroutine[Any, Any, None]]) -> None:
    """Run ``coroutines`` as concurrent tasks; the first ``RagCompareError`` one raises cancels the others
    and is raised as it is (not in an exception group)."""
    try:
        async with asyncio.TaskGroup() as group:
            for coroutine in coroutines:
                group.create_task(coroutine)
    except* RagCompareError as errors:
        raise errors.exceptions[0] from None


class _Sender:
    """Sends one request at a time per slot of the concurrency bound, with its retries."""

    def __init__(self, client: Any, limits: Limits, cache: ReplyCache | None, refused: type[EndpointError]) -> None:
        self.client, self.limits, self.cache, self.refused = client, limits, cache, refused
        self.slots: asyncio.Semaphore | None = None

    async def send(self, body: Mapping[str, Any], key: str) -> Outcome:
        import openai

        if self.slots is None:
            self.slots = asyncio.Semaphore(self.limits.concurrency)
        sent = 0
        while True:
            async with self.slots:
                sent += 1
                try:
                    reply = await complete(self.client, body, self.limits.timeout)
                except refusals() as error:
                    raise refused_error(error, self.refused) from None
                except retryable() as error:
                    failure, wait = describe(error), retry_after(error)
                except openai.APIStatusError as error:
                    return Outcome(None, describe(error), False, sent)
                else:
                    if self.cache is not None:
                        self.cache.put(key, reply)
                    return Outcome(reply, None, False, sent)
            if sent > self.limits.max_retries:
                attempts = "1 attempt" if sent == 1 else f"{sent} attempts"
                return Outcome(None, f"{failure} (gave up after {attempts})", False, sent)
            await asyncio.sleep(backoff_wait(self.limits, sent, wait))


def send_to_endpoint(
    bodies: Sequence[Mapping[str, Any]],
    *,
    client: Any,
    base_url: str | None,
    api_key: str | None,
    limits: Limits,
    cache: str | Path | bool,
    progress: str | None,
    refused: type[EndpointError] = EndpointError,
) -> list[Outcome]:
    """One ``Outcome`` per body of ``bodies``, sent with ``limits`` to the endpoint that ``client`` (an
    ``openai.AsyncOpenAI``, closed by its owner) or else ``base_url`` and ``api_key`` name (a client
    opened here is closed here), through the reply cache that the ``cache=`` setting names."""
    with opened_cache(cache) as store:
        return send_all(
            client_factory(client, base_url, api_key),
            bodies,
            endpoint=endpoint_name(client, base_url),
            limits=limits,
            cache=store,
            progress=progress,
            close_client=client is None,
            refused=refused,
        )
