"""Paths that are not regular files, made where a test says: a FIFO, a socket, a character device, a folder,
a broken link, or nothing; each with the words a message about it holds."""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path

__all__ = ["KINDS", "make_special"]

KINDS = {
    "fifo": "is a FIFO (named pipe)",
    "socket": "is a socket",
    "character device": "character device (/dev/null)",
    "folder": "is a folder",
    "broken link": "is a broken link",
    "missing": "no such",
}
"""Each kind of path, and what a message about it says."""


def make_special(kind: str, path: Path) -> Path:
    """Make ``path`` (its folder included) the ``kind`` of ``KINDS``: a character device is a link to
    ``/dev/null``, a broken link points to a missing sibling."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        _bind_socket(path)
    elif kind == "character device":
        path.symlink_to("/dev/null")
    elif kind == "folder":
        path.mkdir()
    elif kind == "broken link":
        path.symlink_to(path.with_name(f"{path.name}.gone"))
    elif kind != "missing":
        raise ValueError(f"unknown kind {kind!r}")
    return path


def _bind_socket(path: Path) -> None:
    """A Unix socket file at ``path``: bound in a short temporary folder (an address holds 108 bytes), then moved."""
    with tempfile.TemporaryDirectory() as folder:
        bound = Path(folder) / "s"
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(bound))
        os.rename(bound, path)
