"""Tests for ``rag_compare.credentials``: recognising credential names and values."""

from __future__ import annotations

import polars as pl
import pytest

from rag_compare.credentials import (
    credential_values,
    is_credential_key,
    looks_like_credential_value,
    rows_containing,
)
from rag_compare.tables import ROW

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
        ("Bearer abcdefghijk", True),
        ("  bearer 12345678", True),
        ("Authorization: Bearer abcdefghijk", True),
        ("BEARER xyz12345678", True),
        ("Bearer short", False),
        ("Bearer", False),
        ("the bearer of news abcdefghijk", False),
        ("abcdefghijk", False),
    ],
)
def test_looks_like_credential_value(value: str, expected: bool) -> None:
    assert looks_like_credential_value(value) is expected


@pytest.fixture
def answers() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "answer": [
                "nothing to see",
                "key is sk-test-1234567890 here",
                None,
                "sk-test-1234567890",
                "a.b*c+d?e is literal",
                "aXbbbcdde",
            ],
        }
    ).with_row_index(ROW, offset=1)


def test_rows_containing_finds_1_based_rows(answers: pl.DataFrame) -> None:
    assert rows_containing(answers, "answer", "sk-test-1234567890", ROW) == [2, 4]


def test_rows_containing_treats_secret_as_literal(answers: pl.DataFrame) -> None:
    assert rows_containing(answers, "answer", "a.b*c+d?e", ROW) == [5]


@pytest.mark.parametrize("secret", ["(unclosed", "[abc", "x|y", "^start$", "back\\slash"])
def test_rows_containing_does_not_fail_on_regex_syntax(secret: str) -> None:
    frame = pl.DataFrame({"text": ["plain", f"has {secret} inside"]}).with_row_index(ROW, offset=1)
    assert rows_containing(frame, "text", secret, ROW) == [2]


def test_rows_containing_nothing_found(answers: pl.DataFrame) -> None:
    assert rows_containing(answers, "answer", "not-present-anywhere", ROW) == []


def test_rows_containing_casts_non_text_columns() -> None:
    frame = pl.DataFrame({"n": [12345678, 1, None]}).with_row_index(ROW, offset=1)
    assert rows_containing(frame, "n", "2345", ROW) == [1]
