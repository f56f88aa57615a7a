"""Options and output helpers shared by the command-line modules."""

from __future__ import annotations

import io
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

import click

from rag_compare.core.result import FORMATS, terminal_safe

__all__ = [
    "ASSIGNMENTS",
    "BASE_URL",
    "CACHE",
    "CONFIG",
    "FORMAT",
    "INCLUDE_UNREVIEWED",
    "PATH",
    "Command",
    "cache_setting",
    "emit",
    "finite_float",
    "format_option",
    "interrupted",
    "limit_options",
    "model_option",
    "read_config",
    "say",
    "wants_json",
]

PATH = click.Path(path_type=Path)  # existence is checked by the library, with its own messages
_WRITTEN = ("output", "cache_path")
"""The parameters naming files a command writes; none may be the same file as another path it was given."""


class Command(click.Command):
    """A command that refuses, before doing anything, to write over one of its own inputs."""

    def invoke(self, ctx: click.Context) -> Any:
        _refuse_writing_inputs(ctx)
        return super().invoke(ctx)


def _refuse_writing_inputs(ctx: click.Context) -> None:
    from rag_compare.core.errors import RunFileError

    paths = [(param, ctx.params.get(param.name or "")) for param in ctx.command.params]
    given = [(param, path) for param, path in paths if isinstance(path, Path)]
    for written_param, written in given:
        if written_param.name not in _WRITTEN:
            continue
        for other_param, other in given:
            if other_param is not written_param and _same_file(written, other):
                raise RunFileError(
                    f"{_flag(written_param)} {written} is the same file as {_flag(other_param)} {other}: a command "
                    f"never writes over one of its own inputs. Give {_flag(written_param)} another path."
                )


def _flag(param: click.Parameter) -> str:
    return param.opts[0] if isinstance(param, click.Option) else param.human_readable_name


def _same_file(first: Path, second: Path) -> bool:
    try:
        return first.samefile(second)
    except OSError:  # one of them does not exist (yet)
        return first.resolve() == second.resolve()


class _FiniteFloat(click.FloatRange):
    """A number within a range that is neither NaN nor infinite."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(number, param, ctx)


def finite_float(
    min: float, max: float | None = None, *, min_open: bool = False, max_open: bool = False
) -> click.FloatRange:
    """The type of every float option: a finite number from ``min`` (up to ``max``); NaN and infinities
    are refused with a message naming the option."""
    return _FiniteFloat(min, max, min_open=min_open, max_open=max_open)


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

CONFIG = click.option("--config", "config_file", type=PATH, help="Run config keys from a .toml or .json file.")
BASE_URL = click.option("--base-url", help="The endpoint, e.g. http://localhost:8000/v1 [default: $OPENAI_BASE_URL].")
_CACHE_PATH = click.option(
    "--cache",
    "cache_path",
    type=PATH,
    help="The reply cache file [default: $RAG_COMPARE_CACHE, else rag-compare/replies.sqlite3 in the user cache].",
)
_NO_CACHE = click.option("--no-cache", is_flag=True, help="Neither read nor store replies (every request is paid for).")
INCLUDE_UNREVIEWED = click.option(
    "--include-unreviewed",
    is_flag=True,
    help="Take in unreviewed synthetic cases too (drafts are not gold until admitted).",
)


def _stacked(*decorators: Callable[[Any], Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """One decorator applying ``decorators`` so that their options list in the order given."""

    def apply(function: Callable[..., Any]) -> Callable[..., Any]:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


CACHE = _stacked(_CACHE_PATH, _NO_CACHE)
"""``--cache PATH`` and ``--no-cache``; ``cache_setting`` turns them into a library ``cache=``."""


def model_option(help: str, *, required: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--model``: the model name an endpoint serves."""
    return click.option("--model", required=required, help=help)


def limit_options(
    concurrency: int, timeout: float, max_retries: int, unit: str
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--concurrency``, ``--timeout`` and ``--max-retries`` with these defaults; ``unit`` names what is
    bounded, timed and retried ("request", "case")."""
    return _stacked(
        click.option(
            "--concurrency",
            type=click.IntRange(min=1),
            default=concurrency,
            show_default=True,
            help=f"{unit.capitalize()}s at once.",
        ),
        click.option(
            "--timeout",
            type=finite_float(0, min_open=True),
            default=timeout,
            show_default=True,
            help=f"Seconds one attempt at a {unit} may take.",
        ),
        click.option(
            "--max-retries",
            type=click.IntRange(min=0),
            default=max_retries,
            show_default=True,
            help=f"Retries of a {unit}.",
        ),
    )


def cache_setting(cache_path: Path | None, no_cache: bool) -> Path | bool:
    """The ``cache=`` of the library from ``--cache``/``--no-cache``."""
    return False if no_cache else cache_path or True


def read_config(config_file: Path | None, assignments: Sequence[str]) -> dict[str, Any]:
    """The config of ``--config`` with each ``--set`` applied."""
    from rag_compare.io.config import apply_assignments, read_config_file

    return apply_assignments(read_config_file(config_file) if config_file else {}, assignments)


EXIT_INTERRUPTED = 128 + 2  # what a shell reports for a command ended by SIGINT


def interrupted(kept: str | None = None) -> NoReturn:
    """Say in one line that the command was interrupted (and what it ``kept``, to resume), and exit 130."""
    said = f"{kept}; run the same command again to resume" if kept else "no output was left half-written"
    click.echo(f"\ninterrupted: {said}.", err=True)
    sys.exit(EXIT_INTERRUPTED)


def say(text: str, *, err: bool = False) -> None:
    """Print a line for a person at a terminal (control characters from data escaped)."""
    click.echo(terminal_safe(text), err=err)


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
