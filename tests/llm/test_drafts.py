"""Drafting synthetic cases against a loopback ``ChatServer``."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from rag_compare.core.errors import ConfigError, EndpointError
from rag_compare.io.corpus import load_corpus
from rag_compare.io.drafts_file import Drafts
from rag_compare.llm.drafts import DISTRACTOR_NOTE, draft_cases, draft_id
from rag_compare.llm.limits import Limits
from tests.helpers.chat_server import ChatServer, Reply
from tests.helpers.drafting import PASSAGES, distinct, passage_of

FAST = Limits(timeout=5.0, max_retries=0, backoff=0.0)


pytestmark = pytest.mark.usefixtures("reply_cache")


def draft(server: ChatServer, max_retries: int = 0, **options: Any) -> Drafts:
    settings: dict[str, Any] = {"model": "drafter", "n": 2, "cache": False, **options}
    limits = dataclasses.replace(FAST, max_retries=max_retries)
    return draft_cases(PASSAGES, base_url=server.base_url, limits=limits, **settings)


# -- drafting ---------------------------------------------------------------------------------------------------------


def test_each_passage_gives_a_question_its_wordings_and_a_distractor() -> None:
    with ChatServer(distinct) as server:
        drafts = draft(server, n=3, wordings=2, source_version="v2")
    frame = drafts.frame
    assert frame.height == 3 * (1 + 2 + 1)
    assert frame.group_by("drafted_from").len().get_column("len").to_list() == [4, 4, 4]
    assert frame.columns[-3:] == ["drafted_from", "draft_group", "drafted_by"]
    assert (
        frame.select(
            synthetic=pl.col("origin").eq("synthetic").all(),
            unreviewed=(~pl.col("reviewed")).all(),
            by_model=pl.col("drafted_by").eq("drafter").all(),
            version=pl.col("source_version").eq("v2").all(),
            id_form=pl.col("case_id").str.contains(r"^draft-[0-9a-f]{10}@v2$").all(),
            unique=pl.col("case_id").is_unique().all(),
        ).row(0)
        == (True,) * 6
    )
    hotel = frame.filter(pl.col("drafted_from").list.first() == "hotel-1")
    assert hotel.select("question", "answerability", "category", "required_passage_ids", "acceptance_note").rows() == [
        ("What does hotel-1 say?", "answerable", "synthetic_wording", ["hotel-1"], "The figure of hotel-1."),
        ("Wording 0 of hotel-1?", "answerable", "synthetic_wording", ["hotel-1"], "The figure of hotel-1."),
        ("Wording 1 of hotel-1?", "answerable", "synthetic_wording", ["hotel-1"], "The figure of hotel-1."),
        ("Who wrote hotel-1?", "unanswerable", "distractor", [], DISTRACTOR_NOTE),
    ]
    question_id = draft_id("hotel-1", "What does hotel-1 say?", "v2")
    assert hotel.get_column("case_id")[0] == question_id
    assert hotel.get_column("draft_group").unique().to_list() == [question_id]
    assert load_corpus(frame).warnings  # a valid corpus, whose drafts await review
    assert (drafts.passages, drafts.drafted, drafts.failures, drafts.sent, drafts.cached) == (3, 3, (), 3, 0)


def test_one_request_per_passage_carries_the_schema_and_the_passage() -> None:
    with ChatServer(distinct) as server:
        draft(server, n=2, wordings=3, seed=7, source_version="v2")
    assert len(server.requests) == 2
    for request in server.requests:
        assert request["model"] == "drafter"
        assert (request["temperature"], request["seed"]) == (0, 7)
        response_format = request["response_format"]
        assert response_format["type"] == "json_schema"
        assert response_format["json_schema"]["strict"] is True
        schema = response_format["json_schema"]["schema"]
        assert schema["required"] == ["question", "wordings", "acceptance_note", "distractor"]
        assert schema["additionalProperties"] is False
        assert (schema["properties"]["wordings"]["minItems"], schema["properties"]["wordings"]["maxItems"]) == (3, 3)
        assert [message["role"] for message in request["messages"]] == ["system", "user"]
        passage = passage_of(request)
        text = PASSAGES.filter(pl.col("passage_id") == passage).get_column("text")[0]
        assert text in request["messages"][1]["content"]
        assert "exactly 3 other ways" in request["messages"][1]["content"]


def test_passages_are_picked_by_seed_within_the_source_version() -> None:
    with ChatServer(distinct) as server:
        first = draft(server, n=2, seed=3).frame.get_column("drafted_from").list.first().unique().sort().to_list()
        again = draft(server, n=2, seed=3).frame.get_column("drafted_from").list.first().unique().sort().to_list()
        old = draft(server, n=2, source_version="v1").frame.get_column("drafted_from").list.first().unique().to_list()
    assert first == again
    assert sorted(old) == ["old-hotel-1", "old-meal-1"]


def test_asking_for_more_passages_than_exist_drafts_them_all_and_says_so() -> None:
    with ChatServer(distinct) as server:
        drafts = draft(server, n=10, wordings=1, source_version="v1")
    assert (drafts.requested, drafts.available, drafts.passages) == (10, 2, 2)
    assert drafts.frame.height == 2 * 3
    assert "asked for 10 passages; only 2 exist of source version v1, so all were used" in drafts.render("text")
    payload = json.loads(drafts.render("json"))
    assert payload["passages"] == {"requested": 10, "available": 2, "sent": 2, "drafted": 2, "failed": 0}
    assert payload["counts"]["category"] == {"distractor": 2, "synthetic_wording": 4}


def test_ids_are_stable_across_runs_and_the_cache_answers_the_rerun(reply_cache: Path) -> None:
    with ChatServer(distinct) as server:
        first = draft(server, cache=True)
        cached = draft(server, cache=True)
        fresh = draft(server, cache=False)
    assert len(server.requests) == 4  # the cached rerun sent nothing
    assert (cached.cached, cached.sent) == (2, 0)
    assert reply_cache.exists()
    assert first.frame.equals(cached.frame)
    assert first.frame.get_column("case_id").to_list() == fresh.frame.get_column("case_id").to_list()


def test_a_server_error_is_retried() -> None:
    def flaky(request: dict[str, Any], attempt: int) -> Reply:
        return Reply(status=500) if attempt == 1 else distinct(request, attempt)

    with ChatServer(flaky) as server:
        drafts = draft(server, max_retries=2)
    assert drafts.failures == ()
    assert drafts.sent == 4
    assert drafts.frame.height == 2 * 4


def test_a_passage_that_fails_for_good_is_listed_and_gives_no_rows() -> None:
    def broken_meal(request: dict[str, Any], attempt: int) -> Reply:
        return Reply(status=500) if passage_of(request) == "meal-1" else distinct(request, attempt)

    with ChatServer(broken_meal) as server:
        drafts = draft(server, n=3, source_version="v2", max_retries=1)
    assert [failure.passage_id for failure in drafts.failures] == ["meal-1"]
    assert "HTTP 500" in drafts.failures[0].error
    assert "gave up after 2 attempts" in drafts.failures[0].error
    assert sorted(drafts.frame.get_column("drafted_from").list.first().unique()) == ["hotel-1", "mile-1"]
    assert drafts.frame.height == 2 * 4
    text = drafts.render("text")
    assert "failed (1 passage, no cases drafted from them):" in text
    assert "  - meal-1: HTTP 500" in text
    assert json.loads(drafts.render("json"))["failures"][0]["passage_id"] == "meal-1"


def test_a_refused_key_stops_everything() -> None:
    with ChatServer(lambda request, attempt: Reply(status=401)) as server, pytest.raises(EndpointError) as excinfo:
        draft(server)
    assert "HTTP 401" in str(excinfo.value)
    assert "OPENAI_API_KEY" in str(excinfo.value)


def test_no_passage_drafted_is_an_error() -> None:
    with ChatServer(lambda request, attempt: Reply(status=400)) as server, pytest.raises(EndpointError) as excinfo:
        draft(server)
    assert "no case could be drafted from the 2 passages sent" in str(excinfo.value)
    assert "HTTP 400" in str(excinfo.value)


def test_blank_and_repeated_texts_are_left_out() -> None:
    """The server's default reply is "ok" everywhere: the question stays, its repeats go."""
    with ChatServer() as server:
        drafts = draft(server, wordings=2)
    assert drafts.frame.height == 2
    assert drafts.dropped == 2 * 3
    assert drafts.frame.get_column("question").to_list() == ["ok", "ok"]
    assert "left out 6 blank or repeated texts" in drafts.render("text")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"model": " "}, "needs a model"),
        ({"n": 0}, "`n` must be 1 or more"),
        ({"wordings": -1}, "`wordings` must be 0 or more"),
        ({"source_version": "v9"}, "no passage has source version 'v9'. Versions found: v1, v2."),
    ],
)
def test_unusable_settings_are_refused_before_sending(options: dict[str, Any], message: str) -> None:
    with ChatServer(distinct) as server:
        with pytest.raises(ConfigError, match=re.escape(message)):
            draft(server, **options)
        assert server.count() == 0
