"""What guards the review server: who may ask (the server's own host names; its token, off loopback), what may
write (a same-origin request in JSON carrying the session's CSRF token), and the headers every response carries.

Both are ASGI middleware around the Starlette app (``app.review_app``). A request refused here never reaches a
route, and its answer is JSON like every error's.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rag_compare.core.result import to_json

__all__ = [
    "API_POLICY",
    "MAX_BODY_BYTES",
    "RedactedJSONResponse",
    "RequestGuard",
    "SecurityHeaders",
    "error_response",
]

MAX_BODY_BYTES = 64 * 1024
"""The largest request body read; a larger one is answered 413 before more of it is read."""
API_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
"""The Content-Security-Policy of every response but the page (which sends its own)."""
_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
_TOO_LARGE = f"the body is over {MAX_BODY_BYTES // 1024} KiB: a verdict is a few fields and a comment."
_READS = frozenset({"GET", "HEAD"})
_JSON = "application/json"


class RedactedJSONResponse(JSONResponse):
    """JSON as every output of rag-compare is written (``core.result.to_json``): strict (a number that is not
    finite is null) and never holding a credential (every text redacted)."""

    def render(self, content: Any) -> bytes:
        return to_json(content).encode("utf-8")


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> RedactedJSONResponse:
    """The answer to a request that failed: ``{"error": message}`` with the 4xx (or 500) ``status``."""
    return RedactedJSONResponse({"error": message}, status_code=status, headers=headers)


@dataclass(frozen=True)
class _Rules:
    tokens: tuple[str, ...]
    csrf_token: str
    hosts: frozenset[str] | None


class RequestGuard:
    """Refuse, before any route: a ``Host`` that is not one of ``hosts`` (``None``: any; a loopback server
    takes only loopback names, so a page of another site that a DNS name points here reads nothing); without
    one of ``tokens`` (none: none needed) as ``Authorization: Bearer``, or as ``?token=`` on the page's GET;
    and a write (any method but GET and HEAD) from another origin than the server's own, without the session's
    ``csrf_token`` as ``X-CSRF-Token``, or whose body is not JSON; and a body over ``MAX_BODY_BYTES`` (413):
    at once when its ``Content-Length`` says so, else when a route reads past the limit."""

    def __init__(self, app: ASGIApp, *, tokens: Iterable[str], csrf_token: str, hosts: Iterable[str] | None) -> None:
        self.app = app
        self.rules = _Rules(tuple(tokens), csrf_token, None if hosts is None else frozenset(h.lower() for h in hosts))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            request = Request(scope)
            for check in (_check_host, _check_token, _check_write, _check_length):
                refusal = check(request, self.rules)
                if refusal is not None:
                    await refusal(scope, receive, send)
                    return
            receive = _limited(receive)
        await self.app(scope, receive, send)


def _check_host(request: Request, rules: _Rules) -> JSONResponse | None:
    if rules.hosts is None:
        return None
    host = _host_name(request.headers.get("host", ""))
    if host in rules.hosts:
        return None
    return error_response(
        400, f"this server answers to {', '.join(sorted(rules.hosts))}, not to the host name {host or '(none)'}."
    )


def _host_name(host: str) -> str:
    try:
        return (urlsplit(f"//{host}").hostname or "").lower()
    except ValueError:  # a port that is no number, an unclosed bracket
        return ""


def _check_token(request: Request, rules: _Rules) -> JSONResponse | None:
    if not rules.tokens:
        return None
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        given = request.query_params.get("token", "") if request.method in _READS and request.url.path == "/" else ""
    if given and any(_same(given.strip(), token) for token in rules.tokens):
        return None
    return error_response(
        401,
        "this server needs its token: open the URL it printed (with ?token=), or send `Authorization: Bearer <token>`.",
        {"WWW-Authenticate": "Bearer"},
    )


def _check_write(request: Request, rules: _Rules) -> JSONResponse | None:
    if request.method in _READS:
        return None
    own = f"{request.url.scheme}://{request.headers.get('host', '')}".lower()
    origin = request.headers.get("origin", "").lower()
    if origin != own:
        said = f"from {origin}" if origin else "without an `Origin` header"
        return error_response(403, f"a write must come from {own}, this came {said}.")
    if not _same(request.headers.get("x-csrf-token", ""), rules.csrf_token):
        return error_response(
            403, "a write needs this session's CSRF token as `X-CSRF-Token` (the page's <meta name=\"csrf-token\">)."
        )
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != _JSON:
        return error_response(415, f"a write's body is JSON: send `Content-Type: {_JSON}`.")
    return None


def _check_length(request: Request, rules: _Rules) -> JSONResponse | None:
    length = request.headers.get("content-length", "")
    return _too_large() if length.isdigit() and int(length) > MAX_BODY_BYTES else None


def _too_large() -> JSONResponse:
    return error_response(413, _TOO_LARGE)


def _limited(receive: Receive) -> Receive:
    """``receive``, raising a 413 once the body it has given is over ``MAX_BODY_BYTES`` (a body sent in chunks)."""
    read = 0

    async def receive_within_limit() -> Message:
        nonlocal read
        message = await receive()
        read += len(message.get("body", b""))
        if read > MAX_BODY_BYTES:
            raise HTTPException(413, _TOO_LARGE)
        return message

    return receive_within_limit


def _same(given: str, expected: str) -> bool:
    """Whether ``given`` is ``expected``, compared in a time that does not tell how much of it was right."""
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8"))


class SecurityHeaders:
    """Add to every response the headers that keep it inert elsewhere: no sniffing, no referrer, no caching, no
    framing, and ``API_POLICY`` as its Content-Security-Policy unless the response set one (the page does)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in {**_HEADERS, "Content-Security-Policy": API_POLICY}.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)
