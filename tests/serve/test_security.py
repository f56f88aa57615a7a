"""The review server's guard and headers, over HTTP on loopback, around a small app of their own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from rag_compare.serve.security import (
    API_POLICY,
    MAX_BODY_BYTES,
    RequestGuard,
    SecurityHeaders,
    error_response,
)
from rag_compare.serve.server import LOOPBACK_HOSTS, is_loopback
from tests.helpers.loopback import call, call_raw, served

TOKEN, CSRF = "t" * 40, "c" * 40
PAGE_POLICY = "default-src 'none'; script-src 'sha256-x'"


async def _page(request: Request) -> Response:
    return HTMLResponse("<p>page</p>", headers={"Content-Security-Policy": PAGE_POLICY})


async def _echo(request: Request) -> Response:
    body = await request.body()
    return JSONResponse({"method": request.method, "bytes": len(body)}, status_code=201)


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    return error_response(error.status_code, error.detail)


def _app(token: str | None, hosts: frozenset[str] | None = LOOPBACK_HOSTS) -> Starlette:
    return Starlette(
        routes=[Route("/", _page), Route("/api/echo", _echo, methods=["GET", "POST", "DELETE"])],
        middleware=[
            Middleware(SecurityHeaders),
            Middleware(RequestGuard, tokens=[token] if token else [], csrf_token=CSRF, hosts=hosts),
        ],
        exception_handlers={HTTPException: _http_error},
    )


@pytest.fixture(scope="module")
def open_server() -> Iterator[str]:
    with served(_app(None)) as url:
        yield url


@pytest.fixture(scope="module")
def token_server() -> Iterator[str]:
    with served(_app(TOKEN, hosts=None)) as url:
        yield url


def _write_headers(url: str, **extra: str) -> dict[str, str]:
    return {"Origin": url, "X-CSRF-Token": CSRF, **extra}


def test_a_same_origin_write_with_the_csrf_token_gets_through(open_server: str) -> None:
    answer = call("POST", f"{open_server}/api/echo", json_body={"a": 1}, headers=_write_headers(open_server))
    assert answer.status == 201
    assert answer.json() == {"method": "POST", "bytes": 8}


@pytest.mark.parametrize(
    ("origin", "said"),
    [
        (None, "without an `Origin` header"),
        ("http://evil.example", "from http://evil.example"),
        ("null", "from null"),
        ("https://127.0.0.1", "from https://127.0.0.1"),
    ],
)
def test_a_write_from_another_origin_is_refused(open_server: str, origin: str | None, said: str) -> None:
    headers = {"X-CSRF-Token": CSRF} | ({"Origin": origin} if origin else {})
    answer = call("POST", f"{open_server}/api/echo", json_body={}, headers=headers)
    assert answer.status == 403
    assert answer.error == f"a write must come from {open_server}, this came {said}."


@pytest.mark.parametrize("csrf", [None, "", "c" * 39, "c" * 41, "é" * 40])
def test_a_write_without_the_sessions_csrf_token_is_refused(open_server: str, csrf: str | None) -> None:
    headers = {"Origin": open_server} | ({"X-CSRF-Token": csrf} if csrf is not None else {})
    answer = call(
        "DELETE", f"{open_server}/api/echo", body=b"{}", headers=headers | {"Content-Type": "application/json"}
    )
    assert answer.status == 403
    assert "CSRF token as `X-CSRF-Token`" in answer.error


@pytest.mark.parametrize(
    "content_type", [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]
)
def test_a_write_that_is_not_json_is_refused(open_server: str, content_type: str | None) -> None:
    headers = _write_headers(open_server) | ({"Content-Type": content_type} if content_type else {})
    answer = call("POST", f"{open_server}/api/echo", body=b"a=1", headers=headers)
    assert answer.status == 415
    assert answer.error == "a write's body is JSON: send `Content-Type: application/json`."


def test_json_with_a_charset_is_json(open_server: str) -> None:
    headers = _write_headers(open_server, **{"Content-Type": "Application/JSON; charset=utf-8"})
    assert call("POST", f"{open_server}/api/echo", body=b"{}", headers=headers).status == 201


def test_reads_need_neither_origin_nor_csrf_token(open_server: str) -> None:
    answer = call("GET", f"{open_server}/api/echo")
    assert answer.status == 201
    assert answer.json() == {"method": "GET", "bytes": 0}


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "127.0.0.1.evil.example", "", "[::1"])
def test_a_loopback_server_answers_to_loopback_host_names_only(open_server: str, host: str) -> None:
    """A page of another site whose DNS name is pointed at 127.0.0.1 reads nothing (DNS rebinding)."""
    answer = call("GET", f"{open_server}/api/echo", headers={"Host": host})
    assert answer.status == 400
    assert answer.error.startswith("this server answers to 127.0.0.1, ::1, localhost, not to the host name")


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST:1234", "127.0.0.1:9", "[::1]:80"])
def test_every_loopback_name_is_answered(open_server: str, host: str) -> None:
    assert call("GET", f"{open_server}/api/echo", headers={"Host": host}).status == 201


def _head(url: str, length: str, **headers: str) -> bytes:
    lines = [
        "POST /api/echo HTTP/1.1",
        f"Host: {url.removeprefix('http://')}",
        f"Origin: {url}",
        f"X-CSRF-Token: {CSRF}",
    ]
    lines += ["Content-Type: application/json", length, *(f"{name}: {value}" for name, value in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_a_body_said_to_be_over_the_limit_is_refused_before_any_of_it_is_read(open_server: str) -> None:
    answer = call_raw(open_server, _head(open_server, f"Content-Length: {10 << 20}"))  # and no body sent
    assert answer.status == 413
    assert answer.error == "the body is over 64 KiB: a verdict is a few fields and a comment."


def test_a_body_sent_in_chunks_is_refused_once_it_is_over_the_limit(open_server: str) -> None:
    chunk = b"%x\r\n%s\r\n" % (1 << 12, b"x" * (1 << 12))
    answer = call_raw(open_server, _head(open_server, "Transfer-Encoding: chunked"), [chunk] * 2560 + [b"0\r\n\r\n"])
    assert answer.status == 413
    assert answer.headers["Content-Security-Policy"] == API_POLICY
    assert answer.error == "the body is over 64 KiB: a verdict is a few fields and a comment."


def test_a_body_of_10_mb_is_refused(open_server: str) -> None:
    answer = call_raw(open_server, _head(open_server, f"Content-Length: {10 << 20}"), [b"x" * (1 << 20)] * 10)
    assert answer.status == 413


def test_a_body_at_the_limit_is_read(open_server: str) -> None:
    headers = _write_headers(open_server, **{"Content-Type": "application/json"})
    answer = call("POST", f"{open_server}/api/echo", body=b"x" * MAX_BODY_BYTES, headers=headers)
    assert answer.status == 201
    assert answer.json()["bytes"] == MAX_BODY_BYTES


@pytest.mark.parametrize("path", ["/", "/api/echo", "/nowhere"])
def test_every_response_carries_the_security_headers(open_server: str, path: str) -> None:
    headers = call("GET", f"{open_server}{path}").headers
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"
    assert headers["Cache-Control"] == "no-store"
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["Cross-Origin-Resource-Policy"] == "same-origin"
    expected = PAGE_POLICY if path == "/" else API_POLICY
    assert headers.get_all("Content-Security-Policy") == [expected]


def test_a_refused_request_carries_them_too(open_server: str) -> None:
    headers = call("POST", f"{open_server}/api/echo", json_body={}).headers
    assert headers["Content-Security-Policy"] == API_POLICY
    assert headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize("path", ["/", "/api/echo", "/nowhere"])
def test_without_the_token_nothing_is_answered(token_server: str, path: str) -> None:
    answer = call("GET", f"{token_server}{path}")
    assert answer.status == 401
    assert answer.headers["WWW-Authenticate"] == "Bearer"
    assert "needs its token" in answer.error


@pytest.mark.parametrize(
    "authorization", ["Bearer " + "t" * 39, "Bearer " + "t" * 41, "Basic " + TOKEN, TOKEN, "Bearer", "Bearer é"]
)
def test_a_wrong_token_is_refused(token_server: str, authorization: str) -> None:
    answer = call("GET", f"{token_server}/api/echo", headers={"Authorization": authorization})
    assert answer.status == 401


@pytest.mark.parametrize("authorization", [f"Bearer {TOKEN}", f"bearer {TOKEN}", f"BEARER  {TOKEN} "])
def test_the_token_as_a_bearer_opens_every_route(token_server: str, authorization: str) -> None:
    assert call("GET", f"{token_server}/api/echo", headers={"Authorization": authorization}).status == 201
    headers = _write_headers(token_server, Authorization=authorization)
    assert call("POST", f"{token_server}/api/echo", json_body={}, headers=headers).status == 201


def test_the_token_in_the_query_opens_the_page_only(token_server: str) -> None:
    assert call("GET", f"{token_server}/?token={TOKEN}").status == 200
    assert call("GET", f"{token_server}/?token={TOKEN[:-1]}").status == 401
    assert call("GET", f"{token_server}/api/echo?token={TOKEN}").status == 401
    headers = _write_headers(token_server)
    assert call("POST", f"{token_server}/?token={TOKEN}", json_body={}, headers=headers).status == 401


def test_a_server_off_loopback_answers_to_any_host_name_with_its_token(token_server: str) -> None:
    headers = {"Host": "review.example:8080", "Authorization": f"Bearer {TOKEN}"}
    assert call("GET", f"{token_server}/api/echo", headers=headers).status == 201


def test_the_token_is_checked_before_the_body_is_read(token_server: str) -> None:
    answer = call_raw(token_server, _head(token_server, f"Content-Length: {10 << 20}"))
    assert answer.status == 401


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("[::1]", True),
        ("LocalHost", True),
        ("0.0.0.0", False),
        ("192.168.1.5", False),
        ("127.0.0.2", False),
    ],
)
def test_which_hosts_are_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
