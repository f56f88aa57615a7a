"""One request: the body sent, the reply checked."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from openai.types.chat import ChatCompletion

from rag_compare.core.errors import ConfigError
from rag_compare.core.nesting import MAX_DEPTH
from rag_compare.llm.transport import BadReply, chat_body, complete
from tests.helpers.nesting import DEEP, nested_json


@pytest.mark.parametrize("value", [float("nan"), float("-inf")])
def test_a_chat_body_refuses_a_setting_that_is_not_finite(value: float) -> None:
    with pytest.raises(ConfigError, match=f"temperature={value!r}: a setting sent to the endpoint must be a finite"):
        chat_body("m", [], temperature=value, seed=1)
    assert chat_body("m", [], temperature=0.5, seed=None) == {"model": "m", "messages": [], "temperature": 0.5}


class _Replying:
    """A client whose every request is answered with ``content``."""

    def __init__(self, content: str) -> None:
        self.content = content

    async def post(self, path: str, **_: Any) -> ChatCompletion:
        message = {"role": "assistant", "content": self.content}
        choice = {"index": 0, "finish_reason": "stop", "message": message}
        return ChatCompletion.model_validate(
            {"id": "r", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice]}
        )


def test_a_reply_nested_too_deep_is_a_bad_reply_before_it_is_parsed() -> None:
    schema = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": {"type": "object"}}}
    body = chat_body("m", [{"role": "user", "content": "q"}], response_format=schema)
    assert asyncio.run(complete(_Replying('{"a": [1]}'), body, 5.0))["content"] == '{"a": [1]}'
    with pytest.raises(BadReply, match=f"^the reply: nests lists or objects more than {MAX_DEPTH} levels"):
        asyncio.run(complete(_Replying(nested_json({"a": DEEP}, 1000)), body, 5.0))
