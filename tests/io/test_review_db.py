"""The review database: verdicts kept append-only with their history, per comparison; two writers lose nothing, a
killed writer leaves every committed verdict; older databases migrated, newer and foreign files refused."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import polars as pl
import pytest

from rag_compare.core.errors import ReviewError
from rag_compare.io.review_db import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION, ReviewDatabase
from rag_compare.io.verdicts import LABELS, NewVerdict, Verdict
from tests.helpers.data import ROOT

BASELINE = "b" * 64
CANDIDATE = "c" * 64
RUNS = {"baseline_fingerprint": BASELINE, "candidate_fingerprint": CANDIDATE}
WRITER = """
import sys
import time
from rag_compare.io.review_db import ReviewDatabase
from rag_compare.io.verdicts import NewVerdict
path, reviewer, count, pause = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
labels = {"answer_correct": "yes", "grounded": None, "abstention_correct": None, "retrieval_ok": "no"}
with ReviewDatabase.open(path) as database:
    print("ready", flush=True)
    sys.stdin.readline()
    for number in range(count):
        verdict = NewVerdict(reviewer, f"q{number % 20}@v1", "candidate", True, None, labels, str(number))
        stored = database.add(
            verdict, baseline_fingerprint="b" * 64, candidate_fingerprint="c" * 64, shown_status="regressed",
            shown_signals={"candidate_recall": 0.5},
        )
        print(stored.id, flush=True)
        time.sleep(pause)
"""
"""A process giving ``count`` verdicts as ``reviewer`` on 20 cases once told to go (a line on its input), printing
each id once ``add`` returned it, then pausing ``pause`` seconds."""


def verdict(case_id: str = "q1@v1", side: str = "candidate", reviewer: str = "ana", **labels: str) -> NewVerdict:
    return NewVerdict(reviewer, case_id, side, not labels, None if not labels else "unchanged", labels, "")


def add(database: ReviewDatabase, given: NewVerdict, runs: dict[str, str] = RUNS) -> Verdict:
    return database.add(given, **runs, shown_status="regressed", shown_signals={"candidate_recall": 0.5})


def writer(path: Path, reviewer: str, count: int, pause: float = 0.0) -> subprocess.Popen[str]:
    """The ``WRITER`` process, its database open, not yet writing."""
    command = [sys.executable, "-c", WRITER, str(path), reviewer, str(count), str(pause)]
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env={"PYTHONPATH": str(ROOT)}
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    return process


def go(process: subprocess.Popen[str]) -> None:
    """Tell a ``writer`` to start writing."""
    assert process.stdin is not None
    process.stdin.write("go\n")
    process.stdin.flush()


def test_a_verdict_is_stored_with_what_was_shown(tmp_path: Path) -> None:
    with ReviewDatabase.open(tmp_path / "reviews.sqlite") as database:
        stored = add(database, verdict(grounded="partly"))
        assert stored.id == 1
        assert stored.supersedes is None
        assert stored.to_dict() | {"created_at": None} == {
            "id": 1,
            "created_at": None,
            "reviewer": "ana",
            "case_id": "q1@v1",
            "side": "candidate",
            "baseline_fingerprint": BASELINE,
            "candidate_fingerprint": CANDIDATE,
            "shown_status": "regressed",
            "shown_signals": {"candidate_recall": 0.5},
            "agree": False,
            "status": "unchanged",
            "labels": {"answer_correct": None, "grounded": "partly", "abstention_correct": None, "retrieval_ok": None},
            "comment": "",
            "supersedes": None,
        }
        assert database.history("q1@v1", **RUNS) == [stored]


def test_the_time_comes_from_the_clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1800000000")
    with ReviewDatabase.open(tmp_path / "reviews.sqlite") as database:
        assert add(database, verdict()).created_at == "2027-01-15T08:00:00+00:00"


def test_a_newer_verdict_supersedes_the_latest_of_its_case_side_and_runs(tmp_path: Path) -> None:
    other_runs = {"baseline_fingerprint": BASELINE, "candidate_fingerprint": "d" * 64}
    with ReviewDatabase.open(tmp_path / "reviews.sqlite") as database:
        first = add(database, verdict())
        baseline_side = add(database, verdict(side="baseline"))
        elsewhere = add(database, verdict(), other_runs)
        other_case = add(database, verdict("q2@v1"))
        second = add(database, verdict(reviewer="bo", answer_correct="no"))
        assert [baseline_side.supersedes, elsewhere.supersedes, other_case.supersedes] == [None, None, None]
        assert second.supersedes == first.id
        assert [item.id for item in database.history("q1@v1", **RUNS)] == [second.id, baseline_side.id, first.id]
        assert database.others("q1@v1", **RUNS) == [elsewhere]
        assert database.others("q1@v1", **other_runs) == [second, baseline_side, first]
        assert database.reviewed_case_ids(**RUNS) == {"q1@v1", "q2@v1"}
        assert database.reviewed_case_ids(baseline_fingerprint=CANDIDATE, candidate_fingerprint=BASELINE) == set()


def test_latest_is_one_row_per_case_and_side(tmp_path: Path) -> None:
    with ReviewDatabase.open(tmp_path / "reviews.sqlite") as database:
        add(database, verdict(answer_correct="yes"))
        add(database, verdict(side="baseline"))
        newest = add(database, verdict(reviewer="bo", answer_correct="no", grounded="no"))
        add(database, verdict("q2@v1"))
        add(database, verdict("q2@v1"), {"baseline_fingerprint": BASELINE, "candidate_fingerprint": "d" * 64})
        latest = database.latest(**RUNS)
        empty = database.latest(baseline_fingerprint="e" * 64, candidate_fingerprint="f" * 64)
    assert latest.select("case_id", "side", "id").rows() == [
        ("q1@v1", "baseline", 2),
        ("q1@v1", "candidate", 3),
        ("q2@v1", "candidate", 4),
    ]
    row = latest.row(1, named=True)
    assert {name: row[name] for name in LABELS} == newest.labels
    assert (row["reviewer"], row["agree"], row["status"], row["supersedes"]) == ("bo", False, "unchanged", 1)
    assert latest.schema["agree"] == pl.Boolean
    assert empty.is_empty()
    assert empty.schema == latest.schema


def test_disagreeing_with_the_status_shown_by_giving_it_again_is_refused(tmp_path: Path) -> None:
    with (
        ReviewDatabase.open(tmp_path / "reviews.sqlite") as database,
        pytest.raises(ReviewError, match="`status` is unchanged, the status shown: agree with it"),
    ):
        database.add(verdict(grounded="no"), **RUNS, shown_status="unchanged", shown_signals={})
    with ReviewDatabase.open(tmp_path / "reviews.sqlite") as database:
        assert database.reviewed_case_ids(**RUNS) == set()


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("UPDATE verdicts SET comment = 'changed'", "a verdict is never updated: add a newer one"),
        ("DELETE FROM verdicts", "a verdict is never deleted: add a newer one"),
    ],
)
def test_a_verdict_is_never_changed_or_deleted(tmp_path: Path, statement: str, message: str) -> None:
    path = tmp_path / "reviews.sqlite"
    with ReviewDatabase.open(path) as database:
        stored = add(database, verdict())
    with sqlite3.connect(path) as connection, pytest.raises(sqlite3.IntegrityError, match=message):
        connection.execute(statement)
    with ReviewDatabase.open(path) as database:
        assert database.history("q1@v1", **RUNS) == [stored]


def test_the_file_is_in_wal_mode_with_its_identity(tmp_path: Path) -> None:
    path = tmp_path / "reviews.sqlite"
    ReviewDatabase.open(path).close()
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert connection.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def test_an_empty_database_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "reviews.sqlite"
    sqlite3.connect(path).close()
    path.write_bytes(b"")
    with ReviewDatabase.open(path) as database:
        assert add(database, verdict()).id == 1


def test_an_older_database_is_migrated_keeping_its_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "reviews.sqlite"
    connection = sqlite3.connect(path, isolation_level=None)
    connection.executescript(MIGRATIONS[0])
    connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    connection.execute("PRAGMA user_version = 1")
    connection.execute(
        "INSERT INTO verdicts (created_at, reviewer, case_id, side, baseline_fingerprint, candidate_fingerprint, "
        "shown_status, shown_signals, agree, status, grounded, comment) "
        f"VALUES ('2026-01-01T00:00:00+00:00', 'ana', 'q1@v1', 'candidate', '{BASELINE}', '{CANDIDATE}', "
        "'regressed', '{}', 1, NULL, 'yes', 'kept')"
    )
    connection.close()
    with ReviewDatabase.open(path) as database:
        [kept] = database.history("q1@v1", **RUNS)
        assert (kept.id, kept.comment, kept.labels["grounded"], kept.agree) == (1, "kept", "yes", True)
        assert add(database, verdict()).supersedes == 1
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        indexes = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert {"verdicts_of_runs", "verdicts_of_case"} <= indexes


def test_a_database_of_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "reviews.sqlite"
    ReviewDatabase.open(path).close()
    with sqlite3.connect(path) as connection:
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(ReviewError, match=f"schema version {SCHEMA_VERSION + 1}; this one reads up to "):
        ReviewDatabase.open(path)


@pytest.mark.parametrize("statement", ["CREATE TABLE notes (text TEXT)", "PRAGMA user_version = 1"])
def test_another_sqlite_file_is_refused_and_left_alone(tmp_path: Path, statement: str) -> None:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute(statement)
    before = path.read_bytes()
    with pytest.raises(ReviewError, match="is an SQLite database, but not a review database; it was left as it is"):
        ReviewDatabase.open(path)
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "content", [b"case_id,answer\nq1,yes\n", b"\x00" * 4096, b"SQLite format 3\x00" + b"\xff" * 200]
)
def test_a_file_that_is_no_database_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "reviews.sqlite"
    path.write_bytes(content)
    with pytest.raises(ReviewError, match="is not a review database"):
        ReviewDatabase.open(path)
    assert path.read_bytes() == content


def test_a_folder_a_fifo_or_a_missing_database_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ReviewError, match="is a folder, not a review database"):
        ReviewDatabase.open(tmp_path)
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ReviewError, match=r"is a FIFO \(named pipe\), not a review database"):
        ReviewDatabase.open(tmp_path / "pipe")
    with pytest.raises(ReviewError, match=r"no such review database\. Give `db` the file"):
        ReviewDatabase.open(tmp_path / "missing.sqlite", create=False)
    assert not (tmp_path / "missing.sqlite").exists()
    with pytest.raises(ReviewError, match="cannot be opened as a review database"):
        ReviewDatabase.open(tmp_path / "no" / "reviews.sqlite")


def test_threads_sharing_a_database_lose_nothing(tmp_path: Path) -> None:
    with ReviewDatabase.open(tmp_path / "reviews.sqlite") as database:

        def give(reviewer: str) -> None:
            for number in range(100):
                add(database, verdict(f"q{number % 10}@v1", reviewer=reviewer))
                database.history(f"q{number % 10}@v1", **RUNS)

        threads = [threading.Thread(target=give, args=(f"r{number}",)) for number in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert_chains(database, 400)


def assert_chains(database: ReviewDatabase, count: int) -> None:
    """``count`` verdicts, each superseding the one before it on its case and side."""
    for case_id in database.reviewed_case_ids(**RUNS):
        history = database.history(case_id, **RUNS)
        assert [item.supersedes for item in history] == [item.id for item in history[1:]] + [None]
    assert sum(len(database.history(case_id, **RUNS)) for case_id in database.reviewed_case_ids(**RUNS)) == count


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "reviews.sqlite"
    writers = [writer(path, reviewer, 500, pause=0.001) for reviewer in ("ana", "bo")]  # paused: each writes a while
    for process in writers:
        go(process)
    outputs = [process.communicate(timeout=300)[0] for process in writers]
    assert [process.returncode for process in writers] == [0, 0]
    returned = [{int(line) for line in output.split()} for output in outputs]
    assert [len(ids) for ids in returned] == [500, 500]
    with ReviewDatabase.open(path) as database:
        history = [item for case in database.reviewed_case_ids(**RUNS) for item in database.history(case, **RUNS)]
        assert {item.id for item in history} == returned[0] | returned[1]
        assert {item.reviewer for item in history if item.id in returned[1]} == {"bo"}
        assert min(returned[1]) < max(returned[0])  # they wrote at once
        assert min(returned[0]) < max(returned[1])
        assert_chains(database, 1000)


def test_a_writer_killed_mid_write_leaves_every_committed_verdict(tmp_path: Path) -> None:
    path = tmp_path / "reviews.sqlite"
    process = writer(path, "ana", 100_000)
    assert process.stdout is not None
    go(process)
    returned = [int(process.stdout.readline()) for _ in range(300)]
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    with ReviewDatabase.open(path) as database:
        ids = {item.id for case in database.reviewed_case_ids(**RUNS) for item in database.history(case, **RUNS)}
        assert set(returned) <= ids
        assert add(database, verdict()).id > max(ids)
