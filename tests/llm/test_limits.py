"""Limits: what is usable, how long a Retry-After asks to wait, and the deprecated keywords they replace."""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import polars as pl
import pytest

from rag_compare.core.errors import ConfigError
from rag_compare.llm.batch import batch_generate
from rag_compare.llm.chat_generator import OpenAIGenerator
from rag_compare.llm.drafts import draft_cases
from rag_compare.llm.limits import MAX_WAIT, Limits, limits_from, retry_after
from rag_compare.llm.llm_judge import OpenAIJudge
from rag_compare.pipeline.runner import CAPTURE_LIMITS, capture
from tests.helpers.chat_server import ChatServer, Reply
from tests.helpers.data import EXAMPLE_CORPUS


def with_headers(**headers: str) -> Any:
    return SimpleNamespace(response=SimpleNamespace(headers=headers))


def test_retry_after_in_seconds_milliseconds_or_a_date() -> None:
    assert retry_after(with_headers(**{"retry-after": "2.5"})) == 2.5
    assert retry_after(with_headers(**{"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    later = format_datetime(datetime.now(tz=UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < (retry_after(with_headers(**{"retry-after": later})) or 0) <= 30
    assert retry_after(with_headers(**{"retry-after": "soon"})) is None
    assert retry_after(with_headers()) is None
    assert retry_after(ValueError("no response")) is None
    assert MAX_WAIT == 60.0


def test_unusable_limits_are_refused() -> None:
    for limits in ({"concurrency": 0}, {"timeout": 0}, {"max_retries": -1}, {"backoff": -1}):
        with pytest.raises(ConfigError, match="unusable limits"):
            Limits(**limits)


@pytest.mark.parametrize("name", ["timeout", "backoff"])
@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_limits_that_are_not_finite_are_refused_naming_the_parameter(name: str, value: float) -> None:
    settings = {"concurrency": 1, "timeout": 1.0, "max_retries": 0, "backoff": 1.0, name: value}
    with pytest.raises(ConfigError, match=f"{name}={value!r}.*finite"):
        Limits(**settings)


NO_PROMPT = pl.DataFrame({"prompt": [None]}, schema={"prompt": pl.String})
CALLERS: dict[str, Callable[..., object]] = {
    "OpenAIJudge": lambda **limits: OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", cache=False, **limits),
    "OpenAIGenerator": lambda **limits: OpenAIGenerator("m", base_url="http://127.0.0.1:9/v1", **limits),
    "batch_generate": lambda **limits: batch_generate(NO_PROMPT, "prompt", "out", model="m", cache=False, **limits),
    "draft_cases": lambda **limits: draft_cases(
        pl.DataFrame({"passage_id": ["p"], "source_version": ["v1"], "text": ["t"]}),
        model="m",
        n=1,
        source_version="v9",  # refused after the limits, before anything is sent
        cache=False,
        **limits,
    ),
    "capture": lambda **limits: capture(
        pl.DataFrame(), lambda case, k: [], lambda case, context: "", top_k=0, **limits
    ),
}


def call(name: str, **limits: Any) -> object:
    try:
        return CALLERS[name](**limits)
    except ConfigError as error:  # draft_cases and capture stop at their next setting
        return error


@pytest.mark.parametrize("name", CALLERS)
def test_the_old_keywords_still_work_with_a_deprecation_warning_naming_the_caller(name: str) -> None:
    with pytest.warns(DeprecationWarning, match=f"{name}: timeout= is deprecated") as caught:
        made = call(name, timeout=7.0)
    assert [warning.filename for warning in caught] == [__file__]  # it points at the caller's line
    if isinstance(made, OpenAIJudge | OpenAIGenerator):
        assert made.limits == Limits(timeout=7.0)


@pytest.mark.parametrize("name", CALLERS)
def test_limits_and_an_old_keyword_together_are_refused(name: str) -> None:
    with pytest.raises(TypeError, match=f"{name}: pass limits= or timeout=, not both"):
        call(name, limits=Limits(), timeout=7.0)


@pytest.mark.parametrize("name", CALLERS)
def test_limits_alone_warn_nothing(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        made = call(name, limits=Limits(concurrency=2))
    if isinstance(made, OpenAIJudge | OpenAIGenerator):
        assert made.limits == Limits(concurrency=2)


def test_old_keywords_change_the_callers_own_defaults_and_are_checked() -> None:
    with pytest.warns(DeprecationWarning, match="timeout=, backoff= is deprecated"):
        changed = limits_from("capture", None, CAPTURE_LIMITS, {"timeout": 9.0, "backoff": 0.5})
    assert changed == Limits(concurrency=4, timeout=9.0, max_retries=2, backoff=0.5)
    assert limits_from("capture", None, CAPTURE_LIMITS, {}) is CAPTURE_LIMITS
    with pytest.warns(DeprecationWarning, match="concurrency="), pytest.raises(ConfigError, match="unusable limits"):
        limits_from("capture", None, CAPTURE_LIMITS, {"concurrency": 0})


def test_a_keyword_that_is_no_limit_is_refused_as_python_refuses_it() -> None:
    with pytest.raises(TypeError, match="capture\\(\\) got an unexpected keyword argument 'concurency'"):
        capture(EXAMPLE_CORPUS, lambda case, top_k: [], lambda case, context: "", concurency=2)  # type: ignore[call-arg]


def test_batch_generate_backs_off_as_its_limits_say(tmp_path: Path) -> None:
    frame = pl.DataFrame({"prompt": ["Say A"]})
    with ChatServer(lambda request, attempt: Reply(status=500) if attempt == 1 else Reply(content="A")) as server:
        started = time.perf_counter()
        result = batch_generate(
            frame, "prompt", "reply", model="m", base_url=server.base_url, cache=False, limits=Limits(backoff=0.4)
        )
        waited = time.perf_counter() - started
        assert server.count() == 2
    assert result.get_column("reply").to_list() == ["A"]
    assert waited >= 0.2  # the first wait is backoff x jitter in [0.5, 1]


def test_a_judge_copied_with_replace_keeps_its_limits_without_a_new_warning() -> None:
    with pytest.warns(DeprecationWarning, match="OpenAIJudge: concurrency="):
        judge = OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", cache=False, concurrency=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        copy = dataclasses.replace(judge, model="n")
    assert copy.limits == judge.limits == Limits(concurrency=2)
