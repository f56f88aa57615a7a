"""A release gate's file: the ``[gate]`` table of a TOML file, read as written (``compute.gating`` parses it).

    [gate]
    fail_on = ["regressed>2%", "recall:worse"]
    alpha = 0.05            # optional

The file may hold other tables; its ``[gate]`` table is required and holds only these keys; ``fail_on``
lists one condition or more.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from rag_compare.core.errors import GateError
from rag_compare.core.input_paths import check_input
from rag_compare.core.nesting import load_toml

__all__ = ["GATE_KEYS", "read_gate_file"]

GATE_KEYS = ("fail_on", "alpha")


def read_gate_file(path: str | Path) -> tuple[list[str], float | None]:
    """The ``fail_on`` conditions and the ``alpha`` (``None`` when not set) of the file's ``[gate]`` table."""
    path = Path(path)
    check_input(path, "gate file", GateError)
    try:
        document = load_toml(path.read_text(encoding="utf-8"), str(path))
    except UnicodeDecodeError:
        raise GateError(f"{path}: is not UTF-8 text. Save the gate file as UTF-8.") from None
    except tomllib.TOMLDecodeError as error:
        raise GateError(f"{path}: is not valid TOML ({error}). Fix the syntax and run again.") from None
    gate = document.get("gate")
    if not isinstance(gate, dict):
        found = "has no [gate] table" if gate is None else "has a 'gate' that is not a table"
        raise GateError(f'{path}: {found}; write one, e.g. [gate] then fail_on = ["regressed>2%"].')
    unknown = sorted(set(gate) - set(GATE_KEYS))
    if unknown:
        raise GateError(f"{path}: [gate] has unknown keys {', '.join(unknown)}; use {' and '.join(GATE_KEYS)}.")
    fail_on = gate.get("fail_on")
    if not isinstance(fail_on, list) or not all(isinstance(item, str) for item in fail_on):
        raise GateError(f'{path}: [gate] fail_on must be a list of conditions, e.g. fail_on = ["regressed>2%"].')
    if not fail_on:
        raise GateError(
            f"{path}: [gate] fail_on is empty: a gate without a condition passes every comparison. List one, "
            'e.g. fail_on = ["regressed>2%"].'
        )
    alpha = gate.get("alpha")
    if alpha is not None and (isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1):
        raise GateError(
            f"{path}: [gate] alpha must be a number between 0 and 1 (both excluded), e.g. alpha = 0.05; got {alpha!r}."
        )
    return fail_on, None if alpha is None else float(alpha)
