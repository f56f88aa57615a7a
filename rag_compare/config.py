"""Run configs: reading TOML/JSON files, ``--set KEY=VALUE`` overrides, flattening, credential checks."""

from __future__ import annotations

import copy
import json
import os
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from rag_compare.credentials import credential_values, is_credential_key, looks_like_credential_value
from rag_compare.errors import ConfigError, SecretInConfigError

__all__ = ["RESERVED_KEYS", "apply_assignments", "check_no_secrets", "flatten", "read_config_file"]

RESERVED_KEYS = ("created_at", "rag_compare_version", "corpus", "records")
"""Top-level keys that rag-compare writes itself when a run is frozen."""


def read_config_file(path: str | Path) -> dict[str, Any]:
    """A config from a ``.toml`` or ``.json`` file holding one table/object."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such config file. Check the --config path.")
    suffix = path.suffix.lower()
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: is not UTF-8 text. Save the config as UTF-8.") from None
    if suffix == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path}: is not valid TOML ({error}). Fix the syntax and run again.") from None
    if suffix == ".json":
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as error:
            raise ConfigError(
                f"{path}: is not valid JSON ({error.msg} at line {error.lineno}). Fix the syntax."
            ) from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: must hold one JSON object of settings, not {type(loaded).__name__}.")
        return loaded
    raise ConfigError(f"{path}: unknown config type '{path.suffix}'. Use a .toml or .json file.")


def apply_assignments(config: Mapping[str, Any], assignments: Iterable[str]) -> dict[str, Any]:
    """A copy of ``config`` with each ``KEY=VALUE`` set; dotted keys reach into nested tables.

    A value that parses as JSON is kept as parsed (``top_k=5`` is the integer 5, ``x=[1,2]`` a list),
    anything else as a string.
    """
    result = copy.deepcopy(dict(config))
    for assignment in assignments:
        key, separator, raw = assignment.partition("=")
        parts = key.strip().split(".")
        if not separator or not all(part.strip() for part in parts):
            raise ConfigError(f"--set expects KEY=VALUE (e.g. --set top_k=5), got {assignment!r}.")
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        table = result
        for part in parts[:-1]:
            inner = table.setdefault(part, {})
            if not isinstance(inner, dict):
                raise ConfigError(f"--set {assignment!r}: '{part}' is a value, not a table of settings.")
            table = inner
        table[parts[-1]] = value
    return result


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested tables as dotted keys: ``{"retriever": {"k": 5}}`` gives ``{"retriever.k": 5}``."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat |= flatten(value, f"{dotted}.")
        else:
            flat[dotted] = value
    return flat


def check_no_secrets(config: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> None:
    """Refuse a config that holds a credential: by its key's name, or by its value.

    Values are compared with the credential-like variables of ``environ`` (default ``os.environ``);
    messages name the key and the variable, never the secret itself.
    """
    secrets = credential_values(os.environ if environ is None else environ)
    found: list[str] = []
    for key, value in flatten(config).items():
        leaf = key.rsplit(".", 1)[-1]
        if is_credential_key(leaf):
            found.append(f"'{key}' is named like a credential")
            continue
        for text in _strings_in(value):
            leaked = [name for name, secret in secrets.items() if secret in text]
            if leaked:
                found.append(f"'{key}' holds the value of the environment variable {', '.join(sorted(leaked))}")
            elif looks_like_credential_value(text):
                found.append(f"'{key}' holds a bearer credential")
    if found:
        listed = "\n".join(f"  - {item}" for item in found)
        raise SecretInConfigError(
            f"the run config holds credentials, which are never written to a run file:\n{listed}\n"
            "Remove them from the config; clients read keys from the environment (OPENAI_API_KEY)."
        )


def _strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [text for item in value.values() for text in _strings_in(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _strings_in(item)]
    return []
