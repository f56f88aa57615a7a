"""Recognising credentials so they never enter a run file, a scores file, a checkpoint or a message.

A config key is a credential when its name says so (``api_key``, ``client_secret``, ``password``,
``auth``, ``access_token``, ``bearer``...), not when it counts tokens (``max_tokens``). A text holds a
credential when it contains the value of such an environment variable (``OPENAI_API_KEY``...), or
matches ``CREDENTIAL_PATTERN``: an authorization header, or a key in the shape a provider issues it.
Standard library only: errors redact their messages with it.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable, Mapping

__all__ = [
    "CREDENTIAL_PATTERN",
    "credential_in",
    "credential_values",
    "is_credential_key",
    "looks_like_credential_value",
    "redact",
    "redactor",
]

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
_TOKEN = "A-Za-z0-9._~+/=-"


def _with_digit(chars: str, length: int) -> str:
    """A run of at least ``length`` of ``chars`` of which one is a digit (a random token holds one; a
    word does not), as a regex without look-ahead, which Polars' engine lacks."""
    runs = (f"[{chars}]{{{before}}}[0-9][{chars}]{{{length - 1 - before},}}" for before in range(length - 1))
    return f"(?:{'|'.join(runs)}|[{chars}]{{{length - 1},}}[0-9][{chars}]*)"


_START = "(?:^|[^A-Za-z0-9])"
"""Where a key's prefix starts: the text's start or any character but a letter or digit, so a key after
``_`` (``corpus_sk-proj-...``, a file name) is found, and ``task-...`` is no key. It is part of the match:
Polars' engine has no look-behind."""
_SHAPES = (  # (a text every match holds, in lower case; the shape)
    (("bearer",), rf"{_START}(?i:bearer)\s+{_with_digit(_TOKEN, 8)}"),  # a bearer token, with or without its header
    (("authorization",), rf"{_START}(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?:[A-Za-z]+\s+)?{_with_digit(_TOKEN, 8)}"),
    (("sk-",), rf"{_START}sk-(?:(?:proj|svcacct|admin|ant)-)?{_with_digit('A-Za-z0-9_-', 20)}"),  # OpenAI, Anthropic
    (("hf_",), rf"{_START}hf_[A-Za-z0-9]{{30,}}"),  # Hugging Face
    (
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        rf"{_START}(?:gh[pousr]_[A-Za-z0-9]{{36,}}|github_pat_[A-Za-z0-9_]{{40,}})",
    ),
    (("xox",), rf"{_START}xox[abposr]-{_with_digit('A-Za-z0-9-', 10)}"),  # Slack
    (("akia", "asia"), rf"{_START}(?:AKIA|ASIA)[0-9A-Z]{{16}}\b"),  # AWS access key id
    (("-----begin",), r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
)
CREDENTIAL_PATTERN = "|".join(shape for _, shape in _SHAPES)
"""What a credential looks like in any text, for Python's ``re`` and Polars alike. A prefix follows no letter
or digit and is followed by a long random tail with a digit in it, so ``sk-learn``, ``task-...`` or "the
bearer instruments" are words, not keys."""
SHAPED_CREDENTIAL = "a credential (an API key or an authorization header)"
"""What a text matching ``CREDENTIAL_PATTERN`` holds, in messages."""
_CREDENTIAL = re.compile(CREDENTIAL_PATTERN)
_ANCHORS = re.compile("|".join(re.escape(anchor) for anchors, _ in _SHAPES for anchor in anchors))
"""What every match of the pattern holds, in lower case: searched first, as the pattern is slow in Python's engine."""
_SHOWN_PREFIX = 3
_REDACTED = "…(redacted)"


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
    """True for a text matching ``CREDENTIAL_PATTERN`` (``Bearer abc...``, ``sk-proj-...``, ``AKIA...``)."""
    return _may_hold_shape(value) and _CREDENTIAL.search(value) is not None


def _may_hold_shape(text: str) -> bool:
    return _ANCHORS.search(text.lower()) is not None


def credential_values(environ: Mapping[str, str]) -> dict[str, str]:
    """Environment variables whose names are credentials and whose values are long enough to find."""
    return {
        name: value
        for name, value in environ.items()
        if is_credential_key(name) and len(value.strip()) >= _MIN_SECRET_LENGTH
    }


def credential_in(text: str, secrets: Mapping[str, str]) -> str | None:
    """What credential ``text`` holds (``the value of NAME`` or ``SHAPED_CREDENTIAL``), or None."""
    leaked = sorted(name for name, secret in secrets.items() if secret in text)
    if leaked:
        return f"the value of {', '.join(leaked)}"
    return SHAPED_CREDENTIAL if looks_like_credential_value(text) else None


def redact(text: str, secrets: Mapping[str, str] | None = None) -> str:
    """``text`` with every credential replaced: a key shape keeps its first 3 characters (``sk-…(redacted)``),
    the value of a variable of ``secrets`` (default: the credential variables of ``os.environ``) nothing."""
    return redactor(secrets)(text)


def redactor(secrets: Mapping[str, str] | None = None) -> Callable[[str], str]:
    """``redact`` with ``secrets`` (default: the credential variables of ``os.environ``) looked up once: for
    the many values of one report, where looking them up for each would cost far more than redacting."""
    values = tuple((credential_values(os.environ) if secrets is None else secrets).values())

    def redacted(text: str) -> str:
        for secret in values:
            if secret in text:
                text = text.replace(secret, _REDACTED)
        return _CREDENTIAL.sub(_shown, text) if _may_hold_shape(text) else text

    return redacted


def _shown(match: re.Match[str]) -> str:
    """What is left of a key: its first 3 characters, after the one before its prefix when the match holds it."""
    found = match.group(0)
    start = 1 if len(found) > 1 and not found[0].isalnum() and found[1].isalnum() else 0
    return found[: start + _SHOWN_PREFIX] + _REDACTED
