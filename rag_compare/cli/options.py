"""The click options and types the commands share, and the command class that checks its paths."""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_compare.core.result import FORMATS

if TYPE_CHECKING:
    from rag_compare.compute.lexical_judge import LexicalJudge
    from rag_compare.llm.limits import Limits

__all__ = [
    "ASSIGNMENTS",
    "BASE_URL",
    "BASE_URLS",
    "BUCKETS",
    "CACHE",
    "FORMAT",
    "INCLUDE_UNREVIEWED",
    "OFFLINE_JUDGE",
    "PATH",
    "RAY_ADDRESS",
    "RUN_CONFIG",
    "Command",
    "FreezingCommand",
    "choice_option",
    "endpoint_settings",
    "engine_option",
    "finite_float",
    "format_option",
    "limit_options",
    "model_option",
]

PATH = click.Path(path_type=Path)  # existence is checked by the library, with its own messages


class _FileOrFolder(click.Path):
    """A path to write: a ``Path``, or the text as written when it ends with ``/``, which asks for a folder."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.endswith(("/", os.sep)):
            return value
        return super().convert(value, param, ctx)


FILE_OR_FOLDER = _FileOrFolder(path_type=Path)
"""An output path; with a trailing ``/`` (kept as text) a folder to write."""
_WRITTEN = ("output", "cache_path")
"""The parameters naming files a command writes; none may be the same file as another path it was given."""


class Command(click.Command):
    """A command that refuses, before doing anything, to write over one of its own inputs."""

    def invoke(self, ctx: click.Context) -> Any:
        _refuse_writing_inputs(ctx)
        return super().invoke(ctx)


class FreezingCommand(Command):
    """A command that writes a frozen file (a run, scores or pairs file), which stores the paths it was made
    from: it also refuses, before doing anything, any path it is given that holds a credential."""

    def invoke(self, ctx: click.Context) -> Any:
        from rag_compare.io.config import refuse_credential_paths

        paths = [param.name for param in ctx.command.params if param.name and isinstance(param.type, click.Path)]
        refuse_credential_paths({name: ctx.params.get(name) for name in paths})
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


def choice_option(*names: str, choices: Sequence[str], help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """An option taking one of ``choices``, the first by default."""
    return click.option(*names, type=click.Choice(choices), default=choices[0], show_default=True, help=help)


def format_option(choices: Sequence[str], help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A ``--format`` option offering ``choices`` (``text`` first, the default)."""
    return choice_option("--format", "output_format", choices=choices, help=help)


FORMAT = format_option(FORMATS, "Output for a terminal (text) or for programs (json).")
ASSIGNMENTS = click.option(
    "--set",
    "assignments",
    multiple=True,
    metavar="KEY=VALUE",
    help="Set a config key (dots for nested keys); VALUE is JSON where it parses, else text. Repeatable.",
)
BUCKETS = click.option(
    "--buckets",
    type=click.IntRange(min=1),
    help="Write a run directory of this many Parquet parts, a case in part case_hash(case_id) % N, instead of one "
    "file [default for an --output ending in /: 16].",
)


def engine_option(choices: Sequence[str], help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """An ``--engine`` option offering ``choices`` (the first, this process, by default)."""
    return choice_option("--engine", choices=choices, help=help)


RAY_ADDRESS = click.option(
    "--ray-address",
    metavar="ADDRESS",
    help="With --engine ray: the Ray cluster to use (auto: the one this machine belongs to) "
    "[default: a Ray started on this machine].",
)
BASE_URL = click.option("--base-url", help="The endpoint, e.g. http://localhost:8000/v1 [default: $OPENAI_BASE_URL].")


def _pool(ctx: click.Context, param: click.Parameter, values: Sequence[str]) -> str | tuple[str, ...] | None:
    return None if not values else values[0] if len(values) == 1 else tuple(values)


BASE_URLS = click.option(
    "--base-url",
    multiple=True,
    callback=_pool,
    help="The endpoint, e.g. http://localhost:8000/v1 [default: $OPENAI_BASE_URL]. Repeat it for a pool of "
    "endpoints serving the same model: requests go to the one with the fewest in flight, within --concurrency.",
)
"""``--base-url`` of a command that can spread its requests over a pool: the command gets one URL, a tuple
of them, or ``None``."""
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


def _gathered(
    name: str, into: Callable[..., Any], *decorators: Callable[[Any], Any]
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The options of ``decorators`` (listed in that order), reaching the command as one parameter
    ``name``: ``into`` called with their values."""

    def apply(function: Callable[..., Any]) -> Callable[..., Any]:
        below = len(getattr(function, "__click_params__", []))
        function = _stacked(*decorators)(function)
        options = [param.name for param in getattr(function, "__click_params__")[below:]]  # noqa: B009

        @functools.wraps(function)
        def command(**values: Any) -> Any:
            gathered = {option: values.pop(option) for option in options}
            return function(**values, **{name: into(**gathered)})

        return command

    return apply


JUDGE_SAMPLING = _stacked(
    click.option(
        "--temperature", type=finite_float(0), default=0.0, show_default=True, help="Sampling temperature of the judge."
    ),
    click.option("--seed", type=int, help="Sampling seed, for endpoints that honour one."),
)
"""``--temperature`` and ``--seed`` of a command that asks a judge."""
DRY_RUN = click.option("--dry-run", is_flag=True, help="Print the requests and a token estimate; send nothing.")


def endpoint_settings(base_url: str | Sequence[str] | None, limits: Limits, cache: Path | bool) -> dict[str, Any]:
    """The library keywords of a command that calls an endpoint: where it is (one URL or a pool), the
    ``limits``, the reply ``cache``, and a progress bar."""
    return {"base_url": base_url, "limits": limits, "cache": cache, "progress": True}


def read_config(config_file: Path | None, assignments: Sequence[str]) -> dict[str, Any]:
    """The config of ``--config`` with each ``--set`` applied."""
    from rag_compare.io.config import apply_assignments, read_config_file

    return apply_assignments(read_config_file(config_file) if config_file else {}, assignments)


RUN_CONFIG = _gathered(
    "config",
    read_config,
    click.option("--config", "config_file", type=PATH, help="Run config keys from a .toml or .json file."),
    ASSIGNMENTS,
)
"""``--config FILE`` and ``--set KEY=VALUE``: the command gets ``config``, the file's keys with each ``--set``
applied."""


def _cache_setting(cache_path: Path | None, no_cache: bool) -> Path | bool:
    return False if no_cache else cache_path or True


CACHE = _gathered(
    "cache",
    _cache_setting,
    click.option(
        "--cache",
        "cache_path",
        type=PATH,
        help="The reply cache file [default: $RAG_COMPARE_CACHE, else rag-compare/replies.sqlite3 in the user cache].",
    ),
    click.option("--no-cache", is_flag=True, help="Neither read nor store replies (every request is paid for)."),
)
"""``--cache PATH`` and ``--no-cache``: the command gets the library's ``cache=`` (a path, or whether to use
the default file)."""


def _offline_judge(language: str | None, language_files: tuple[Path, ...]) -> LexicalJudge:
    from rag_compare.compute.lexical_judge import LexicalJudge
    from rag_compare.io.language_rules import languages_with

    return LexicalJudge(language=language, languages=languages_with(language_files))


OFFLINE_JUDGE = _gathered(
    "offline_judge",
    _offline_judge,
    click.option(
        "--language",
        help="The offline judge: the language (en, de, fr, es, it, pt, nl, or a --language-file's) of every case "
        "without one in its corpus' language column [default: detected from each case's question].",
    ),
    click.option(
        "--language-file",
        "language_files",
        type=PATH,
        multiple=True,
        help="The offline judge: a language file (TOML: stopwords, abstention phrasings, plural suffixes, decimal "
        "separator) adding a language or replacing a shipped one; repeatable.",
    ),
)
"""``--language`` and ``--language-file``: the command gets the ``LexicalJudge`` they set,
``offline_judge``."""


def model_option(help: str, *, required: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--model``: the model name an endpoint serves."""
    return click.option("--model", required=required, help=help)


def _shown_default(flag: str, type: click.ParamType[Any], default: float, help: str) -> Callable[[Any], Any]:
    return click.option(flag, type=type, default=default, show_default=True, help=help)


def _limits(concurrency: int, timeout: float, max_retries: int) -> Limits:
    from rag_compare.llm.limits import Limits

    return Limits(concurrency, timeout, max_retries)


def limit_options(
    concurrency: int, timeout: float, max_retries: int, unit: str
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--concurrency``, ``--timeout`` and ``--max-retries`` with these defaults; ``unit`` names what is
    bounded, timed and retried ("request", "case"). The command gets them as one ``Limits``, ``limits``."""
    return _gathered(
        "limits",
        _limits,
        _shown_default("--concurrency", click.IntRange(min=1), concurrency, f"{unit.capitalize()}s at once."),
        _shown_default(
            "--timeout", finite_float(0, min_open=True), timeout, f"Seconds one attempt at a {unit} may take."
        ),
        _shown_default("--max-retries", click.IntRange(min=0), max_retries, f"Retries of a {unit}."),
    )
