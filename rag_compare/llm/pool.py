"""A pool of endpoints serving the same model: which one each attempt at a request goes to, and what
each endpoint did.

Every attempt goes to the endpoint with the fewest requests in flight (ties: the pool's order), and
the whole pool shares the one concurrency bound. An attempt that fails is retried on an endpoint the
request has failed on least, so a request tries every endpoint once before any twice. An endpoint
whose last ``SET_ASIDE_AFTER`` attempts all failed (refused connections, 5xx, timeouts, rate limits,
unusable replies) is set aside: it gets requests again only when no endpoint that is not set aside is
left, and one success brings it back. A request's failure on an endpoint is the case's own (kept as
data, naming the endpoint); only a refusal of the credentials, model or route stops the run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_compare.core.errors import ConfigError
from rag_compare.llm.endpoint import check_key_transport, client_factory, endpoint_name

__all__ = [
    "SET_ASIDE_AFTER",
    "Endpoint",
    "EndpointAddress",
    "EndpointUsage",
    "Router",
    "base_urls",
    "pool_addresses",
    "pool_endpoints",
    "pool_names",
    "usage_lines",
    "usage_of",
]

SET_ASIDE_AFTER = 3
"""Failed attempts in a row after which an endpoint of a pool is set aside."""


@dataclass(frozen=True)
class Endpoint:
    """One endpoint of a pool: ``name`` (its URL without credentials: in cache keys, errors and the
    summary) and ``client``, which makes its ``openai.AsyncOpenAI`` when a request has to be sent."""

    name: str
    client: Callable[[], Any]


@dataclass(frozen=True)
class EndpointAddress:
    """One endpoint of a pool given by URL: its ``name``, and the URL and key its client opens with, those
    of the environment filled in where the pool was made. It opens the same client in any process (a Ray
    task on another machine too)."""

    name: str
    base_url: str | None
    api_key: str | None = field(default=None, repr=False)

    def endpoint(self) -> Endpoint:
        return Endpoint(self.name, client_factory(None, self.base_url, self.api_key))


@dataclass(frozen=True)
class EndpointUsage:
    """The HTTP requests sent to one endpoint, and how many of them brought a usable reply."""

    sent: int = 0
    succeeded: int = 0

    @property
    def failed(self) -> int:
        return self.sent - self.succeeded

    def __add__(self, other: EndpointUsage) -> EndpointUsage:
        return EndpointUsage(self.sent + other.sent, self.succeeded + other.succeeded)

    def to_dict(self) -> dict[str, int]:
        return {"sent": self.sent, "succeeded": self.succeeded, "failed": self.failed}


def base_urls(base_url: str | Sequence[str] | None) -> tuple[str | None, ...]:
    """The URLs of ``base_url`` (one URL, ``None`` for ``OPENAI_BASE_URL``, or a pool), each endpoint
    once, in the order given; ``ConfigError`` for an empty pool or an entry that is not a URL string."""
    if base_url is None or isinstance(base_url, str):
        return (base_url,)
    urls = list(base_url)
    unusable = [url for url in urls if not isinstance(url, str) or not url.strip()]
    if not urls or unusable:
        got = "none" if not unusable else "a blank one" if isinstance(unusable[0], str) else type(unusable[0]).__name__
        raise ConfigError(
            f"`base_url`: a pool of endpoints is one or more URLs, e.g. "
            f"['http://gpu-1:8000/v1', 'http://gpu-2:8000/v1'] (got {got})."
        )
    unique: dict[str, str] = {}
    for url in urls:
        unique.setdefault(endpoint_name(base_url=url), url)
    return tuple(unique.values())


def pool_names(client: Any, base_url: str | Sequence[str] | None) -> tuple[str, ...]:
    """The names of the endpoints requests go to, in the pool's order: ``client``'s alone when given (it
    cannot be combined with a pool: ``ConfigError``), else those of ``base_url`` (see ``base_urls``)."""
    urls = base_urls(base_url)
    if client is None:
        return tuple(endpoint_name(base_url=url) for url in urls)
    if len(urls) > 1:
        raise ConfigError("`client` replaces `base_url`: pass one client, or a pool of base URLs, not both.")
    return (endpoint_name(client),)


def pool_endpoints(client: Any, base_url: str | Sequence[str] | None, api_key: str | None) -> tuple[Endpoint, ...]:
    """The endpoints of ``pool_names``: ``client``'s, else those of ``pool_addresses``."""
    names = pool_names(client, base_url)
    if client is not None:
        return (Endpoint(names[0], client_factory(client)),)
    return tuple(address.endpoint() for address in pool_addresses(base_url, api_key))


def pool_addresses(base_url: str | Sequence[str] | None, api_key: str | None) -> tuple[EndpointAddress, ...]:
    """The endpoints of ``base_url`` (see ``base_urls``), each with ``api_key``, checked now and with
    ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` for what is not given (see ``check_key_transport``)."""
    addresses = []
    for url in base_urls(base_url):
        resolved_url, resolved_key = check_key_transport(url, api_key)
        addresses.append(EndpointAddress(endpoint_name(base_url=url), resolved_url, resolved_key))
    return tuple(addresses)


class Router:
    """Chooses the endpoint of each attempt (see the module) and keeps what it needs for that: the
    requests in flight at each endpoint and its failures in a row."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self.in_flight = dict.fromkeys(self.names, 0)
        self.failures_in_a_row = dict.fromkeys(self.names, 0)

    def set_aside(self, name: str) -> bool:
        return self.failures_in_a_row[name] >= SET_ASIDE_AFTER

    def take(self, failed_here: Mapping[str, int]) -> str:
        """The endpoint of a request's next attempt (``failed_here``: its failures so far, by endpoint),
        counted in flight until ``release``."""
        name = min(self.names, key=lambda name: (self.set_aside(name), failed_here.get(name, 0), self.in_flight[name]))
        self.in_flight[name] += 1
        return name

    def release(self, name: str, *, failed: bool) -> None:
        """An attempt at ``name`` ended; ``failed``: the endpoint's fault (a retryable error)."""
        self.in_flight[name] -= 1
        self.failures_in_a_row[name] = self.failures_in_a_row[name] + 1 if failed else 0

    def another_to_try(self, failed_here: Mapping[str, int]) -> bool:
        """Whether an endpoint that is not set aside is left that the request has not failed on."""
        return any(not self.set_aside(name) and not failed_here.get(name) for name in self.names)


def usage_of(names: Sequence[str], tried: Iterable[tuple[Sequence[str], bool]]) -> dict[str, EndpointUsage]:
    """Each endpoint's ``EndpointUsage``, from every request's endpoints attempted in order, and whether
    its last attempt brought the reply (the attempts before it failed)."""
    sent, succeeded = dict.fromkeys(names, 0), dict.fromkeys(names, 0)
    for attempts, answered in tried:
        for name in attempts:
            sent[name] += 1
        if answered and attempts:
            succeeded[attempts[-1]] += 1
    return {name: EndpointUsage(sent[name], succeeded[name]) for name in names}


def usage_lines(usage: Mapping[str, EndpointUsage]) -> list[str]:
    """One line per endpoint: requests sent, succeeded and failed."""
    return [
        f"endpoint {name}: {counts.sent:,} requests sent, {counts.succeeded:,} succeeded, {counts.failed:,} failed"
        for name, counts in usage.items()
    ]
