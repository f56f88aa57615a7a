"""What every judge over an OpenAI-compatible endpoint shares (``OpenAIJudge``, ``PairwiseJudge``): where
its requests go, its fingerprint, and one way to look requests up in the reply cache and to send them."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from rag_compare.core.digest import json_digest
from rag_compare.core.errors import JudgeError
from rag_compare.llm.dispatch import Outcome, send_to_endpoint
from rag_compare.llm.endpoint import endpoint_name
from rag_compare.llm.limits import Limits
from rag_compare.llm.plan import in_cache

__all__ = ["EndpointJudge"]


class EndpointJudge(ABC):
    """The base of a frozen dataclass judge with the fields named here; it gives ``config``."""

    base_url: str | None
    cache: str | Path | bool
    progress: bool
    api_key: str | None
    client: Any
    _limits: Limits

    @property
    @abstractmethod
    def config(self) -> dict[str, Any]:
        """The settings its verdicts depend on, as plain JSON values."""

    @property
    def endpoint(self) -> str:
        """Where requests go, without any credentials a URL might hold."""
        return endpoint_name(self.client, self.base_url)

    @property
    def fingerprint(self) -> str:
        """SHA-256 of ``config``."""
        return json_digest(self.config)

    def _cached(self, bodies: list[dict[str, Any]]) -> list[bool]:
        """Whether the reply cache holds each request body's reply."""
        return in_cache(bodies, endpoint=self.endpoint, cache=self.cache)

    def _send(self, bodies: list[dict[str, Any]], progress: str) -> list[Outcome]:
        """Each body's outcome, sent with the judge's limits and cache (``progress``: the bar's label when
        the judge shows one); an endpoint that refuses every request raises ``JudgeError``."""
        return send_to_endpoint(
            bodies,
            client=self.client,
            base_url=self.base_url,
            api_key=self.api_key,
            limits=self._limits,
            cache=self.cache,
            progress=progress if self.progress else None,
            refused=JudgeError,
        )
