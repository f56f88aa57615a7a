"""A review server of a comparison, running in a thread of the test process, and a client of its API that
writes as its page does (same origin, the CSRF token of the page's ``<meta name="csrf-token">``)."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from tests.helpers.loopback import Answer, call

if TYPE_CHECKING:
    from rag_compare.compute.comparison import Comparison

__all__ = ["VERDICT", "ReviewClient", "case_path", "review_process", "reviewing"]

VERDICT: dict[str, Any] = {
    "reviewer": "ana",
    "side": "candidate",
    "agree": False,
    "status": "unchanged",
    "labels": {"answer_correct": "yes", "grounded": None, "abstention_correct": None, "retrieval_ok": "no"},
    "comment": "The limit moved with the new policy.",
}
"""A verdict's body as the page sends it."""
_URL = re.compile(r"http://\S+/(?:\?token=[0-9a-f]+)?")
_CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)"')


def case_path(case_id: str) -> str:
    """``/api/cases/{case_id}`` with the id URL-encoded as one segment."""
    return f"/api/cases/{quote(case_id, safe='')}"


@dataclass(frozen=True)
class ReviewClient:
    """Requests to the server at ``url`` (``http://host:port``), writes with ``csrf_token`` and a same-origin
    ``Origin``, each with ``token`` as a bearer token when given."""

    url: str
    csrf_token: str
    token: str | None = None

    @classmethod
    def of(cls, url: str, token: str | None = None) -> ReviewClient:
        """The client of the server whose page (``/``) is at ``url``; the CSRF token read from that page."""
        where = urlsplit(url)
        base = f"{where.scheme}://{where.netloc}"
        page = call("GET", url, headers=_bearer(token))
        assert page.status == 200, page.body[:300]
        found = _CSRF.search(page.body.decode())
        assert found is not None, "the page holds no csrf-token"
        return cls(base, found.group(1), token)

    def get(self, path: str) -> Answer:
        return call("GET", f"{self.url}{path}", headers=_bearer(self.token))

    def get_json(self, path: str) -> Any:
        answer = self.get(path)
        assert answer.status == 200, (answer.status, answer.body[:500])
        return answer.json()

    def post(self, path: str, body: object, **headers: str) -> Answer:
        sent = {"Origin": self.url, "X-CSRF-Token": self.csrf_token, **_bearer(self.token), **headers}
        if isinstance(body, bytes):
            return call("POST", f"{self.url}{path}", body=body, headers={"Content-Type": "application/json", **sent})
        return call("POST", f"{self.url}{path}", json_body=body, headers=sent)

    def verdict(self, case_id: str, **changes: Any) -> Answer:
        """Post ``VERDICT`` with ``changes`` on ``case_id``."""
        return self.post(f"{case_path(case_id)}/verdicts", {**VERDICT, **changes})


def _bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


@contextmanager
def reviewing(comparison: Comparison, db: Path, **options: Any) -> Iterator[ReviewClient]:
    """A review server of ``comparison`` into ``db`` (``options``: ``ReviewServer.bind``'s), running in a
    thread while the block runs; yields its client."""
    from rag_compare.serve.server import ReviewServer

    server = ReviewServer.bind(comparison, db, **{"reviewer": "tester", **options})
    server.start()
    try:
        token = urlsplit(server.url).query.removeprefix("token=") or None
        yield ReviewClient.of(server.url, token)
    finally:
        server.stop()


@contextmanager
def review_process(
    baseline: Path, candidate: Path, db: Path, *options: str
) -> Iterator[tuple[subprocess.Popen[str], ReviewClient]]:
    """``rag-compare review BASELINE CANDIDATE --db DB --no-browser OPTIONS`` in a process of its own, once it
    has printed its URL; yields the process and a client. The process is killed after the block if still
    running."""
    command = [sys.executable, "-m", "rag_compare", "review", str(baseline), str(candidate), "--db", str(db)]
    process = subprocess.Popen(
        [*command, "--no-browser", *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        url = _printed_url(process)
        yield process, ReviewClient.of(url)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)


def _printed_url(process: subprocess.Popen[str], timeout: float = 120.0) -> str:
    """The URL the process printed on its first line of stdout (failing the test when it ends first)."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline() if process.stdout else ""))
    reader.start()
    reader.join(timeout)
    found = _URL.search(lines[0]) if lines else None
    if found is None:
        process.kill()
        _, stderr = process.communicate(timeout=30)
        raise AssertionError(f"no URL printed: {lines!r}; stderr: {stderr[-2000:]}")
    return found.group(0)
