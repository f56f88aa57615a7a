"""batch_generate: a prompt column through a model, failures as nulls with their error beside them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from rag_compare.core.errors import ConfigError, EndpointError
from rag_compare.llm.batch import batch_generate
from tests.helpers.chat_server import ChatServer, Reply

FRAME = pl.DataFrame({"id": [1, 2, 3, 4, 5], "prompt": ["Say A", "Say B", "Say A", None, "Fail"]})


def responder(request: dict[str, Any], attempt: int) -> Reply:
    prompt = request["messages"][-1]["content"]
    if prompt == "Fail":
        return Reply(status=422)
    return Reply(content=prompt.removeprefix("Say "))


def test_outputs_sit_beside_their_prompts_and_failures_are_null_with_an_error(tmp_path: Path) -> None:
    original = FRAME.clone()
    with ChatServer(responder) as server:
        result = batch_generate(
            FRAME, "prompt", "reply", model="m", base_url=server.base_url, cache=tmp_path / "c.sqlite3", system="S"
        )
        sent = [request["messages"] for request in server.requests]
    assert result.columns == ["id", "prompt", "reply", "reply_error"]
    assert result.get_column("id").to_list() == [1, 2, 3, 4, 5]  # the frame's order
    assert result.get_column("reply").to_list() == ["A", "B", "A", None, None]
    errors = result.get_column("reply_error").to_list()
    assert errors[:3] == [None, None, None]
    assert errors[3] == "no prompt"
    assert errors[4].startswith("HTTP 422")
    assert len(sent) == 3  # "Say A" once, "Say B", "Fail"; no request for the null prompt
    assert sent[0][0] == {"role": "system", "content": "S"}
    assert FRAME.equals(original)


def test_a_rerun_is_answered_from_the_cache(tmp_path: Path) -> None:
    with ChatServer(responder) as server:
        options: dict[str, Any] = {"model": "m", "base_url": server.base_url, "cache": tmp_path / "c.sqlite3"}
        first = batch_generate(FRAME.head(2), "prompt", "reply", **options)
        second = batch_generate(FRAME.head(2), "prompt", "reply", **options)
        assert server.count() == 2
    assert first.equals(second)


def test_bad_columns_and_refused_keys() -> None:
    with pytest.raises(ConfigError, match="no column 'text'"):
        batch_generate(FRAME, "text", "reply", model="m", cache=False)
    with pytest.raises(ConfigError, match="holds Int64, not text"):
        batch_generate(FRAME, "id", "reply", model="m", cache=False)
    with pytest.raises(ConfigError, match="already has prompt"):
        batch_generate(FRAME, "prompt", "prompt", model="m", cache=False)
    with ChatServer(lambda request, attempt: Reply(status=401)) as server, pytest.raises(EndpointError, match="401"):
        batch_generate(FRAME, "prompt", "reply", model="m", base_url=server.base_url, cache=False)
