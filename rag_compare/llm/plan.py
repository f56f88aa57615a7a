"""What judging would cost before anything is spent (``JudgePlan``), and what both LLM judges make it
from: which requests the reply cache already holds, and a rough token estimate (four characters a token)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_compare.core.listing import counted
from rag_compare.core.result import Report
from rag_compare.llm.cache import opened_cache, request_key

__all__ = ["CHARS_PER_TOKEN", "JudgePlan", "estimated_tokens", "in_cache", "tokens_of"]

CHARS_PER_TOKEN = 4
"""Characters a token is guessed to hold, for estimates only."""


@dataclass(frozen=True)
class JudgePlan(Report):
    """What judging would cost before anything is spent: requests, those the cache already holds, and
    a rough token estimate (four characters a token)."""

    cases: int
    requests: int
    cached: int
    prompt_tokens: int
    completion_tokens: int

    def __repr__(self) -> str:
        return (
            f"<JudgePlan {counted(self.cases, 'case')}: {counted(self.requests, 'request')} ({self.cached} cached), "
            f"about {self.prompt_tokens:,} prompt and {self.completion_tokens:,} completion tokens to send>"
        )

    @property
    def to_send(self) -> int:
        return self.requests - self.cached

    def to_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "requests": self.requests,
            "cached": self.cached,
            "to_send": self.to_send,
            "estimated_prompt_tokens": self.prompt_tokens,
            "estimated_completion_tokens": self.completion_tokens,
        }


def estimated_tokens(text: str) -> int:
    """The tokens ``text`` is guessed to take."""
    return tokens_of(len(text))


def tokens_of(characters: int) -> int:
    """The tokens ``characters`` characters are guessed to take (rounded up)."""
    return math.ceil(characters / CHARS_PER_TOKEN)


def in_cache(
    bodies: Sequence[Mapping[str, Any]], *, endpoint: str | Sequence[str], cache: str | Path | bool
) -> list[bool]:
    """Whether the reply cache that the ``cache=`` setting names holds the reply to each of ``bodies``
    sent to ``endpoint`` (or to any endpoint of a pool of them; a cache file that is not there yet is
    not created)."""
    names = [endpoint] if isinstance(endpoint, str) else list(endpoint)
    keys = [[request_key(name, body) for name in names] for body in bodies]
    with opened_cache(cache, create=False) as store:
        stored = set() if store is None else set(store.get_many(key for body_keys in keys for key in body_keys))
    return [any(key in stored for key in body_keys) for body_keys in keys]
