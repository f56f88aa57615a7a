"""Recognising credentials so they never enter a run file or a report.

A config key is a credential when its name says so (``api_key``, ``client_secret``, ``password``,
``auth``, ``access_token``, ``bearer``...), not when it counts tokens (``max_tokens``). A value is a
credential when it is the value of such an environment variable (``OPENAI_API_KEY``...) or looks
like a bearer header.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping

import polars as pl

__all__ = ["credential_values", "is_credential_key", "looks_like_credential_value", "rows_containing"]

_SECRET_WORDS = frozenset(
    {
        "secret",
        "password",
        "passwd",
        "passphrase",
        "credential",
        "credentials",
        "auth",
        "authorization",
        "bearer",
        "apikey",
        "cookie",
    }
)
_SECRET_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key"), ("signing", "key")})
_MIN_SECRET_LENGTH = 8
_BEARER_VALUE = re.compile(r"\bbearer\s+\S{8,}", re.IGNORECASE)


def _words(key: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", key)
    return [word for word in re.split(r"[^a-z0-9]+", spaced.lower()) if word]


def is_credential_key(key: str) -> bool:
    """True for names of credentials: ``api_key``, ``OPENAI_API_KEY``, ``hf_token``; not ``max_tokens``."""
    words = _words(key)
    if not words:
        return False
    if _SECRET_WORDS.intersection(words) or _SECRET_PAIRS.intersection(itertools.pairwise(words)):
        return True
    return words[-1] == "token"


def looks_like_credential_value(value: str) -> bool:
    """True for a value holding a bearer credential (``Bearer abc...``, ``Authorization: Bearer ...``)."""
    return bool(_BEARER_VALUE.search(value))


def credential_values(environ: Mapping[str, str]) -> dict[str, str]:
    """Environment variables whose names are credentials and whose values are long enough to find."""
    return {
        name: value
        for name, value in environ.items()
        if is_credential_key(name) and len(value.strip()) >= _MIN_SECRET_LENGTH
    }


def rows_containing(frame: pl.DataFrame, column: str, secret: str, row_column: str) -> list[int]:
    """Row numbers whose text in ``column`` contains ``secret`` (searched as a literal)."""
    found = pl.col(column).cast(pl.String).str.contains(secret, literal=True).fill_null(False)
    return [int(row) for row in frame.filter(found).get_column(row_column).to_list()]
