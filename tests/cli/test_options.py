"""Shared command-line options: every float option of every command refuses NaN and infinities, no command
writes over one of its own inputs, every output is checked before any work, and none that writes a frozen file
takes a path holding a credential."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from rag_compare.cli.main import main
from rag_compare.cli.options import (
    CACHE,
    FORMAT_ALIASES,
    PATH,
    RUN_CONFIG,
    Command,
    FreezingCommand,
    finite_float,
    format_option,
    limit_options,
)
from rag_compare.llm.limits import Limits
from tests.helpers.credential_shapes import KEY_SHAPES, named_with, secret_parts
from tests.helpers.data import HANDMADE_RUNS
from tests.helpers.special_files import BAD_OUTPUTS, bad_output, node_kind, not_blocked_by

Cli = Callable[..., Result]
Write = Callable[[str, str | bytes], Path]
RUN = HANDMADE_RUNS / "baseline.arrow"
NON_FINITE = ("nan", "NaN", "inf", "-inf", "Infinity", "1e999")

# Each command with a float option: its name, that option first (so it is the first value read), then the rest.
FLOAT_OPTIONS = [
    ("compare", "--tolerance", (RUN, RUN)),
    ("review", "--tolerance", (RUN, RUN, "--db", "r.sqlite", "--no-browser")),
    ("compare", "--alpha", (RUN, RUN)),
    ("score", "--timeout", (RUN, "--model", "m", "--output", "out.arrow")),
    ("score", "--temperature", (RUN, "--model", "m", "--output", "out.arrow")),
    ("judge-pairs", "--timeout", (RUN, RUN, "--model", "m", "--output", "out.arrow")),
    ("judge-pairs", "--temperature", (RUN, RUN, "--model", "m", "--output", "out.arrow")),
    ("capture", "--timeout", ("corpus.csv", "--passages", "p.csv", "--top-k", "1", "--output", "out.arrow")),
    ("draft-cases", "--timeout", ("--passages", "p.csv", "--model", "m", "--n", "1", "--output", "out.csv")),
    ("fallback", "--threshold", (RUN, "--scores", "scores.arrow", "--signal", "grounded")),
    ("agreement", "--target-precision", ("labels.csv", RUN)),
    ("agreement", "--target-recall", ("labels.csv", RUN)),
]


@pytest.mark.parametrize("value", NON_FINITE)
@pytest.mark.parametrize(("command", "option", "rest"), FLOAT_OPTIONS)
def test_a_float_option_refuses_non_finite_numbers(
    cli: Cli, command: str, option: str, rest: tuple[object, ...], value: str
) -> None:
    result = cli(command, option, value, *rest)
    assert result.exit_code == 2
    assert f"Invalid value for '{option}': '{value}' is not a finite number." in result.stderr


def _float_params() -> list[tuple[str, click.Parameter]]:
    commands = main.commands.values()
    return [
        (f"{command.name} {param.opts[0]}", param)
        for command in commands
        for param in command.params
        if isinstance(param.type, click.types.FloatParamType)
    ]


def test_every_float_option_is_finite() -> None:
    params = _float_params()
    assert {name for name, _ in params} == {f"{command} {option}" for command, option, _ in FLOAT_OPTIONS}
    for _, param in params:
        with pytest.raises(click.BadParameter, match="not a finite number"):
            param.type.convert("nan", param, None)


def test_finite_float_keeps_its_range() -> None:
    unit = finite_float(0, 1)
    assert unit.convert("0.25", None, None) == 0.25
    with pytest.raises(click.BadParameter, match="not in the range 0<=x<=1"):
        unit.convert("1.5", None, None)
    with pytest.raises(click.BadParameter, match="not in the range x>0"):
        finite_float(0, min_open=True).convert("0", None, None)


def test_gathered_options_reach_the_command_as_one_parameter_each() -> None:
    seen: dict[str, object] = {}

    @click.command()
    @limit_options(concurrency=2, timeout=1.0, max_retries=0, unit="request")
    @CACHE
    @RUN_CONFIG
    def command(limits: Limits, cache: object, config: dict[str, object]) -> None:
        seen.update(limits=limits, cache=cache, config=config)

    options = ["--concurrency", "3", "--no-cache", "--set", "top_k=5", "--set", "name=b"]
    result = CliRunner().invoke(command, options)
    assert result.exit_code == 0, result.output
    assert seen == {
        "limits": Limits(concurrency=3, timeout=1.0, max_retries=0),
        "cache": False,
        "config": {"top_k": 5, "name": "b"},
    }
    names = ["concurrency", "timeout", "max_retries", "cache_path", "no_cache", "config_file", "assignments"]
    assert [param.name for param in command.params] == names


@pytest.mark.parametrize(("options", "cache"), [([], True), (["--cache", "r.sqlite3"], Path("r.sqlite3"))])
def test_the_cache_options_give_the_library_setting(options: list[str], cache: object) -> None:
    seen: list[object] = []

    @click.command()
    @CACHE
    def command(cache: object) -> None:
        seen.append(cache)

    assert CliRunner().invoke(command, options).exit_code == 0
    assert seen == [cache]


OVER_INPUT = {
    # command line (names in braces are files under tmp_path), the file it would write over
    "compare over its baseline": ("{baseline} {candidate} --format json --output {baseline}", "baseline"),
    "compare over --corpus": ("{baseline} {candidate} --corpus {corpus} --output {corpus}", "corpus"),
    "compare over --candidate-scores": (
        "{baseline} {candidate} --candidate-scores {scores} --output {scores}",
        "scores",
    ),
    "freeze over its records": ("freeze {records} --corpus {corpus} --output {records}", "records"),
    "capture over --passages": ("capture {corpus} --passages {passages} --top-k 2 --output {passages}", "passages"),
    "score over its run": ("score {candidate} --model m --output {candidate}", "candidate"),
    "score with --cache its run": ("score {candidate} --model m --cache {candidate} --output {new}", "candidate"),
    "score with --cache its output": ("score {candidate} --model m --cache {new} --output {new}", None),
    "import-scores over its file": (
        "import-scores {candidate} {trust} --evaluator e --map trust=trustworthiness --output {trust}",
        "trust",
    ),
    "fallback over its scores": (
        "fallback {candidate} --scores {scores} --signal trustworthiness --output {scores}",
        "scores",
    ),
    "admit --output over its drafts": ("admit {corpus} --ids hotel@v2 --output {corpus}", "corpus"),
    "draft-cases over --passages": (
        "draft-cases --passages {passages} --model m --n 1 --output {passages}",
        "passages",
    ),
}


@pytest.mark.parametrize(("command", "target"), OVER_INPUT.values(), ids=OVER_INPUT.keys())
def test_no_command_writes_over_its_own_input(
    cli: Cli, files: dict[str, Path], command: str, target: str | None
) -> None:
    before = {name: path.read_bytes() for name, path in files.items() if path.exists()}
    result = cli(*command.format(**files).split(), env={"OPENAI_API_KEY": ""})
    assert result.exit_code == 2, result.output
    written = files[target] if target else files["new"]
    assert f"{written} is the same file as" in result.stderr
    assert "never writes over one of its own inputs" in result.stderr
    assert {name: path.read_bytes() for name, path in files.items() if path.exists()} == before
    assert not files["new"].exists()


EXTENSIONS = {  # an output file's name, the format it names when --format is not given
    "report.html": "html",
    "report.htm": "html",
    "REPORT.HTML": "html",
    "report.md": "markdown",
    "report.markdown": "markdown",
    "report.json": "json",
    "report.xml": "junit",
    "report.txt": "text",
    "report.out": "text",  # an extension that names no format keeps the default
    "report": "text",
}
FORMAT_STARTS = {
    "html": "<!DOCTYPE html>",
    "markdown": "# baseline → candidate",
    "json": '{\n  "schema_version"',
    "junit": '<?xml version="1.0"',
    "text": "warning: passages read from the runs' knowledge_base",  # warnings come first; tests run from the root
}


@pytest.mark.parametrize(("name", "named"), EXTENSIONS.items())
def test_an_output_extension_names_the_format(cli: Cli, tmp_path: Path, name: str, named: str) -> None:
    result = cli(RUN, HANDMADE_RUNS / "candidate.arrow", "--output", tmp_path / name)
    assert result.exit_code == 0, result.output
    assert (tmp_path / name).read_text(encoding="utf-8").startswith(FORMAT_STARTS[named])
    assert f"wrote the {named} comparison to " in result.stdout
    said = f"format {named}, from the {Path(name).suffix} extension of --output (--format chooses another)\n"
    assert result.stderr == ("" if named == "text" else said)


@pytest.mark.parametrize("given", ["text", "json", "markdown", "md"])
def test_a_given_format_wins_over_the_extension(cli: Cli, tmp_path: Path, given: str) -> None:
    result = cli(RUN, HANDMADE_RUNS / "candidate.arrow", "--format", given, "--output", tmp_path / "report.html")
    assert result.exit_code == 0, result.output
    shown = "markdown" if given == "md" else given
    assert (tmp_path / "report.html").read_text(encoding="utf-8").startswith(FORMAT_STARTS[shown])
    assert result.stderr == ""


def test_md_is_markdown(cli: Cli) -> None:
    runs = (RUN, HANDMADE_RUNS / "candidate.arrow")
    short, long = cli(*runs, "--format", "md"), cli(*runs, "--format", "markdown")
    assert (short.exit_code, long.exit_code) == (0, 0)
    assert short.stdout == long.stdout
    assert short.stdout.startswith(FORMAT_STARTS["markdown"])
    assert "--format [text|json|markdown|md|html|github|junit]" in cli("compare", "--help").stdout
    assert "md is short for markdown." in " ".join(cli("compare", "--help").stdout.split())


@pytest.mark.parametrize("name", sorted(main.commands))
def test_every_format_option_takes_the_short_names_and_says_so(name: str) -> None:
    option = next((param for param in main.commands[name].params if param.name == "output_format"), None)
    if option is None:
        return
    assert isinstance(option, click.Option)
    assert isinstance(option.type, click.Choice)
    offered = list(option.type.choices)
    for alias, format in FORMAT_ALIASES.items():
        assert (alias in offered) == (format in offered)
        if format in offered:
            assert option.type.convert(alias, option, None) == format
            assert f"{alias} is short for {format}." in (option.help or "")


def test_any_command_may_take_its_format_from_its_output(tmp_path: Path) -> None:
    @click.command(cls=Command)
    @format_option(("text", "json", "markdown", "html"), "The output.", written_to="--output")
    @click.option("--output", "destination", type=PATH)
    def command(output_format: str, destination: Path | None) -> None:
        click.echo(output_format)

    runner = CliRunner()
    assert runner.invoke(command, ["--output", "a.htm"]).output == (
        "format html, from the .htm extension of --output (--format chooses another)\nhtml\n"
    )
    assert runner.invoke(command, ["--output", "a.xml"]).output == "text\n"  # junit is not offered
    assert runner.invoke(command, ["--output", "a.md", "--format", "json"]).output == "json\n"
    assert runner.invoke(command, []).output == "text\n"
    assert "the --output file's extension chooses: .txt text, .json json, .md markdown" in " ".join(
        runner.invoke(command, ["--help"]).output.split()
    )


ENDPOINT = "--model m --base-url http://127.0.0.1:9/v1 --timeout 1 --max-retries 0"
"""An endpoint nothing listens on: no command may get as far as calling it."""
WRITERS = {
    # command line (names in braces are files under tmp_path; {out} the output tried), and its option
    "compare": ("{baseline} {candidate} --format json --output {out}", "--output"),
    "compare several candidates": ("{baseline} {candidate} {baseline} --format json --output {out}", "--output"),
    "compare to a folder": ("{baseline} {candidate} --output {out}/", "--output"),
    "history": ("history {baseline} {candidate} --format json --output {out}", "--output"),
    "freeze": ("freeze {records} --corpus {corpus} --output {out}", "--output"),
    "freeze to a run directory": ("freeze {records} --corpus {corpus} --output {out}/", "--output"),
    "import-run": ("import-run {units} --from ragas --corpus {corpus} --output {out}", "--output"),
    "import-run to a run directory": ("import-run {units} --from ragas --corpus {corpus} --output {out}/", "--output"),
    "merge-repeats": ("merge-repeats {first} {second} --output {out}", "--output"),
    "capture": ("capture {corpus} --passages {passages} --top-k 1 --output {out}", "--output"),
    "capture to a run directory": ("capture {corpus} --passages {passages} --top-k 1 --output {out}/", "--output"),
    "score": ("score {candidate} --judge lexical --output {out}", "--output"),
    "score --cache": (f"score {{candidate}} {ENDPOINT} --cache {{out}} --output {{new}}", "--cache"),
    "import-scores": (
        "import-scores {candidate} {trust} --evaluator e --map trust=trustworthiness --output {out}",
        "--output",
    ),
    "judge-pairs": (f"judge-pairs {{baseline}} {{candidate}} {ENDPOINT} --output {{out}}", "--output"),
    "judge-pairs --cache": (
        f"judge-pairs {{baseline}} {{candidate}} {ENDPOINT} --cache {{out}} --output {{new}}",
        "--cache",
    ),
    "fallback": (
        "fallback {candidate} --scores {scores} --signal trustworthiness --threshold 0.5 --output {out}",
        "--output",
    ),
    "draft-cases": (f"draft-cases --passages {{passages}} {ENDPOINT} --n 1 --output {{out}}", "--output"),
    "draft-cases --cache": (
        f"draft-cases --passages {{passages}} {ENDPOINT} --n 1 --cache {{out}} --output {{new}}.csv",
        "--cache",
    ),
    "admit": ("admit {corpus} --ids hotel@v2 --output {out}", "--output"),
}
SAID = {
    "character device": "{path}: is a character device",
    "FIFO": "{path}: is a FIFO (named pipe)",
    "socket": "{path}: is a socket",
    "link to a device": "{path}: is a symbolic link",
    "missing folder": "{path}: cannot be written: the folder {path.parent} does not exist. Create it first",
    "trailing slash": "{out}: names a folder, but the",
}
"""How the message starts for each kind of bad output."""
FOLDER_WRITERS = ("compare", "freeze", "import-run", "capture")
"""The commands for which a trailing / names the folder they write."""
BAD_WRITES = [
    pytest.param(command, option, kind, id=f"{name}, {kind}")
    for name, (command, option) in WRITERS.items()
    for kind in BAD_OUTPUTS
    if not (kind == "trailing slash" and name.split()[0] in FOLDER_WRITERS)
]


@pytest.mark.parametrize(("command", "option", "kind"), BAD_WRITES)
@pytest.mark.usefixtures("reply_cache")
def test_every_output_is_refused_before_any_work_where_it_cannot_be_written(
    cli: Cli,
    writer_inputs: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    option: str,
    kind: str,
) -> None:
    from rag_compare.io.run_import import FORMATS

    monkeypatch.setitem(FORMATS, "ragas", "tests.io.test_run_import:units_reader")
    out = bad_output(kind, tmp_path / "out.csv")
    nodes = {path: node_kind(path) for path in (out, tmp_path / "out.csv.device") if os.path.lexists(path)}
    before = sorted([*tmp_path.rglob("*"), *writer_inputs["corpus"].parent.iterdir()])
    with not_blocked_by(out):
        line = command.format(**writer_inputs, new=tmp_path / "new.arrow", out=out)
        result = cli(*line.split(), env={"OPENAI_API_KEY": ""})
    assert result.exit_code == 2, result.output
    assert SAID[kind].format(path=Path(out), out=out) in result.stderr, result.stderr
    assert option in result.stderr
    assert {path: node_kind(path) for path in nodes} == nodes
    assert sorted([*tmp_path.rglob("*"), *writer_inputs["corpus"].parent.iterdir()]) == before


STORED_PATHS = {
    # command line (names in braces are files of `stored_inputs`), the file whose path holds the credential, its name said
    "freeze RECORDS": ("freeze {records} --corpus {corpus} --output {new}", "records", "RECORDS"),
    "freeze --corpus": ("freeze {records} --corpus {corpus} --output {new}", "corpus", "--corpus"),
    "freeze --output": ("freeze {records} --corpus {corpus} --output {new}", "new", "--output"),
    "freeze --output DIR/": ("freeze {records} --corpus {corpus} --output {new}/", "new", "--output"),
    "freeze --config": ("freeze {records} --corpus {corpus} --config {config} --output {new}", "config", "--config"),
    "import-run SOURCE": ("import-run {units} --from ragas --corpus {corpus} --output {new}", "units", "SOURCE"),
    "import-run --corpus": ("import-run {units} --from ragas --corpus {corpus} --output {new}", "corpus", "--corpus"),
    "import-run --passages": (
        "import-run {units} --from ragas --corpus {corpus} --passages {passages} --output {new}",
        "passages",
        "--passages",
    ),
    "import-run --output": ("import-run {units} --from ragas --corpus {corpus} --output {new}", "new", "--output"),
    "capture CORPUS": ("capture {corpus} --passages {passages} --top-k 2 --output {new}", "corpus", "CORPUS"),
    "capture --passages": ("capture {corpus} --passages {passages} --top-k 2 --output {new}", "passages", "--passages"),
    "capture --output": ("capture {corpus} --passages {passages} --top-k 2 --output {new}", "new", "--output"),
    "merge-repeats RUNS": ("merge-repeats {first} {second} --output {new}", "second", "path 2 of RUNS"),
    "merge-repeats --output": ("merge-repeats {first} {second} --output {new}", "new", "--output"),
    "score RUN": ("score {candidate} --judge lexical --output {new}", "candidate", "RUN"),
    "score --output": ("score {candidate} --judge lexical --output {new}", "new", "--output"),
    "import-scores RUN": (
        "import-scores {candidate} {trust} --evaluator e --map trust=trustworthiness --output {new}",
        "candidate",
        "RUN",
    ),
    "import-scores FILE": (
        "import-scores {candidate} {trust} --evaluator e --map trust=trustworthiness --output {new}",
        "trust",
        "FILE",
    ),
    "import-scores --output": (
        "import-scores {candidate} {trust} --evaluator e --map trust=trustworthiness --output {new}",
        "new",
        "--output",
    ),
    "judge-pairs BASELINE": ("judge-pairs {baseline} {candidate} --model m --output {new}", "baseline", "BASELINE"),
    "judge-pairs CANDIDATE": ("judge-pairs {baseline} {candidate} --model m --output {new}", "candidate", "CANDIDATE"),
    "judge-pairs --output": ("judge-pairs {baseline} {candidate} --model m --output {new}", "new", "--output"),
}


@pytest.fixture(scope="module")
def stored_inputs(writer_inputs: dict[str, Path]) -> dict[str, Path]:
    """``writer_inputs`` (made once for the module: every command here refuses before it writes) and a config
    file; ``new`` is a path of their folder that no file holds."""
    folder = writer_inputs["corpus"].parent
    config = folder / "run.toml"
    config.write_text('model = "m"\n', encoding="utf-8")
    return {**writer_inputs, "config": config, "new": folder / "new.arrow"}


@pytest.mark.parametrize(("command", "place", "said"), STORED_PATHS.values(), ids=STORED_PATHS.keys())
@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_a_command_that_freezes_refuses_a_path_holding_a_credential_before_anything(
    cli: Cli,
    stored_inputs: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    secret: str,
    command: str,
    place: str,
    said: str,
) -> None:
    from rag_compare.io.run_import import FORMATS

    monkeypatch.setitem(FORMATS, "ragas", "tests.io.test_run_import:units_reader")
    given = stored_inputs[place]
    named = named_with(secret, tmp_path, given.suffix or ".arrow")
    if given.exists():
        shutil.copyfile(given, named)
    before = sorted([*tmp_path.rglob("*"), *stored_inputs["corpus"].parent.iterdir()])
    result = cli(
        *(word.format(**{**stored_inputs, place: named}) for word in command.split()), env={"OPENAI_API_KEY": ""}
    )
    assert result.exit_code == 2, result.output
    which = said if said.startswith("path ") else f"the path of {said}"
    assert result.stderr.startswith(f"error: {which} holds a credential (an API key or an authorization header).")
    assert not any(form in result.stdout + result.stderr for form in secret_parts(secret))
    assert sorted([*tmp_path.rglob("*"), *stored_inputs["corpus"].parent.iterdir()]) == before


def test_the_commands_that_freeze_are_the_ones_that_write_a_run_scores_or_pairs_file() -> None:
    freezing = {name for name, command in main.commands.items() if isinstance(command, FreezingCommand)}
    assert freezing == {"freeze", "import-run", "capture", "merge-repeats", "score", "import-scores", "judge-pairs"}
    assert freezing == {command.split()[0] for command, _, _ in STORED_PATHS.values()}
