"""``rag-compare review``: what it refuses before serving, and the real command in a process of its own: its
URL, how it stops, and its verdicts kept through two writers at once and a kill -9."""

from __future__ import annotations

import signal
import socket
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.helpers.data import HANDMADE_RUNS
from tests.helpers.review import ReviewClient, review_process

BASELINE, CANDIDATE = HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow"
CASE = "hotel-approval@2026-01"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "reviews.sqlite"


def test_review_is_a_command_with_the_comparisons_options(cli: Callable[..., Result]) -> None:
    result = cli("review", "--help")
    assert result.exit_code == 0
    for flag in ("--db", "--reviewer", "--host", "--port", "--no-browser", "--corpus", "--passages", "--pairs", "--k"):
        assert flag in result.output
    assert "review" in cli("--help").output


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ((), "Missing option '--db'"),
        (("--db", "missing/reviews.sqlite"), "--db"),
        (("--db", "."), "--db"),
        (("--db", str(BASELINE)), "is the same file as BASELINE"),
        (("--db", "r.sqlite", "--reviewer", " "), "a reviewer's name is not blank"),
        (("--db", "r.sqlite", "--port", "70000"), "--port"),
        (("--db", "r.sqlite", "--buckets", "4"), "--buckets is for --engine streaming or ray"),
        (("--db", "r.sqlite", "--k", "0"), "--k"),
    ],
)
def test_bad_arguments_are_refused_before_serving(
    cli: Callable[..., Result], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arguments: tuple[str, ...], said: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("review", BASELINE, CANDIDATE, "--no-browser", *arguments)
    assert result.exit_code == 2
    assert said in result.output
    assert not (tmp_path / "r.sqlite").exists()


def test_a_port_in_use_is_refused_naming_the_flag(cli: Callable[..., Result], db: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = cli("review", BASELINE, CANDIDATE, "--db", db, "--no-browser", "--port", port)
    assert result.exit_code == 2
    assert f"cannot listen on 127.0.0.1 port {port}" in result.output
    assert "Give another --port (0: a free one) or --host." in result.output


def test_without_the_extra_it_says_how_to_install_it(
    cli: Callable[..., Result], db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "starlette", None)
    result = cli("review", BASELINE, CANDIDATE, "--db", db, "--no-browser")
    assert result.exit_code == 2
    assert "pip install 'rag-compare[review]'" in result.output
    assert not db.exists()


def test_the_command_prints_its_url_and_stops_on_ctrl_c(db: Path) -> None:
    with review_process(BASELINE, CANDIDATE, db, "--reviewer", "ana") as (process, client):
        assert client.get_json("/api/session")["reviewer"] == "ana"
        assert client.verdict(CASE).status == 201
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0
    assert f"stopped the review server; every verdict given is in {db}." in stderr
    assert "Traceback" not in stderr
    assert len(_stored(db)) == 1


def test_sigterm_ends_the_command_with_143(db: Path) -> None:
    with review_process(BASELINE, CANDIDATE, db) as (process, _):
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert process.returncode == 143


def _write(
    client: ReviewClient, count: int, reviewer: str, ids: list[int], stop: threading.Event | None = None
) -> None:
    """Post ``count`` verdicts signed ``reviewer``, alternating sides; the id of each that got a 201 to ``ids``."""
    for number in range(count):
        if stop is not None and stop.is_set():
            return
        try:
            answer = client.verdict(CASE, reviewer=reviewer, side=("baseline", "candidate")[number % 2])
        except OSError:  # the server was killed
            return
        if answer.status == 201:
            ids.append(answer.json()["id"])


def _stored(db: Path) -> dict[int, str]:
    """Every verdict in ``db`` by id (its reviewer), read straight from SQLite after checking the file."""
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return dict(connection.execute("SELECT id, reviewer FROM verdicts").fetchall())


def test_two_servers_writing_500_verdicts_each_at_once_lose_none(db: Path) -> None:
    with (
        review_process(BASELINE, CANDIDATE, db) as (_, first),
        review_process(BASELINE, CANDIDATE, db) as (_, second),
    ):
        ids: dict[str, list[int]] = {"ana": [], "ben": []}
        writers = [
            threading.Thread(target=_write, args=(client, 500, name, ids[name]))
            for client, name in ((first, "ana"), (second, "ben"))
        ]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join()
        assert len(ids["ana"]) == len(ids["ben"]) == 500
        history = first.get_json(f"/api/cases/{CASE}")["verdicts"]
    stored = _stored(db)
    assert len(stored) == 1000
    assert {stored[verdict_id] for verdict_id in ids["ana"]} == {"ana"}
    assert {stored[verdict_id] for verdict_id in ids["ben"]} == {"ben"}
    assert len(history) == 1000


def test_a_kill_9_during_writes_keeps_every_verdict_that_was_answered(db: Path) -> None:
    from rag_compare.io.review_db import ReviewDatabase

    with review_process(BASELINE, CANDIDATE, db) as (process, client):
        session = client.get_json("/api/session")
        ids: list[int] = []
        writer = threading.Thread(target=_write, args=(client, 100_000, "ana", ids))
        writer.start()
        deadline = time.monotonic() + 60
        while len(ids) < 200:
            assert time.monotonic() < deadline, "the writer wrote too little"
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        writer.join(30)
        process.wait(30)
    assert process.returncode == -signal.SIGKILL
    stored = _stored(db)
    assert set(ids) <= set(stored)
    assert len(stored) - len(ids) <= 1  # at most the one committed as the process died, before its answer
    runs = {f"{side}_fingerprint": session[side]["fingerprint"] for side in ("baseline", "candidate")}
    with ReviewDatabase.open(db) as database:
        assert set(ids) <= {verdict.id for verdict in database.history(CASE, **runs)}
