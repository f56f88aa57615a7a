"""The result base class and its output rules: the formats a result knows, strict JSON, terminal-safe text."""

from __future__ import annotations

import json

import pytest

from rag_compare.core.result import terminal_safe, to_json
from rag_compare.io.corpus import load_corpus
from tests.helpers.data import EXAMPLE_CORPUS


def test_terminal_safe_shows_controls_as_escapes_and_keeps_newlines_and_tabs() -> None:
    assert terminal_safe("a\x1b[31mb\u202ec\x07\x9b") == "a\\x1b[31mb\\u202ec\\x07\\x9b"
    assert terminal_safe("line\n\tindented é ✓") == "line\n\tindented é ✓"


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="use one of text, json"):
        load_corpus(EXAMPLE_CORPUS).render("xml")


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def test_to_json_writes_a_number_that_is_not_finite_as_null() -> None:
    payload = {"p": float("nan"), "rows": [{"low": float("-inf"), "high": 0.5}], "nested": ({"x": float("inf")},)}
    text = to_json(payload)
    assert json.loads(text, parse_constant=_refuse_constant) == {
        "p": None,
        "rows": [{"low": None, "high": 0.5}],
        "nested": [{"x": None}],
    }
    assert payload["p"] != payload["p"]  # the caller's payload is left as it was
