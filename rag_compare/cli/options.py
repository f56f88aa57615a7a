"""The click options and types the commands share, and the command class that checks its paths."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_compare.compute.engines import DEFAULT_BUCKETS, ENGINES
from rag_compare.core.result import FORMATS

if TYPE_CHECKING:
    from rag_compare.compute.lexical_judge import LexicalJudge
    from rag_compare.io.outputs import Existing
    from rag_compare.llm.limits import Limits

__all__ = [
    "ASSIGNMENTS",
    "BASE_URL",
    "BASE_URLS",
    "BUCKETS",
    "CACHE",
    "COMPARED",
    "COMPARED_ON",
    "FORMAT",
    "FORMAT_ALIASES",
    "FORMAT_EXTENSIONS",
    "INCLUDE_UNREVIEWED",
    "JUDGED_BY",
    "JUDGED_BY_EACH",
    "OFFLINE_JUDGE",
    "PATH",
    "RAY_ADDRESS",
    "RUN_CONFIG",
    "Command",
    "FreezingCommand",
    "OutputPath",
    "check_engine",
    "choice_option",
    "endpoint_settings",
    "engine_option",
    "finite_float",
    "format_option",
    "limit_options",
    "model_option",
]

PATH = click.Path(path_type=Path)  # existence is checked by the library, with its own messages


class OutputPath(click.Path):
    """The type of a parameter naming what a command writes: the ``what`` (a file) written there, or, for
    a path naming a folder (a trailing ``/``), the ``folder`` (``None``: the command writes no folder);
    ``existing`` and ``parameter`` as ``io.outputs.check_output`` takes them. The value is a ``Path``, or the
    text as written when it names a folder (a ``Path`` drops the ``/``)."""

    def __init__(
        self, what: str, *, folder: str | None = None, existing: Existing = "refused", parameter: str = "output"
    ) -> None:
        super().__init__(path_type=Path)
        self.what, self.folder, self.existing, self.parameter = what, folder, existing, parameter

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from rag_compare.io.outputs import names_folder

        if isinstance(value, str) and names_folder(value):
            return value
        return super().convert(value, param, ctx)

    def check(self, value: str | Path) -> None:
        """Refuse ``value`` where the command may not write (``io.outputs.check_output``)."""
        from rag_compare.io.outputs import check_output, names_folder

        if self.folder is not None and names_folder(value):
            check_output(value, self.folder, folder=True, parameter=self.parameter)
        else:
            check_output(value, self.what, existing=self.existing, parameter=self.parameter)


class Command(click.Command):
    """A command that refuses, before doing anything, to write over one of its own inputs, or where an
    output may not be written, and that writes the format its output file's extension names when
    ``--format`` is not given."""

    def invoke(self, ctx: click.Context) -> Any:
        _refuse_writing_inputs(ctx)
        _check_outputs(ctx)
        _format_from_extension(ctx)
        return super().invoke(ctx)


def _check_outputs(ctx: click.Context) -> None:
    """Refuse each output the command was given where it may not be written (``OutputPath.check``)."""
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        if isinstance(param.type, OutputPath) and value is not None:
            param.type.check(value)


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

    values = [(param, ctx.params.get(param.name or "")) for param in ctx.command.params]
    paths = [(param, path) for param, value in values for path in (value if isinstance(value, tuple) else [value])]
    given = [(param, path) for param, path in paths if isinstance(path, Path)]
    for written_param, written in given:
        if not isinstance(written_param.type, OutputPath):
            continue
        for other_param, other in given:
            if other_param is not written_param and _same_file(written, other):
                raise RunFileError(
                    f"{_flag(written_param)} {written} is the same file as {_flag(other_param)} {other}: a command "
                    f"never writes over one of its own inputs. Give {_flag(written_param)} another path."
                )


def _format_from_extension(ctx: click.Context) -> None:
    """Without ``--format``, the format that the extension of the file it is written to names
    (``report.html``: html), said on stderr; an extension naming none keeps the default."""
    from click.core import ParameterSource

    from rag_compare.cli.exits import say

    for param in ctx.command.params:
        if not isinstance(param, _FormatOption) or param.written_to is None or param.name is None:
            continue
        if ctx.get_parameter_source(param.name) is not ParameterSource.DEFAULT:
            continue
        output = next(ctx.params.get(str(other.name)) for other in ctx.command.params if param.written_to in other.opts)
        suffix = output.suffix if isinstance(output, Path) else ""
        named = FORMAT_EXTENSIONS.get(suffix.lower())
        if named in param.offered and named != ctx.params[param.name]:
            ctx.params[param.name] = named
            say(
                f"format {named}, from the {suffix} extension of {param.written_to} (--format chooses another)",
                err=True,
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


FORMAT_ALIASES = {"md": "markdown"}
"""Short names ``--format`` takes for a format it offers."""
FORMAT_EXTENSIONS = {
    ".txt": "text",
    ".json": "json",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".xml": "junit",
}
"""The format an output file's extension names (the only format of its kind rag-compare writes)."""


class _FormatChoice(click.Choice[str]):
    """The formats offered and their short names (``FORMAT_ALIASES``), each short name given as its format."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        chosen = super().convert(value, param, ctx)
        return FORMAT_ALIASES.get(chosen, chosen)


class _FormatOption(click.Option):
    """``--format``: ``offered`` formats; ``written_to``, the option of the file that output is written to
    (``None``: a command whose files are not in this format)."""

    def __init__(self, *args: Any, offered: Sequence[str], written_to: str | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.offered = tuple(offered)
        self.written_to = written_to


def _aliases_of(name: str) -> list[str]:
    return [alias for alias, named in FORMAT_ALIASES.items() if named == name]


def format_option(
    choices: Sequence[str], help: str, *, written_to: str | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A ``--format`` option offering ``choices`` (``text`` first, the default) and their short names;
    ``written_to``: the option (``--output``) of the file this output is written to, whose extension
    chooses the format when ``--format`` is not given."""
    said = [help, *(f"{alias} is short for {name}." for name in choices for alias in _aliases_of(name))]
    if written_to is not None:
        extensions = [f"{suffix} {name}" for suffix, name in FORMAT_EXTENSIONS.items() if name in choices]
        said.append(f"Without --format, the {written_to} file's extension chooses: {', '.join(extensions)}.")
    return click.option(
        "--format",
        "output_format",
        cls=_FormatOption,
        offered=choices,
        written_to=written_to,
        type=_FormatChoice([spelled for name in choices for spelled in (name, *_aliases_of(name))]),
        default=choices[0],
        show_default=True,
        help=" ".join(said),
    )


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


COMPARED = _stacked(
    click.option(
        "--corpus",
        type=PATH,
        help="Judge both runs by this corpus' labels; its cases that neither run has are missing_in_both (unreviewed "
        "synthetic ones are counted apart: not run).",
    ),
    click.option(
        "--passages",
        type=PATH,
        help="The knowledge base: check each answer's completeness, and find required passages' text in the context of "
        "records without context_passage_ids [default: the knowledge_base file the runs record].",
    ),
    click.option(
        "--k",
        type=click.IntRange(min=1),
        help="Cut both ranked lists at k [default: each run's top_k, else the list's length].",
    ),
    click.option(
        "--tolerance",
        type=finite_float(0),
        default=1e-9,
        show_default=True,
        help="How far a signal must move to count as changed.",
    ),
)
"""``--corpus``, ``--passages``, ``--k`` and ``--tolerance``: what a command comparing two runs compares them by."""


def _judged_by(*, many: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--baseline-scores``, ``--candidate-scores`` (``many``: once per candidate) and ``--pairs``."""
    candidate = "A scores file of CANDIDATE: its verdicts replace the offline judge's."
    if many:
        candidate += " With several candidates: one per candidate, in their order."
    return _stacked(
        click.option(
            "--baseline-scores", type=PATH, help="A scores file of BASELINE: its verdicts replace the offline judge's."
        ),
        click.option("--candidate-scores", type=PATH, multiple=many, help=candidate),
        click.option(
            "--pairs",
            type=PATH,
            help="A pairs file of BASELINE and CANDIDATE (rag-compare judge-pairs): each case's preferred side, and "
            "the win rate.",
        ),
    )


JUDGED_BY = _judged_by(many=False)
"""``--baseline-scores``, ``--candidate-scores`` and ``--pairs``: the judges' verdicts a comparison reads."""
JUDGED_BY_EACH = _judged_by(many=True)
"""``JUDGED_BY`` with ``--candidate-scores`` once per candidate (``compare``, of one candidate or several)."""
COMPARED_ON = _stacked(
    engine_option(
        ENGINES,
        "Where the work is done: memory (every case held), streaming (the cases spilled to $TMPDIR in buckets, "
        "one held at a time: for runs larger than memory) or ray (Ray Data; needs rag-compare[ray]). Every engine "
        "gives the same comparison.",
    ),
    click.option(
        "--buckets",
        type=click.IntRange(min=1),
        help="With --engine streaming or ray: the buckets the cases are split into, by case_hash(case_id) "
        f"[default: the runs' own when both are run directories of as many, else {DEFAULT_BUCKETS}].",
    ),
    RAY_ADDRESS,
)
"""``--engine``, ``--buckets`` and ``--ray-address``: where a comparison is worked out (see ``check_engine``)."""


def check_engine(engine: str, buckets: int | None, ray_address: str | None) -> None:
    """Refuse, before any work, --buckets in memory and --ray-address without Ray."""
    if buckets is not None and engine == "memory":
        raise click.UsageError("--buckets is for --engine streaming or ray: add one, or leave out --buckets.")
    if ray_address is not None and engine != "ray":
        raise click.UsageError("--ray-address is for --engine ray: add it, or leave out --ray-address.")


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
        type=OutputPath("reply cache", existing="updated", parameter="cache"),
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
