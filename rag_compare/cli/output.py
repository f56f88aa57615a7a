"""Writing a command's output: to stdout or atomically to a file, and in JSON when asked."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import click

__all__ = ["emit", "wants_json"]


def wants_json(output_format: str) -> None:
    """Let the error funnel answer in JSON too."""
    click.get_current_context().meta["rag_compare.json"] = output_format == "json"


def emit(writer: Callable[[TextIO], object], output: Path | None) -> None:
    """Run ``writer`` on stdout, or on a file that appears at ``output`` only once it is complete."""
    if output is None:
        writer(sys.stdout)
        return
    from rag_compare.io.runfile import atomic_output

    with atomic_output(output, replace=True, what="report") as raw:
        stream = io.TextIOWrapper(raw, encoding="utf-8", newline="")
        writer(stream)
        stream.flush()
        stream.detach()
