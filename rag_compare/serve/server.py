"""Running the review server: uvicorn on a socket bound here (port 0: a free one), in the foreground for the
command line, or in a daemon thread for ``Comparison.review`` (one at a time in a process).

A server on a loopback address (``127.0.0.1``, ``::1``, ``localhost``) answers to loopback host names only and
needs no token; on any other address it needs one on every request: ``RAG_COMPARE_REVIEW_TOKEN``, else a new
random one, printed in the URL. A token in ``RAG_COMPARE_REVIEW_TOKEN`` is needed on loopback too.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import re
import secrets
import socket
import threading
import time
from collections.abc import Mapping
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
    "Listener",
    "ReviewServer",
    "ReviewUrl",
    "default_reviewer",
    "is_loopback",
    "listen",
    "review_in_background",
    "review_token",
]

DEFAULT_HOST = "127.0.0.1"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
"""The host names that reach this machine only: a server bound to one needs no token."""
TOKEN_VARIABLE = "RAG_COMPARE_REVIEW_TOKEN"
_MIN_TOKEN_CHARS = 16
_TOKEN_CHARACTERS = re.compile(r"[A-Za-z0-9._~-]+")
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


def review_token(host: str, environ: Mapping[str, str] | None = None) -> tuple[str | None, bool]:
    """The token a server on ``host`` needs and whether it is to be shown (a new one) or not (the user's own):
    ``RAG_COMPARE_REVIEW_TOKEN`` when set, else a new random one off loopback, else none."""
    given = (os.environ if environ is None else environ).get(TOKEN_VARIABLE, "").strip()
    if given:
        if len(given) < _MIN_TOKEN_CHARS:
            raise ReviewError(
                f"{TOKEN_VARIABLE} holds {len(given)} characters: a token needs at least {_MIN_TOKEN_CHARS} "
                "(e.g. `python -c 'import secrets; print(secrets.token_hex(32))'`)."
            )
        if not _TOKEN_CHARACTERS.fullmatch(given):
            raise ReviewError(
                f"{TOKEN_VARIABLE} holds characters a URL or a header cannot carry as they are: use letters, digits "
                "and - . _ ~ only."
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


@dataclass(frozen=True)
class Listener:
    """A socket bound and listening for a review server (``listen``), and the token the server will need."""

    bound: socket.socket
    host: str
    token: str | None
    token_shown: bool
    """Whether the token may be shown (a new one) or not (the user's own, from the environment)."""

    @property
    def url(self) -> str:
        """The address bound, as a URL to open (with ``?token=`` when a token is needed)."""
        address, port = self.bound.getsockname()[:2]
        url = f"http://[{address}]:{port}/" if ":" in address else f"http://{address}:{port}/"
        return f"{url}?token={self.token}" if self.token else url

    @property
    def shown_url(self) -> str:
        """``url`` as it may be printed: without a token of the environment."""
        return self.url if self.token_shown or self.token is None else self.url.partition("?")[0]


def listen(host: str = DEFAULT_HOST, port: int = 0) -> Listener:
    """Bind ``host:port`` (``port`` 0: a free one) and listen, before anything is served: requests wait until it
    is; raises ``ReviewError`` when the address cannot be bound (a port in use, a host of no interface here)."""
    host = host.strip("[]")
    token, shown = review_token(host)
    try:
        bound = socket.create_server((host, port), family=_family(host), backlog=128)
    except OSError as error:
        raise ReviewError(
            f"cannot listen on {host} port {port}: {error.strerror or error}. Give another `port` (0: a free one) "
            "or `host`."
        ) from None
    return Listener(bound, host, token, shown)


@dataclass
class ReviewServer:
    """A review server over a ``listener``, not yet serving: ``serve`` (here, until stopped) or ``start`` (in a
    daemon thread). It owns the listener and the ``database``, and closes both when it stops."""

    server: uvicorn.Server
    listener: Listener
    database: ReviewDatabase
    thread: threading.Thread | None = None

    @classmethod
    def of(
        cls, comparison: Comparison, database: ReviewDatabase, listener: Listener, *, reviewer: str | None
    ) -> ReviewServer:
        """The server of ``comparison``'s review into ``database`` on ``listener`` (its app, case index and queue
        made here); ``reviewer`` (default: the login name) signs a verdict that names none."""
        import uvicorn

        from rag_compare.serve.app import review_app

        app = review_app(
            comparison,
            database,
            reviewer=reviewer or default_reviewer(),
            token=listener.token,
            csrf_token=secrets.token_hex(32),
            hosts=LOOPBACK_HOSTS if is_loopback(listener.host) else None,
        )
        config = uvicorn.Config(
            app, http="h11", ws="none", lifespan="off", log_level="warning", server_header=False,
            timeout_graceful_shutdown=1,
        )  # fmt: skip
        return cls(uvicorn.Server(config), listener, database)

    @classmethod
    def bind(
        cls, comparison: Comparison, db: str | Path, *, host: str = DEFAULT_HOST, port: int = 0, reviewer: str | None
    ) -> ReviewServer:
        """``listen`` on ``host:port``, open (or create) the review database ``db``, and make the server of
        ``comparison`` there (see ``of``); what was opened is closed again when a step fails."""
        require_review_extra()
        from rag_compare.io.review_db import ReviewDatabase

        listener = listen(host, port)
        with contextlib.ExitStack() as undo:
            undo.callback(listener.bound.close)
            database = ReviewDatabase.open(db)
            undo.callback(database.close)
            server = cls.of(comparison, database, listener, reviewer=reviewer)
            undo.pop_all()
        return server

    @property
    def url(self) -> str:
        return self.listener.url

    @property
    def shown_url(self) -> str:
        return self.listener.shown_url

    def serve(self) -> None:
        """Serve until stopped (Ctrl-C, SIGTERM, or ``stop`` from another thread); then close the database."""
        try:
            self.server.run(sockets=[self.listener.bound])
        finally:
            self.listener.bound.close()
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


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


class _Running:
    """The server this process runs in the background (``review_in_background``), one at a time, and what it
    serves (see ``_served``)."""

    lock = threading.Lock()
    server: ReviewServer | None = None
    served: tuple[object, ...] = ()


def review_in_background(
    comparison: Comparison, db: str | Path, *, host: str = DEFAULT_HOST, port: int = 0, reviewer: str | None = None
) -> ReviewUrl:
    """Serve ``comparison``'s review into ``db`` in a daemon thread of this process, and return its URL. The
    server of an earlier call is reused when asked the same, else stopped first (one runs at a time)."""
    served = _served(comparison, db, host, reviewer)
    with _Running.lock:
        running = _Running.server
        if running is not None and running.thread is not None and running.thread.is_alive():
            if _Running.served == served and port in (0, running.listener.bound.getsockname()[1]):
                return _as_url(running)
            running.stop()
        _Running.server = ReviewServer.bind(comparison, db, host=host, port=port, reviewer=reviewer)
        _Running.served = served
        _Running.server.start()
        return _as_url(_Running.server)


def _served(comparison: Comparison, db: str | Path, host: str, reviewer: str | None) -> tuple[object, ...]:
    """What a server serves, so that a second ``review`` asking the same reuses it."""
    return (id(comparison), Path(db).resolve(), host.strip("[]").lower(), reviewer)


def _as_url(server: ReviewServer) -> ReviewUrl:
    url = ReviewUrl(server.url)
    url.server = server
    return url
