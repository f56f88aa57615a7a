"""Sending chat-completion requests: concurrently up to a bound, timed out, retried, cached, and every
failure kept as data.

``send_all`` takes request bodies and gives one ``Outcome`` per body, in order, whatever happens: a
reply that passed validation (JSON matching the body's ``json_schema`` response format, when it has
one), or the error that ended its last attempt. 429 and 5xx answers, timeouts, dropped connections
and replies that fail validation are retried with exponential backoff (with jitter), waiting as long
as a ``Retry-After`` header asks, up to ``MAX_WAIT`` seconds. Other 4xx answers are the case's own
failure, not retried. An endpoint that refuses the credentials, the model or the route (401, 403,
404) stops everything with an ``EndpointError`` (or the subclass the caller names): no case could
succeed. Replies are cached as soon as they arrive, so an interrupted run loses nothing it has paid
for. ``complete`` is one attempt alone, for callers that retry in their own way (capture).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import json
import math
import random
import sys
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from rag_compare.core.credentials import redact
from rag_compare.core.errors import ConfigError, EndpointError, RagCompareError
from rag_compare.llm.cache import ReplyCache, request_key

__all__ = [
    "MAX_WAIT",
    "Limits",
    "Outcome",
    "backoff_wait",
    "chat_body",
    "complete",
    "describe",
    "progress_bar",
    "refusals",
    "refused_error",
    "retry_after",
    "retryable",
    "run_concurrently",
    "run_sync",
    "send_all",
]

MAX_WAIT = 60.0
"""The longest wait before a retry, in seconds, whatever ``Retry-After`` asks."""
_T = TypeVar("_T")


@dataclass(frozen=True)
class Limits:
    """How requests are sent: at most ``concurrency`` at once, each given ``timeout`` seconds, retried
    up to ``max_retries`` times after waiting ``backoff`` seconds, then twice as long each time."""

    concurrency: int = 8
    timeout: float = 60.0
    max_retries: int = 4
    backoff: float = 1.0

    def __post_init__(self) -> None:
        finite = math.isfinite(self.timeout) and math.isfinite(self.backoff)
        if not finite or self.concurrency < 1 or self.timeout <= 0 or self.max_retries < 0 or self.backoff < 0:
            raise ValueError(
                f"unusable limits {self}: concurrency >= 1, timeout > 0, retries and backoff >= 0, "
                "timeout and backoff finite numbers"
            )

    @classmethod
    def checked(cls, concurrency: int, timeout: float, max_retries: int, backoff: float = 1.0) -> Limits:
        """The limits a user asked for; ``ConfigError`` when they are unusable."""
        try:
            return cls(concurrency, timeout, max_retries, backoff)
        except ValueError as error:
            raise ConfigError(str(error)) from None


@dataclass(frozen=True)
class Outcome:
    """What became of one request: ``reply`` (``content``, ``prompt_tokens``, ``completion_tokens``)
    or ``error``; ``cached`` when the reply came from the cache; ``sent``: HTTP requests made for it."""

    reply: Mapping[str, Any] | None
    error: str | None
    cached: bool
    sent: int


def chat_body(model: str, messages: Sequence[Mapping[str, str]], **settings: Any) -> dict[str, Any]:
    """A chat-completions request body: ``model``, ``messages``, then each of ``settings`` (temperature,
    seed, max_tokens, response_format, ...) that is not ``None``. ``ConfigError`` for a float setting
    that is not finite (JSON has no NaN or infinity)."""
    unusable = {
        name: value for name, value in settings.items() if isinstance(value, float) and not math.isfinite(value)
    }
    if unusable:
        shown = ", ".join(f"{name}={value!r}" for name, value in unusable.items())
        raise ConfigError(f"{shown}: a setting sent to the endpoint must be a finite number.")
    return {"model": model, "messages": list(messages)} | {
        name: value for name, value in settings.items() if value is not None
    }


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


async def complete(client: Any, body: Mapping[str, Any], timeout: float) -> dict[str, Any]:
    """One attempt at ``body`` through the ``openai.AsyncOpenAI`` ``client``: the validated reply's
    ``content``, ``prompt_tokens`` and ``completion_tokens``; raises what the attempt raised."""
    from openai.types.chat import ChatCompletion

    # ``post`` sends the body as it is: ``chat.completions.create`` would first convert it into its
    # typed parameters, a quarter of the client's time per request.
    request = client.post("/chat/completions", body=dict(body), cast_to=ChatCompletion, options={"timeout": timeout})
    try:
        response = await asyncio.wait_for(request, timeout)
        content = response.choices[0].message.content if response.choices else None
    except (ValueError, AttributeError, TypeError, IndexError) as error:  # a body that is no chat completion
        raise _BadReply(f"the reply is not a chat completion ({_short(str(error), 100)})") from None
    if content is None:
        raise _BadReply("the reply has no message content")
    _check_reply(body, content)
    usage = response.usage
    return {
        "content": content,
        "prompt_tokens": 0 if usage is None else int(usage.prompt_tokens or 0),
        "completion_tokens": 0 if usage is None else int(usage.completion_tokens or 0),
    }


class _BadReply(Exception):
    """A reply that arrived but cannot be used; another attempt may do better."""


def _check_reply(body: Mapping[str, Any], content: str) -> None:
    """Refuse content that is not JSON matching the ``json_schema`` response format ``body`` asked for."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") != "json_schema":
        return
    try:
        reply = json.loads(content)
    except json.JSONDecodeError as error:
        raise _BadReply(f"the reply is not JSON ({error.msg} at character {error.pos})") from None
    schema = response_format["json_schema"]["schema"]
    mismatch = next(iter(_validator(json.dumps(schema, sort_keys=True)).iter_errors(reply)), None)
    if mismatch is not None:
        raise _BadReply(f"the reply does not match the schema: {_short(mismatch.message, 200)}")


@functools.lru_cache(maxsize=64)
def _validator(schema: str) -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(json.loads(schema))


def backoff_wait(limits: Limits, attempts: int, asked: float | None) -> float:
    """Seconds to wait after ``attempts`` failed ones: what the endpoint ``asked`` for, else exponential
    backoff with jitter; never more than ``MAX_WAIT``."""
    if asked is not None:
        return min(MAX_WAIT, asked)
    return min(MAX_WAIT, limits.backoff * 2.0 ** (attempts - 1) * random.uniform(0.5, 1.0))


def refused_error(error: BaseException, kind: type[EndpointError] = EndpointError) -> EndpointError:
    """The error that stops everything when the endpoint refuses the credentials, model or route."""
    return kind(
        f"the endpoint refused the request: {describe(error)}. Check OPENAI_API_KEY, "
        "`model` and `base_url` (the endpoint's chat completions route)."
    )


def refusals() -> tuple[type[BaseException], ...]:
    """The ``openai`` errors that mean no request to this endpoint can succeed."""
    import openai

    return (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError)


def retryable() -> tuple[type[BaseException], ...]:
    """The errors another attempt may cure: rate limits, server errors, timeouts, dropped connections."""
    import openai

    return (
        openai.RateLimitError,
        openai.InternalServerError,
        openai.ConflictError,
        openai.APITimeoutError,
        openai.APIConnectionError,
        TimeoutError,
        _BadReply,
    )


def describe(error: BaseException) -> str:
    """A short, one-line account of a failed request."""
    import openai

    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}: {_short(error.message)}"
    if isinstance(error, openai.APITimeoutError | TimeoutError):
        return "no reply within the timeout"
    if isinstance(error, openai.APIConnectionError):
        return f"connection failed: {_short(str(error.__cause__ or error))}"
    return _short(str(error))


def _short(text: str, limit: int = 300) -> str:
    text = redact(text)  # an endpoint may echo the key it was sent
    return text if len(text) <= limit else text[: limit - 3] + "..."


def retry_after(error: BaseException) -> float | None:
    """The seconds a ``Retry-After`` (or ``retry-after-ms``) header of ``error``'s response asks for."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (moment - datetime.now(tz=UTC)).total_seconds())


@contextlib.contextmanager
def progress_bar(label: str | None, total: int) -> Iterator[Callable[[], None]]:
    """An ``advance()`` callable: it moves a bar with an ETA on a terminal, else does nothing."""
    if label is None or not total or not sys.stderr.isatty():
        yield lambda: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn, TimeRemainingColumn

    columns = (BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), "eta", TimeRemainingColumn())
    with Progress("{task.description}", *columns) as bar:
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)
