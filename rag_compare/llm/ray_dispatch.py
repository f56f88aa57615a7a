"""Sending chat-completions requests from Ray tasks (``engine="ray"``): the sending of ``dispatch``,
spread over the CPUs of a Ray cluster.

The reply cache stays with the caller: replies are looked up under the same keys as ``dispatch`` looks
them up, only the requests the cache lacks go to Ray, and each reply is stored when its task returns,
under the key of the endpoint that gave it, so a cluster needs no shared cache file. The concurrency
bound is split into lanes (see ``lanes``), one a Ray CPU, whose shares of the bound sum to it; each
lane sends its requests in tasks of at most ``ROUNDS`` requests a slot of its share, one task after
another, so an interruption loses only the replies of the tasks under way, and the progress bar moves
as each task returns. A task opens its own clients from the pool's addresses (URLs and key, settled
here) and sends as ``dispatch`` does (the pool, timeouts, retries, failures kept as data); an endpoint
that refuses the requests stops every task.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from rag_compare.core.errors import EndpointError, RagCompareError
from rag_compare.core.progress import progress_bar
from rag_compare.core.ray_runtime import ray_session
from rag_compare.llm.cache import opened_cache
from rag_compare.llm.dispatch import Outcome, cached_outcomes, send_all
from rag_compare.llm.endpoint import INSECURE_KEY_ENV
from rag_compare.llm.limits import Limits
from rag_compare.llm.pool import EndpointAddress, pool_addresses

__all__ = ["ROUNDS", "Lane", "lanes", "send_on_ray"]

ROUNDS = 16
"""The most requests a task carries per slot of its lane's share of the concurrency bound."""


@dataclass(frozen=True)
class Lane:
    """Tasks run one after another: each sends ``size`` requests (the last fewer), ``share`` at once."""

    share: int
    size: int


def lanes(concurrency: int, cpus: int, requests: int) -> list[Lane]:
    """The lanes ``requests`` (one or more) are sent in on ``cpus`` Ray CPUs within ``concurrency``: one a
    CPU, but no more than the bound or the requests; shares that sum to the bound (each at least 1, the
    first ones one more when it does not divide); each task ``ROUNDS`` times its share, or fewer so that
    the lanes' first tasks together carry every request when there are few."""
    count = max(1, min(cpus, concurrency, requests))
    shares = [concurrency // count + (1 if lane < concurrency % count else 0) for lane in range(count)]
    return [Lane(share, min(share * ROUNDS, math.ceil(requests * share / concurrency))) for share in shares]


def send_on_ray(
    bodies: Sequence[Mapping[str, Any]],
    *,
    base_url: str | Sequence[str] | None,
    api_key: str | None,
    limits: Limits,
    cache: str | Path | bool,
    progress: str | None,
    ray_address: str | None = None,
    refused: type[EndpointError] = EndpointError,
) -> list[Outcome]:
    """One ``Outcome`` per body of ``bodies``, as ``dispatch.send_to_endpoint`` gives it for ``base_url``
    and ``api_key`` (one URL or a pool), the requests the reply cache lacks sent from Ray tasks on the
    cluster at ``ray_address`` (default: a Ray started on this machine; see ``ray_session``), which is
    reached only when there is a request to send."""
    addresses = pool_addresses(base_url, api_key)
    with opened_cache(cache) as store:
        keys, outcomes = cached_outcomes([endpoint.name for endpoint in addresses], bodies, store)
        pending = [index for index, outcome in enumerate(outcomes) if outcome is None]
        if pending:
            with ray_session(ray_address) as ray, progress_bar(progress, len(pending)) as advance:

                def arrived(indices: Sequence[int], sent: Sequence[Outcome]) -> None:
                    for index, outcome in zip(indices, sent, strict=True):
                        outcomes[index] = outcome
                        if store is not None and outcome.reply is not None:
                            store.put(keys[index][outcome.tried[-1]], outcome.reply)
                        advance()

                _send_in_lanes(ray, addresses, bodies, pending, limits, refused, arrived)
    return [outcome for outcome in outcomes if outcome is not None]


def _send_in_lanes(
    ray: ModuleType,
    addresses: Sequence[EndpointAddress],
    bodies: Sequence[Mapping[str, Any]],
    pending: Sequence[int],
    limits: Limits,
    refused: type[EndpointError],
    arrived: Callable[[Sequence[int], Sequence[Outcome]], None],
) -> None:
    """Send the bodies at the ``pending`` indices in the tasks of ``lanes``, giving ``arrived`` each task's
    indices and outcomes as it returns; the tasks still running when it stops early (a task's error, an
    interruption) are cancelled."""
    task = ray.remote(_send_share).options(**_task_options())
    plan = lanes(limits.concurrency, int(ray.cluster_resources().get("CPU", 1)), len(pending))
    waiting = collections.deque(pending)
    running: dict[Any, tuple[int, list[int]]] = {}  # each task's lane and indices

    def start(lane: int) -> None:
        indices = [waiting.popleft() for _ in range(min(plan[lane].size, len(waiting)))]
        if indices:
            share = dataclasses.replace(limits, concurrency=plan[lane].share)
            running[task.remote(addresses, [bodies[index] for index in indices], share, refused)] = (lane, indices)

    for lane in range(len(plan)):
        start(lane)
    try:
        while running:
            [done], _ = ray.wait(list(running), num_returns=1)
            lane, indices = running.pop(done)
            arrived(indices, _outcomes(ray, done))
            start(lane)
    finally:
        for unfinished in running:
            ray.cancel(unfinished)


def _send_share(
    addresses: Sequence[EndpointAddress],
    bodies: Sequence[Mapping[str, Any]],
    limits: Limits,
    refused: type[EndpointError],
) -> list[Outcome]:
    """One task: ``bodies`` sent to the pool at ``addresses`` within ``limits`` (the lane's share of the
    bound), through clients opened and closed here; nothing is cached here."""
    endpoints = [address.endpoint() for address in addresses]
    return send_all(endpoints, bodies, limits=limits, cache=None, close_clients=True, refused=refused)


def _outcomes(ray: ModuleType, done: Any) -> list[Outcome]:
    """The outcomes a finished task returned; the error of the library it raised, as it is."""
    try:
        outcomes: list[Outcome] = ray.get(done)
    except ray.exceptions.RayTaskError as error:
        if isinstance(error.cause, RagCompareError):
            raise error.cause from None
        raise
    return outcomes


def _task_options() -> dict[str, Any]:
    """What a task needs of this process's environment: the permission to send a key over plain http,
    when it is given here (the pool's URLs and key are settled here already)."""
    if os.environ.get(INSECURE_KEY_ENV) != "1":
        return {}
    return {"runtime_env": {"env_vars": {INSECURE_KEY_ENV: "1"}}}
