"""The LLM judge over a pool of chat-completions servers on loopback: requests spread within the one
concurrency bound, a dead or failing endpoint costs attempts never cases, and the pool shares the reply
cache of each of its endpoints."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from rag_compare import freeze_run
from rag_compare._version import __version__
from rag_compare.core.digest import json_digest
from rag_compare.core.errors import ConfigError, JudgeError
from rag_compare.io.runs import Run
from rag_compare.llm.judge_checks import PROMPT_VERSION, prompt_digest
from rag_compare.llm.limits import Limits
from rag_compare.llm.llm_judge import OpenAIJudge
from rag_compare.llm.pool import SET_ASIDE_AFTER, EndpointUsage
from tests.helpers.chat_server import ChatServer, InFlight, Reply, closed_port_url
from tests.helpers.judged import CORPUS, DEFAULT_REQUESTS, RECORDS

ANSWERED = ["ok"] * 8 + ["not_judged"]


@pytest.fixture
def run() -> Run:
    return freeze_run(RECORDS, CORPUS, {"name": "judged"})


def pool_judge(urls: Sequence[str] | str, tmp_path: Path, **limits: Any) -> OpenAIJudge:
    settings: dict[str, Any] = {"timeout": 2.0, "max_retries": 1, "backoff": 0.01} | limits
    return OpenAIJudge("m", base_url=urls, cache=tmp_path / "cache.sqlite3", limits=Limits(**settings))


def failing(request: dict[str, Any], attempt: int) -> Reply:
    return Reply(status=500)


def test_requests_spread_over_the_pool_within_the_one_bound(run: Run, tmp_path: Path) -> None:
    total, gauges = InFlight(), (InFlight(), InFlight())
    with (
        ChatServer(latency=0.1, gauges=(total, gauges[0])) as first,
        ChatServer(latency=0.1, gauges=(total, gauges[1])) as second,
    ):
        judge = pool_judge([first.base_url, second.base_url], tmp_path, concurrency=4)
        verdicts = judge.judge(run.records)
        counts = first.count(), second.count()
    assert verdicts.get_column("judge_status").to_list() == ANSWERED
    assert min(counts) > 0
    assert sum(counts) == DEFAULT_REQUESTS
    assert total.highest == 4  # the bound is the pool's, not each endpoint's
    # The fewest in flight first: with 4 at once over 2 endpoints, neither ever has more than 2.
    assert [gauge.highest for gauge in gauges] == [2, 2]
    assert judge.endpoint_usage == {
        first.base_url: EndpointUsage(counts[0], counts[0]),
        second.base_url: EndpointUsage(counts[1], counts[1]),
    }


@pytest.mark.parametrize("broken", ["dead", "failing"])
def test_a_broken_endpoint_costs_attempts_not_cases(run: Run, tmp_path: Path, broken: str) -> None:
    """The broken endpoint comes first in the pool. One request at a time: the first three requests try it
    (then it is set aside) and each is retried at once on the live one; every later request goes there."""
    with ChatServer(failing) as failing_server, ChatServer() as live:
        broken_url = closed_port_url() if broken == "dead" else failing_server.base_url
        judge = pool_judge([broken_url, live.base_url], tmp_path, concurrency=1, backoff=30.0)
        started = time.monotonic()
        verdicts = judge.judge(run.records)
        assert time.monotonic() - started < 10  # a backoff of 15 to 30 s would show: failing over does not wait
        assert live.count() == DEFAULT_REQUESTS
        assert failing_server.count() == (SET_ASIDE_AFTER if broken == "failing" else 0)
    assert verdicts.get_column("judge_status").to_list() == ANSWERED
    assert verdicts.get_column("judge_error").null_count() == verdicts.height
    assert verdicts.get_column("requests").sum() == DEFAULT_REQUESTS + SET_ASIDE_AFTER
    assert judge.endpoint_usage == {
        broken_url: EndpointUsage(SET_ASIDE_AFTER, 0),
        live.base_url: EndpointUsage(DEFAULT_REQUESTS, DEFAULT_REQUESTS),
    }


def test_when_every_endpoint_fails_each_case_fails_naming_the_endpoints(run: Run, tmp_path: Path) -> None:
    dead = closed_port_url()
    with ChatServer(failing) as server:
        judge = pool_judge([dead, server.base_url], tmp_path, concurrency=1, max_retries=1)
        verdicts = judge.judge(run.records)
    assert verdicts.get_column("judge_status").to_list() == ["judge_failed"] * 8 + ["not_judged"]
    # Each request tried both endpoints once (a retry goes where the request failed least), in either order.
    one_failure = rf"(?:{re.escape(dead)}: connection failed: [^|]+|{re.escape(server.base_url)}: HTTP 500: [^|]+)"
    request_failure = rf"\w+: {one_failure} \| {one_failure} \(gave up after 2 attempts\)"
    for error in verdicts.get_column("judge_error").drop_nulls():
        failures = error.split("; ")
        assert all(re.fullmatch(request_failure, failure) for failure in failures), error
        assert all(dead in failure and server.base_url in failure for failure in failures), error
    assert judge.endpoint_usage == {
        dead: EndpointUsage(DEFAULT_REQUESTS, 0),
        server.base_url: EndpointUsage(DEFAULT_REQUESTS, 0),
    }


def test_a_pool_finds_the_replies_of_one_endpoint_and_stores_under_the_one_that_answered(
    run: Run, tmp_path: Path
) -> None:
    with ChatServer() as first, ChatServer() as second:
        alone = pool_judge(first.base_url, tmp_path).judge(run.records)
        assert first.count() == DEFAULT_REQUESTS
        pool = pool_judge([second.base_url, first.base_url], tmp_path)
        assert pool.plan(run.records).cached == DEFAULT_REQUESTS
        again = pool.judge(run.records)
        assert (first.count(), second.count()) == (DEFAULT_REQUESTS, 0)  # the pool sent nothing
    assert again.get_column("requests").sum() == 0
    assert again.drop("requests").equals(alone.drop("requests"))

    with ChatServer() as first, ChatServer() as second:
        cache = tmp_path / "fresh"
        cache.mkdir()
        pool_judge([first.base_url, second.base_url], cache, concurrency=4).judge(run.records)
        answered = first.count(), second.count()
        assert min(answered) > 0
        pool_judge(second.base_url, cache).judge(run.records)  # finds what second answered, asks for the rest
        assert second.count() == answered[1] + answered[0]
        assert first.count() == answered[0]


def test_one_url_keeps_the_fingerprint_it_had(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/v1"
    judge = OpenAIJudge("m", base_url=url)
    written_by_hand = {
        "name": "openai",
        "method": "llm-1",
        "model": "m",
        "endpoint": url,
        "checks": ["context_sufficiency", "groundedness", "helpfulness"],
        "temperature": 0.0,
        "seed": None,
        "prompt_version": PROMPT_VERSION,
        "prompts_sha256": prompt_digest(),
        "rag_compare_version": __version__,
    }
    assert judge.config == written_by_hand
    assert judge.fingerprint == json_digest(written_by_hand)
    assert OpenAIJudge("m", base_url=[url]).fingerprint == judge.fingerprint  # a pool of one is that endpoint
    assert OpenAIJudge("m", base_url=[url, url + "/"]).fingerprint == judge.fingerprint


def test_a_pool_is_named_by_its_endpoints_in_any_order() -> None:
    first, second = "http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"
    pool = OpenAIJudge("m", base_url=[first, second])
    assert pool.endpoints == (first, second)  # requests go to the first when both are idle
    assert pool.config["endpoint"] == ["http://127.0.0.1:10/v1", "http://127.0.0.1:9/v1"]  # sorted
    assert pool.fingerprint == OpenAIJudge("m", base_url=(second, first)).fingerprint
    assert pool.fingerprint != OpenAIJudge("m", base_url=first).fingerprint
    assert pool.fingerprint != OpenAIJudge("m", base_url=[first, second, "http://127.0.0.1:11/v1"]).fingerprint
    assert pool == OpenAIJudge("m", base_url=(first, second))
    assert hash(pool) == hash(OpenAIJudge("m", base_url=(first, second)))  # a list is kept as a tuple


def test_an_endpoint_of_the_pool_that_refuses_stops_the_run_naming_it(run: Run, tmp_path: Path) -> None:
    with ChatServer() as live, ChatServer(lambda request, attempt: Reply(status=401)) as refusing:
        judge = pool_judge([live.base_url, refusing.base_url], tmp_path, concurrency=2)
        with pytest.raises(
            JudgeError, match=f"the endpoint {re.escape(refusing.base_url)} refused the request: HTTP 401"
        ):
            judge.judge(run.records)


def test_an_unusable_pool_is_refused_before_anything_is_sent(run: Run, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="a pool of endpoints is one or more URLs"):
        OpenAIJudge("m", base_url=[])
    with ChatServer() as server:
        judge = pool_judge([server.base_url, "localhost:8000"], tmp_path)
        with pytest.raises(ConfigError, match=r"the endpoint 'localhost:8000' is not usable \(not an http"):
            judge.judge(run.records)
        assert server.count() == 0


def test_a_case_failure_of_a_pool_names_the_endpoint(run: Run, tmp_path: Path) -> None:
    """A 400 is the request's own failure, not retried; the request that went to the dead endpoint
    first was retried on the live one and failed there."""
    with ChatServer(lambda request, attempt: Reply(status=400)) as server:
        verdicts = pool_judge([server.base_url, closed_port_url()], tmp_path).judge(run.records.head(1))
        assert server.count() == 3
    [error] = verdicts.get_column("judge_error").to_list()
    failures = error.split("; ")
    assert [failure.split(": ")[0] for failure in failures] == ["context_sufficiency", "groundedness", "helpfulness"]
    assert all(failure.split(": ", 1)[1].startswith(f"{server.base_url}: HTTP 400: ") for failure in failures)
    assert "gave up" not in error
