"""Sending many chat-completions requests: concurrently up to a bound, timed out, retried, cached, and
every failure kept as data.

``send_all`` takes request bodies and gives one ``Outcome`` per body, in order, whatever happens: a
reply that passed validation, or the error that ended its last attempt (see ``transport`` for one
attempt and ``limits`` for what is retried and how long to wait). Other 4xx answers are the case's own
failure, not retried. An endpoint that refuses the credentials, the model or the route (401, 403, 404)
stops everything with an ``EndpointError`` (or the subclass the caller names): no case could succeed.
Replies are cached as soon as they arrive, so an interrupted run loses nothing it has paid for.
Requests may go to a pool of endpoints serving the same model, within the one concurrency bound (see
``pool`` for which endpoint an attempt goes to). ``send_to_endpoint`` is the one way the judge, batch
generation and drafting call an endpoint from this process: it opens the clients and the reply cache a
user's settings name and sends through ``send_all`` (``ray_dispatch`` sends the same way from Ray tasks,
looking replies up with ``cached_outcomes``).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Coroutine, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from rag_compare.core.errors import EndpointError, RagCompareError
from rag_compare.core.progress import progress_bar
from rag_compare.llm.cache import ReplyCache, opened_cache, request_key
from rag_compare.llm.limits import Limits, backoff_wait, retry_after, retryable
from rag_compare.llm.pool import Endpoint, Router, pool_endpoints
from rag_compare.llm.transport import complete, describe, refusals, refused_error

__all__ = ["Outcome", "cached_outcomes", "run_concurrently", "run_sync", "send_all", "send_to_endpoint"]

_T = TypeVar("_T")


@dataclass(frozen=True)
class Outcome:
    """What became of one request: ``reply`` (``content``, ``prompt_tokens``, ``completion_tokens``)
    or ``error``; ``cached`` when the reply came from the cache; ``tried``: the endpoint of each HTTP
    request made for it, in order (the last one gave the reply, when there is one)."""

    reply: Mapping[str, Any] | None
    error: str | None
    cached: bool
    tried: tuple[str, ...] = ()

    @property
    def sent(self) -> int:
        """HTTP requests made for it."""
        return len(self.tried)


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
    endpoints: Sequence[Endpoint],
    bodies: Sequence[Mapping[str, Any]],
    *,
    limits: Limits,
    cache: ReplyCache | None,
    progress: str | None = None,
    close_clients: bool = False,
    refused: type[EndpointError] = EndpointError,
) -> list[Outcome]:
    """One ``Outcome`` per body of ``bodies``, sent to the pool of ``endpoints`` (one or more, see
    ``pool``), each through the ``openai.AsyncOpenAI`` its ``client()`` gives (called only when a body
    is not in the cache).

    A reply is looked up under the key of every endpoint (in the pool's order) and stored under the key
    of the endpoint that gave it. ``progress``, when given, is the label of a progress bar drawn on a
    terminal. With ``close_clients`` the clients are closed in the event loop they were used in, once
    every request is done. An endpoint that refuses the requests themselves raises ``refused``.
    """
    keys, outcomes = cached_outcomes([endpoint.name for endpoint in endpoints], bodies, cache)
    pending = [index for index, outcome in enumerate(outcomes) if outcome is None]
    if not pending:
        return [outcome for outcome in outcomes if outcome is not None]
    sender = _Sender(endpoints, limits, cache, refused)
    with progress_bar(progress, len(pending)) as advance:

        async def send(index: int) -> None:
            outcomes[index] = await sender.send(bodies[index], keys[index])
            advance()

        async def send_pending() -> None:
            try:
                await run_concurrently(send(index) for index in pending)
            finally:
                if close_clients:
                    for client in sender.clients.values():
                        await client.close()

        run_sync(send_pending())
    return [outcome for outcome in outcomes if outcome is not None]


def cached_outcomes(
    names: Sequence[str], bodies: Sequence[Mapping[str, Any]], cache: ReplyCache | None
) -> tuple[list[dict[str, str]], list[Outcome | None]]:
    """Each body's cache keys (one per endpoint of ``names``, the pool's), and its outcome from ``cache``:
    the reply under the first of its keys that has one, else ``None`` (it has to be sent)."""
    keys = [{name: request_key(name, body) for name in names} for body in bodies]
    stored = {} if cache is None else cache.get_many(key for body_keys in keys for key in body_keys.values())
    return keys, [_stored(body_keys, stored) for body_keys in keys]


def _stored(keys: Mapping[str, str], stored: Mapping[str, Mapping[str, Any]]) -> Outcome | None:
    """The cached outcome under the first of ``keys`` (one per endpoint, in the pool's order) that has a reply."""
    reply = next((stored[key] for key in keys.values() if key in stored), None)
    return None if reply is None else Outcome(reply, None, True)


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
    """Sends one request at a time per slot of the concurrency bound, with its retries, each attempt to
    the endpoint the pool's ``Router`` chooses."""

    def __init__(
        self, endpoints: Sequence[Endpoint], limits: Limits, cache: ReplyCache | None, refused: type[EndpointError]
    ) -> None:
        self.clients = {endpoint.name: endpoint.client() for endpoint in endpoints}
        self.router = Router(list(self.clients))
        self.pooled = len(self.clients) > 1  # errors then name the endpoint
        self.limits, self.cache, self.refused = limits, cache, refused
        self.slots: asyncio.Semaphore | None = None

    async def send(self, body: Mapping[str, Any], keys: Mapping[str, str]) -> Outcome:
        import openai

        if self.slots is None:
            self.slots = asyncio.Semaphore(self.limits.concurrency)
        tried: list[str] = []
        failures: dict[str, str] = {}  # each endpoint's last error, in the order they first failed
        while True:
            async with self.slots:
                name = self.router.take(Counter(tried))
                tried.append(name)
                failed = True
                try:
                    reply = await complete(self.clients[name], body, self.limits.timeout)
                except refusals() as error:
                    raise refused_error(error, self.refused, name if self.pooled else None) from None
                except retryable() as error:
                    failures[name], wait = describe(error), retry_after(error)
                except openai.APIStatusError as error:
                    failed = False  # the request's own failure, not the endpoint's
                    return Outcome(None, self._errors({name: describe(error)}), False, tuple(tried))
                else:
                    failed = False
                    if self.cache is not None:
                        self.cache.put(keys[name], reply)
                    return Outcome(reply, None, False, tuple(tried))
                finally:
                    self.router.release(name, failed=failed)
            if len(tried) > self.limits.max_retries:
                attempts = "1 attempt" if len(tried) == 1 else f"{len(tried)} attempts"
                return Outcome(None, f"{self._errors(failures)} (gave up after {attempts})", False, tuple(tried))
            if not self.router.another_to_try(Counter(tried)):
                await asyncio.sleep(backoff_wait(self.limits, len(tried), wait))

    def _errors(self, failures: Mapping[str, str]) -> str:
        """The errors of ``failures`` (by endpoint), each after its endpoint's name in a pool."""
        return " | ".join(f"{name}: {error}" if self.pooled else error for name, error in failures.items())


def send_to_endpoint(
    bodies: Sequence[Mapping[str, Any]],
    *,
    client: Any,
    base_url: str | Sequence[str] | None,
    api_key: str | None,
    limits: Limits,
    cache: str | Path | bool,
    progress: str | None,
    refused: type[EndpointError] = EndpointError,
) -> list[Outcome]:
    """One ``Outcome`` per body of ``bodies``, sent with ``limits`` to the endpoint that ``client`` (an
    ``openai.AsyncOpenAI``, closed by its owner) or else ``base_url`` (one URL or a pool of them, see
    ``pool``) and ``api_key`` name (clients opened here are closed here), through the reply cache that
    the ``cache=`` setting names."""
    endpoints = pool_endpoints(client, base_url, api_key)
    with opened_cache(cache) as store:
        return send_all(
            endpoints,
            bodies,
            limits=limits,
            cache=store,
            progress=progress,
            close_clients=client is None,
            refused=refused,
        )
