"""The one bounded-depth reader of JSON and TOML, and the depth of parsed values (``core.nesting``)."""

from __future__ import annotations

import json
import tomllib
from typing import Any

import pytest

from rag_compare.core.errors import NestingError
from rag_compare.core.nesting import MAX_DEPTH, depth, load_json, load_toml, refuse_deep, refuse_deep_json
from tests.helpers.nesting import DEEP, nested_json, nested_toml

TOO_DEEP = f"more than {MAX_DEPTH} levels deep"


@pytest.mark.parametrize("levels", [MAX_DEPTH - 1, MAX_DEPTH])
@pytest.mark.parametrize("template", [DEEP, {"a": DEEP}, [1, {"b": [DEEP]}]], ids=["value", "object", "mixed"])
def test_json_as_deep_as_the_limit_is_parsed(template: Any, levels: int) -> None:
    text = nested_json(template, levels)
    assert load_json(text, "f.json") == json.loads(text)
    assert depth(json.loads(text)) == levels


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 1000, 100_000])
@pytest.mark.parametrize("template", [DEEP, {"a": DEEP}, [1, {"b": [DEEP]}]], ids=["value", "object", "mixed"])
def test_json_deeper_than_the_limit_is_refused_before_it_is_parsed(template: Any, levels: int) -> None:
    with pytest.raises(NestingError, match=rf"^f\.json: line 1: nests lists or objects {TOO_DEEP}"):
        load_json(nested_json(template, levels), "f.json")


def test_the_line_named_is_where_the_limit_is_passed() -> None:
    pretty = json.dumps(json.loads(nested_json({"a": DEEP}, MAX_DEPTH + 5)), indent=1)  # one bracket a line
    opened = [number for number, line in enumerate(pretty.splitlines(), start=1) if line.rstrip().endswith(("[", "{"))]
    with pytest.raises(NestingError, match=f"^p.json: line {opened[MAX_DEPTH]}: "):
        load_json(pretty, "p.json")
    with pytest.raises(NestingError, match=f"^p.jsonl: line {opened[MAX_DEPTH] + 6}: "):
        load_json(pretty, "p.jsonl", line=7)
    with pytest.raises(NestingError, match=f"^the value: nests lists or objects {TOO_DEEP}"):
        load_json(pretty, "the value", line=None)


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"a": "[" * 1000, "b": "{" * 1000}),  # brackets in strings are text
        json.dumps(
            ["\\" * 3 + "[[" * 100, '"' + "[" * 100]
        ),  # escaped backslashes and quotes keep them in their string
        json.dumps(["]" * 100 + "x" + "[" * 100] * 3),
        nested_json({"a": DEEP, "b": "[" * 500}, MAX_DEPTH),
    ],
)
def test_only_brackets_outside_strings_count(text: str) -> None:
    assert load_json(text, "f.json") == json.loads(text)


@pytest.mark.parametrize(
    "text",
    [
        '["\\\\", ' + nested_json(DEEP, MAX_DEPTH) + "]",  # a string ending in an escaped backslash ends at its quote
        '["\\\\\\"", ' + nested_json(DEEP, MAX_DEPTH) + "]",  # one holding an escaped quote, at the quote after it
        "[" * (MAX_DEPTH + 1),  # never closed: a parser goes as deep before it finds out
        '["a", "b' + "[" * 10 + '", ' + nested_json(DEEP, MAX_DEPTH) + "]",
    ],
)
def test_brackets_past_a_string_count(text: str) -> None:
    with pytest.raises(NestingError):
        load_json(text, "f.json")


def test_json_lines_are_each_a_document() -> None:
    shallow = nested_json(DEEP, MAX_DEPTH)
    lines = "\n".join(["[" * 30, '{"a": "unclosed [[[', shallow, shallow, "]" * 30])
    refuse_deep_json(lines, "f.jsonl", lines=True)  # neither a line left open nor a string carries over
    with pytest.raises(NestingError, match=f"^f.jsonl: line 3: nests lists or objects {TOO_DEEP}"):
        refuse_deep_json(lines, "f.jsonl")  # as one document, the first lines' brackets hold the others
    deep = "\n".join([shallow, '{"a": "unclosed', nested_json(DEEP, MAX_DEPTH + 1)])
    with pytest.raises(NestingError, match=f"^f.jsonl: line 3: nests lists or objects {TOO_DEEP}"):
        refuse_deep_json(deep, "f.jsonl", lines=True)


def test_a_lower_limit_is_named() -> None:
    text = nested_json(DEEP, 10)
    assert load_json(text, "f.json", limit=10) == json.loads(text)
    with pytest.raises(NestingError, match="more than 9 levels deep"):
        load_json(text, "f.json", limit=9)


def test_a_parsed_value_is_measured_without_recursion() -> None:
    value: Any = 1
    for _ in range(100_000):
        value = [value]
    assert depth(value) == MAX_DEPTH + 1  # counted no further
    assert [depth(item) for item in (1, "text", [], {}, {"a": [1]}, ({"a": ()},))] == [0, 0, 1, 1, 2, 3]
    with pytest.raises(NestingError, match=f"^the config: nests lists or objects {TOO_DEEP}"):
        refuse_deep(value, "the config")


TOML = {
    "array": lambda levels: f"x = {nested_toml(levels - 1)}",
    "dotted key": lambda levels: ".".join(["k"] * levels) + " = 1",
    "table header": lambda levels: f"[{'.'.join(['t'] * (levels - 1))}]\nk = 1",
    "inline table": lambda levels: "x = " + "{ a = " * (levels - 1) + "1" + " }" * (levels - 1),
    "array of tables": lambda levels: f"[[{'.'.join(['t'] * (levels - 2))}]]\nk = 1",
}


@pytest.mark.parametrize("kind", TOML)
def test_toml_as_deep_as_the_limit_is_parsed(kind: str) -> None:
    text = f"title = 'x'\n{TOML[kind](MAX_DEPTH)}\n"
    assert load_toml(text, "f.toml") == tomllib.loads(text)
    assert depth(tomllib.loads(text)) == MAX_DEPTH


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 1000])
@pytest.mark.parametrize("kind", TOML)
def test_toml_deeper_than_the_limit_is_refused_naming_the_line(kind: str, levels: int) -> None:
    text = f"title = 'x'\n# a comment [[[[[[ and 'a string'\ns = '{'[' * 100}'\n{TOML[kind](levels)}\n"
    with pytest.raises(NestingError, match=f"^f.toml: line 4: nests lists or objects {TOO_DEEP}"):
        load_toml(text, "f.toml")


def test_a_multi_line_toml_array_names_the_line_where_it_passes_the_limit() -> None:
    text = "[t]\nx = [\n" + "[\n" * 1000 + "]\n" * 1001
    with pytest.raises(NestingError, match=f"^f.toml: line {2 + MAX_DEPTH - 2}: "):
        load_toml(text, "f.toml")


def test_a_lone_surrogate_in_the_text_is_a_character_like_any_other() -> None:
    """Text parsed from JSON may hold one (JSON escapes it, ``\\ud800``), and so may JSON text written from it."""
    text = '{"a": "\ud800 ' + "[" * 100 + '", "b": ' + nested_json(DEEP, MAX_DEPTH - 1) + "}"
    assert load_json(text, "f.json")["a"][0] == "\ud800"
    with pytest.raises(NestingError):
        load_json(text.replace('"b": ', '"b": ['), "f.json")
