"""One request: the body sent."""

from __future__ import annotations

import pytest

from rag_compare.core.errors import ConfigError
from rag_compare.llm.transport import chat_body


@pytest.mark.parametrize("value", [float("nan"), float("-inf")])
def test_a_chat_body_refuses_a_setting_that_is_not_finite(value: float) -> None:
    with pytest.raises(ConfigError, match=f"temperature={value!r}: a setting sent to the endpoint must be a finite"):
        chat_body("m", [], temperature=value, seed=1)
    assert chat_body("m", [], temperature=0.5, seed=None) == {"model": "m", "messages": [], "temperature": 0.5}
