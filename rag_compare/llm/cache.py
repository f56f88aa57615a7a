"""A content-addressed cache of model replies, on disk, so no request is paid for twice.

A reply is stored under the SHA-256 of the endpoint and the exact request body (model, messages as
rendered, response schema, sampling settings), as soon as it arrives: a rerun, an unchanged case of
another run, or a scoring resumed after an interruption finds it there. Only replies that passed
validation are stored. The cache is one SQLite file; several processes may share it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from rag_compare.core.digest import json_digest
from rag_compare.core.errors import ConfigError
from rag_compare.core.nesting import load_json
from rag_compare.io.outputs import check_output

__all__ = ["CACHE_ENV", "ReplyCache", "default_cache_path", "opened_cache", "request_key"]

CACHE_ENV = "RAG_COMPARE_CACHE"
"""Environment variable naming the cache file (default: ``rag-compare/replies.sqlite3`` in the user's cache folder)."""
_BATCH = 500
_SIDE_FILES = ("-wal", "-shm", "-journal")
"""What SQLite writes beside the cache file, by the suffix of its name."""
_CHOOSE_ANOTHER = f"Choose another file with `cache` or {CACHE_ENV}, or pass `cache=False`."


def default_cache_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$RAG_COMPARE_CACHE``, else ``$XDG_CACHE_HOME/rag-compare/replies.sqlite3``, else under ``~/.cache``."""
    environ = os.environ if environ is None else environ
    if environ.get(CACHE_ENV):
        return Path(environ[CACHE_ENV]).expanduser()
    return _user_cache_path(environ)


def _user_cache_path(environ: Mapping[str, str]) -> Path:
    """The cache file in the user's cache folder, whose folders rag-compare creates itself."""
    root = Path(environ["XDG_CACHE_HOME"]) if environ.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return root / "rag-compare" / "replies.sqlite3"


@contextlib.contextmanager
def opened_cache(setting: str | Path | bool, *, create: bool = True) -> Iterator[ReplyCache | None]:
    """The cache a ``cache=`` setting names, closed on the way out: a file path, ``True`` for
    ``default_cache_path()``, ``False`` for none (``None``). Unless ``create``, ``None`` too when the
    file is not there yet."""
    path = None if setting is False else default_cache_path() if setting is True else Path(setting)
    if path is None or not (create or path.exists()):
        yield None
        return
    cache = ReplyCache(path)
    try:
        yield cache
    finally:
        cache.close()


def request_key(endpoint: str, body: Mapping[str, Any]) -> str:
    """The cache key of one request: SHA-256 of the endpoint and the canonical JSON of its body."""
    return json_digest({"endpoint": endpoint, "body": body})


class ReplyCache:
    """Replies by request key, in a SQLite file (created when missing; its folder too only for the file in
    the user's cache folder). Any other path must be in an existing folder, and the file, and SQLite's files
    beside it, regular files where they exist (``outputs.check_output``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            if self.path == _user_cache_path(os.environ):
                self.path.parent.mkdir(parents=True, exist_ok=True)
            for file in (path, *(f"{self.path}{suffix}" for suffix in _SIDE_FILES)):
                check_output(file, "reply cache", existing="updated", parameter="cache")
            self._connection = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute("PRAGMA synchronous=NORMAL")
            self._connection.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)")
        except (OSError, sqlite3.Error) as error:
            raise ConfigError(f"{self.path}: cannot be used as the reply cache ({error}). {_CHOOSE_ANOTHER}") from None

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The stored replies of those ``keys`` that have one."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(wanted), _BATCH):
            batch = wanted[start : start + _BATCH]
            marks = ",".join("?" * len(batch))
            rows = self._connection.execute(f"SELECT key, reply FROM replies WHERE key IN ({marks})", batch)
            found.update((key, load_json(reply, str(self.path), line=None)) for key, reply in rows)
        return found

    def put(self, key: str, reply: Mapping[str, Any]) -> None:
        """Store ``reply`` under ``key`` at once (it survives an interruption right after)."""
        with self._connection:
            self._connection.execute(
                "INSERT OR REPLACE INTO replies (key, reply) VALUES (?, ?)", (key, json.dumps(reply, sort_keys=True))
            )

    def __len__(self) -> int:
        return int(self._connection.execute("SELECT count(*) FROM replies").fetchone()[0])

    def close(self) -> None:
        self._connection.close()
