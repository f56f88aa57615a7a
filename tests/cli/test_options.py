"""Shared command-line options: every float option of every command refuses NaN and infinities."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from rag_compare.cli.main import main
from rag_compare.cli.options import CACHE, RUN_CONFIG, finite_float, limit_options
from rag_compare.llm.limits import Limits
from tests.helpers.data import HANDMADE_RUNS

Cli = Callable[..., Result]
RUN = HANDMADE_RUNS / "baseline.arrow"
NON_FINITE = ("nan", "NaN", "inf", "-inf", "Infinity", "1e999")

# Each command with a float option: its name, that option first (so it is the first value read), then the rest.
FLOAT_OPTIONS = [
    ("compare", "--tolerance", (RUN, RUN)),
    ("score", "--timeout", (RUN, "--model", "m", "--output", "out.arrow")),
    ("score", "--temperature", (RUN, "--model", "m", "--output", "out.arrow")),
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
