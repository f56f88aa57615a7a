"""The pairwise judge against a real chat-completions server on loopback: both orders of every pair are
asked, faults cost retries never pairs, and a rerun is free."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from rag_compare.core.digest import json_digest
from rag_compare.core.errors import ConfigError, ContractError, JudgeError
from rag_compare.llm import dispatch, pairwise_judge
from rag_compare.llm.limits import Limits
from rag_compare.llm.pairwise_judge import PairwiseJudge
from tests.helpers.chat_server import ChatServer, Reply
from tests.helpers.pairs import tagged

MARK = "[candidate]"
# Four pairs: p0 and p1 answerable with a note, p2 unanswerable without a note or a baseline context,
# p3 answerable with a blank note. Each candidate answer carries MARK, so a responder can tell the sides apart.
QUESTIONS = ["How long is leave?", "Who approves travel?", "What does the CEO earn?", "Where is the office?"]
PAIRS = pl.DataFrame(
    {
        "case_id": ["p0", "p1", "p2", "p3"],
        "question": QUESTIONS,
        "answerability": ["answerable", "answerable", "unanswerable", "answerable"],
        "acceptance_note": ["says 20 days", "names the manager", None, " "],
        "baseline_answer": ["Leave is 20 days.", "Your manager.", "About a million.", "In Berlin."],
        "baseline_context": ["[a] Leave is 20 days.", "[b] Managers approve travel.", None, "[d] Berlin office."],
        "candidate_answer": [f"{MARK} 20 days.", f"{MARK} The manager.", f"{MARK} I don't know.", f"{MARK} Berlin."],
        "candidate_context": ["[a] Leave is 20 days.", "", "[x] Pay is private.", "[d] Berlin office."],
    }
)
COLUMNS = [
    "baseline_first",
    "baseline_first_reason",
    "candidate_first",
    "candidate_first_reason",
    "prompt_tokens",
    "completion_tokens",
    "requests",
    "judge_status",
    "judge_error",
]


def judge_for(server: ChatServer, tmp_path: Path, **limits: Any) -> PairwiseJudge:
    settings: dict[str, Any] = {"timeout": 1.0, "max_retries": 2, "backoff": 0.01} | limits
    return PairwiseJudge(
        "judge-model", base_url=server.base_url, cache=tmp_path / "cache.sqlite3", limits=Limits(**settings)
    )


def order_of(request: dict[str, Any]) -> str:
    first = tagged(request, "first_answer") or ""
    return "candidate_first" if first.startswith(MARK) else "baseline_first"


def choice(better: str, reason: str = "because") -> Reply:
    return Reply(content=json.dumps({"better": better, "reason": reason}))


def test_both_orders_are_sent_with_the_strict_schema(tmp_path: Path) -> None:
    with ChatServer(lambda request, attempt: choice("tie")) as server:
        choices = judge_for(server, tmp_path, concurrency=1).judge_pairs(PAIRS)
        requests = list(server.requests)
    assert len(requests) == 2 * PAIRS.height
    baseline_first, candidate_first = requests[0], requests[1]
    assert (tagged(baseline_first, "first_answer"), tagged(baseline_first, "second_answer")) == (
        "Leave is 20 days.",
        f"{MARK} 20 days.",
    )
    assert (tagged(candidate_first, "first_answer"), tagged(candidate_first, "second_answer")) == (
        f"{MARK} 20 days.",
        "Leave is 20 days.",
    )
    assert [order_of(request) for request in requests] == ["baseline_first", "candidate_first"] * 4
    assert [tagged(request, "question") for request in requests] == [q for q in QUESTIONS for _ in range(2)]
    response_format = baseline_first["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["strict"] is True
    assert response_format["json_schema"]["schema"] == {
        "type": "object",
        "properties": {"better": {"type": "string", "enum": ["first", "second", "tie"]}, "reason": {"type": "string"}},
        "required": ["better", "reason"],
        "additionalProperties": False,
    }
    assert baseline_first["model"] == "judge-model"
    assert baseline_first["temperature"] == 0.0
    assert [message["role"] for message in baseline_first["messages"]] == ["system", "user"]
    assert tagged(baseline_first, "acceptance_note") == "says 20 days"
    # p1's candidate context is blank, p2's baseline context null: both are said to be missing.
    assert tagged(requests[2], "second_context") == "(no context recorded)"
    assert tagged(requests[4], "first_context") == "(no context recorded)"
    assert tagged(requests[4], "second_context") == "[x] Pay is private."
    # p2 has no note, p3 a blank one: the block is left out.
    assert tagged(requests[4], "acceptance_note") is None
    assert tagged(requests[6], "acceptance_note") is None
    assert "cannot be answered" in requests[4]["messages"][-1]["content"]
    assert "cannot be answered" not in requests[0]["messages"][-1]["content"]
    assert choices.columns == COLUMNS
    assert choices.get_column("baseline_first").to_list() == ["tie"] * 4
    assert choices.get_column("judge_status").to_list() == ["ok"] * 4
    assert choices.get_column("judge_error").to_list() == [None] * 4


def test_a_judge_that_always_answers_first_says_first_in_both_orders(tmp_path: Path) -> None:
    with ChatServer(lambda request, attempt: choice("first", f"{order_of(request)} reason")) as server:
        choices = judge_for(server, tmp_path).judge_pairs(PAIRS)
    assert choices.height == PAIRS.height
    assert choices.get_column("baseline_first").to_list() == ["first"] * 4
    assert choices.get_column("candidate_first").to_list() == ["first"] * 4
    assert choices.get_column("baseline_first_reason").to_list() == ["baseline_first reason"] * 4
    assert choices.get_column("candidate_first_reason").to_list() == ["candidate_first reason"] * 4
    assert choices.get_column("requests").to_list() == [2] * 4


def test_a_judge_that_prefers_the_candidate_picks_its_position_in_each_order(tmp_path: Path) -> None:
    def prefers_candidate(request: dict[str, Any], attempt: int) -> Reply:
        return choice("first" if (tagged(request, "first_answer") or "").startswith(MARK) else "second")

    with ChatServer(prefers_candidate) as server:
        choices = judge_for(server, tmp_path).judge_pairs(PAIRS)
    assert choices.get_column("baseline_first").to_list() == ["second"] * 4
    assert choices.get_column("candidate_first").to_list() == ["first"] * 4
    assert choices.get_column("judge_status").to_list() == ["ok"] * 4


def test_faults_cost_retries_never_pairs(tmp_path: Path) -> None:
    """p0: rate-limited once in each order, then answered. p1: the candidate-first order answers 500 every
    time. p2: the baseline-first order hangs past the timeout, the other answers text that is not JSON.
    p3: the candidate-first order answers JSON that breaks the schema (a choice outside the enum)."""

    def responder(request: dict[str, Any], attempt: int) -> Reply:
        question, order = tagged(request, "question"), order_of(request)
        if question == QUESTIONS[0] and attempt == 1:
            return Reply(status=429, headers={"Retry-After": "0"})
        if question == QUESTIONS[1] and order == "candidate_first":
            return Reply(status=500)
        if question == QUESTIONS[2]:
            return Reply(delay=3.0) if order == "baseline_first" else Reply(content="The first one, clearly.")
        if question == QUESTIONS[3] and order == "candidate_first":
            return Reply(content=json.dumps({"better": "both", "reason": "neither"}))
        return choice("second")

    with ChatServer(responder) as server:
        choices = judge_for(server, tmp_path, timeout=0.5, max_retries=1).judge_pairs(PAIRS)
        attempts = [(tagged(request, "question"), order_of(request)) for request in server.requests]
    rows = choices.rows(named=True)
    assert [row["judge_status"] for row in rows] == ["ok", "judge_failed", "judge_failed", "judge_failed"]
    # p0: 429 then success in both orders, two requests each.
    assert rows[0]["requests"] == 4
    assert (rows[0]["baseline_first"], rows[0]["candidate_first"], rows[0]["judge_error"]) == ("second", "second", None)
    # p1: the baseline-first order answered and keeps its choice; the other failed twice (max_retries=1).
    assert (rows[1]["baseline_first"], rows[1]["baseline_first_reason"]) == ("second", "because")
    assert (rows[1]["candidate_first"], rows[1]["candidate_first_reason"]) == (None, None)
    assert rows[1]["judge_error"].startswith("candidate_first: HTTP 500")
    assert rows[1]["judge_error"].endswith("(gave up after 2 attempts)")
    assert "baseline_first" not in rows[1]["judge_error"]
    assert attempts.count((QUESTIONS[1], "candidate_first")) == 2
    assert rows[1]["requests"] == 1 + 2
    # p2: both orders failed, their errors joined in order.
    baseline_error, candidate_error = rows[2]["judge_error"].split("; ")
    assert baseline_error.startswith("baseline_first: no reply within the timeout")
    assert candidate_error.startswith("candidate_first: the reply is not JSON")
    assert (rows[2]["baseline_first"], rows[2]["candidate_first"]) == (None, None)
    # p3: a reply that breaks the schema is retried like any bad reply, then kept as the error.
    assert attempts.count((QUESTIONS[3], "candidate_first")) == 2
    assert rows[3]["judge_error"].startswith("candidate_first: the reply does not match the schema")
    assert "'both' is not one of" in rows[3]["judge_error"]
    assert (rows[3]["baseline_first"], rows[3]["candidate_first"]) == ("second", None)


def test_a_rerun_sends_nothing_and_the_plan_counts_the_cache(tmp_path: Path) -> None:
    with ChatServer(lambda request, attempt: choice("first")) as server:
        judge = judge_for(server, tmp_path)
        before = judge.plan(PAIRS)
        assert server.count() == 0
        judge.judge_pairs(PAIRS.head(1))
        partly = judge.plan(PAIRS)
        first = judge.judge_pairs(PAIRS)
        sent = server.count()
        second = judge.judge_pairs(PAIRS)
        after = judge.plan(PAIRS)
        assert server.count() == sent == 2 * 4  # p0's two requests were sent once, by the first call
    assert (before.cases, before.requests, before.cached, before.to_send) == (4, 8, 0, 8)
    assert (partly.cached, partly.to_send) == (2, 6)
    assert (after.cached, after.to_send, after.prompt_tokens, after.completion_tokens) == (8, 0, 0, 0)
    assert before.completion_tokens == 8 * 60  # a short reply a request
    assert before.prompt_tokens > partly.prompt_tokens > 0
    assert second.get_column("requests").to_list() == [0] * 4
    assert first.get_column("requests").to_list() == [0, 2, 2, 2]  # p0 came from the cache already
    assert second.drop("requests").equals(first.drop("requests"))


def test_the_plan_creates_no_cache_file(tmp_path: Path) -> None:
    judge = PairwiseJudge("m", base_url="http://127.0.0.1:9/v1", cache=tmp_path / "absent.sqlite3")
    plan = judge.plan(PAIRS)
    assert (plan.requests, plan.cached) == (8, 0)
    assert not (tmp_path / "absent.sqlite3").exists()


def test_a_refused_key_stops_everything(tmp_path: Path) -> None:
    with (
        ChatServer(lambda request, attempt: Reply(status=401)) as server,
        pytest.raises(JudgeError, match="refused the request: HTTP 401"),
    ):
        judge_for(server, tmp_path).judge_pairs(PAIRS)


def test_tokens_are_summed_over_both_replies(tmp_path: Path) -> None:
    def responder(request: dict[str, Any], attempt: int) -> Reply:
        if order_of(request) == "baseline_first":
            return Reply(content=json.dumps({"better": "tie", "reason": "r"}), prompt_tokens=100, completion_tokens=7)
        return Reply(content=json.dumps({"better": "tie", "reason": "r"}), prompt_tokens=120, completion_tokens=9)

    with ChatServer(responder) as server:
        choices = judge_for(server, tmp_path).judge_pairs(PAIRS)
    assert choices.get_column("prompt_tokens").to_list() == [100 + 120] * 4
    assert choices.get_column("completion_tokens").to_list() == [7 + 9] * 4
    assert choices.schema["prompt_tokens"] == pl.Int64


def test_no_pairs_send_nothing(tmp_path: Path) -> None:
    with ChatServer() as server:
        choices = judge_for(server, tmp_path).judge_pairs(PAIRS.clear())
        assert server.count() == 0
    assert choices.columns == COLUMNS
    assert choices.height == 0


def test_concurrency_bound_holds(tmp_path: Path) -> None:
    with ChatServer(lambda request, attempt: choice("tie"), latency=0.1) as server:
        judge_for(server, tmp_path, concurrency=2).judge_pairs(PAIRS)
        assert server.count() == 8
        assert server.max_in_flight == 2


def test_a_pool_spreads_the_pairs_and_a_failing_endpoint_costs_no_pair(tmp_path: Path) -> None:
    """One request at a time; the failing endpoint is first in the pool: the first three requests try it
    (then it is set aside) and are retried on the live one; every other request goes straight there."""
    with (
        ChatServer(lambda request, attempt: Reply(status=503)) as failing,
        ChatServer(lambda request, attempt: choice("tie")) as live,
    ):
        judge = PairwiseJudge(
            "judge-model",
            base_url=[failing.base_url, live.base_url],
            cache=tmp_path / "cache.sqlite3",
            limits=Limits(concurrency=1, timeout=1.0, max_retries=1, backoff=0.01),
        )
        choices = judge.judge_pairs(PAIRS)
        assert (failing.count(), live.count()) == (3, 8)
        again = judge.judge_pairs(PAIRS)  # from the cache, stored under the live endpoint's key
        assert (failing.count(), live.count()) == (3, 8)
    assert choices.get_column("judge_status").to_list() == ["ok"] * 4
    assert choices.get_column("requests").sum() == 8 + 3
    assert again.get_column("requests").sum() == 0
    assert {name: usage.to_dict() for name, usage in judge.endpoint_usage.items()} == {
        failing.base_url: {"sent": 3, "succeeded": 0, "failed": 3},
        live.base_url: {"sent": 8, "succeeded": 8, "failed": 0},
    }
    assert judge.config["endpoint"] == sorted([failing.base_url, live.base_url])
    assert judge.pool_summary()[1] == f"endpoint {live.base_url}: 8 requests sent, 8 succeeded, 0 failed"
    assert judge_for(live, tmp_path).pool_summary() == []  # one endpoint: nothing to add to the count of requests


def test_progress_names_the_pairs_and_both_orders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    labels: list[tuple[str | None, int]] = []

    @contextlib.contextmanager
    def recording(label: str | None, total: int) -> Iterator[Callable[[], None]]:
        labels.append((label, total))
        yield lambda: None

    monkeypatch.setattr(dispatch, "progress_bar", recording)
    with ChatServer(lambda request, attempt: choice("tie")) as server:
        dataclasses.replace(judge_for(server, tmp_path), progress=True).judge_pairs(PAIRS)
    assert labels == [("judging 4 pairs in both orders", 8)]


def test_fingerprint_names_what_decides_the_choices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = PairwiseJudge("m", base_url="http://user:secret@127.0.0.1:9/v1", cache=False)
    assert base.endpoint == "http://127.0.0.1:9/v1"
    assert "secret" not in json.dumps(base.config)
    assert base.name == "openai-pairwise"
    assert base.config["method"] == "pairwise-1"
    assert set(base.config) == {
        "name",
        "method",
        "model",
        "endpoint",
        "temperature",
        "seed",
        "prompt_version",
        "prompts_sha256",
        "rag_compare_version",
    }
    same = PairwiseJudge("m", base_url="http://127.0.0.1:9/v1", cache=tmp_path / "c", limits=Limits(2, 5))
    assert same.fingerprint == base.fingerprint  # how requests are sent does not change the choices
    for changed in (
        PairwiseJudge("other", base_url="http://127.0.0.1:9/v1"),
        PairwiseJudge("m", base_url="http://127.0.0.1:9/v1", temperature=0.7),
        PairwiseJudge("m", base_url="http://127.0.0.1:9/v1", seed=1),
        PairwiseJudge("m", base_url="http://127.0.0.1:10/v1"),
    ):
        assert changed.fingerprint != base.fingerprint
    shipped = base.fingerprint, base.config["prompts_sha256"]
    prompts = tmp_path / "prompts"
    shutil.copytree(Path(pairwise_judge.__file__).parent / "prompts" / "pairwise", prompts)
    with (prompts / "compare.j2").open("a") as template:
        template.write("\nBe brief.\n")
    monkeypatch.setattr(pairwise_judge, "_PROMPTS", prompts)
    assert (base.fingerprint, base.config["prompts_sha256"]) != shipped  # the same judge, other prompts
    assert base.fingerprint == json_digest(base.config)


def test_bad_settings_and_inputs_are_refused() -> None:
    with pytest.raises(ConfigError, match="needs a model"):
        PairwiseJudge(" ")
    with pytest.raises(ConfigError, match="concurrency"):
        PairwiseJudge("m", limits=Limits(concurrency=0))
    assert PairwiseJudge("m").limits == Limits()
    judge = PairwiseJudge("m", base_url="http://127.0.0.1:9/v1", cache=False)
    broken = PAIRS.with_columns(baseline_answer=pl.lit(1)).drop("candidate_context")
    with pytest.raises(ContractError) as refused:
        judge.judge_pairs(broken)
    assert [(problem.column, problem.value) for problem in refused.value.problems] == [
        ("baseline_answer", "Int32"),
        ("candidate_context", "no such column"),
    ]
    assert "column 'baseline_answer': got Int32; expected a column of text" in str(refused.value)
    with pytest.raises(ContractError, match="candidate_context"):
        judge.plan(broken)
