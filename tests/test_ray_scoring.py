"""Scoring and pairwise judging with ``engine="ray"`` (``--engine ray``): the requests the reply cache lacks
are sent from Ray tasks, with the verdicts, files and cache entries of the local engine.

One Ray of two CPUs serves the module (``ray_session`` uses it as it is); the endpoints are loopback
``ChatServer``s in this process, which the Ray workers reach like any other endpoint.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import Result

from rag_compare import freeze_run
from rag_compare.core.errors import ConfigError, EngineError, JudgeError
from rag_compare.core.ray_runtime import INSTALL_HINT, ray_session
from rag_compare.io.runs import Run
from rag_compare.llm import ray_dispatch
from rag_compare.llm.limits import Limits
from rag_compare.llm.llm_judge import OpenAIJudge
from rag_compare.llm.pool import EndpointUsage
from rag_compare.llm.ray_dispatch import Lane, lanes
from tests.helpers.chat_server import ChatServer, InFlight, Reply
from tests.helpers.data import HANDMADE_RUNS
from tests.helpers.judged import CORPUS, DEFAULT_REQUESTS, RECORDS
from tests.helpers.pairs import BASELINE as PAIRS_BASELINE
from tests.helpers.pairs import CANDIDATE as PAIRS_CANDIDATE
from tests.helpers.pairs import CORPUS as PAIRS_CORPUS

Cli = Callable[..., Result]
FAST = Limits(concurrency=4, timeout=5.0, max_retries=1, backoff=0.01)
ANSWERED = ["ok"] * 8 + ["not_judged"]

pytestmark = pytest.mark.usefixtures("reply_cache")


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


@pytest.fixture
def run() -> Run:
    return freeze_run(RECORDS, CORPUS, {"name": "judged"})


def judge(urls: str | list[str], cache: Path, **settings: Any) -> OpenAIJudge:
    return OpenAIJudge("m", base_url=urls, cache=cache, limits=FAST, **settings)


def cache_rows(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as connection:
        return connection.execute("SELECT key, reply FROM replies ORDER BY key").fetchall()


def test_lanes_split_the_bound_and_spread_the_requests() -> None:
    # 21 requests, a bound of 8 on 2 CPUs: shares 4 + 4, each lane's first task half the requests (ceil 10.5).
    assert lanes(8, 2, 21) == [Lane(4, 11), Lane(4, 11)]
    # Many requests: a task carries 16 requests a slot of its share; 5 does not divide by 2, the first lane gets 3.
    assert lanes(5, 2, 1000) == [Lane(3, 48), Lane(2, 32)]
    # No more lanes than slots of the bound (one request at a time on 4 CPUs), or than requests (3 on 16 CPUs,
    # a bound of 8: shares 3 + 3 + 2, tasks of ceil(3 * 3 / 8), ceil(3 * 3 / 8) and ceil(3 * 2 / 8) requests).
    assert lanes(1, 4, 100) == [Lane(1, 16)]
    assert lanes(8, 16, 3) == [Lane(3, 2), Lane(3, 2), Lane(2, 1)]


@pytest.mark.usefixtures("ray_cluster")
def test_ray_gives_the_local_verdicts_and_cache_and_a_rerun_sends_nothing(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[tuple[str | None, int]] = []  # each progress bar's label and total
    advances = [0]

    @contextlib.contextmanager
    def recorded_bar(label: str | None, total: int) -> Iterator[Callable[[], None]]:
        drawn.append((label, total))

        def advance() -> None:
            advances[0] += 1

        yield advance

    monkeypatch.setattr(ray_dispatch, "progress_bar", recorded_bar)
    local_cache, ray_cache = tmp_path / "local.sqlite3", tmp_path / "ray.sqlite3"
    with ChatServer() as server:
        local_judge = judge(server.base_url, local_cache)
        local = local_judge.judge(run.records)
        assert server.count() == DEFAULT_REQUESTS
        ray_judge = judge(server.base_url, ray_cache, engine="ray", progress=True)
        on_ray = ray_judge.judge(run.records)
        assert server.count() == 2 * DEFAULT_REQUESTS
        again = judge(server.base_url, ray_cache, engine="ray").judge(run.records)
        from_local = judge(server.base_url, ray_cache).judge(run.records)
        assert server.count() == 2 * DEFAULT_REQUESTS  # both reruns found every reply in the cache Ray filled
    assert drawn == [("judging 9 cases", DEFAULT_REQUESTS)]  # none for the reruns: nothing to send
    assert advances == [DEFAULT_REQUESTS]
    assert on_ray.equals(local)
    assert on_ray.get_column("judge_status").to_list() == ANSWERED
    assert on_ray.get_column("requests").sum() == DEFAULT_REQUESTS
    assert cache_rows(ray_cache) == cache_rows(local_cache)  # the same keys, the same replies
    assert len(cache_rows(ray_cache)) == DEFAULT_REQUESTS
    assert again.get_column("requests").sum() == from_local.get_column("requests").sum() == 0
    assert again.drop("requests").equals(local.drop("requests"))
    assert ray_judge.fingerprint == local_judge.fingerprint
    assert "engine" not in ray_judge.config
    assert ray_judge.endpoint_usage == {server.base_url: EndpointUsage(DEFAULT_REQUESTS, DEFAULT_REQUESTS)}


def refuses_rule_0(request: dict[str, Any], attempt: int) -> Reply:
    """A 400 (the request's own failure) for every request about case q0, a reply for the others."""
    return Reply(status=400) if "What is rule 0?" in request["messages"][-1]["content"] else Reply()


@pytest.mark.usefixtures("ray_cluster")
def test_a_pool_under_ray_spreads_and_keeps_failures_as_data(run: Run, tmp_path: Path) -> None:
    """Two lanes of two requests at once, each task over a pool of an endpoint that always fails (first: it
    gets a task's first request) and one that refuses case q0's three requests. A request that fails on the
    first endpoint is retried on the second, so each of the 21 requests reaches the second exactly once."""
    with ChatServer(lambda request, attempt: Reply(status=500)) as failing, ChatServer(refuses_rule_0) as live:
        pool = judge([failing.base_url, live.base_url], tmp_path / "cache.sqlite3", engine="ray")
        verdicts = pool.judge(run.records)
        counts = failing.count(), live.count()
        # Every reply is cached under the endpoint that gave it: alone, that endpoint is asked only q0's three.
        judge(live.base_url, tmp_path / "cache.sqlite3", engine="ray").judge(run.records)
        assert live.count() == counts[1] + 3
    assert counts[0] > 0
    assert counts[1] == DEFAULT_REQUESTS
    assert verdicts.get_column("judge_status").to_list() == ["judge_failed", *ANSWERED[1:]]
    [error] = verdicts.get_column("judge_error").drop_nulls().to_list()
    failures = error.split("; ")
    assert [failure.split(": ")[0] for failure in failures] == ["context_sufficiency", "groundedness", "helpfulness"]
    assert all(failure.split(": ", 1)[1].startswith(f"{live.base_url}: HTTP 400: ") for failure in failures)
    assert verdicts.get_column("requests").sum() == sum(counts)
    assert pool.endpoint_usage == {
        failing.base_url: EndpointUsage(counts[0], 0),
        live.base_url: EndpointUsage(DEFAULT_REQUESTS, DEFAULT_REQUESTS - 3),
    }


@pytest.mark.usefixtures("ray_cluster")
def test_an_endpoint_that_refuses_the_key_stops_a_ray_run_with_the_judge_error(run: Run, tmp_path: Path) -> None:
    with ChatServer(lambda request, attempt: Reply(status=401)) as server:
        refused = judge(server.base_url, tmp_path / "cache.sqlite3", engine="ray")
        with pytest.raises(JudgeError, match=r"^the endpoint refused the request: HTTP 401"):
            refused.judge(run.records)


@pytest.mark.usefixtures("ray_cluster")
def test_score_and_judge_pairs_with_engine_ray_write_the_bytes_of_local(cli: Cli, tmp_path: Path) -> None:
    candidate = HANDMADE_RUNS / "candidate.arrow"
    pair_runs = tmp_path / "base.arrow", tmp_path / "cand.arrow"
    freeze_run(PAIRS_BASELINE, PAIRS_CORPUS, {"name": "base"}, output=pair_runs[0])
    freeze_run(PAIRS_CANDIDATE, PAIRS_CORPUS, {"name": "cand"}, output=pair_runs[1])
    fixed_time = {"SOURCE_DATE_EPOCH": "1700000000"}
    limits = ("--concurrency", "4", "--timeout", "5", "--max-retries", "0")
    written: dict[str, Result] = {}
    in_flight = InFlight()  # over both endpoints
    with (
        ChatServer(latency=0.02, gauges=(in_flight,)) as first,
        ChatServer(latency=0.02, gauges=(in_flight,)) as second,
    ):
        pool = ("--base-url", first.base_url, "--base-url", second.base_url)
        for engine in ("local", "ray"):
            before, in_flight.highest = (first.count(), second.count()), 0
            written[engine] = cli(
                "score", candidate, "--model", "m", *pool, *limits, "--engine", engine,
                "--cache", tmp_path / f"{engine}.sqlite3", "--output", tmp_path / f"{engine}.scores.arrow",
                env=fixed_time,
            )  # fmt: skip
            assert written[engine].exit_code == 0, written[engine].output
            sent = first.count() - before[0], second.count() - before[1]
            assert min(sent) > 0
            assert in_flight.highest <= 4  # on Ray, two lanes of two requests at once
            assert written[engine].stderr.splitlines()[-2:] == [
                f"endpoint {first.base_url}: {sent[0]} requests sent, {sent[0]} succeeded, 0 failed",
                f"endpoint {second.base_url}: {sent[1]} requests sent, {sent[1]} succeeded, 0 failed",
            ]
            judged = cli(
                "judge-pairs", *pair_runs, "--model", "m", "--base-url", first.base_url, *limits, "--engine", engine,
                "--cache", tmp_path / f"{engine}.sqlite3", "--output", tmp_path / f"{engine}.pairs.arrow",
                env=fixed_time,
            )  # fmt: skip
            assert judged.exit_code == 0, judged.output
    assert written["ray"].stdout.replace("ray.scores", "local.scores") == written["local"].stdout
    for kind in ("scores", "pairs"):
        assert (tmp_path / f"ray.{kind}.arrow").read_bytes() == (tmp_path / f"local.{kind}.arrow").read_bytes()


def test_without_ray_the_ray_engine_says_how_to_install_it(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(EngineError, match=re.escape(INSTALL_HINT)), ray_session():
        pass
    with ChatServer() as server:
        with pytest.raises(EngineError, match=re.escape(INSTALL_HINT)):
            judge(server.base_url, tmp_path / "cache.sqlite3", engine="ray").judge(run.records)
        assert server.count() == 0


URL = "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"engine": "spark"}, "unknown engine 'spark': use `engine='local'` (this process) or `engine='ray'`."),
        ({"ray_address": "auto"}, "`ray_address` is the cluster of `engine='ray'`: give both, or neither."),
        (
            {"engine": "ray", "base_url": None, "client": SimpleNamespace(base_url=URL)},
            "`engine='ray'` sends from Ray tasks, which open their own clients: give `base_url`",
        ),
    ],
)
def test_an_engine_that_cannot_send_is_refused_when_the_judge_is_made(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        OpenAIJudge("m", **({"base_url": URL} | settings))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--judge", "lexical", "--engine", "ray"), "--engine and --ray-address say where the LLM judge sends from"),
        (
            ("--model", "m", "--base-url", URL, "--ray-address", "auto"),
            "--ray-address is the cluster of --engine ray: give both, or neither.",
        ),
    ],
)
def test_score_refuses_an_engine_setting_it_cannot_use(
    cli: Cli, tmp_path: Path, options: tuple[str, ...], message: str
) -> None:
    result = cli("score", HANDMADE_RUNS / "candidate.arrow", *options, "--output", tmp_path / "s.arrow")
    assert result.exit_code == 2
    assert message in result.stderr
    assert not (tmp_path / "s.arrow").exists()
