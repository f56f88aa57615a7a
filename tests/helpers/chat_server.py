"""A loopback HTTP server that speaks the OpenAI chat-completions protocol, for tests.

Use it as a context manager (``with ChatServer(responder) as server: ...``) and point an ``openai`` client at
``server.base_url``. The responder decides, per request, the status, content, headers and delay of the reply.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, cast

__all__ = ["ChatServer", "InFlight", "Reply", "Responder", "closed_port_url", "sample_for_schema"]

CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
_ERROR_TYPES = {
    400: ("invalid_request_error", "invalid_request"),
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_error", "permission_denied"),
    404: ("invalid_request_error", "not_found"),
    409: ("invalid_request_error", "conflict"),
    422: ("invalid_request_error", "unprocessable_entity"),
    429: ("requests", "rate_limit_exceeded"),
}
_STRING_FORMATS = {
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "time": "00:00:00Z",
    "email": "ok@example.com",
    "uri": "https://example.com/",
    "uuid": "00000000-0000-0000-0000-000000000000",
}


@dataclass(frozen=True)
class Reply:
    """What the server does with one request."""

    status: int = 200
    content: str | None = None
    """The assistant message content; None means one made from the request's JSON schema (see sample_for_schema)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Extra response headers, e.g. {"Retry-After": "1"}."""
    body: str | None = None
    """A raw body sent instead of a chat completion; by default an error status gets an OpenAI-style error JSON."""
    delay: float = 0.0
    """Seconds to wait before answering (a hang is a delay longer than the client's timeout)."""
    prompt_tokens: int = 10
    completion_tokens: int = 5


Responder = Callable[[dict[str, Any], int], Reply]
"""Called with the parsed request JSON and the attempt number (1 the first time this exact body is seen, 2 for its
first repeat, ...)."""


def default_responder(request: dict[str, Any], attempt: int) -> Reply:
    """A 200 reply whose content matches the request's response format."""
    return Reply()


# -- sample content ---------------------------------------------------------------------------------------------------


def sample_for_schema(schema: Mapping[str, Any]) -> Any:
    """A small value that validates against a JSON schema (the subset used by structured outputs).

    Objects get every property, strings "ok", numbers their minimum (else 1, capped at the maximum), booleans true,
    arrays one item (within minItems/maxItems); an enum or const gives its first value, a type list or anyOf its
    first non-null choice, and local ``$ref``s are resolved against the root schema.
    """
    return _sample(schema, schema, 0)


def _sample(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> Any:
    if depth > 50:
        raise ValueError("schema nests too deeply (a recursive $ref?)")
    schema = _plain(schema, root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = _kind(schema)
    if kind == "object":
        properties: Mapping[str, Any] = schema.get("properties", {})
        return {name: _sample(sub, root, depth + 1) for name, sub in properties.items()}
    if kind == "array":
        count = max(schema.get("minItems", 0), min(1, schema.get("maxItems", 1)))
        return [_sample(schema.get("items", {}), root, depth + 1) for _ in range(count)]
    if kind in ("integer", "number"):
        return _sample_number(schema, integer=kind == "integer")
    if kind == "string":
        return _sample_string(schema)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    raise ValueError(f"unsupported schema type: {kind!r}")


def _kind(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        return next((str(t) for t in kind if t != "null"), "null")
    if kind is None:
        return "object" if "properties" in schema else "array" if "items" in schema else "string"
    return str(kind)


def _plain(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema with $ref, anyOf/oneOf (first non-null choice) and allOf (merged) taken away."""
    for _ in range(50):
        if "$ref" in schema:
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**_resolve(schema["$ref"], root), **rest}
        elif "anyOf" in schema or "oneOf" in schema:
            options = schema.get("anyOf") or schema.get("oneOf") or [{}]
            choice = next((o for o in options if o.get("type") != "null"), options[0])
            schema = {**{k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}, **choice}
        elif "allOf" in schema:
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                merged.update(_plain(part, root))
            schema = merged
        else:
            return schema
    raise ValueError("schema nests too deeply (a recursive $ref?)")


def _resolve(ref: str, root: Mapping[str, Any]) -> Mapping[str, Any]:
    if not ref.startswith("#"):
        raise ValueError(f"only local $refs are supported, not {ref!r}")
    node: Any = root
    for part in ref.lstrip("#").split("/"):
        if part:
            node = node[part.replace("~1", "/").replace("~0", "~")]
    return cast(Mapping[str, Any], node)


def _sample_string(schema: Mapping[str, Any]) -> str:
    text = _STRING_FORMATS.get(schema.get("format", ""), "ok")
    text = text.ljust(schema.get("minLength", 0), "k")
    if "maxLength" in schema:
        text = text[: schema["maxLength"]]
    return text


def _sample_number(schema: Mapping[str, Any], *, integer: bool) -> int | float:
    minimum, maximum = schema.get("minimum"), schema.get("maximum")
    above, below = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if integer:
        lows = [math.ceil(minimum)] if minimum is not None else []
        lows += [math.floor(above) + 1] if above is not None else []
        highs = [math.floor(maximum)] if maximum is not None else []
        highs += [math.ceil(below) - 1] if below is not None else []
        return int(min([max(lows, default=1), *highs]))
    value: float = minimum if minimum is not None else above + 1 if above is not None else 1
    if maximum is not None and value > maximum:
        value = maximum
    if below is not None and value >= below:
        floor = max((v for v in (minimum, above) if v is not None), default=None)
        value = (floor + below) / 2 if floor is not None else below - 1
    return value


def content_for(request: Mapping[str, Any]) -> str:
    """The default assistant content: a sample of the request's JSON schema, "{}" for json_object, else "ok"."""
    response_format = request.get("response_format")
    if not isinstance(response_format, Mapping):
        return "ok"
    if response_format.get("type") == "json_schema":
        schema = response_format.get("json_schema", {}).get("schema", {})
        return json.dumps(sample_for_schema(schema))
    if response_format.get("type") == "json_object":
        return "{}"
    return "ok"


def error_body(status: int, message: str | None = None) -> str:
    """An OpenAI-style error JSON for a status."""
    kind, code = _ERROR_TYPES.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
    if message is None:
        try:
            message = f"{status} {HTTPStatus(status).phrase}"
        except ValueError:
            message = f"HTTP {status}"
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": code}})


# -- the server -------------------------------------------------------------------------------------------------------


class InFlight:
    """A count of chat-completion requests being worked on, which several servers may share (to see the
    total a client keeps in flight across them): ``highest`` is its maximum so far.

    A request counts from its arrival until its answer is about to be written, so a client that waits for
    an answer before sending the next request is never seen with one more than it sent.
    """

    def __init__(self) -> None:
        self.current = 0
        self.highest = 0
        self._lock = threading.Lock()

    def enter(self) -> None:
        with self._lock:
            self.current += 1
            self.highest = max(self.highest, self.current)

    def leave(self) -> None:
        with self._lock:
            self.current -= 1


def closed_port_url() -> str:
    """The base URL of a loopback port nothing listens on: every connection to it is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128

    def __init__(self, chat: ChatServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.chat = chat

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):  # a client that went away, or a socket closed on shutdown
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as two writes; don't hold the body for an ACK
    server_version = "ChatServer/1.0"

    @property
    def chat(self) -> ChatServer:
        return cast(_HTTPServer, self.server).chat

    def setup(self) -> None:
        super().setup()
        self.chat._track(self.connection, open_=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.chat._track(self.connection, open_=False)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        raw = self._read_body()
        path = self.path.split("?", 1)[0].rstrip("/")
        if path not in CHAT_PATHS:
            self._send(404, error_body(404, f"Unknown request URL: POST {self.path}"), {})
            return
        try:
            request = json.loads(raw)
            if not isinstance(request, dict):
                raise TypeError("the request body is not a JSON object")
        except (ValueError, TypeError) as exc:
            self._send(400, error_body(400, f"Invalid JSON body: {exc}"), {})
            return
        if request.get("stream"):
            self._send(400, error_body(400, "streaming is not supported by this test server"), {})
            return
        self.chat._handle(self, request)

    def do_GET(self) -> None:
        self._not_found()

    def do_PUT(self) -> None:
        self._not_found()

    def do_DELETE(self) -> None:
        self._not_found()

    def do_PATCH(self) -> None:
        self._not_found()

    def _not_found(self) -> None:
        self._read_body()
        self._send(404, error_body(404, f"Unknown request URL: {self.command} {self.path}"), {})

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send(self, status: int, body: str, headers: Mapping[str, str]) -> None:
        data = body.encode()
        try:
            self.send_response(status)
            if not any(name.lower() == "content-type" for name in headers):
                self.send_header("Content-Type", "application/json")
            for name, value in headers.items():
                if name.lower() != "content-length":
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:  # the client gave up (e.g. its timeout passed)
            self.close_connection = True


class ChatServer:
    """An OpenAI-compatible chat-completions server on 127.0.0.1, serving from a daemon thread while entered.

    ``requests`` holds every chat-completion request body in arrival order, ``max_in_flight`` the highest number of
    them handled at the same time. ``latency`` is added to every chat-completion request, on top of ``Reply.delay``.
    Each of ``gauges`` counts the requests this server is working on (see ``InFlight``).
    """

    def __init__(
        self, responder: Responder | None = None, *, latency: float = 0.0, gauges: tuple[InFlight, ...] = ()
    ) -> None:
        self.responder: Responder = responder or default_responder
        self.latency = latency
        self.gauges = gauges
        self.base_url = ""
        self.port = 0
        self.requests: list[dict[str, Any]] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._attempts: dict[str, int] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def count(self) -> int:
        """How many chat-completion requests arrived."""
        with self._lock:
            return len(self.requests)

    def __enter__(self) -> ChatServer:
        if self._httpd is not None:
            raise RuntimeError("the server is already running")
        self._stopping.clear()
        self._httpd = _HTTPServer(self)
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="chat-server", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop serving: wake handlers that are waiting, close open connections and the listening socket."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=1)
            self._thread = None

    def _track(self, connection: socket.socket, *, open_: bool) -> None:
        with self._lock:
            if open_:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def _handle(self, handler: _Handler, request: dict[str, Any]) -> None:
        key = json.dumps(request, sort_keys=True)
        with self._lock:
            self.requests.append(request)
            attempt = self._attempts[key] = self._attempts.get(key, 0) + 1
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        for gauge in self.gauges:
            gauge.enter()
        try:
            try:
                reply = self.responder(request, attempt)
            except Exception as exc:  # a broken responder shows up as a 500 that names the error
                reply = Reply(status=500, body=error_body(500, f"responder failed: {exc!r}"))
            wait = self.latency + reply.delay
            stopping = wait > 0 and self._stopping.wait(wait)
            for gauge in self.gauges:
                gauge.leave()
            if stopping:
                handler.close_connection = True  # shutting down: drop the request without an answer
                return
            handler._send(reply.status, self._body(request, reply), reply.headers)
        finally:
            with self._lock:
                self._in_flight -= 1

    def _body(self, request: Mapping[str, Any], reply: Reply) -> str:
        if reply.body is not None:
            return reply.body
        if reply.status >= 400:
            return error_body(reply.status)
        content = reply.content if reply.content is not None else content_for(request)
        return json.dumps(
            {
                "id": f"chatcmpl-{next(self._ids)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.get("model", "test-model"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content, "refusal": None},
                        "logprobs": None,
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": reply.prompt_tokens,
                    "completion_tokens": reply.completion_tokens,
                    "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                },
            }
        )
