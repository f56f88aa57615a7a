"""Shared command-line options: every float option of every command refuses NaN and infinities, no command
writes over one of its own inputs, and none that writes a frozen file takes a path holding a credential."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from rag_compare.cli.main import main
from rag_compare.cli.options import CACHE, RUN_CONFIG, FreezingCommand, finite_float, limit_options
from rag_compare.llm.limits import Limits
from tests.helpers.credential_shapes import KEY_SHAPES, copied_as, named_with, secret_parts
from tests.helpers.data import HANDMADE_RUNS

Cli = Callable[..., Result]
Write = Callable[[str, str | bytes], Path]
RUN = HANDMADE_RUNS / "baseline.arrow"
NON_FINITE = ("nan", "NaN", "inf", "-inf", "Infinity", "1e999")

# Each command with a float option: its name, that option first (so it is the first value read), then the rest.
FLOAT_OPTIONS = [
    ("compare", "--tolerance", (RUN, RUN)),
    ("compare", "--alpha", (RUN, RUN)),
    ("score", "--timeout", (RUN, "--model", "m", "--output", "out.arrow")),
    ("score", "--temperature", (RUN, "--model", "m", "--output", "out.arrow")),
    ("judge-pairs", "--timeout", (RUN, RUN, "--model", "m", "--output", "out.arrow")),
    ("judge-pairs", "--temperature", (RUN, RUN, "--model", "m", "--output", "out.arrow")),
    ("capture", "--timeout", ("corpus.csv", "--passages", "p.csv", "--top-k", "1", "--output", "out.arrow")),
    ("draft-cases", "--timeout", ("--passages", "p.csv", "--model", "m", "--n", "1", "--output", "out.csv")),
    ("fallback", "--threshold", (RUN, "--scores", "scores.arrow", "--signal", "grounded")),
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


STORED_PATHS = {
    # command line (names in braces are files of `files`), the file whose path holds the credential, its name said
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


@pytest.fixture
def stored_inputs(files: dict[str, Path], write: Write, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """``files``, a config file, a source another tool wrote (read by the stand-in ``ragas`` reader), and two
    runs of one config to merge."""
    from rag_compare import freeze_run
    from rag_compare.io.run_import import FORMATS

    monkeypatch.setitem(FORMATS, "ragas", "tests.io.test_run_import:units_reader")
    units = write(
        "units.json", json.dumps({"units": [{"meta": {"case_id": "hotel@v2"}, "question": "Q", "answer": "150"}]})
    )
    runs = {
        name: freeze_run(
            write(f"{name}.jsonl", records), files["corpus"], {"top_k": 3}, output=files["new"].parent / f"{name}.arrow"
        ).path
        for name, records in (("first", '{"case_id": "meal@v2"}\n'), ("second", '{"case_id": "hotel@v2"}\n'))
    }
    return {**files, **runs, "config": write("run.toml", 'model = "m"\n'), "units": units}


@pytest.mark.parametrize(("command", "place", "said"), STORED_PATHS.values(), ids=STORED_PATHS.keys())
@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_a_command_that_freezes_refuses_a_path_holding_a_credential_before_anything(
    cli: Cli, stored_inputs: dict[str, Path], tmp_path: Path, secret: str, command: str, place: str, said: str
) -> None:
    given = stored_inputs[place]
    paths = {
        **stored_inputs,
        place: copied_as(given, secret) if given.exists() else named_with(secret, tmp_path, ".arrow"),
    }
    before = sorted(tmp_path.rglob("*"))
    result = cli(*(word.format(**paths) for word in command.split()), env={"OPENAI_API_KEY": ""})
    assert result.exit_code == 2, result.output
    which = said if said.startswith("path ") else f"the path of {said}"
    assert result.stderr.startswith(f"error: {which} holds a credential (an API key or an authorization header).")
    assert not any(form in result.stdout + result.stderr for form in secret_parts(secret))
    assert sorted(tmp_path.rglob("*")) == before


def test_the_commands_that_freeze_are_the_ones_that_write_a_run_scores_or_pairs_file() -> None:
    freezing = {name for name, command in main.commands.items() if isinstance(command, FreezingCommand)}
    assert freezing == {"freeze", "import-run", "capture", "merge-repeats", "score", "import-scores", "judge-pairs"}
    assert freezing == {command.split()[0] for command, _, _ in STORED_PATHS.values()}
