"""The fake chat-completions server, exercised through the real openai client."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import jsonschema
import openai
import pytest

from tests.helpers.chat_server import ChatServer, InFlight, Reply, closed_port_url, sample_for_schema

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {
            "type": "object",
            "properties": {
                "score": {"type": "number", "minimum": 0.5, "maximum": 1},
                "passed": {"type": "boolean"},
                "note": {"type": ["string", "null"], "minLength": 3},
            },
            "required": ["score", "passed", "note"],
            "additionalProperties": False,
        },
        "claims": {
            "type": "array",
            "minItems": 2,
            "items": {
                "type": "object",
                "properties": {
                    "label": {"type": "string", "enum": ["supported", "unsupported"]},
                    "count": {"type": "integer", "minimum": 3, "maximum": 9},
                },
                "required": ["label", "count"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["verdict", "claims"],
    "additionalProperties": False,
}
MESSAGES: list[Any] = [{"role": "user", "content": "hi"}]


def client_for(server: ChatServer, timeout: float = 5.0) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=timeout)


def ask(client: openai.OpenAI, text: str = "hi", **kwargs: Any) -> Any:
    return client.chat.completions.create(model="judge-1", messages=[{"role": "user", "content": text}], **kwargs)


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as running:
        yield running


def test_default_reply_validates_against_the_request_schema(server: ChatServer) -> None:
    response_format = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": SCHEMA, "strict": True}}
    completion = ask(client_for(server), response_format=response_format)
    assert completion.object == "chat.completion"
    assert completion.model == "judge-1"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage.total_tokens == 15
    content = json.loads(completion.choices[0].message.content)
    jsonschema.validate(content, SCHEMA)
    assert content == {
        "verdict": {"score": 0.5, "passed": True, "note": "okk"},
        "claims": [{"label": "supported", "count": 3}] * 2,
    }


def test_without_a_response_format_the_content_is_ok(server: ChatServer) -> None:
    assert ask(client_for(server)).choices[0].message.content == "ok"


def test_sample_resolves_refs_and_any_of() -> None:
    schema = {
        "$defs": {"Claim": {"type": "object", "properties": {"text": {"type": "string", "maxLength": 1}}}},
        "type": "object",
        "properties": {
            "claim": {"$ref": "#/$defs/Claim"},
            "maybe": {"anyOf": [{"type": "null"}, {"type": "integer", "exclusiveMinimum": 4}]},
            "none": {"type": "array", "items": {"type": "string"}, "maxItems": 0},
            "kind": {"const": "x"},
        },
    }
    sample = sample_for_schema(schema)
    assert sample == {"claim": {"text": "o"}, "maybe": 5, "none": [], "kind": "x"}
    jsonschema.validate(sample, schema)


def test_scripted_content_and_token_counts() -> None:
    with ChatServer(lambda request, attempt: Reply(content="hello", prompt_tokens=7, completion_tokens=2)) as server:
        completion = ask(client_for(server))
    assert completion.choices[0].message.content == "hello"
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (7, 2)


def test_rate_limit_and_server_errors_arrive_as_openai_errors() -> None:
    def responder(request: dict[str, Any], attempt: int) -> Reply:
        text = request["messages"][0]["content"]
        return Reply(status=429, headers={"Retry-After": "1"}) if text == "busy" else Reply(status=500)

    with ChatServer(responder) as server:
        client = client_for(server)
        with pytest.raises(openai.RateLimitError) as limited:
            ask(client, "busy")
        with pytest.raises(openai.InternalServerError) as broken:
            ask(client, "broken")
    assert limited.value.response.headers["retry-after"] == "1"
    assert limited.value.code == "rate_limit_exceeded"
    assert broken.value.status_code == 500


def test_unknown_route_is_a_404(server: ChatServer) -> None:
    with pytest.raises(openai.NotFoundError):
        client_for(server).embeddings.create(model="e", input="x")
    assert server.count() == 0


def test_streaming_is_refused(server: ChatServer) -> None:
    with pytest.raises(openai.BadRequestError, match="streaming"):
        ask(client_for(server), stream=True)


def test_a_hang_times_out_and_shutdown_is_still_prompt() -> None:
    server = ChatServer(lambda request, attempt: Reply(delay=30))
    with server:
        with pytest.raises(openai.APITimeoutError):
            ask(client_for(server, timeout=0.3))
        started = time.perf_counter()
    assert time.perf_counter() - started < 2


def test_shutdown_wakes_a_handler_that_is_still_waiting() -> None:
    errors: list[Exception] = []
    server = ChatServer(latency=30)

    def call() -> None:
        try:
            ask(client_for(server))
        except openai.APIError as exc:
            errors.append(exc)

    with server:
        thread = threading.Thread(target=call, daemon=True)
        thread.start()
        while server.count() == 0:
            time.sleep(0.01)
        started = time.perf_counter()
    assert time.perf_counter() - started < 2
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert len(errors) == 1
    assert isinstance(errors[0], openai.APIConnectionError)


def test_attempt_counts_repeats_of_the_same_body() -> None:
    seen: list[tuple[str, int]] = []

    def responder(request: dict[str, Any], attempt: int) -> Reply:
        seen.append((request["messages"][0]["content"], attempt))
        return Reply()

    with ChatServer(responder) as server:
        client = client_for(server)
        for text in ("a", "a", "b", "a"):
            ask(client, text)
    assert seen == [("a", 1), ("a", 2), ("b", 1), ("a", 3)]


def test_requests_are_handled_in_parallel() -> None:
    with ChatServer(latency=0.2) as server:
        client = client_for(server)
        threads = [threading.Thread(target=ask, args=(client, f"q{i}")) for i in range(4)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
    assert server.max_in_flight == 4
    assert elapsed < 0.6


def test_async_client_gets_32_concurrent_answers() -> None:
    async def burst(base_url: str) -> list[str | None]:
        async with openai.AsyncOpenAI(base_url=base_url, api_key="test", max_retries=0, timeout=5) as client:
            completions = await asyncio.gather(
                *(
                    client.chat.completions.create(model="m", messages=[{"role": "user", "content": str(i)}])
                    for i in range(32)
                )
            )
        return [completion.choices[0].message.content for completion in completions]

    with ChatServer(latency=0.1) as server:
        started = time.perf_counter()
        contents = asyncio.run(burst(server.base_url))
        elapsed = time.perf_counter() - started
    assert contents == ["ok"] * 32
    assert server.max_in_flight >= 16
    assert elapsed < 1.5


def test_keep_alive_requests_are_not_held_back(server: ChatServer) -> None:
    client = client_for(server)
    ask(client)
    started = time.perf_counter()
    for _ in range(25):
        ask(client)
    assert time.perf_counter() - started < 0.5  # about 1 s if each answer waited for a delayed ACK


def test_requests_records_bodies(server: ChatServer) -> None:
    client = client_for(server)
    ask(client, "one", temperature=0)
    ask(client, "two")
    assert server.count() == len(server.requests) == 2
    assert server.requests[0] == {
        "model": "judge-1",
        "messages": [{"role": "user", "content": "one"}],
        "temperature": 0,
    }
    assert server.requests[1]["messages"][0]["content"] == "two"


def test_a_shared_gauge_counts_the_requests_in_flight_across_servers() -> None:
    total, own = InFlight(), (InFlight(), InFlight())
    with (
        ChatServer(latency=0.2, gauges=(total, own[0])) as first,
        ChatServer(latency=0.2, gauges=(total, own[1])) as second,
    ):
        clients = [client_for(first)] * 3 + [client_for(second)] * 2
        threads = [threading.Thread(target=ask, args=(client, f"q{i}")) for i, client in enumerate(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert (first.count(), second.count()) == (3, 2)
    assert (total.highest, own[0].highest, own[1].highest) == (5, 3, 2)
    assert total.current == own[0].current == own[1].current == 0


def test_nothing_listens_at_a_closed_port() -> None:
    client = openai.OpenAI(base_url=closed_port_url(), api_key="test", max_retries=0, timeout=2)
    with pytest.raises(openai.APIConnectionError):
        ask(client)
