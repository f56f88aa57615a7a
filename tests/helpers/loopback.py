"""An ASGI app served by uvicorn on a free loopback port in a thread, and a plain HTTP client (urllib) that
answers every status as data instead of raising."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from email.message import Message
from typing import Any
from urllib.parse import urlsplit

__all__ = ["Answer", "call", "call_raw", "served"]

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""No proxy of the environment between the tests and the loopback server."""


@dataclass(frozen=True)
class Answer:
    """A response: its status, headers and body."""

    status: int
    headers: Message
    body: bytes

    def json(self) -> Any:
        assert self.headers.get_content_type() == "application/json", self.headers
        return json.loads(self.body)

    @property
    def error(self) -> str:
        """The message of an error's JSON, ``{"error": ...}``."""
        payload = self.json()
        assert set(payload) == {"error"}, payload
        message: str = payload["error"]
        return message


def call(
    method: str,
    url: str,
    *,
    json_body: object = None,
    body: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> Answer:
    """``method`` ``url`` with ``json_body`` (as JSON) or ``body`` (as given) and ``headers``."""
    data = json.dumps(json_body).encode() if json_body is not None else body
    sent = {"Content-Type": "application/json"} if json_body is not None else {}
    request = urllib.request.Request(url, data=data, method=method, headers={**sent, **(headers or {})})
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            return Answer(response.status, response.headers, response.read())
    except urllib.error.HTTPError as error:
        with error:
            return Answer(error.code, error.headers, error.read())


def call_raw(url: str, head: bytes, body: Iterable[bytes] = ()) -> Answer:
    """Send the request ``head`` (request line and headers, as bytes) to ``url``'s server, then the ``body``'s
    pieces from another thread, while this one reads the response: an answer that comes before the body was
    all sent (or any of it) is read, as a client that waits for none would not."""
    where = urlsplit(url)
    with socket.create_connection((where.hostname, where.port), timeout=30) as connection:
        connection.sendall(head)

        def send_body() -> None:
            with contextlib.suppress(OSError):  # the server answered and closed the connection
                for piece in body:
                    connection.sendall(piece)

        threading.Thread(target=send_body, daemon=True).start()
        response = http.client.HTTPResponse(connection)
        response.begin()
        return Answer(response.status, response.msg, response.read())


@contextmanager
def served(app: Any) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 at a free port while the block runs; yields ``http://127.0.0.1:PORT``."""
    import uvicorn

    bound = socket.create_server(("127.0.0.1", 0))
    config = uvicorn.Config(app, http="h11", ws="none", lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [bound]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive(), "the server failed to start"
        assert time.monotonic() < deadline, "the server did not start in 30 s"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{bound.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        bound.close()
