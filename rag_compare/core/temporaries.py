"""The temporary files and folders in use right now (an atomic writer's hidden file or folder, a spill
folder), so that a process ended at once, without unwinding, still removes them (``end_process``): the
command line ends so when a signal finds its main thread stuck (see ``cli/stopping.py``).

Only the standard library.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

__all__ = ["end_process", "register_temporary", "registered", "release_temporary"]

_LOCK = threading.Lock()
_PATHS: set[str] = set()


def register_temporary(path: str | Path) -> None:
    """Know ``path`` as a temporary until ``release_temporary(path)``."""
    with _LOCK:
        _PATHS.add(os.fspath(path))


def release_temporary(path: str | Path) -> None:
    """Forget ``path`` (removed, or renamed into place): it is no temporary any more."""
    with _LOCK:
        _PATHS.discard(os.fspath(path))


@contextlib.contextmanager
def registered(path: str | Path) -> Iterator[None]:
    """``path`` known as a temporary while the block runs."""
    register_temporary(path)
    try:
        yield
    finally:
        release_temporary(path)


def end_process(code: int) -> NoReturn:
    """Remove every registered temporary and end the process at once with exit ``code`` (``os._exit``: no
    ``finally`` block runs); a thread still running meanwhile registers nothing more."""
    _LOCK.acquire()
    for path in sorted(_PATHS):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)
    os._exit(code)
