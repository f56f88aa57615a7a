"""The result base class and its output rules: the formats a result knows, strict JSON without credentials,
terminal-safe text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_compare.core.result import terminal_safe, to_json
from rag_compare.io.corpus import load_corpus
from tests.helpers.credential_shapes import KEY_SHAPES, secret_parts
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


@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_to_json_writes_no_credential_in_a_value_a_key_or_a_path(secret: str) -> None:
    payload = {
        "path": f"runs/{secret}.arrow",
        f"by-{secret}": [Path(f"out-{secret}.json"), (f"a {secret}",)],
        "config": {"records": {"path": f"x_{secret}.jsonl"}},
    }
    text = to_json(payload)
    assert not any(form in text for form in secret_parts(secret))
    assert json.loads(text)["path"].startswith("runs/")
    assert "(redacted)" in json.loads(text)["path"]


def test_to_json_redacts_the_value_of_a_credential_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DB_PASSWORD", "hunter2-hunter2")
    assert json.loads(to_json({"name": "run-hunter2-hunter2"})) == {"name": "run-…(redacted)"}
