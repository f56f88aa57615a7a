"""Run configs: reading TOML/JSON files, ``KEY=VALUE`` assignments, flattening, and the checks a
config passes before it is stored (no credentials, only finite numbers, nested at most ``CONFIG_DEPTH``
levels, so the walks over it here stay shallow), the paths stored in it too."""

from __future__ import annotations

import copy
import json
import math
import os
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path, PurePath
from typing import Any

from rag_compare.core.contract import STORED_SIGNALS
from rag_compare.core.credentials import credential_in, credential_values, is_credential_key, redact
from rag_compare.core.errors import ConfigError, SecretInConfigError, show_value
from rag_compare.core.input_paths import check_input
from rag_compare.core.nesting import MAX_DEPTH, load_json, load_toml, refuse_deep

__all__ = [
    "BOOKKEEPING_KEYS",
    "CONFIG_DEPTH",
    "RESERVED_KEYS",
    "apply_assignments",
    "check_config",
    "flatten",
    "non_finite_path",
    "read_config_file",
    "refuse_credential_paths",
]

RESERVED_KEYS = ("created_at", "rag_compare_version", "corpus", "records", "merged_from", STORED_SIGNALS)
"""Top-level keys that rag-compare writes itself when a run is frozen (``merged_from``: when runs are merged;
``stored_signals``: what decided the signals stored with it)."""
BOOKKEEPING_KEYS = ("name", "created_at", "rag_compare_version", "corpus", "records", "merged_from", STORED_SIGNALS)
"""Keys (with everything under them) that describe a run rather than set up its pipeline."""
CONFIG_DEPTH = MAX_DEPTH - 1
"""The most levels a config may nest: one fewer than any file may, as a run directory's manifest (and a
scores or pairs file's metadata) holds it one level down."""


def read_config_file(path: str | Path) -> dict[str, Any]:
    """A config from a ``.toml`` or ``.json`` file holding one table/object of finite numbers, nested at most
    ``CONFIG_DEPTH`` levels."""
    config = _read_config_file(Path(path))
    _refuse_non_finite(config, str(path))
    return config


def _read_config_file(path: Path) -> dict[str, Any]:
    check_input(path, "config file", ConfigError, fix="Check the `config_file` path.")
    suffix = path.suffix.lower()
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: is not UTF-8 text. Save the config as UTF-8.") from None
    if suffix == ".toml":
        try:
            return load_toml(text, str(path), limit=CONFIG_DEPTH)
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path}: is not valid TOML ({error}). Fix the syntax and run again.") from None
    if suffix == ".json":
        try:
            loaded = load_json(text, str(path), limit=CONFIG_DEPTH)
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
    anything else as a string; a number that is not finite (``NaN``, ``Infinity``, ``1e999``) is refused,
    and so is a config nested deeper than ``CONFIG_DEPTH``. Messages never show a value, which may be a secret.
    """
    refuse_deep(config, "`config`", limit=CONFIG_DEPTH)
    result = copy.deepcopy(dict(config))
    for assignment in assignments:
        key, separator, raw = assignment.partition("=")
        parts = key.strip().split(".")
        if not separator or not all(part.strip() for part in parts):
            raise ConfigError(
                f"`assignments` expects KEY=VALUE (e.g. `assignments=['top_k=5']`), got {show_value(assignment)}."
            )
        shown = redact(key.strip())
        setting = f"`assignments`: the setting {show_value(key.strip())}"
        try:
            value: Any = load_json(raw, setting, line=None, limit=CONFIG_DEPTH)
        except json.JSONDecodeError:
            value = raw
        if non_finite_path({"value": value}) is not None:
            raise ConfigError(
                f"`assignments=[{shown + '=' + redact(raw.strip())!r}]`: not a finite number; give a number "
                "(NaN and infinities cannot be stored)."
            )
        table = result
        for part in parts[:-1]:
            inner = table.setdefault(part, {})
            if not isinstance(inner, dict):
                raise ConfigError(
                    f"`assignments=[{shown + '=...'!r}]`: '{redact(part)}' is a value, not a table of settings."
                )
            table = inner
        table[parts[-1]] = value
        refuse_deep(result, setting, limit=CONFIG_DEPTH)
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


def check_config(config: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> None:
    """Refuse a config that cannot be stored: a number that is not finite, or a credential anywhere
    (a key named like one, at any depth, or a key or value holding one; see ``credentials``).

    Credential values are also the values of the credential-like variables of ``environ`` (default
    ``os.environ``); messages name the key and the variable, never the secret itself. A config nested
    deeper than ``CONFIG_DEPTH`` is refused before anything walks it.
    """
    refuse_deep(config, "the config", limit=CONFIG_DEPTH)
    _refuse_non_finite(config, "the config")
    _refuse_unstorable(config)
    secrets = credential_values(os.environ if environ is None else environ)
    found: list[str] = []
    for path, key, value in _entries(config):
        shown = redact(path, secrets)
        if key is not None and is_credential_key(key):
            found.append(f"'{shown}' is named like a credential")
        elif key is not None and (what := credential_in(key, secrets)) is not None:
            found.append(f"'{shown}' is a key holding {what}")
        elif isinstance(value, str) and (what := credential_in(value, secrets)) is not None:
            found.append(f"'{shown}' holds {what}")
    if found:
        listed = "\n".join(f"  - {item}" for item in found)
        raise SecretInConfigError(
            f"the config holds credentials, which are never written to a run or scores file:\n{listed}\n"
            "Remove them from the config (a path: rename the file or its folder); clients read keys from the "
            "environment (OPENAI_API_KEY)."
        )


def refuse_credential_paths(paths: Mapping[str, object], environ: Mapping[str, str] | None = None) -> None:
    """Refuse, before any work, a path that would be stored holding a credential (see ``credentials``; also
    the value of a credential-like variable of ``environ``, default ``os.environ``).

    ``paths`` are by the parameter that gave them: a path, a sequence of paths, or anything else, a frame,
    which holds none. A path is stored as given: in the run config (the records, the corpus, the name an
    output gives), and in the files made from a frozen file (a scores or pairs file records its runs'
    paths). The message names the parameter, never the path.
    """
    secrets = credential_values(os.environ if environ is None else environ)
    for parameter, given in paths.items():
        items = list(given) if isinstance(given, list | tuple) else [given]
        for position, item in enumerate(items, start=1):
            what = credential_in(str(item), secrets) if isinstance(item, str | PurePath) else None
            if what is not None:
                which = f"path {position} of `{parameter}`" if len(items) > 1 else f"the path of `{parameter}`"
                raise SecretInConfigError(
                    f"{which} holds {what}. A path is stored in the files written (a run's config, the files "
                    "made from it) and shown in reports, where a credential never goes: rename the file or "
                    "its folder, or give another path."
                )


def _entries(value: Any, path: str = "", key: str | None = None) -> Iterator[tuple[str, str | None, Any]]:
    """``(path, key, value)`` for every entry of a config, through tables and lists: ``a.b[0].c``; ``key``
    is the entry's own name, None for an item of a list."""
    if path:
        yield path, key, value
    if isinstance(value, Mapping):
        for name, item in value.items():
            yield from _entries(item, f"{path}.{name}" if path else str(name), str(name))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _entries(item, f"{path}[{index}]")


def non_finite_path(config: Mapping[str, Any]) -> str | None:
    """The path of the first NaN or infinity in ``config``, if any: JSON cannot hold them, and no
    comparison of them means anything."""
    return next(
        (path for path, _, value in _entries(config) if isinstance(value, float) and not math.isfinite(value)), None
    )


def _refuse_non_finite(config: Mapping[str, Any], source: str) -> None:
    path = non_finite_path(config)
    if path is not None:
        raise ConfigError(
            f"{source}: '{path}' is not a finite number; give a number (NaN and infinities cannot be stored)."
        )


_STORABLE = (str, int, float, bool, type(None), Mapping, list, tuple)
"""What a config stored as JSON may hold."""


def _refuse_unstorable(config: Mapping[str, Any]) -> None:
    """Refuse a value JSON cannot hold: a TOML date or time, or an object a Python caller passed."""
    for path, _, value in _entries(config):
        if not isinstance(value, _STORABLE):
            raise ConfigError(
                f"the config holds a value a run config cannot store ('{redact(path)}': Object of type "
                f"{type(value).__name__} is not JSON serializable). Use text, numbers, true/false, lists and "
                'tables; write a date or time as quoted text, e.g. "2026-01-31".'
            )
