"""The LLM judge against a real chat-completions server on loopback: faults cost retries, never cases."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from rag_compare import compare, freeze_run
from rag_compare.core.errors import ConfigError, JudgeError
from rag_compare.io.runs import Run
from rag_compare.llm.judge_checks import DEFAULT_CHECKS
from rag_compare.llm.limits import Limits
from rag_compare.llm.llm_judge import OpenAIJudge
from tests.helpers.chat_server import ChatServer, Reply, sample_for_schema
from tests.helpers.judged import CORPUS, DEFAULT_REQUESTS, QUESTIONS, RECORDS


@pytest.fixture
def run() -> Run:
    return freeze_run(RECORDS, CORPUS, {"name": "judged"})


def judge_for(server: ChatServer, tmp_path: Path, checks: Sequence[str] = DEFAULT_CHECKS, **limits: Any) -> OpenAIJudge:
    settings: dict[str, Any] = {"timeout": 2.0, "max_retries": 2, "backoff": 0.01} | limits
    cache = tmp_path / "cache.sqlite3"
    return OpenAIJudge("judge-model", base_url=server.base_url, checks=checks, cache=cache, limits=Limits(**settings))


def question_of(request: dict[str, Any]) -> str:
    user = request["messages"][-1]["content"]
    return str(user.split("<question>\n", 1)[1].split("\n</question>", 1)[0])


def check_of(request: dict[str, Any]) -> str:
    return str(request["response_format"]["json_schema"]["name"])


def test_every_case_is_judged_with_structured_output(run: Run, tmp_path: Path) -> None:
    with ChatServer() as server:
        verdicts = judge_for(server, tmp_path).judge(run.records)
        assert server.count() == DEFAULT_REQUESTS
        first = server.requests[0]
    assert first["model"] == "judge-model"
    assert first["temperature"] == 0.0
    assert first["response_format"]["type"] == "json_schema"
    assert first["response_format"]["json_schema"]["strict"] is True
    assert [message["role"] for message in first["messages"]] == ["system", "user"]
    assert verdicts.height == run.records.height
    assert verdicts.get_column("judge_status").to_list() == ["ok"] * 8 + ["not_judged"]
    # The default reply: every claim "supported", sufficiency "sufficient", rating 1 (the schemas' first values).
    assert verdicts.get_column("grounded").to_list() == [1.0] * 6 + [None, None, None]
    assert verdicts.get_column("context_sufficiency").to_list() == [1.0] * 7 + [None, None]
    assert verdicts.get_column("helpfulness").to_list() == [0.0] * 8 + [None]
    assert verdicts.get_column("abstained").to_list()[6] is True
    assert verdicts.get_column("requests").sum() == DEFAULT_REQUESTS
    assert verdicts.get_column("prompt_tokens").to_list()[0] == 3 * 10  # three replies of 10 prompt tokens
    assert verdicts.get_column("helpfulness_explanation").to_list()[0] == "ok"


def test_faults_cost_retries_never_cases(run: Run, tmp_path: Path) -> None:
    """q0 is rate-limited once (Retry-After 1 s), q1 always answers 500, q2 hangs past the timeout,
    q3 answers text that is not JSON, q4 JSON that breaks the schema; q5 is fine."""

    def responder(request: dict[str, Any], attempt: int) -> Reply:
        question = question_of(request)
        if question == QUESTIONS[0] and attempt == 1:
            return Reply(status=429, headers={"Retry-After": "1"})
        if question == QUESTIONS[1]:
            return Reply(status=500)
        if question == QUESTIONS[2]:
            return Reply(delay=5.0)
        if question == QUESTIONS[3]:
            return Reply(content="Sure! The answer is grounded.")
        if question == QUESTIONS[4]:
            return Reply(content=json.dumps({"explanation": "missing the verdict"}))
        return Reply()

    with ChatServer(responder) as server:
        started = time.monotonic()
        verdicts = judge_for(server, tmp_path, timeout=0.5, max_retries=1).judge(run.records)
        elapsed = time.monotonic() - started
        attempts = [question_of(request) for request in server.requests]
    statuses = verdicts.get_column("judge_status").to_list()
    errors = verdicts.get_column("judge_error").to_list()
    assert verdicts.height == run.records.height
    assert statuses == [
        "ok",
        "judge_failed",
        "judge_failed",
        "judge_failed",
        "judge_failed",
        "ok",
        "ok",
        "ok",
        "not_judged",
    ]
    assert elapsed >= 1.0  # the Retry-After wait was honoured
    assert attempts.count(QUESTIONS[0]) == 3 * 2  # each of its three checks rate-limited once, then answered
    assert attempts.count(QUESTIONS[1]) == 3 * 2  # each check tried twice (max_retries=1)
    assert "HTTP 500" in errors[1]
    assert "gave up after 2 attempts" in errors[1]
    assert "no reply within the timeout" in errors[2]
    assert "not JSON" in errors[3]
    assert "does not match the schema" in errors[4]
    assert "'verdict' is a required property" in errors[4]
    failed = verdicts.filter(pl.col("judge_status") == "judge_failed")
    for signal in ("grounded", "context_sufficiency", "helpfulness", "abstained", "abstention_correct"):
        assert failed.get_column(signal).null_count() == failed.height, signal  # never counted as a pass


def test_concurrency_bound_holds(run: Run, tmp_path: Path) -> None:
    with ChatServer(latency=0.1) as server:
        judge_for(server, tmp_path, concurrency=3).judge(run.records)
        assert server.max_in_flight == 3


def test_a_rerun_makes_no_request(run: Run, tmp_path: Path) -> None:
    with ChatServer() as server:
        judge = judge_for(server, tmp_path)
        first = judge.judge(run.records)
        sent = server.count()
        second = judge.judge(run.records)
        assert server.count() == sent == DEFAULT_REQUESTS
    assert second.get_column("requests").sum() == 0
    assert second.drop("requests").equals(first.drop("requests"))


def test_unchanged_cases_of_another_run_are_not_paid_again(run: Run, tmp_path: Path) -> None:
    changed = RECORDS.with_columns(
        answer=pl.when(pl.col("case_id") == "q0@v1").then(pl.lit("Rule 0 is 9 days.")).otherwise(pl.col("answer"))
    )
    other = freeze_run(changed, CORPUS, {"name": "other"})
    with ChatServer() as server:
        judge = judge_for(server, tmp_path)
        judge.judge(run.records)
        before = server.count()
        judge.judge(other.records)
        new = server.requests[before:]
    # Only the answer of q0 changed: its groundedness and helpfulness are asked again, its sufficiency is not.
    assert sorted(check_of(request) for request in new) == ["groundedness", "helpfulness"]
    assert {question_of(request) for request in new} == {QUESTIONS[0]}


def test_an_interrupted_scoring_resumes_where_it_stopped(run: Run, tmp_path: Path) -> None:
    """The endpoint starts refusing the key after ten replies: judging stops with an error, and a rerun
    sends only the requests that had not been answered."""
    lock, answered = threading.Lock(), {"replies": 0, "refusing": True}

    def refusing_after_ten(request: dict[str, Any], attempt: int) -> Reply:
        with lock:
            if answered["refusing"] and answered["replies"] >= 10:
                return Reply(status=401)
            answered["replies"] += 1
        return Reply()

    with ChatServer(refusing_after_ten) as server:
        with pytest.raises(JudgeError, match="refused the request: HTTP 401"):
            judge_for(server, tmp_path, concurrency=1).judge(run.records)
        answered["refusing"] = False
        before = server.count()
        verdicts = judge_for(server, tmp_path, concurrency=1).judge(run.records)
        assert server.count() - before == DEFAULT_REQUESTS - 10
    assert verdicts.get_column("judge_status").to_list() == ["ok"] * 8 + ["not_judged"]


def test_checks_are_switches(run: Run, tmp_path: Path) -> None:
    with ChatServer() as server:
        verdicts = judge_for(server, tmp_path, checks=("query_ease", "correctness", "response")).judge(run.records)
        asked = {check_of(request) for request in server.requests}
        # correctness needs an acceptance note: none@v1 has none. query_ease and response run on all 8 answered.
        assert server.count() == 8 + 7 + 8
    assert asked == {"query_ease", "correctness", "response"}
    assert {"query_ease", "correctness", "response"} <= set(verdicts.columns)
    assert "grounded" not in verdicts.columns
    assert "context_sufficiency" not in verdicts.columns
    assert verdicts.get_column("correctness").to_list()[6] is None


def test_scores_follow_the_documented_scales(run: Run, tmp_path: Path) -> None:
    """One supported and one unsupported claim: grounded 0.5, both claims kept; rating 4 -> 0.75;
    partial -> 0.5."""

    def responder(request: dict[str, Any], attempt: int) -> Reply:
        check = check_of(request)
        if check == "groundedness":
            claims = [
                {"claim": "a", "verdict": "supported", "evidence": "Rule 0 is 0 days."},
                {"claim": "b", "verdict": "unsupported", "evidence": ""},
            ]
            return Reply(content=json.dumps({"explanation": "half", "claims": claims}))
        if check == "helpfulness":
            return Reply(content=json.dumps({"explanation": "good", "rating": 4}))
        schema = request["response_format"]["json_schema"]["schema"]
        return Reply(content=json.dumps(sample_for_schema(schema) | {"verdict": "partial"}))

    with ChatServer(responder) as server:
        verdicts = judge_for(server, tmp_path).judge(run.records.head(1))
    row = verdicts.row(0, named=True)
    assert (row["grounded"], row["helpfulness"], row["context_sufficiency"]) == (0.5, 0.75, 0.5)
    # q0's context: "[p0] Rule 0 is 0 days."
    assert row["claims"] == [
        {"text": "a", "supported": True, "passage_id": None, "start": 5, "end": 22, "cited": "Rule 0 is 0 days."},
        {"text": "b", "supported": False, "passage_id": None, "start": None, "end": None, "cited": None},
    ]
    assert row["groundedness_explanation"] == "half"


def test_fingerprint_names_what_decides_the_verdicts(tmp_path: Path) -> None:
    base = OpenAIJudge("m", base_url="http://user:secret@127.0.0.1:9/v1", cache=False)
    assert base.endpoint == "http://127.0.0.1:9/v1"
    assert "secret" not in json.dumps(base.config)
    same = OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", cache=tmp_path / "c", limits=Limits(2, 5))
    assert same.fingerprint == base.fingerprint  # how requests are sent does not change verdicts
    for changed in (
        OpenAIJudge("other", base_url="http://127.0.0.1:9/v1"),
        OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", checks=("groundedness",)),
        OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", temperature=0.7),
        OpenAIJudge("m", base_url="http://127.0.0.1:10/v1"),
    ):
        assert changed.fingerprint != base.fingerprint
    assert set(base.config) >= {"model", "checks", "temperature", "prompts_sha256", "rag_compare_version"}


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ConfigError, match="unknown check nope"):
        OpenAIJudge("m", checks=("nope",))
    with pytest.raises(ConfigError, match="needs a model"):
        OpenAIJudge(" ")
    with pytest.raises(ConfigError, match="concurrency"):
        OpenAIJudge("m", limits=Limits(concurrency=0))


def test_no_key_and_no_endpoint_is_a_clear_error(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIJudge("m", cache=False).judge(run.records)


def test_base_url_and_key_come_from_the_environment(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ChatServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-environment")
        judge = OpenAIJudge("m", cache=False)
        judge.judge(run.records.head(1))
        assert server.count() == 3
    assert judge.endpoint == server.base_url


def test_plan_counts_requests_and_cached_ones_without_sending(run: Run, tmp_path: Path) -> None:
    with ChatServer() as server:
        judge = judge_for(server, tmp_path)
        before = judge.plan(run.records)
        assert server.count() == 0
        judge.judge(run.records.head(2))
        after = judge.plan(run.records)
        assert server.count() == 6
    assert (before.requests, before.cached, before.to_send) == (DEFAULT_REQUESTS, 0, DEFAULT_REQUESTS)
    assert (after.cached, after.to_send) == (6, DEFAULT_REQUESTS - 6)
    assert before.prompt_tokens > after.prompt_tokens > 0
    assert "dry run" in before.render("text")


def test_compare_can_judge_with_the_llm_directly(run: Run, tmp_path: Path) -> None:
    """``compare(judge=OpenAIJudge(...))`` judges both runs on the fly; the candidate's unchanged cases
    cost nothing, and a case whose judging failed gets its own status."""
    broken = QUESTIONS[5]

    def responder(request: dict[str, Any], attempt: int) -> Reply:
        if question_of(request) == broken and check_of(request) == "helpfulness":
            return Reply(status=500)
        return Reply()

    candidate_records = RECORDS.with_columns(
        answer=pl.when(pl.col("case_id") == "q5@v1").then(pl.lit("Rule 5 is five days.")).otherwise("answer")
    )
    candidate = freeze_run(candidate_records, CORPUS, {"name": "candidate"})
    with ChatServer(responder) as server:
        judge = judge_for(server, tmp_path, max_retries=0)
        judge.judge(run.records.head(5))  # the baseline's first five cases are already cached
        before = server.count()
        comparison = compare(run, candidate, judge=judge)
        # Baseline: q5 (3), none@v1 (2), nocontext@v1 (1). Candidate: only q5's changed answer is asked
        # about again (groundedness, helpfulness); its context and every other case come from the cache.
        assert server.count() - before == 6 + 2
    statuses = dict(comparison.cases.select("case_id", pl.col("status").cast(pl.String)).iter_rows())
    assert statuses["q5@v1"] == "judge_failed_in_both"
    assert comparison.evaluator["name"] == "openai"
    assert "baseline_context_sufficiency" in comparison.cases.columns


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("<html>busy</html>", "the reply is not a chat completion"),
        ('{"choices": []}', "the reply has no message content"),
        ('{"choices": [{"message": {"role": "assistant"}}]}', "the reply has no message content"),
    ],
)
def test_a_body_that_is_no_chat_completion_fails_the_case_not_the_run(
    run: Run, tmp_path: Path, body: str, error: str
) -> None:
    with ChatServer(lambda request, attempt: Reply(body=body)) as server:
        verdicts = judge_for(server, tmp_path, max_retries=0).judge(run.records.head(2))
    assert verdicts.get_column("judge_status").to_list() == ["judge_failed"] * 2
    assert all(f"{error}" in found and "(gave up after 1 attempt)" in found for found in verdicts["judge_error"])


def test_a_malformed_claim_list_is_judge_failed_with_the_reason_never_dropped(run: Run, tmp_path: Path) -> None:
    """q0's groundedness reply gives a claim without its evidence, every time it is asked: q0 is judge_failed,
    its error says why, and no claim of it is kept."""

    def responder(request: dict[str, Any], attempt: int) -> Reply:
        schema = request["response_format"]["json_schema"]["schema"]
        if check_of(request) == "groundedness" and question_of(request) == QUESTIONS[0]:
            return Reply(content=json.dumps({"explanation": "e", "claims": [{"claim": "a", "verdict": "supported"}]}))
        return Reply(content=json.dumps(sample_for_schema(schema)))

    with ChatServer(responder) as server:
        verdicts = judge_for(server, tmp_path, checks=("groundedness",)).judge(run.records.head(2))
    first, second = verdicts.rows(named=True)
    assert first["judge_status"] == "judge_failed"
    assert first["judge_error"].startswith("groundedness: the reply does not match the schema: 'evidence'")
    assert (first["claims"], first["grounded"]) == (None, None)
    assert second["judge_status"] == "ok"
    assert second["claims"] is not None
