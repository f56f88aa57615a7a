"""Sending chat-completion requests: concurrently up to a bound, timed out, retried, cached, and every
failure kept as data.

``send_all`` takes request bodies and gives one ``Outcome`` per body, in order, whatever happens: a
reply that passed validation (JSON matching the body's ``json_schema`` response format, when it has
one), or the error that ended its last attempt. 429 and 5xx answers, timeouts,
dropped connections and replies that fail validation are retried with exponential backoff (with
jitter), waiting as long as a ``Retry-After`` header asks, up to ``MAX_WAIT`` seconds. Other 4xx
answers are the case's own failure, not retried. An endpoint that refuses the credentials, the model
or the route (401, 403, 404) stops everything with a ``JudgeError``: no case could succeed. Replies
are cached as soon as they arrive, so an interrupted run loses nothing it has paid for.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import json
import random
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from rag_compare.cache import ReplyCache, request_key
from rag_compare.errors import JudgeError

__all__ = ["MAX_WAIT", "Limits", "Outcome", "run_sync", "send_all"]

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
        if self.concurrency < 1 or self.timeout <= 0 or self.max_retries < 0 or self.backoff < 0:
            raise ValueError(f"unusable limits {self}: concurrency >= 1, timeout > 0, retries and backoff >= 0")


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
) -> list[Outcome]:
    """One ``Outcome`` per body of ``bodies``, sent through the ``openai.AsyncOpenAI`` that ``client()``
    gives (called only when a body is not in the cache).

    ``endpoint`` names where requests go (it is part of the cache key); ``progress``, when given, is
    the label of a progress bar drawn on a terminal. With ``close_client`` the client is closed in the
    event loop it was used in, once every request is done.
    """
    keys = [request_key(endpoint, body) for body in bodies]
    stored = {} if cache is None else cache.get_many(keys)
    outcomes: list[Outcome | None] = [Outcome(stored[key], None, True, 0) if key in stored else None for key in keys]
    pending = [index for index, outcome in enumerate(outcomes) if outcome is None]
    if not pending:
        return [outcome for outcome in outcomes if outcome is not None]
    sender = _Sender(client(), limits, cache)
    with _progress_bar(progress, len(pending)) as advance:

        async def send(index: int) -> None:
            outcomes[index] = await sender.send(bodies[index], keys[index])
            advance()

        async def send_pending() -> None:
            try:
                async with asyncio.TaskGroup() as group:
                    for index in pending:
                        group.create_task(send(index))
            except* JudgeError as errors:
                raise errors.exceptions[0] from None
            finally:
                if close_client:
                    await sender.client.close()

        run_sync(send_pending())
    return [outcome for outcome in outcomes if outcome is not None]


class _Sender:
    """Sends one request at a time per slot of the concurrency bound, with its retries."""

    def __init__(self, client: Any, limits: Limits, cache: ReplyCache | None) -> None:
        self.client, self.limits, self.cache = client, limits, cache
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
                    reply = await self._attempt(body)
                except (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError) as error:
                    raise JudgeError(
                        f"the endpoint refused the request: {_describe(error)}. Check OPENAI_API_KEY, "
                        "--model and --base-url (the endpoint's chat completions route)."
                    ) from None
                except _retryable() as error:
                    failure, wait = _describe(error), _retry_after(error)
                except openai.APIStatusError as error:
                    return Outcome(None, _describe(error), False, sent)
                else:
                    if self.cache is not None:
                        self.cache.put(key, reply)
                    return Outcome(reply, None, False, sent)
            if sent > self.limits.max_retries:
                attempts = "1 attempt" if sent == 1 else f"{sent} attempts"
                return Outcome(None, f"{failure} (gave up after {attempts})", False, sent)
            backoff = self.limits.backoff * 2 ** (sent - 1)
            await asyncio.sleep(min(MAX_WAIT, wait if wait is not None else backoff * random.uniform(0.5, 1.0)))

    async def _attempt(self, body: Mapping[str, Any]) -> dict[str, Any]:
        from openai.types.chat import ChatCompletion

        # ``post`` sends the body as it is: ``chat.completions.create`` would first convert it into its
        # typed parameters, a quarter of the client's time per request.
        timeout = self.limits.timeout
        request = self.client.post(
            "/chat/completions", body=dict(body), cast_to=ChatCompletion, options={"timeout": timeout}
        )
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


def _retryable() -> tuple[type[BaseException], ...]:
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


def _describe(error: BaseException) -> str:
    import openai

    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}: {_short(error.message)}"
    if isinstance(error, openai.APITimeoutError | TimeoutError):
        return "no reply within the timeout"
    if isinstance(error, openai.APIConnectionError):
        return f"connection failed: {_short(str(error.__cause__ or error))}"
    return _short(str(error))


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _retry_after(error: BaseException) -> float | None:
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
def _progress_bar(label: str | None, total: int) -> Iterator[Callable[[], None]]:
    """An ``advance()`` callable: it moves a bar with an ETA on a terminal, else does nothing."""
    if label is None or not total or not sys.stderr.isatty():
        yield lambda: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn, TimeRemainingColumn

    columns = (BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), "eta", TimeRemainingColumn())
    with Progress("{task.description}", *columns) as bar:
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)
