"""Tests for ``rag_compare.core.credentials``: recognising credential names and values."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from click.testing import Result

from rag_compare.core.credentials import (
    CREDENTIAL_PATTERN,
    credential_values,
    is_credential_key,
    looks_like_credential_value,
    redact,
    redactor,
)
from tests.helpers.credential_shapes import KEY_SHAPES, OPENAI_KEY, ORDINARY_TEXTS

Cli = Callable[..., Result]
Write = Callable[[str, str | bytes], Path]

CREDENTIAL_KEYS = [
    "api_key",
    "OPENAI_API_KEY",
    "apiKey",
    "client_secret",
    "password",
    "db_passwd",
    "auth",
    "authorization",
    "access_token",
    "bearer",
    "hf_token",
    "token",
    "private_key",
    "aws_access_key_id",
]

ORDINARY_KEYS = [
    "max_tokens",
    "prompt_tokens",
    "completion_tokens",
    "token_budget",
    "tokenizer",
    "top_k",
    "model",
    "temperature",
    "keyword",
    "monkey",
    "author",
]


@pytest.mark.parametrize("key", CREDENTIAL_KEYS)
def test_credential_keys_are_recognised(key: str) -> None:
    assert is_credential_key(key) is True


@pytest.mark.parametrize("key", ORDINARY_KEYS)
def test_ordinary_keys_are_not_credentials(key: str) -> None:
    assert is_credential_key(key) is False


@pytest.mark.parametrize("key", ["", "_", "--"])
def test_keys_without_words_are_not_credentials(key: str) -> None:
    assert is_credential_key(key) is False


def test_credential_values_keeps_only_named_and_long_enough() -> None:
    environ = {
        "OPENAI_API_KEY": "sk-test-1234567890",
        "HF_TOKEN": "hf_abcdefgh",
        "DB_PASSWORD": "short",
        "GITHUB_TOKEN": "   1234567   ",
        "HOME": "/home/someone/long/path",
        "MAX_TOKENS": "4096409640964096",
        "PATH": "/usr/bin:/bin",
    }
    assert credential_values(environ) == {
        "OPENAI_API_KEY": "sk-test-1234567890",
        "HF_TOKEN": "hf_abcdefgh",
    }


def test_credential_values_of_empty_environment() -> None:
    assert credential_values({}) == {}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Bearer abcdefghijk", False),  # a word, not a token: no digit
        ("Bearer abc123defgh", True),
        ("  bearer 12345678", True),
        ("Authorization: Bearer abc123defgh", True),
        ("BEARER xyz12345678", True),
        ("Bearer short", False),
        ("Bearer", False),
        ("the bearer of news abcdefghijk", False),
        ("abcdefghijk", False),
    ],
)
def test_looks_like_credential_value(value: str, expected: bool) -> None:
    assert looks_like_credential_value(value) is expected


@pytest.mark.parametrize("text", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_key_shapes_are_credentials_without_any_environment(text: str) -> None:
    assert looks_like_credential_value(text) is True
    assert looks_like_credential_value(f"the key is '{text}', keep it") is True


@pytest.mark.parametrize("text", ORDINARY_TEXTS)
def test_ordinary_text_is_not_a_credential(text: str) -> None:
    assert looks_like_credential_value(text) is False


@pytest.mark.parametrize("separator", ["_", "-", "/", ".", " ", "="])
@pytest.mark.parametrize("shape", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_a_key_after_any_separator_of_a_file_name_is_a_credential(shape: str, separator: str) -> None:
    name = f"corpus{separator}{shape}.csv"
    assert looks_like_credential_value(name) is True
    assert shape[-12:] not in redact(name, {})


def test_the_character_before_a_key_is_kept_when_it_is_redacted() -> None:
    assert redact(f"run_{OPENAI_KEY}.arrow", {}) == "run_sk-…(redacted).arrow"
    assert redact(f"{OPENAI_KEY}.arrow", {}) == "sk-…(redacted).arrow"


def test_the_pattern_finds_the_same_in_polars_and_python() -> None:
    texts = [*KEY_SHAPES.values(), *ORDINARY_TEXTS, *(f"x_{shape}" for shape in KEY_SHAPES.values())]
    found = pl.Series(texts).str.contains(CREDENTIAL_PATTERN).to_list()
    assert found == [looks_like_credential_value(text) for text in texts]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"key {OPENAI_KEY} here", "key sk-…(redacted) here"),
        (f"hunter2-hunter2 and {KEY_SHAPES['bearer']}", "…(redacted) and Bea…(redacted)"),
        ("nothing secret", "nothing secret"),
    ],
)
def test_redact_replaces_every_credential(text: str, expected: str) -> None:
    assert redact(text, {"DB_PASSWORD": "hunter2-hunter2"}) == expected


@pytest.mark.parametrize("shape", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_redact_removes_the_whole_credential(shape: str) -> None:
    assert redact(f"<{shape}> end", {}) == f"<{shape[:3]}…(redacted)> end"


def test_a_redactor_redacts_as_redact_does_with_the_environment_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DB_PASSWORD", "hunter2-hunter2")
    redacting = redactor()
    monkeypatch.setenv("DB_PASSWORD", "another-password")
    texts = ["hunter2-hunter2 and another-password", f"<{OPENAI_KEY}>", "nothing secret"]
    assert [redacting(text) for text in texts] == [redact(text, {"DB_PASSWORD": "hunter2-hunter2"}) for text in texts]
    assert redact("another-password") == "…(redacted)"


def test_validate_never_prints_a_credential_of_a_bad_cell(cli: Cli, write: Write) -> None:
    corpus = write(
        "corpus.csv",
        f"case_id,question,answerability,source_version,required_passage_ids\na@v1,Q?,{OPENAI_KEY},v1,p1\n",
    )
    result = cli("validate", corpus)
    assert result.exit_code == 2
    assert "row 1, column 'answerability': got 'sk-…(redacted)'" in result.output
    assert OPENAI_KEY not in result.output


def test_no_error_message_prints_a_credential_of_the_environment(cli: Cli, tmp_path: Path) -> None:
    secret = "hunter2-hunter2"
    result = cli("validate", tmp_path / f"{secret}.csv", env={"DB_PASSWORD": secret})
    assert result.exit_code == 2
    assert secret not in result.output
    assert "(redacted)" in result.output


def test_a_usage_error_never_prints_a_credential(cli: Cli, tmp_path: Path) -> None:
    result = cli("capture", tmp_path / "c.csv", "--passages", tmp_path / "p.csv", "--top-k", OPENAI_KEY)
    assert result.exit_code == 2
    assert "--top-k" in result.output
    assert OPENAI_KEY not in result.output
