"""How a command speaks to a person and how it ends: messages, the interruption line and exit codes."""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from rag_compare.core.credentials import redact
from rag_compare.core.result import terminal_safe

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_BROKEN_PIPE",
    "EXIT_FOUND",
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "interrupted",
    "interruption_line",
    "say",
]

EXIT_FOUND, EXIT_BAD_INPUT = 1, 2
EXIT_INTERRUPTED = 128 + 2  # what a shell reports for a command ended by SIGINT
EXIT_BROKEN_PIPE = 128 + 13  # ... by SIGPIPE
EXIT_TERMINATED = 128 + 15  # ... and by SIGTERM


def interrupted(kept: str | None = None) -> NoReturn:
    """Say in one line that the command was interrupted (and what it ``kept``, to resume), and exit 130."""
    click.echo(f"\n{interruption_line(kept)}", err=True)
    sys.exit(EXIT_INTERRUPTED)


def interruption_line(kept: str | None = None) -> str:
    """``interrupted: ...``, saying what the command ``kept`` (to resume), else that nothing is half-written."""
    said = f"{kept}; run the same command again to resume" if kept else "no output was left half-written"
    return f"interrupted: {said}."


def say(text: str, *, err: bool = False) -> None:
    """Print a line for a person at a terminal (credentials redacted, control characters from data escaped)."""
    click.echo(terminal_safe(redact(text)), err=err)
