"""The review database: every verdict people gave, in one SQLite file next to the runs.

One row per verdict, never updated or deleted (triggers abort both): a newer verdict on the same case, side and
runs supersedes the one before and both are kept. A database holds the verdicts of many comparisons; each row
names its two runs' fingerprints, so the verdicts of other runs are never counted for these.

The file is in WAL mode, each write one ``BEGIN IMMEDIATE`` transaction, so writers in several threads or
processes wait for each other (up to ``BUSY_TIMEOUT_MS``) and lose nothing, and a process killed mid-write
leaves every committed verdict. Its schema version is ``PRAGMA user_version``, raised by ``MIGRATIONS`` in
order; its ``PRAGMA application_id`` says it is a review database, so no other SQLite file is ever changed.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag_compare.core.clock import creation_time
from rag_compare.core.errors import ReviewError
from rag_compare.core.input_paths import check_input
from rag_compare.io.verdicts import LABELS, NewVerdict, Verdict, shown_values

if TYPE_CHECKING:
    import polars as pl

__all__ = ["APPLICATION_ID", "BUSY_TIMEOUT_MS", "MIGRATIONS", "SCHEMA_VERSION", "ReviewDatabase"]

APPLICATION_ID = 0x52414743
"""``PRAGMA application_id`` of a review database: "RAGC"."""
BUSY_TIMEOUT_MS = 30_000
"""How long a write waits for another writer before it is refused."""
_LABEL_COLUMNS = ", ".join(
    f"{name} TEXT CHECK ({name} IN ({', '.join(repr(v) for v in allowed)}))" for name, allowed in LABELS.items()
)
MIGRATIONS: tuple[str, ...] = (
    f"""
    CREATE TABLE verdicts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        created_at TEXT NOT NULL,
        reviewer TEXT NOT NULL,
        case_id TEXT NOT NULL,
        side TEXT NOT NULL CHECK (side IN ('baseline', 'candidate')),
        baseline_fingerprint TEXT NOT NULL,
        candidate_fingerprint TEXT NOT NULL,
        shown_status TEXT NOT NULL,
        shown_signals TEXT NOT NULL,
        agree INTEGER NOT NULL CHECK (agree IN (0, 1)),
        status TEXT,
        {_LABEL_COLUMNS},
        comment TEXT NOT NULL,
        supersedes INTEGER REFERENCES verdicts (id)
    );
    CREATE TRIGGER verdicts_never_updated BEFORE UPDATE ON verdicts
    BEGIN SELECT RAISE(ABORT, 'a verdict is never updated: add a newer one, which supersedes it'); END;
    CREATE TRIGGER verdicts_never_deleted BEFORE DELETE ON verdicts
    BEGIN SELECT RAISE(ABORT, 'a verdict is never deleted: add a newer one, which supersedes it'); END;
    """,
    """
    CREATE INDEX verdicts_of_runs ON verdicts (baseline_fingerprint, candidate_fingerprint, case_id, side, id);
    CREATE INDEX verdicts_of_case ON verdicts (case_id);
    """,
)
"""The schema, step by step: step ``n`` takes a database of version ``n`` to ``n + 1`` (1: the verdicts table
and the triggers keeping it append-only; 2: the indexes of a case's verdicts, by runs and across runs)."""
SCHEMA_VERSION = len(MIGRATIONS)
_COLUMNS = (
    "id, created_at, reviewer, case_id, side, baseline_fingerprint, candidate_fingerprint, shown_status, "
    f"shown_signals, agree, status, {', '.join(LABELS)}, comment, supersedes"
)
_INSERTED = _COLUMNS.removeprefix("id, ")
_BATCH_ROWS = 50_000
"""Rows of verdicts read at once: a large export holds its frame, never every row as Python values."""
_OF_RUNS = "baseline_fingerprint = ? AND candidate_fingerprint = ?"


class ReviewDatabase:
    """The verdicts in one SQLite file (see the module); usable from several threads at once."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._connection = connection
        self._lock = threading.Lock()
        self.path = path

    def __repr__(self) -> str:
        return f"<ReviewDatabase {self.path}>"

    @classmethod
    def open(cls, path: str | Path, *, create: bool = True) -> ReviewDatabase:
        """The review database at ``path``, made there (``create``) or brought to ``SCHEMA_VERSION`` when older;
        raises ``ReviewError`` for a file that is not one, one of a newer rag-compare, or one that cannot be
        opened."""
        path = Path(path)
        fix = "Give `db` the file the review server wrote" + (", or a new file's path." if create else ".")
        check_input(path, "review database", ReviewError, fix=fix, missing=create)
        try:
            connection = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as error:
            raise ReviewError(f"{path}: cannot be opened as a review database ({error}).") from None
        try:
            _prepare(connection, path)
        except BaseException:
            connection.close()
            raise
        return cls(connection, path)

    def add(
        self,
        verdict: NewVerdict,
        *,
        baseline_fingerprint: str,
        candidate_fingerprint: str,
        shown_status: str,
        shown_signals: Mapping[str, object],
    ) -> Verdict:
        """Store ``verdict``, given on the case of the two runs whose status and signals were ``shown_*``, in one
        transaction; it supersedes the latest verdict on the same case, side and runs. Returns it as stored."""
        if not verdict.agree and verdict.status == shown_status:
            raise ReviewError(
                f"`status` is {shown_status}, the status shown: agree with it (`agree` true), or give the status "
                "it should have."
            )
        runs = (baseline_fingerprint, candidate_fingerprint)
        signals = json.dumps(shown_values(shown_signals), ensure_ascii=False, allow_nan=False)
        with self._writing() as connection:
            row = connection.execute(
                f"SELECT max(id) FROM verdicts WHERE {_OF_RUNS} AND case_id = ? AND side = ?",
                (*runs, verdict.case_id, verdict.side),
            ).fetchone()
            cursor = connection.execute(
                f"INSERT INTO verdicts ({_INSERTED}) VALUES ({', '.join('?' * len(_INSERTED.split(', ')))})",
                (
                    creation_time(),
                    verdict.reviewer,
                    verdict.case_id,
                    verdict.side,
                    *runs,
                    shown_status,
                    signals,
                    int(verdict.agree),
                    verdict.status,
                    *(verdict.labels.get(name) for name in LABELS),
                    verdict.comment,
                    row[0],
                ),
            )
            stored = connection.execute(f"SELECT {_COLUMNS} FROM verdicts WHERE id = ?", (cursor.lastrowid,)).fetchone()
        return _verdict(stored)

    def history(self, case_id: str, *, baseline_fingerprint: str, candidate_fingerprint: str) -> list[Verdict]:
        """Every verdict on ``case_id`` of the two runs, newest first."""
        return self._verdicts(
            f"{_OF_RUNS} AND case_id = ? ORDER BY id DESC", (baseline_fingerprint, candidate_fingerprint, case_id)
        )

    def others(self, case_id: str, *, baseline_fingerprint: str, candidate_fingerprint: str) -> list[Verdict]:
        """Every verdict on a case of the same id given for other runs, newest first: shown, never counted."""
        return self._verdicts(
            f"case_id = ? AND NOT ({_OF_RUNS}) ORDER BY id DESC", (case_id, baseline_fingerprint, candidate_fingerprint)
        )

    def latest(self, *, baseline_fingerprint: str, candidate_fingerprint: str) -> pl.DataFrame:
        """The latest verdict per case and side of the two runs, a row each, in case id and side order: the
        columns of a ``Verdict`` (``shown_signals`` as JSON text, a column per label)."""
        import polars as pl

        runs = (baseline_fingerprint, candidate_fingerprint)
        query = (
            f"SELECT {_COLUMNS} FROM verdicts WHERE id IN "
            f"(SELECT max(id) FROM verdicts WHERE {_OF_RUNS} GROUP BY case_id, side)"
        )
        schema = {
            name: pl.Int64 if name in ("id", "agree", "supersedes") else pl.String for name in _COLUMNS.split(", ")
        }
        parts = [pl.DataFrame(schema=schema)]
        with self._reading() as connection:
            cursor = connection.execute(query, runs)
            while rows := cursor.fetchmany(_BATCH_ROWS):
                parts.append(pl.DataFrame(rows, schema=schema, orient="row"))
        latest = pl.concat(parts).with_columns(pl.col("agree").cast(pl.Boolean))
        return latest.sort("case_id", "side")

    def reviewed_case_ids(self, *, baseline_fingerprint: str, candidate_fingerprint: str) -> set[str]:
        """The ids of the cases of the two runs with at least one verdict."""
        with self._reading() as connection:
            rows = connection.execute(
                f"SELECT DISTINCT case_id FROM verdicts WHERE {_OF_RUNS}", (baseline_fingerprint, candidate_fingerprint)
            ).fetchall()
        return {row[0] for row in rows}

    def comparisons(self) -> dict[tuple[str, str], int]:
        """Verdicts per pair of runs (baseline's fingerprint, candidate's) the database holds verdicts of."""
        with self._reading() as connection:
            rows = connection.execute(
                "SELECT baseline_fingerprint, candidate_fingerprint, count(*) FROM verdicts "
                "GROUP BY baseline_fingerprint, candidate_fingerprint ORDER BY count(*) DESC"
            ).fetchall()
        return {(baseline, candidate): count for baseline, candidate, count in rows}

    def close(self) -> None:
        """Close the file; the database is not used after."""
        with self._lock:
            self._connection.close()

    def __enter__(self) -> ReviewDatabase:
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()

    def _verdicts(self, where: str, parameters: tuple[str, ...]) -> list[Verdict]:
        with self._reading() as connection:
            rows = connection.execute(f"SELECT {_COLUMNS} FROM verdicts WHERE {where}", parameters).fetchall()
        return [_verdict(row) for row in rows]

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        with self._lock, _refused_as(self.path, "read"):
            yield self._connection

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        with self._lock, _refused_as(self.path, "written"):
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                yield self._connection
            except BaseException:
                self._connection.rollback()
                raise
            self._connection.execute("COMMIT")


@contextmanager
def _refused_as(path: Path, done: str) -> Iterator[None]:
    """SQLite's errors inside as a ``ReviewError`` saying what the file could not be."""
    try:
        yield
    except sqlite3.Error as error:
        raise ReviewError(f"{path}: the review database could not be {done} ({error}).") from None


def _prepare(connection: sqlite3.Connection, path: Path) -> None:
    """Set the connection up and bring the database to ``SCHEMA_VERSION`` (see ``ReviewDatabase.open``)."""
    try:
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        application, version, tables = _identity(connection)
    except sqlite3.DatabaseError as error:
        raise ReviewError(
            f"{path}: is not a review database ({error}). Give `db` a review database or a new file."
        ) from None
    if application != APPLICATION_ID and (application != 0 or tables or version):
        raise ReviewError(
            f"{path}: is an SQLite database, but not a review database; it was left as it is. Give `db` a review "
            "database or a new file."
        )
    if version > SCHEMA_VERSION:
        raise ReviewError(
            f"{path}: is a review database of a newer rag-compare (schema version {version}; this one reads up to "
            f"{SCHEMA_VERSION}). Upgrade rag-compare to review with it."
        )
    with _refused_as(path, "opened"):
        if connection.execute("PRAGMA journal_mode = WAL").fetchone()[0] != "wal":
            raise ReviewError(f"{path}: the review database cannot be put in WAL mode; put it on a local disk.")
        connection.execute("PRAGMA synchronous = FULL")
        _migrate(connection, version)


def _identity(connection: sqlite3.Connection) -> tuple[int, int, int]:
    """The database's application id, schema version and number of tables."""
    application = connection.execute("PRAGMA application_id").fetchone()[0]
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    tables = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    return int(application), int(version), int(tables)


def _migrate(connection: sqlite3.Connection, version: int) -> None:
    """Run the ``MIGRATIONS`` past ``version``, each in a transaction with the version it reaches; a step
    another process ran meanwhile is not run again."""
    for step in range(version, SCHEMA_VERSION):
        connection.execute("BEGIN IMMEDIATE")
        try:
            _, current, _ = _identity(connection)
            if current <= step:
                for statement in _statements(MIGRATIONS[step]):
                    connection.execute(statement)
                connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                connection.execute(f"PRAGMA user_version = {step + 1}")
        except BaseException:
            connection.rollback()
            raise
        connection.execute("COMMIT")


def _statements(script: str) -> Iterator[str]:
    """The statements of ``script``, one at a time (``executescript`` would commit the transaction)."""
    statement = ""
    for line in script.strip().splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            yield statement.strip()
            statement = ""


def _verdict(row: tuple[Any, ...]) -> Verdict:
    """A row of ``_COLUMNS`` as a ``Verdict``."""
    values = dict(zip(_COLUMNS.split(", "), row, strict=True))
    return Verdict(
        id=values["id"],
        created_at=values["created_at"],
        reviewer=values["reviewer"],
        case_id=values["case_id"],
        side=values["side"],
        baseline_fingerprint=values["baseline_fingerprint"],
        candidate_fingerprint=values["candidate_fingerprint"],
        shown_status=values["shown_status"],
        shown_signals=json.loads(values["shown_signals"]),
        agree=bool(values["agree"]),
        status=values["status"],
        labels={name: values[name] for name in LABELS},
        comment=values["comment"],
        supersedes=values["supersedes"],
    )
