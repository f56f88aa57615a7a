"""Options and output helpers shared by the command-line modules."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import click

from rag_compare.render import FORMATS

__all__ = ["ASSIGNMENTS", "FORMAT", "INCLUDE_UNREVIEWED", "PATH", "emit", "format_option", "wants_json"]

PATH = click.Path(path_type=Path)  # existence is checked by the library, with its own messages


def format_option(choices: Sequence[str], help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A ``--format`` option offering ``choices``, ``text`` by default."""
    return click.option(
        "--format", "output_format", type=click.Choice(choices), default="text", show_default=True, help=help
    )


FORMAT = format_option(FORMATS, "Output for a terminal (text) or for programs (json).")
ASSIGNMENTS = click.option(
    "--set",
    "assignments",
    multiple=True,
    metavar="KEY=VALUE",
    help="Set a config key (dots for nested keys); VALUE is JSON where it parses, else text. Repeatable.",
)

INCLUDE_UNREVIEWED = click.option(
    "--include-unreviewed",
    is_flag=True,
    help="Take in unreviewed synthetic cases too (drafts are not gold until admitted).",
)


def wants_json(output_format: str) -> None:
    """Let the error funnel answer in JSON too."""
    click.get_current_context().meta["rag_compare.json"] = output_format == "json"


def emit(writer: Callable[[TextIO], object], output: Path | None) -> None:
    """Run ``writer`` on stdout, or on a file that appears at ``output`` only once it is complete."""
    if output is None:
        writer(sys.stdout)
        return
    from rag_compare.runfile import atomic_output

    with atomic_output(output, replace=True) as raw:
        stream = io.TextIOWrapper(raw, encoding="utf-8", newline="")
        writer(stream)
        stream.flush()
        stream.detach()
