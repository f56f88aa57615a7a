"""What judging would cost: the token estimate and the cache lookup both LLM judges plan with."""

from __future__ import annotations

from pathlib import Path

from rag_compare.llm.cache import ReplyCache, request_key
from rag_compare.llm.plan import JudgePlan, estimated_tokens, in_cache, tokens_of


def test_tokens_are_four_characters_rounded_up() -> None:
    assert [tokens_of(characters) for characters in (0, 1, 4, 5, 8)] == [0, 1, 1, 2, 2]
    assert estimated_tokens("twelve chars") == 3  # 12 / 4
    assert estimated_tokens("") == 0


def test_in_cache_says_which_bodies_have_a_reply(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    bodies = [{"model": "m", "messages": [{"role": "user", "content": text}]} for text in ("a", "b", "c")]
    store = ReplyCache(path)
    store.put(request_key("http://e/v1", bodies[1]), {"content": "{}", "prompt_tokens": 1, "completion_tokens": 1})
    store.close()
    assert in_cache(bodies, endpoint="http://e/v1", cache=path) == [False, True, False]
    assert in_cache(bodies, endpoint="http://other/v1", cache=path) == [False] * 3  # the endpoint is in the key
    assert in_cache(bodies, endpoint="http://e/v1", cache=False) == [False] * 3


def test_in_cache_creates_no_cache_file(tmp_path: Path) -> None:
    assert in_cache([{"model": "m"}], endpoint="http://e/v1", cache=tmp_path / "absent.sqlite3") == [False]
    assert not (tmp_path / "absent.sqlite3").exists()


def test_the_plan_says_what_is_left_to_send() -> None:
    plan = JudgePlan(cases=3, requests=6, cached=2, prompt_tokens=100, completion_tokens=40)
    assert plan.to_send == 4
    assert plan.to_dict() == {
        "cases": 3,
        "requests": 6,
        "cached": 2,
        "to_send": 4,
        "estimated_prompt_tokens": 100,
        "estimated_completion_tokens": 40,
    }
