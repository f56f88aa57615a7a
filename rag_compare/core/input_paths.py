"""Input paths, checked before they are opened: every reader takes a regular file (a link to one
included), or a folder where it says so, and never opens a FIFO, a socket or a device, which could wait
for a writer forever or never end.

Only the standard library (``stat``, never ``open``): the message names the path, what is there (a folder,
a FIFO, a character device, a socket, a broken link, nothing) and what was expected.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal

from rag_compare.core.errors import InputFileError, RagCompareError

__all__ = ["InputKind", "check_input", "describe_kind"]

InputKind = Literal["file", "folder", "missing"]
"""What an accepted input path is: a regular file, a folder (where one is accepted), or nothing yet (where
a reader creates it)."""

_SPECIAL = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def describe_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, for a message: ``a regular file``, ``a folder``, ``a FIFO (named
    pipe)``, ``a socket``, ``a character device``, ``a block device``."""
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a folder"
    return next((name for test, name in _SPECIAL if test(mode)), "a special file")


def check_input(
    path: str | Path,
    what: str,
    error: type[RagCompareError] = InputFileError,
    *,
    fix: str | None = None,
    folder: bool = False,
    missing: bool = False,
) -> InputKind:
    """Refuse ``path`` with ``error`` unless it is a regular file, a folder (with ``folder``) or nothing
    (with ``missing``); what it is otherwise is found without opening it.

    ``what`` names the file expected (``"gate file"``), as in ``x: is a folder, not a gate file``;
    ``fix`` says how to fix it (default: give the path of one).
    """
    path = Path(path)
    fix = fix or f"Give the path of {_a(what)}."
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        link = _link_target(path)
        if missing and link is None:
            return "missing"
        found = f"no such {what}" if link is None else f"is a broken link (to {link}), not {_a(what)}"
        raise error(f"{path}: {found}. {fix}") from None
    except OSError as failure:
        raise error(f"{path}: cannot be looked at ({failure.strerror or failure}). {fix}") from None
    if stat.S_ISREG(mode):
        return "file"
    if folder and stat.S_ISDIR(mode):
        return "folder"
    kind = describe_kind(mode)
    if path.is_symlink():
        kind = f"a link to {kind} ({os.path.realpath(path)})"
    raise error(f"{path}: is {kind}, not {_a(what)}. {fix}")


def _link_target(path: Path) -> str | None:
    """What the link ``path`` points to; ``None`` when ``path`` is no link."""
    try:
        return os.readlink(path)
    except OSError:
        return None


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"
