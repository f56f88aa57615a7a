"""A progress bar with an ETA for work that takes a while, drawn on stderr only when it is a terminal."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

__all__ = ["progress_bar"]


@contextlib.contextmanager
def progress_bar(label: str | None, total: int) -> Iterator[Callable[[], None]]:
    """An ``advance()`` callable: it moves a bar with an ETA on a terminal, else does nothing."""
    if label is None or not total or not sys.stderr.isatty():
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn, TimeRemainingColumn

    columns = (BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), "eta", TimeRemainingColumn())
    with Progress("{task.description}", *columns, console=Console(file=sys.stderr)) as bar:  # stdout is output
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)
