"""The OpenAI chat generator inside capture, against a real chat-completions server on loopback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from rag_compare.core.errors import ConfigError, EndpointError
from rag_compare.core.protocols import Case, Context
from rag_compare.llm.chat_generator import OpenAIGenerator
from rag_compare.llm.limits import Limits
from rag_compare.pipeline.runner import capture
from tests.helpers.chat_server import ChatServer, Reply

CORPUS = pl.DataFrame(
    {
        "case_id": [f"q{index}@v1" for index in range(6)],
        "question": [f"What is rule {index}?" for index in range(6)],
        "answerability": ["answerable"] * 6,
        "source_version": ["v1"] * 6,
        "required_passage_ids": [[f"p{index}"] for index in range(6)],
    }
)


def retrieve(case: Case, top_k: int) -> list[dict[str, Any]]:
    index = case.case_id[1]
    return [{"passage_id": f"p{index}", "score": 2.0, "text": f"Rule {index} is {index} days."}]


def question_of(request: dict[str, Any]) -> str:
    return str(request["messages"][-1]["content"]).rsplit("Question: ", 1)[-1]


def test_answers_tokens_and_the_exact_messages_are_recorded(tmp_path: Path) -> None:
    template = tmp_path / "prompt.j2"
    template.write_text("Case {{ case_id }} ({{ source_version }}), {{ passage_ids | join(',') }}:\n{{ context }}\n")
    with ChatServer(lambda request, attempt: Reply(content="Four days.", prompt_tokens=30)) as server:
        generator = OpenAIGenerator(
            "chat-model", base_url=server.base_url, prompt_template=template, system="Be brief."
        )
        run = capture(CORPUS, retrieve, generator, top_k=1)
        sent = {request["messages"][-1]["content"].split(" ")[1]: request for request in server.requests}
    row = run.records.filter(pl.col("case_id") == "q4@v1").row(0, named=True)
    assert (row["status"], row["answer"], row["prompt_tokens"], row["completion_tokens"]) == ("ok", "Four days.", 30, 5)
    messages = json.loads(row["prompt_messages"])
    assert messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Case q4@v1 (v1), p4:\n[p4] Rule 4 is 4 days."},
    ]
    assert sent["q4@v1"]["messages"] == messages  # recorded exactly as sent
    assert sent["q4@v1"]["model"] == "chat-model"
    assert sent["q4@v1"]["temperature"] == 0.0
    assert run.config["model"] == "chat-model"
    assert run.config["prompt"] == template.read_text()
    assert run.config["generator"]["endpoint"] == server.base_url.rstrip("/")


def test_server_faults_cost_retries_or_one_case_never_the_capture() -> None:
    def responder(request: dict[str, Any], attempt: int) -> Reply:
        question = question_of(request)
        if "rule 0" in question and attempt == 1:
            return Reply(status=500)
        if "rule 1" in question:
            return Reply(status=500)
        if "rule 2" in question:
            return Reply(status=400)
        if "rule 3" in question and attempt == 1:
            return Reply(status=429, headers={"Retry-After": "0"})
        if "rule 4" in question:
            return Reply(delay=3.0)
        return Reply(content="Fine.")

    with ChatServer(responder) as server:
        generator = OpenAIGenerator("chat-model", base_url=server.base_url, limits=Limits(timeout=0.5))
        run = capture(
            CORPUS, retrieve, generator, top_k=1, limits=Limits(concurrency=4, timeout=1.0, max_retries=1, backoff=0.01)
        )
    rows = {row["case_id"]: row for row in run.records.iter_rows(named=True)}
    assert (rows["q0@v1"]["status"], rows["q0@v1"]["attempts"]) == ("ok", 2)
    assert (rows["q1@v1"]["status"], rows["q1@v1"]["attempts"]) == ("failed", 2)
    assert rows["q1@v1"]["error"].startswith("HTTP 500")
    assert (rows["q2@v1"]["status"], rows["q2@v1"]["attempts"]) == ("failed", 1)  # a 400 is not retried
    assert rows["q2@v1"]["error"].startswith("HTTP 400")
    assert (rows["q3@v1"]["status"], rows["q3@v1"]["attempts"]) == ("ok", 2)
    assert rows["q4@v1"]["status"] in {"failed", "timeout"}
    assert rows["q4@v1"]["failed_stage"] == "generate"
    assert rows["q4@v1"]["retrieved_passage_ids"] == ["p4"]
    assert rows["q5@v1"]["answer"] == "Fine."


def test_a_refused_key_stops_the_capture() -> None:
    with ChatServer(lambda request, attempt: Reply(status=401)) as server:
        generator = OpenAIGenerator("chat-model", base_url=server.base_url)
        with pytest.raises(EndpointError, match="refused the request: HTTP 401"):
            capture(CORPUS, retrieve, generator, top_k=1)


def test_a_template_that_cannot_render_is_refused_when_made(tmp_path: Path) -> None:
    template = tmp_path / "bad.j2"
    template.write_text("{{ question }} {{ policy_text }}")
    with pytest.raises(ConfigError, match=r"does not render.*policy_text"):
        OpenAIGenerator("m", base_url="http://127.0.0.1:9", prompt_template=template)
    with pytest.raises(ConfigError, match="no such prompt template"):
        OpenAIGenerator("m", base_url="http://127.0.0.1:9", prompt_template=tmp_path / "missing.j2")
    with pytest.raises(ConfigError, match="needs a model"):
        OpenAIGenerator(" ")


def test_the_default_prompt_holds_the_context_and_question() -> None:
    generator = OpenAIGenerator("m", base_url="http://127.0.0.1:9")
    case = Case("q1@v1", "What is rule 1?", "v1")
    [message] = generator.messages(case, Context("[p1] Rule 1 is 1 days.", ("p1",)))
    assert message["role"] == "user"
    assert message["content"].endswith("[p1] Rule 1 is 1 days.\n\nQuestion: What is rule 1?")
