"""What every judge over an OpenAI-compatible endpoint shares (``OpenAIJudge``, ``PairwiseJudge``): where
its requests go (one endpoint, or a pool of endpoints serving the same model), its fingerprint, what
each endpoint did, and one way to look requests up in the reply cache and to send them.

Requests are sent from this process (``engine="local"``) or from Ray tasks (``engine="ray"``, on the
cluster at ``ray_address``, see ``ray_dispatch``): the same requests, the same reply cache, the same
verdicts, so the fingerprint does not name the engine.

The fingerprint names the endpoint as it always has: the one endpoint's URL (without credentials). A
pool is named by the sorted URLs of its endpoints: the order of the pool only decides where requests
go first, but which servers answer may decide the verdicts (two URLs may serve different weights under
one model name), so a pool is another evaluator than any one of its endpoints.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rag_compare.compute.engines import SCORING_ENGINES
from rag_compare.core.digest import json_digest
from rag_compare.core.errors import ConfigError, JudgeError
from rag_compare.llm.dispatch import Outcome, send_to_endpoint
from rag_compare.llm.limits import Limits
from rag_compare.llm.plan import in_cache
from rag_compare.llm.pool import EndpointUsage, pool_names, usage_lines, usage_of
from rag_compare.llm.ray_dispatch import send_on_ray

__all__ = ["EndpointJudge"]


class EndpointJudge(ABC):
    """The base of a frozen dataclass judge with the fields named here; it gives ``config``."""

    base_url: str | Sequence[str] | None
    cache: str | Path | bool
    progress: bool
    api_key: str | None
    client: Any
    engine: str
    ray_address: str | None
    _limits: Limits
    _usage: dict[str, EndpointUsage]

    @property
    @abstractmethod
    def config(self) -> dict[str, Any]:
        """The settings its verdicts depend on, as plain JSON values."""

    @property
    def endpoints(self) -> tuple[str, ...]:
        """Where requests go, in the pool's order, without any credentials a URL might hold."""
        return pool_names(self.client, self.base_url)

    @property
    def endpoint(self) -> str:
        """Where requests go: the endpoints' names, separated by commas."""
        return ", ".join(self.endpoints)

    @property
    def endpoint_usage(self) -> dict[str, EndpointUsage]:
        """The HTTP requests this judge sent to each endpoint so far, and how many brought a reply."""
        return {name: self._usage.get(name, EndpointUsage()) for name in self.endpoints}

    def pool_summary(self) -> list[str]:
        """For a pool of endpoints, one line per endpoint: the requests sent to it, succeeded and failed
        (see ``endpoint_usage``); nothing for one endpoint."""
        return usage_lines(self.endpoint_usage) if len(self.endpoints) > 1 else []

    @property
    def fingerprint(self) -> str:
        """SHA-256 of ``config``."""
        return json_digest(self.config)

    def _settle_endpoints(self) -> None:
        """Keep a pool of URLs as a tuple (a frozen judge is hashable), refusing one that is unusable, and
        an engine that cannot send the requests."""
        if self.base_url is not None and not isinstance(self.base_url, str):
            object.__setattr__(self, "base_url", tuple(self.base_url))
        pool_names(self.client, self.base_url)
        if self.engine not in SCORING_ENGINES:
            raise ConfigError(f"unknown engine {self.engine!r}: use `engine='local'` (this process) or `engine='ray'`.")
        if self.engine == "local" and self.ray_address is not None:
            raise ConfigError("`ray_address` is the cluster of `engine='ray'`: give both, or neither.")
        if self.engine == "ray" and self.client is not None:
            raise ConfigError(
                "`engine='ray'` sends from Ray tasks, which open their own clients: give `base_url` (and "
                "`api_key`) instead of `client`."
            )

    def _endpoint_config(self) -> str | list[str]:
        """The endpoint as the fingerprint names it (see the module)."""
        names = self.endpoints
        return names[0] if len(names) == 1 else sorted(names)

    def _cached(self, bodies: list[dict[str, Any]]) -> list[bool]:
        """Whether the reply cache holds each request body's reply (from any endpoint of the pool)."""
        return in_cache(bodies, endpoint=self.endpoints, cache=self.cache)

    def _send(self, bodies: list[dict[str, Any]], progress: str) -> list[Outcome]:
        """Each body's outcome, sent from the judge's engine with its limits and cache (``progress``: the
        bar's label when the judge shows one); an endpoint that refuses every request raises ``JudgeError``."""
        label = progress if self.progress else None
        if self.engine == "ray":
            outcomes = send_on_ray(
                bodies,
                base_url=self.base_url,
                api_key=self.api_key,
                limits=self._limits,
                cache=self.cache,
                progress=label,
                ray_address=self.ray_address,
                refused=JudgeError,
            )
        else:
            outcomes = send_to_endpoint(
                bodies,
                client=self.client,
                base_url=self.base_url,
                api_key=self.api_key,
                limits=self._limits,
                cache=self.cache,
                progress=label,
                refused=JudgeError,
            )
        sent = usage_of(self.endpoints, ((outcome.tried, outcome.reply is not None) for outcome in outcomes))
        for name, usage in sent.items():
            self._usage[name] = self._usage.get(name, EndpointUsage()) + usage
        return outcomes
