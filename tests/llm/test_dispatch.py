"""Sending requests: what is retried and what is not, and how long a Retry-After asks to wait."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import openai
import pytest

from rag_compare.core.errors import ConfigError
from rag_compare.llm.cache import ReplyCache
from rag_compare.llm.dispatch import MAX_WAIT, Limits, chat_body, retry_after, send_all
from tests.helpers.chat_server import ChatServer, Reply

BODY = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}


def with_headers(**headers: str) -> Any:
    return SimpleNamespace(response=SimpleNamespace(headers=headers))


def testretry_after_in_seconds_milliseconds_or_a_date() -> None:
    assert retry_after(with_headers(**{"retry-after": "2.5"})) == 2.5
    assert retry_after(with_headers(**{"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    later = format_datetime(datetime.now(tz=UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < (retry_after(with_headers(**{"retry-after": later})) or 0) <= 30
    assert retry_after(with_headers(**{"retry-after": "soon"})) is None
    assert retry_after(with_headers()) is None
    assert retry_after(ValueError("no response")) is None
    assert MAX_WAIT == 60.0


def send(server: ChatServer, tmp_path: Path, bodies: list[dict[str, Any]], **limits: Any) -> list[Any]:
    return send_all(
        lambda: openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0),
        bodies,
        endpoint=server.base_url,
        limits=Limits(**({"timeout": 2.0, "max_retries": 3, "backoff": 0.01} | limits)),
        cache=ReplyCache(tmp_path / "cache.sqlite3"),
        close_client=True,
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


def test_unusable_limits_are_refused() -> None:
    for limits in ({"concurrency": 0}, {"timeout": 0}, {"max_retries": -1}, {"backoff": -1}):
        with pytest.raises(ValueError, match="unusable limits"):
            Limits(**limits)


@pytest.mark.parametrize("name", ["timeout", "backoff"])
@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_limits_that_are_not_finite_are_refused_naming_the_parameter(name: str, value: float) -> None:
    settings = {"concurrency": 1, "timeout": 1.0, "max_retries": 0, "backoff": 1.0, name: value}
    with pytest.raises(ConfigError, match=f"{name}={value!r}.*finite"):
        Limits.checked(**settings)


@pytest.mark.parametrize("value", [float("nan"), float("-inf")])
def test_a_chat_body_refuses_a_setting_that_is_not_finite(value: float) -> None:
    with pytest.raises(ConfigError, match=f"temperature={value!r}: a setting sent to the endpoint must be a finite"):
        chat_body("m", [], temperature=value, seed=1)
    assert chat_body("m", [], temperature=0.5, seed=None) == {"model": "m", "messages": [], "temperature": 0.5}
