"""Paths no output may be written to: special files (a character device, a FIFO, a socket, a link to a
device), a file in a missing folder, a file named as a folder; and a guard that makes code opening a FIFO
fail instead of hang. Paths no input may be read from: a FIFO, a socket, a character device, a folder, a
broken link, or nothing; each with the words a message about it holds."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["BAD_OUTPUTS", "KINDS", "NODES", "bad_output", "make_special", "node_kind", "not_blocked_by"]

NODES = ("character device", "FIFO", "socket", "link to a device")
"""The special files, by the kind ``node_kind`` tells."""
BAD_OUTPUTS = (*NODES, "missing folder", "trailing slash")


def bad_output(kind: str, where: Path) -> str:
    """A path of ``kind`` (one of ``BAD_OUTPUTS``) named after ``where``, made where it is a special file.

    A character device is made with ``mknod`` as root (it discards what is written, as ``/dev/null`` does);
    otherwise ``/dev/null`` itself stands in, which no test process but root's could replace either.
    """
    if kind == "character device":
        return str(_device(where))
    if kind == "FIFO":
        os.mkfifo(where)
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(where))
    elif kind == "link to a device":
        where.symlink_to(_device(where.with_name(f"{where.name}.device")))
    elif kind == "missing folder":
        return str(where.parent / "nowhere" / where.name)
    elif kind == "trailing slash":
        return f"{where}/"
    else:
        raise ValueError(kind)
    return str(where)


def _device(where: Path) -> Path:
    if os.geteuid() != 0:
        return Path("/dev/null")
    os.mknod(where, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return where


def node_kind(path: str | Path) -> tuple[int, int]:
    """What ``path`` is, not followed: its file type and, for a device, which one."""
    found = os.lstat(path)
    return stat.S_IFMT(found.st_mode), found.st_rdev


@contextlib.contextmanager
def not_blocked_by(path: str | Path, after: float = 10.0) -> Iterator[None]:
    """Run the block; if it still runs after ``after`` seconds and ``path`` is a FIFO (which it may have
    opened and be blocked on), open the FIFO's other ends (briefly, again and again) to release it, then
    fail the test: an output is refused before it is opened."""
    done, released = threading.Event(), threading.Event()

    def release() -> None:
        if done.wait(after) or not stat.S_ISFIFO(os.lstat(path).st_mode):
            return
        released.set()
        while not done.wait(0.05):
            ends = []
            for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
                with contextlib.suppress(OSError):
                    ends.append(os.open(path, flags))
            for end in ends:
                os.close(end)

    watcher = threading.Thread(target=release, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
    if released.is_set():
        pytest.fail(f"{path} was opened and blocked on: an output must be refused before it is opened")


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
