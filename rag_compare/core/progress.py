"""A progress bar with an ETA for work that takes a while, drawn on stderr only when it is a terminal."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Protocol

__all__ = ["Advance", "progress_bar"]


class Advance(Protocol):
    """Moves a progress bar ``steps`` on."""

    def __call__(self, steps: int = 1) -> None: ...


def _unmoved(steps: int = 1) -> None:
    """Draws nothing."""


@contextlib.contextmanager
def progress_bar(label: str | None, total: int) -> Iterator[Advance]:
    """An ``advance(steps=1)`` callable: it moves a bar with an ETA on a terminal, else does nothing."""
    if label is None or not total or not sys.stderr.isatty():
        yield _unmoved
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn, TimeRemainingColumn

    columns = (BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), "eta", TimeRemainingColumn())
    with Progress("{task.description}", *columns, console=Console(file=sys.stderr)) as bar:  # stdout is output
        task = bar.add_task(label, total=total)

        def advance(steps: int = 1) -> None:
            bar.advance(task, steps)

        yield advance
