"""The review server's Starlette app: the page and the JSON API over one ``ReviewSession``.

    GET  /                                 the page, review controls on (and /favicon.ico: none)
    GET  /api/session                      the default reviewer and the two runs
    GET  /api/cases?status=…&q=…&sort=…    a page of cases (see ``ReviewSession.cases``)
    GET  /api/cases/{case_id}              a case's details and its verdicts
    POST /api/cases/{case_id}/verdicts     a verdict on it (201)
    GET  /api/queue/next?after=…           the next case to review
    GET  /api/progress                     the cases reviewed of those queued

A case id travels URL-encoded as one path segment (``/`` as ``%2F``); it is only ever looked up among the
comparison's cases. Every error is JSON, ``{"error": …}``, with its 4xx (or 500, never with a traceback).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote_to_bytes

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from rag_compare.core.errors import RagCompareError
from rag_compare.core.nesting import load_json
from rag_compare.serve.security import RedactedJSONResponse, RequestGuard, SecurityHeaders, error_response
from rag_compare.serve.session import ReviewSession, UnknownCaseError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rag_compare.compute.comparison import Comparison
    from rag_compare.io.review_db import ReviewDatabase

__all__ = ["review_app"]

_CASES = "/api/cases/"
Endpoint = Callable[[Request], Awaitable[Response]]


def review_app(
    comparison: Comparison,
    database: ReviewDatabase,
    *,
    reviewer: str,
    token: str | None,
    csrf_token: str,
    hosts: Iterable[str] | None,
    seed: int = 0,
) -> Starlette:
    """The app serving ``comparison``'s review into ``database``: ``reviewer`` signs verdicts whose body names
    none; ``token`` (``None``: none) is asked of every request, ``csrf_token`` of every write; a request for
    another host name than ``hosts`` (``None``: any) is refused (see ``security.RequestGuard``).

    The page is given a token of its own to send, made here and taken like ``token``: so the user's token (one
    from the environment is redacted wherever it would be written) never travels in the page."""
    from rag_compare.report.page import content_security_policy, served_page

    session = ReviewSession.open(comparison, database, reviewer=reviewer, seed=seed)
    page_token = None if token is None else secrets.token_hex(32)
    page = served_page(comparison, csrf_token=csrf_token, review=True, token=page_token, reviewer=reviewer)
    policy = f"{content_security_policy(served=True)}; frame-ancestors 'none'"  # which a <meta> cannot say
    routes = [
        Route("/", _page(page, policy), methods=["GET"]),
        Route("/favicon.ico", _no_icon, methods=["GET"]),
        Route("/api/session", _answer(lambda request: session.about()), methods=["GET"]),
        Route("/api/cases", _answer(lambda request: session.cases(_params(request))), methods=["GET"]),
        Route("/api/cases/{rest:path}", _case_routes(session), methods=["GET", "POST"]),
        Route("/api/queue/next", _answer(lambda request: session.next_case(_after(request))), methods=["GET"]),
        Route("/api/progress", _answer(lambda request: session.progress()), methods=["GET"]),
    ]
    middleware = [
        Middleware(SecurityHeaders),
        Middleware(RequestGuard, tokens=[t for t in (token, page_token) if t], csrf_token=csrf_token, hosts=hosts),
    ]
    return Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={HTTPException: _http_error, Exception: _server_error},
    )


def _page(page: str, policy: str) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        return HTMLResponse(page, headers={"Content-Security-Policy": policy})

    return endpoint


async def _no_icon(request: Request) -> Response:
    """The icon a browser asks for by itself: none (rather than a 404 in its console)."""
    return Response(status_code=204)


def _answer(answer: Callable[[Request], dict[str, Any]], status: int = 200) -> Endpoint:
    """An endpoint answering ``answer(request)`` as JSON, worked out in a thread (it reads frames and the
    database); a library error is the request's fault (400), an unknown case 404."""

    async def endpoint(request: Request) -> Response:
        try:
            return RedactedJSONResponse(await run_in_threadpool(answer, request), status_code=status)
        except UnknownCaseError as error:
            return error_response(404, str(error))
        except RagCompareError as error:
            return error_response(400, str(error))

    return endpoint


def _case_routes(session: ReviewSession) -> Endpoint:
    """``GET /api/cases/{case_id}`` and ``POST /api/cases/{case_id}/verdicts``, the case id read from the raw
    path so that one holding ``/`` (sent as ``%2F``) is one segment."""
    detail = _answer(lambda request: session.case(request.state.case_id))
    verdict = _answer(lambda request: session.add_verdict(request.state.case_id, request.state.body), status=201)

    async def endpoint(request: Request) -> Response:
        segment, *rest = _raw_segments(request)
        if rest not in ([], ["verdicts"]):
            raise HTTPException(404)
        wanted = "POST" if rest else "GET"
        if request.method != wanted:
            raise HTTPException(405, headers={"Allow": wanted})
        if rest:
            request.state.body = await _body(request)
        request.state.case_id = _case_id(segment)
        return await (verdict if rest else detail)(request)

    return endpoint


def _raw_segments(request: Request) -> list[str]:
    raw = request.scope.get("raw_path") or request.url.path.encode()
    return raw.decode("ascii", "replace")[len(_CASES) :].split("/")


def _case_id(segment: str) -> str:
    try:
        return unquote_to_bytes(segment).decode("utf-8")
    except UnicodeDecodeError:
        raise HTTPException(
            404, "there is no case of this id: a case id is URL-encoded UTF-8, and this is not."
        ) from None


async def _body(request: Request) -> object:
    """The request's JSON body: read (at most ``security.MAX_BODY_BYTES``, else 413) and parsed, or a 400 saying why
    not (not UTF-8, not JSON, nested too deep, a key twice, NaN or Infinity)."""
    data = await request.body()
    try:
        return load_json(data.decode("utf-8"), "the body", line=None, object_pairs_hook=_unique, parse_constant=_finite)
    except UnicodeDecodeError:
        raise HTTPException(400, "the body is not UTF-8 text: send the verdict as JSON in UTF-8.") from None
    except json.JSONDecodeError as error:
        raise HTTPException(400, f"the body is not JSON ({error.msg} at character {error.pos}).") from None
    except (RagCompareError, ValueError) as error:
        raise HTTPException(400, str(error)) from None


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    twice = sorted({key for key in keys if keys.count(key) > 1})
    if twice:
        raise ValueError(f"the body names {', '.join(map(repr, twice))} twice: name each field once.")
    return dict(pairs)


def _finite(constant: str) -> object:
    raise ValueError(f"the body holds {constant}, which is no JSON number: use null or a number.")


def _params(request: Request) -> dict[str, list[str]]:
    params: dict[str, list[str]] = {}
    for name, value in request.query_params.multi_items():
        params.setdefault(name, []).append(value)
    return params


def _after(request: Request) -> str | None:
    unknown = sorted(set(request.query_params) - {"after"})
    if unknown:
        raise HTTPException(400, f"/api/queue/next takes `after` only, not {', '.join(unknown)}.")
    return request.query_params.get("after") or None


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)  # the handler is registered for it alone
    message = error.detail
    if error.status_code == 404 and message == "Not Found":
        message = f"no route {request.url.path}: see the API's routes in the README."
    elif error.status_code == 405:
        message = f"{request.method} is not a method of {request.url.path}."
    return error_response(error.status_code, message, dict(error.headers or {}))


async def _server_error(request: Request, error: Exception) -> Response:
    """A bug's answer: no traceback (uvicorn logs it)."""
    return error_response(500, "the server failed on this request; its log says why.")
