"""Ray, for work spread past one process (the ``ray`` engine): an optional extra (``rag-compare[ray]``),
imported here and only when asked for."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import ModuleType

from rag_compare.core.errors import EngineError

__all__ = ["INSTALL_HINT", "ray_session"]

INSTALL_HINT = "pip install 'rag-compare[ray]'"


@contextlib.contextmanager
def ray_session(address: str | None = None, *, num_cpus: int | None = None) -> Iterator[ModuleType]:
    """The ``ray`` module, connected to the cluster at ``address`` (``auto``: the one this machine belongs to)
    or, without one, to a Ray started on this machine with ``num_cpus`` (default: every core) and shut down on
    leaving. A Ray already started in this process (a notebook's, a test's) is used as it is. Raises
    ``EngineError`` when Ray is not installed or no cluster answers at ``address``."""
    try:
        import ray
    except ImportError as error:
        raise EngineError(f"the ray engine needs Ray, which is not installed: {INSTALL_HINT}") from error
    if ray.is_initialized():
        yield ray
        return
    try:
        if address is None:
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as error:
        where = f"at {address!r}" if address else "on this machine"
        raise EngineError(
            f"Ray could not start {where}: {error}. Start a cluster there (`ray start`), or leave out `ray_address`."
        ) from error
    try:
        yield ray
    finally:
        ray.shutdown()
