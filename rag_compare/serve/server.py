"""Running the review server: uvicorn on a socket bound here (port 0: a free one), in the foreground for the
command line, or in a daemon thread for ``Comparison.review`` (one at a time in a process).

A server on a loopback address (``127.0.0.1``, ``::1``, ``localhost``) answers to loopback host names only and
needs no token; on any other address it needs one on every request: ``RAG_COMPARE_REVIEW_TOKEN``, else a new
random one, printed in the URL. A token in ``RAG_COMPARE_REVIEW_TOKEN`` is needed on loopback too.
"""

from __future__ import annotations

import getpass
import os
import secrets
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rag_compare.core.errors import ReviewError
from rag_compare.serve.extra import require_review_extra

if TYPE_CHECKING:
    import uvicorn

    from rag_compare.compute.comparison import Comparison
    from rag_compare.io.review_db import ReviewDatabase

__all__ = [
    "DEFAULT_HOST",
    "LOOPBACK_HOSTS",
    "TOKEN_VARIABLE",
    "ReviewServer",
    "ReviewUrl",
    "default_reviewer",
    "is_loopback",
    "review_in_background",
    "review_token",
]

DEFAULT_HOST = "127.0.0.1"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
"""The host names that reach this machine only: a server bound to one needs no token."""
TOKEN_VARIABLE = "RAG_COMPARE_REVIEW_TOKEN"
_MIN_TOKEN_CHARS = 16
_START_SECONDS = 30.0
_STOP_SECONDS = 5.0


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) reaches this machine only."""
    return host.strip("[]").lower() in LOOPBACK_HOSTS


def default_reviewer() -> str:
    """The login name of the user running the server (``reviewer`` when the system knows none)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "reviewer"


def review_token(host: str, environ: dict[str, str] | None = None) -> tuple[str | None, bool]:
    """The token a server on ``host`` needs and whether it is to be shown (a new one) or not (the user's own):
    ``RAG_COMPARE_REVIEW_TOKEN`` when set, else a new random one off loopback, else none."""
    given = (os.environ if environ is None else environ).get(TOKEN_VARIABLE, "").strip()
    if given:
        if len(given) < _MIN_TOKEN_CHARS:
            raise ReviewError(
                f"{TOKEN_VARIABLE} holds {len(given)} characters: a token needs at least {_MIN_TOKEN_CHARS} "
                "(e.g. `python -c 'import secrets; print(secrets.token_hex(32))'`)."
            )
        return given, False
    if is_loopback(host):
        return None, False
    return secrets.token_hex(32), True  # hex: no shape of a provider's key, so messages never redact it


class ReviewUrl(str):
    """The URL of a review server running in this process; ``stop()`` stops it."""

    server: ReviewServer

    def stop(self) -> None:
        """Stop the server (its verdicts are in its database already)."""
        self.server.stop()


@dataclass
class ReviewServer:
    """A review server bound to ``url``'s port, not yet serving: ``serve`` (here, until stopped) or ``start``
    (in a daemon thread). ``shown_url`` is ``url`` with a token from the environment left out."""

    server: uvicorn.Server
    bound: socket.socket
    database: ReviewDatabase
    url: str
    shown_url: str
    key: tuple[object, ...]
    thread: threading.Thread | None = None

    @classmethod
    def bind(
        cls, comparison: Comparison, db: str | Path, *, host: str = DEFAULT_HOST, port: int = 0, reviewer: str | None
    ) -> ReviewServer:
        """Bind ``host:port`` (``port`` 0: a free one), open or create the review database ``db`` and build the
        app over ``comparison``; raises ``ReviewError`` when the address cannot be bound."""
        require_review_extra()
        import uvicorn

        from rag_compare.io.review_db import ReviewDatabase
        from rag_compare.serve.app import review_app

        token, shown = review_token(host)
        bound = _bound_socket(host, port)
        try:
            database = ReviewDatabase.open(db)
            app = review_app(
                comparison,
                database,
                reviewer=reviewer or default_reviewer(),
                token=token,
                csrf_token=secrets.token_hex(32),
                hosts=LOOPBACK_HOSTS if is_loopback(host) else None,
            )
        except BaseException:
            bound.close()
            raise
        config = uvicorn.Config(
            app, http="h11", ws="none", lifespan="off", log_level="warning", server_header=False,
            timeout_graceful_shutdown=1,
        )  # fmt: skip
        url = _url(bound)
        shown_url = f"{url}?token={token}" if token and shown else url
        key = _key(comparison, db, host, reviewer)
        return cls(uvicorn.Server(config), bound, database, f"{url}?token={token}" if token else url, shown_url, key)

    def serve(self) -> None:
        """Serve until stopped (Ctrl-C, SIGTERM, or ``stop`` from another thread); then close the database."""
        try:
            self.server.run(sockets=[self.bound])
        finally:
            self.bound.close()
            self.database.close()

    def start(self) -> None:
        """Serve in a daemon thread; return once the server answers (``ReviewError`` when it failed to start)."""
        self.thread = threading.Thread(target=self.serve, name="rag-compare-review", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + _START_SECONDS
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise ReviewError(f"the review server on {self.shown_url} did not start: see the log above.")
            time.sleep(0.01)

    def stop(self) -> None:
        """Stop serving, and wait for the server's thread to end."""
        self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(_STOP_SECONDS)


def _bound_socket(host: str, port: int) -> socket.socket:
    try:
        return socket.create_server((host, port), family=_family(host), backlog=128)
    except OSError as error:
        raise ReviewError(
            f"cannot listen on {host} port {port}: {error.strerror or error}. Give another `port` (0: a free one) "
            "or `host`."
        ) from None


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _url(bound: socket.socket) -> str:
    address, port = bound.getsockname()[:2]
    return f"http://[{address}]:{port}/" if ":" in address else f"http://{address}:{port}/"


class _Running:
    """The server this process runs in the background (``review_in_background``), one at a time."""

    lock = threading.Lock()
    server: ReviewServer | None = None


def review_in_background(
    comparison: Comparison, db: str | Path, *, host: str = DEFAULT_HOST, port: int = 0, reviewer: str | None = None
) -> ReviewUrl:
    """Serve ``comparison``'s review into ``db`` in a daemon thread of this process, and return its URL. The
    server of an earlier call is reused when asked the same, else stopped first (one runs at a time)."""
    with _Running.lock:
        running = _Running.server
        if running is not None and running.thread is not None and running.thread.is_alive():
            same = running.key == _key(comparison, db, host, reviewer)
            if same and port in (0, running.bound.getsockname()[1]):
                return _as_url(running)
            running.stop()
        _Running.server = ReviewServer.bind(comparison, db, host=host, port=port, reviewer=reviewer)
        _Running.server.start()
        return _as_url(_Running.server)


def _key(comparison: Comparison, db: str | Path, host: str, reviewer: str | None) -> tuple[object, ...]:
    """What a server serves, so that a second ``review`` asking the same reuses it."""
    return (id(comparison), Path(db).resolve(), host, reviewer)


def _as_url(server: ReviewServer) -> ReviewUrl:
    url = ReviewUrl(server.url)
    url.server = server
    return url
