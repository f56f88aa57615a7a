"""Sending many requests: what is retried and what is not, replies in order and from the cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai

from rag_compare.llm.cache import ReplyCache
from rag_compare.llm.dispatch import send_all
from rag_compare.llm.limits import Limits
from rag_compare.llm.pool import Endpoint
from tests.helpers.chat_server import ChatServer, Reply

BODY = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}


def send(server: ChatServer, tmp_path: Path, bodies: list[dict[str, Any]], **limits: Any) -> list[Any]:
    return send_all(
        [
            Endpoint(
                server.base_url, lambda: openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
            )
        ],
        bodies,
        limits=Limits(**({"timeout": 2.0, "max_retries": 3, "backoff": 0.01} | limits)),
        cache=ReplyCache(tmp_path / "cache.sqlite3"),
        close_clients=True,
    )


def test_a_client_error_is_the_requests_own_failure_and_not_retried(tmp_path: Path) -> None:
    with ChatServer(lambda request, attempt: Reply(status=400)) as server:
        [outcome] = send(server, tmp_path, [BODY])
        assert server.count() == 1
    assert outcome.reply is None
    assert outcome.error.startswith("HTTP 400")
    assert outcome.sent == 1


def test_plain_text_replies_need_no_schema_and_come_back_in_order(tmp_path: Path) -> None:
    bodies = [BODY | {"messages": [{"role": "user", "content": f"q{index}"}]} for index in range(5)]

    def echo(request: dict[str, Any], attempt: int) -> Reply:
        content = request["messages"][0]["content"]
        return Reply(content=content.upper(), delay=0.05 * (4 - int(content[1:])))  # the last one answers first

    with ChatServer(echo) as server:
        outcomes = send(server, tmp_path, bodies, concurrency=5)
        again = send(server, tmp_path, bodies)
        assert server.count() == 5
    assert [outcome.reply["content"] for outcome in outcomes] == ["Q0", "Q1", "Q2", "Q3", "Q4"]
    assert [outcome.cached for outcome in again] == [True] * 5
