"""How requests are sent and retried: ``Limits`` (concurrency, timeout, retries, backoff), which errors
another attempt may cure, and how long to wait before it.

429 and 5xx answers, timeouts, dropped connections and replies that fail validation are retried with
exponential backoff (with jitter), waiting as long as a ``Retry-After`` header asks, up to ``MAX_WAIT``
seconds. ``limits_from`` maps the keywords that ``Limits`` replaces (deprecated) onto one.
"""

from __future__ import annotations

import dataclasses
import email.utils
import math
import random
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypedDict

from rag_compare.core.errors import ConfigError
from rag_compare.llm.transport import BadReply

__all__ = ["MAX_WAIT", "LimitKeywords", "Limits", "backoff_wait", "limits_from", "retry_after", "retryable"]

MAX_WAIT = 60.0
"""The longest wait before a retry, in seconds, whatever ``Retry-After`` asks."""


@dataclass(frozen=True)
class Limits:
    """How requests are sent: at most ``concurrency`` at once, each given ``timeout`` seconds, retried
    up to ``max_retries`` times after waiting ``backoff`` seconds, then twice as long each time;
    ``ConfigError`` when they are unusable."""

    concurrency: int = 8
    timeout: float = 60.0
    max_retries: int = 4
    backoff: float = 1.0

    def __post_init__(self) -> None:
        finite = math.isfinite(self.timeout) and math.isfinite(self.backoff)
        if not finite or self.concurrency < 1 or self.timeout <= 0 or self.max_retries < 0 or self.backoff < 0:
            raise ConfigError(
                f"unusable limits {self}: concurrency >= 1, timeout > 0, retries and backoff >= 0, "
                "timeout and backoff finite numbers"
            )


class LimitKeywords(TypedDict, total=False):
    """The keywords ``limits=`` replaces, deprecated for one release: each a field of ``Limits``."""

    concurrency: int
    timeout: float
    max_retries: int
    backoff: float


def limits_from(
    caller: str, limits: Limits | None, default: Limits, deprecated: Mapping[str, object], stacklevel: int = 3
) -> Limits:
    """The limits ``caller`` sends with: ``limits``, else ``default`` changed by those of the
    ``deprecated`` keywords (``LimitKeywords``) that were given (not ``None``), with a
    ``DeprecationWarning`` pointing ``stacklevel`` frames up. ``TypeError`` for a keyword that is none of
    them or when both are given; ``ConfigError`` for unusable limits."""
    unknown = sorted(set(deprecated) - set(LimitKeywords.__annotations__))
    if unknown:
        raise TypeError(f"{caller}() got an unexpected keyword argument {unknown[0]!r}")
    given = {name: value for name, value in deprecated.items() if value is not None}
    if not given:
        return default if limits is None else limits
    shown = ", ".join(f"{name}=" for name in given)
    if limits is not None:
        raise TypeError(f"{caller}: pass limits= or {shown}, not both (limits= replaces them).")
    warnings.warn(
        f"{caller}: {shown} is deprecated and will be removed in the next release; pass limits=Limits(...) instead.",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
    return Limits(**(dataclasses.asdict(default) | given))


def backoff_wait(limits: Limits, attempts: int, asked: float | None) -> float:
    """Seconds to wait after ``attempts`` failed ones: what the endpoint ``asked`` for, else exponential
    backoff with jitter; never more than ``MAX_WAIT``."""
    if asked is not None:
        return min(MAX_WAIT, asked)
    return min(MAX_WAIT, limits.backoff * 2.0 ** (attempts - 1) * random.uniform(0.5, 1.0))


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
        BadReply,
    )


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
