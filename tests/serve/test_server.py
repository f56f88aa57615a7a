"""Running the review server: the address and port it binds, the token it needs, and the one server a
Python process runs in the background (``Comparison.review``)."""

from __future__ import annotations

import re
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from rag_compare import Comparison, compare
from rag_compare.core.errors import ReviewError
from rag_compare.serve.server import ReviewServer, ReviewUrl, default_reviewer, review_token
from tests.helpers.data import HANDMADE_RUNS
from tests.helpers.loopback import call
from tests.helpers.review import VERDICT, ReviewClient, case_path, reviewing

TOKEN = "0123456789abcdef0123"


@pytest.fixture(scope="module")
def handmade() -> Comparison:
    return compare(HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "reviews.sqlite"


@pytest.fixture(autouse=True)
def no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAG_COMPARE_REVIEW_TOKEN", raising=False)


@pytest.fixture
def stopped() -> Iterator[list[ReviewUrl]]:
    """URLs of background servers, stopped after the test."""
    urls: list[ReviewUrl] = []
    yield urls
    for url in urls:
        url.stop()


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "[::1]", "localhost", "LOCALHOST"])
def test_loopback_needs_no_token(host: str) -> None:
    assert review_token(host, {}) == (None, False)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "127.0.0.2", "review.example"])
def test_any_other_host_gets_a_new_token_to_show(host: str) -> None:
    token, shown = review_token(host, {})
    assert shown is True
    assert token is not None
    assert len(token) == 64
    assert set(token) <= set("0123456789abcdef")
    assert review_token(host, {})[0] != token


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_the_token_of_the_environment_is_needed_everywhere_and_never_shown(host: str) -> None:
    assert review_token(host, {"RAG_COMPARE_REVIEW_TOKEN": f" {TOKEN} "}) == (TOKEN, False)


def test_a_short_token_of_the_environment_is_refused() -> None:
    with pytest.raises(ReviewError, match="RAG_COMPARE_REVIEW_TOKEN holds 5 characters: a token needs at least 16"):
        review_token("127.0.0.1", {"RAG_COMPARE_REVIEW_TOKEN": "hunter"[:5]})


@pytest.mark.parametrize(
    "token", ["0123456789 abcdef", "0123456789abcdéf", "0123456789abcdef&x=1", "0123456789/abcdef"]
)
def test_a_token_a_url_or_header_cannot_carry_is_refused(token: str) -> None:
    with pytest.raises(ReviewError, match="holds characters a URL or a header cannot carry"):
        review_token("127.0.0.1", {"RAG_COMPARE_REVIEW_TOKEN": token})


def test_the_default_reviewer_is_the_login_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGNAME", "ana")
    assert default_reviewer() == "ana"


def test_port_zero_binds_a_free_port_and_the_url_says_which(handmade: Comparison, db: Path) -> None:
    server = ReviewServer.bind(handmade, db, reviewer=None)
    server.start()
    try:
        where = urlsplit(server.url)
        assert (where.scheme, where.hostname, where.path, where.query) == ("http", "127.0.0.1", "/", "")
        assert where.port == server.listener.bound.getsockname()[1] != 0
        assert server.shown_url == server.url
        assert call("GET", f"{server.url}api/progress").status == 200
    finally:
        server.stop()
    assert db.is_file()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", where.port), timeout=5).close()


def test_a_port_in_use_is_refused_with_a_message(handmade: Comparison, db: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(ReviewError, match=rf"cannot listen on 127.0.0.1 port {port}: .*Give another `port`"):
            ReviewServer.bind(handmade, db, port=port, reviewer=None)
    assert not db.exists()


def test_an_ipv6_loopback_url_has_brackets(handmade: Comparison, db: Path) -> None:
    if not socket.has_ipv6:
        pytest.fail("this machine has no IPv6: the test needs ::1")
    with reviewing(handmade, db, host="::1") as client:
        assert client.url.startswith("http://[::1]:")
        assert client.get_json("/api/progress")["reviewed"] == 0


def test_a_server_off_loopback_needs_its_token_on_every_request(handmade: Comparison, db: Path) -> None:
    """127.0.0.2 reaches this machine only, but is no loopback name: as for any other address, a token."""
    server = ReviewServer.bind(handmade, db, host="127.0.0.2", reviewer=None)
    server.start()
    try:
        assert server.shown_url == server.url
        token = urlsplit(server.url).query.removeprefix("token=")
        assert len(token) == 64
        base = server.url.split("?")[0]
        assert call("GET", base).status == 401
        assert call("GET", f"{base}api/progress").status == 401
        assert call("GET", server.url).status == 200
        client = ReviewClient.of(server.url, token)
        assert client.get_json("/api/progress")["reviewed"] == 0
        assert client.verdict("hotel-approval@2026-01").status == 201
        assert ReviewClient(client.url, client.csrf_token).verdict("hotel-approval@2026-01").status == 401
    finally:
        server.stop()


def test_a_token_of_the_environment_is_not_in_the_shown_url(
    handmade: Comparison, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAG_COMPARE_REVIEW_TOKEN", TOKEN)
    server = ReviewServer.bind(handmade, db, reviewer=None)
    server.start()
    try:
        assert server.url == f"{server.shown_url}?token={TOKEN}"
        assert call("GET", server.shown_url).status == 401
        page = call("GET", server.url).body.decode()
        assert TOKEN not in page  # it would be redacted there: the page sends a token of its own
        page_token = re.search(r'"token":"([0-9a-f]{64})"', page)
        assert page_token is not None
        assert ReviewClient.of(server.url, TOKEN).get_json("/api/progress")["reviewed"] == 0
        assert ReviewClient.of(server.url, page_token.group(1)).get_json("/api/progress")["reviewed"] == 0
    finally:
        server.stop()


def test_review_serves_from_a_thread_and_returns_the_url(
    handmade: Comparison, db: Path, stopped: list[ReviewUrl]
) -> None:
    url = handmade.review(db, reviewer="ana")
    stopped.append(url)
    assert isinstance(url, str)
    client = ReviewClient.of(url)
    assert client.get_json("/api/session")["reviewer"] == "ana"
    unsigned = {key: value for key, value in VERDICT.items() if key != "reviewer"}
    assert client.post(f"{case_path('hotel-approval@2026-01')}/verdicts", unsigned).json()["reviewer"] == "ana"


def test_a_second_review_asking_the_same_reuses_the_server(
    handmade: Comparison, db: Path, stopped: list[ReviewUrl]
) -> None:
    first = handmade.review(db, reviewer="ana")
    stopped.append(first)
    assert handmade.review(db, reviewer="ana") == first
    assert handmade.review(str(db), reviewer="ana", port=urlsplit(first).port or 0) == first


def test_a_second_review_asking_otherwise_stops_the_first(
    handmade: Comparison, db: Path, tmp_path: Path, stopped: list[ReviewUrl]
) -> None:
    first = handmade.review(db, reviewer="ana")
    second = handmade.review(tmp_path / "other.sqlite", reviewer="ana")
    stopped.extend([first, second])
    assert second != first
    assert call("GET", f"{second}api/progress").status == 200
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", urlsplit(first).port or 0), timeout=5).close()


def test_stop_stops_the_background_server(handmade: Comparison, db: Path) -> None:
    url = handmade.review(db)
    url.stop()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", urlsplit(url).port or 0), timeout=5).close()
    restarted = handmade.review(db)
    try:
        assert call("GET", f"{restarted}api/progress").status == 200
    finally:
        restarted.stop()


def test_without_the_extra_review_says_how_to_install_it(
    handmade: Comparison, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    with pytest.raises(
        ReviewError,
        match=r"needs Starlette and uvicorn, and uvicorn is not installed: pip install 'rag-compare\[review\]'",
    ):
        handmade.review(db)
    assert not db.exists()
