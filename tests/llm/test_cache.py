"""The reply cache: content-addressed, persistent at once, shared by processes, only ever in a regular file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rag_compare.core.errors import ConfigError, NestingError, RunFileError
from rag_compare.core.nesting import MAX_DEPTH
from rag_compare.llm.cache import CACHE_ENV, ReplyCache, default_cache_path, request_key
from tests.helpers.nesting import DEEP, nested_json
from tests.helpers.special_files import NODES, bad_output, node_kind, not_blocked_by

BODY = {"model": "m", "messages": [{"role": "user", "content": "q"}], "temperature": 0.0}


def test_key_depends_on_every_part_of_the_request_not_on_key_order() -> None:
    key = request_key("http://a/v1", BODY)
    assert key == request_key("http://a/v1", dict(reversed(list(BODY.items()))))
    assert len(key) == 64
    assert key != request_key("http://b/v1", BODY)
    assert key != request_key("http://a/v1", BODY | {"temperature": 0.5})
    assert key != request_key("http://a/v1", BODY | {"messages": [{"role": "user", "content": "q2"}]})


def test_a_stored_reply_survives_a_new_connection(tmp_path: Path) -> None:
    path = tmp_path / "replies.sqlite3"
    cache = ReplyCache(path)
    cache.put("k1", {"content": "{}", "prompt_tokens": 3, "completion_tokens": 1})
    # No close(): a process killed right after put() keeps the reply.
    other = ReplyCache(path)
    assert other.get_many(["k1", "k2"]) == {"k1": {"content": "{}", "prompt_tokens": 3, "completion_tokens": 1}}
    assert len(other) == 1


def test_many_keys_are_looked_up_in_batches(tmp_path: Path) -> None:
    cache = ReplyCache(tmp_path / "c.sqlite3")
    for index in range(1_200):
        cache.put(f"k{index}", {"n": index})
    found = cache.get_many([f"k{index}" for index in range(0, 2_400, 2)])
    assert len(found) == 600
    assert found["k1198"] == {"n": 1198}


def test_default_path_follows_the_environment(tmp_path: Path) -> None:
    assert default_cache_path({CACHE_ENV: str(tmp_path / "x.db")}) == tmp_path / "x.db"
    assert default_cache_path({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "rag-compare" / "replies.sqlite3"
    assert default_cache_path({}) == Path.home() / ".cache" / "rag-compare" / "replies.sqlite3"


def test_an_unusable_cache_path_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(RunFileError, match=f"{blocker} is not a folder. Give `cache` a path in an existing folder"):
        ReplyCache(blocker / "replies.sqlite3")
    with pytest.raises(ConfigError, match=r"cannot be used as the reply cache.*`cache=False`"):
        ReplyCache(blocker)  # a regular file, but no SQLite database


def test_only_the_cache_in_the_user_cache_folder_gets_its_folders_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    ReplyCache(default_cache_path({"XDG_CACHE_HOME": str(tmp_path / "user-cache")})).close()
    assert (tmp_path / "user-cache" / "rag-compare" / "replies.sqlite3").is_file()
    elsewhere = tmp_path / "elsewhere" / "replies.sqlite3"
    with pytest.raises(RunFileError, match=f"the folder {elsewhere.parent} does not exist. Create it first"):
        ReplyCache(elsewhere)
    assert not elsewhere.parent.exists()


SPECIAL_CACHES = [
    *((kind, "") for kind in NODES),
    *((kind, suffix) for kind in ("FIFO", "socket", "link to a device") for suffix in ("-wal", "-journal")),
]
"""A special file as the cache, or as a file SQLite keeps beside it."""


@pytest.mark.parametrize(("kind", "suffix"), SPECIAL_CACHES)
def test_a_cache_that_is_no_regular_file_is_refused_unopened(tmp_path: Path, kind: str, suffix: str) -> None:
    path = tmp_path / "replies.sqlite3"
    node = Path(bad_output(kind, Path(f"{path}{suffix}")))
    before = node_kind(node)
    with not_blocked_by(node), pytest.raises(RunFileError, match=f"{node}: is a (character device|FIFO|socket|symb)"):
        ReplyCache(path if suffix else node)
    assert node_kind(node) == before


def test_a_cache_may_be_a_link_to_a_regular_file(tmp_path: Path) -> None:
    ReplyCache(tmp_path / "replies.sqlite3").put("k1", {"n": 1})
    (tmp_path / "link.sqlite3").symlink_to(tmp_path / "replies.sqlite3")
    assert ReplyCache(tmp_path / "link.sqlite3").get_many(["k1"]) == {"k1": {"n": 1}}
    assert (tmp_path / "link.sqlite3").is_symlink()


def test_a_stored_reply_nested_too_deep_is_refused_naming_the_cache(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    cache = ReplyCache(path)
    cache.put("k1", {"content": "{}"})
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE replies SET reply = ? WHERE key = 'k1'", (nested_json({"content": DEEP}, 1000),))
    with pytest.raises(NestingError, match=f"^{path}: nests lists or objects more than {MAX_DEPTH} levels"):
        ReplyCache(path).get_many(["k1"])
