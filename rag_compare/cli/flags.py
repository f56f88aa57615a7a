"""Library messages in the words of the command line.

A library message names a Python parameter in backticks: `` `k` ``, `` `strict=True` ``,
`` `assignments=['top_k=5']` ``, `` `ids=[ID, ...]` `` (a placeholder); and a function or a call it
suggests the same way: `` `freeze_run` ``, `` `admit_cases('drafts.csv', ids=['a@v1'])` ``. Here each
becomes its flag (``--k``, ``--strict``, ``--set top_k=5``, ``--ids ID[,ID...]``) or its argument
(``RECORDS``), found from the click parameters of the command run (else of any command), or its command
(`` `rag-compare freeze` ``, ``rag-compare admit drafts.csv --ids a@v1``). Other quoted text stays as it is.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, cast

import click

if TYPE_CHECKING:
    from rag_compare.compute.comparison import Comparison
    from rag_compare.compute.multi_comparison import MultiComparison

__all__ = ["as_flags", "in_flags", "multi_in_flags"]

_NAMED = re.compile(r"`([^`\n]+)`")

_PARAMETERS = {"cache": "cache_path", "cache=False": "no_cache", "languages": "language_files"}
"""Library parameters (or settings) by the click parameter of another name that gives them."""

_COMMANDS = {
    "Comparison.review": "review",
    "admit_cases": "admit",
    "export_reviews": "reviews export",
    "freeze_run": "freeze",
    "import_scores": "import-scores",
    "judge_pairs": "judge-pairs",
    "load_pairs": "show",
    "load_reviews": "show",
    "load_scores": "show",
    "score_run": "score",
}
"""Library functions a message may suggest, by the command that does their work."""


def as_flags(text: str, group: click.Group, command: str | None) -> str:
    """``text`` with each parameter it names as the flag of ``command`` (a command of ``group``), or of
    another command when that one has none, and each call it suggests as the command to run."""
    commands = _flattened(group.commands.values())
    if command is not None and command in group.commands:
        commands[:0] = _flattened([group.commands[command]])
    return _NAMED.sub(lambda match: _said(match.group(1), group, commands) or match.group(0), text)


def _flattened(commands: Iterable[click.Command]) -> list[click.Command]:
    """``commands``, each group among them as the commands it holds (``reviews`` as ``reviews export``)."""
    return [
        found
        for command in commands
        for found in (_flattened(command.commands.values()) if isinstance(command, click.Group) else [command])
    ]


def _said(named: str, group: click.Group, commands: Sequence[click.Command]) -> str | None:
    """How the command line says ``named``; ``None`` when it is no parameter or call of the library."""
    try:
        wrapped = ast.parse(f"_({named})", mode="eval").body
    except (SyntaxError, ValueError):  # not Python, or holding a NUL
        return None
    if not isinstance(wrapped, ast.Call) or len(wrapped.args) + len(wrapped.keywords) != 1:
        return None
    if wrapped.keywords:
        return _setting(wrapped.keywords[0], commands)
    node = wrapped.args[0]
    if isinstance(node, ast.Name | ast.Attribute) and ast.unparse(node) in _COMMANDS:
        return f"`rag-compare {_COMMANDS[ast.unparse(node)]}`"
    if isinstance(node, ast.Name):
        return _named(node.id, commands)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and _COMMANDS.get(node.func.id) in group.commands:
        return _command_line(node, group.commands[_COMMANDS[node.func.id]])
    return None


def _setting(keyword: ast.keyword, commands: Sequence[click.Command]) -> str | None:
    """``name=value`` as a flag: alone for a flag set to true, else with the value (or its metavar)."""
    if keyword.arg is None:
        return None
    flag = _option(f"{keyword.arg}={ast.unparse(keyword.value)}", commands)
    if flag is not None:
        return flag.opts[0]
    option = _option(keyword.arg, commands)
    return None if option is None else _given(option, keyword.value)


def _given(option: click.Option, value: ast.expr) -> str:
    """The option given ``value``: each item of a list once per item when the option repeats."""
    try:
        literal = ast.literal_eval(value)
    except (ValueError, TypeError):  # a placeholder such as NAME, or no value a literal can make
        return f"{option.opts[0]} {option.metavar or ast.unparse(value)}"
    if literal is True and option.is_flag:
        return option.opts[0]
    items = [str(item) for item in (literal if isinstance(literal, list) else [literal])]
    if option.multiple:
        return " ".join(f"{option.opts[0]} {item}" for item in items)
    return f"{option.opts[0]} {','.join(items)}"


def _command_line(call: ast.Call, command: click.Command) -> str | None:
    """``rag-compare COMMAND ARGUMENT... --option VALUE...`` for a call of the library function it runs;
    an argument that is no string (a placeholder such as ``RUN``, or ``...``) is shown as written."""
    arguments = [_argument(arg) for arg in call.args]
    options = [_setting(keyword, [command]) for keyword in call.keywords]
    said = [option for option in options if option is not None]
    if len(said) != len(options):
        return None
    return " ".join(["rag-compare", str(command.name), *arguments, *said])


def _argument(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ast.unparse(node)


def _named(name: str, commands: Sequence[click.Command]) -> str | None:
    """The library parameter ``name`` as the command line says it: its option's flag, or its argument
    (``RECORDS``), the first command's first."""
    wanted = _PARAMETERS.get(name, name)
    for command in commands:
        for param in command.params:
            if param.name == wanted and isinstance(param, click.Option):
                return param.opts[0]
            if param.name == wanted and isinstance(param, click.Argument):
                return param.human_readable_name
    return None


def _option(name: str, commands: Sequence[click.Command]) -> click.Option | None:
    """The option that gives the library parameter ``name``, the first command's first."""
    wanted = _PARAMETERS.get(name, name)
    for command in commands:
        for param in command.params:
            if isinstance(param, click.Option) and param.name == wanted:
                return param
    return None


def in_flags(comparison: Comparison, command: str) -> Comparison:
    """``comparison`` with its warnings in the words of the command line, of ``command`` first."""
    group = cast(click.Group, click.get_current_context().find_root().command)
    return dataclasses.replace(
        comparison, warnings=tuple(as_flags(warning, group, command) for warning in comparison.warnings)
    )


def multi_in_flags(multi: MultiComparison, command: str) -> MultiComparison:
    """``multi`` with its warnings, and each of its comparisons', in the words of the command line."""
    group = cast(click.Group, click.get_current_context().find_root().command)
    warnings = tuple(as_flags(warning, group, command) for warning in multi.warnings)
    comparisons = tuple(in_flags(comparison, command) for comparison in multi.comparisons)
    return dataclasses.replace(multi, warnings=warnings, comparisons=comparisons)
