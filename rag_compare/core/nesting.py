"""How deep the documents rag-compare reads may nest, checked in one place by every reader.

A list or an object is one level, and each one inside another one more: ``[]`` is 1 level deep,
``{"a": [1]}`` 2, and a table's row counts as one, like the object of a JSON line. JSON (a file, a line of
JSON lines, an attribute's JSON text, a model's reply) is checked before it is parsed, from its brackets
outside strings, so neither Python's parser nor Polars' ever meets a deeper one; TOML and values (configs,
``KEY=VALUE`` settings) as parsed; a table by its columns' types (``io.tables``). So every walk over what
was read (a config's checks, its flattening, an importer's walk down a run tree or an OTLP value) stays
far inside Python's recursion limit, wherever in the stack it starts.

Standard library only.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from rag_compare.core.errors import NestingError

__all__ = ["MAX_DEPTH", "depth", "load_json", "load_toml", "refuse_deep", "refuse_deep_json"]

MAX_DEPTH = 50
"""The most levels a document, a JSON line, a value or a table's row may nest. Real files nest a dozen
or so; Arrow, which holds every table, takes no column nested past 62 levels."""

_KEPT = b'[]{}"\n'
_DROPPED = bytes(byte for byte in range(256) if byte not in _KEPT)
_AS_BRACKETS = bytes.maketrans(b"{}", b"[]")
_ESCAPE = re.compile(rb'\\[\\"]')
"""An escaped backslash or quote, matched left to right as a parser reads them."""
_STRING = re.compile(rb'"[^"\n]*"')
_OPEN, _NEWLINE = ord("["), ord("\n")


def load_json(text: str, where: str, *, line: int | None = 1, limit: int = MAX_DEPTH, **options: Any) -> Any:
    """``json.loads(text, **options)`` of the JSON at ``where`` (a path) starting on ``line``, refused first
    with a ``NestingError`` naming ``where`` and the line when it nests deeper than ``limit`` levels
    (``line=None``: a value on no line of a file, named by ``where`` alone). A ``json.JSONDecodeError`` is
    raised as ``json.loads`` raises it."""
    refuse_deep_json(text, where, line=line, limit=limit)
    return json.loads(text, **options)


def refuse_deep_json(
    text: str, where: str, *, line: int | None = 1, lines: bool = False, limit: int = MAX_DEPTH
) -> None:
    """Raise ``NestingError`` naming ``where`` and the line when the JSON ``text`` (``lines``: JSON lines,
    each line a document) nests deeper than ``limit`` levels, before anything parses it; ``line`` is the
    number of its first line (None: say no line)."""
    data = text.encode("utf-8", "surrogatepass")  # a lone surrogate, escaped in JSON text, has no bracket
    if data.count(b"[") + data.count(b"{") <= limit:
        return
    skeleton = _skeleton(data)
    if _depth_bound(skeleton, lines, limit) <= limit:
        return
    deep = _first_deep_line(skeleton, lines, limit)
    if deep is not None:
        raise _too_deep(where if line is None else f"{where}: line {line + deep - 1}", limit)


def load_toml(text: str, where: str, *, limit: int = MAX_DEPTH) -> dict[str, Any]:
    """``tomllib.loads(text)`` of the TOML file at ``where``; a ``NestingError`` naming the line when it
    nests deeper than ``limit`` levels (``tomllib.TOMLDecodeError`` as ``tomllib`` raises it)."""
    try:
        document: dict[str, Any] | None = tomllib.loads(text)
    except RecursionError:  # hundreds of levels deep: far past MAX_DEPTH
        document = None
    if document is None or depth(document) > limit:
        raise _too_deep(f"{where}: line {_deep_toml_line(text, limit)}", limit)
    return document


def _contents(value: Any) -> Iterable[Any] | None:
    """What a parsed value holds: a mapping's values, a list's items; None for a value that holds nothing."""
    if isinstance(value, Mapping):
        return value.values()
    return value if isinstance(value, list | tuple) else None


def depth(value: Any, contents: Callable[[Any], Iterable[Any] | None] = _contents) -> int:
    """The levels ``value`` nests (a scalar 0, ``[]`` 1, ``{"a": [1]}`` 2), counted a level at a time, without
    recursion, and no further than one past ``MAX_DEPTH``; ``contents`` gives what a container holds (None
    for anything else): by default a parsed value's."""
    levels, level = 0, [value]
    while levels <= MAX_DEPTH:
        held = [items for items in map(contents, level) if items is not None]
        if not held:
            break
        levels += 1
        level = [item for items in held for item in items]
    return levels


def refuse_deep(
    value: Any,
    where: str,
    contents: Callable[[Any], Iterable[Any] | None] = _contents,
    *,
    limit: int = MAX_DEPTH,
) -> None:
    """Raise ``NestingError`` naming ``where`` when ``value`` nests deeper than ``limit`` levels (see ``depth``)."""
    if depth(value, contents) > limit:
        raise _too_deep(where, limit)


def _too_deep(where: str, limit: int = MAX_DEPTH) -> NestingError:
    """The error for what is at ``where`` ("PATH: line 3", "PATH: column 'x'") nesting past ``limit`` levels."""
    return NestingError(
        f"{where}: nests lists or objects more than {limit} levels deep, more than rag-compare takes. "
        "Flatten that value, or leave it out."
    )


def _skeleton(data: bytes) -> bytes:
    """The brackets of JSON ``data`` outside its strings (braces as brackets), and its line breaks. A
    string never spans lines; a quote left alone marks a line that is not JSON, read to its end."""
    if b"\\" in data:
        data = _ESCAPE.sub(b"", data)  # no quote is left inside a string
    kept = data.translate(_AS_BRACKETS, _DROPPED).replace(b'""', b"")  # quotes with no bracket between: gone
    return _STRING.sub(b"", kept).replace(b'"', b"")


def _depth_bound(skeleton: bytes, lines: bool, limit: int) -> int:
    """At least the deepest level any prefix of the skeleton reaches (on one line, for ``lines``): its
    pairs peeled a level at a time, plus every bracket never closed. Exact for valid JSON."""
    nested = skeleton if lines else skeleton.replace(b"\n", b"")
    levels = 0
    while b"[]" in nested and levels <= limit:
        nested = nested.replace(b"[]", b"")
        levels += 1
    return levels + nested.count(b"[")


def _first_deep_line(skeleton: bytes, lines: bool, limit: int) -> int | None:
    """The line (from 1) where the skeleton first nests past ``limit`` (for ``lines``, each line from
    level 0); None when only brackets that close none (where a parser stops) made the bound pass it."""
    level, line = 0, 1
    for byte in skeleton:
        if byte == _NEWLINE:
            line += 1
            level = 0 if lines else level
        else:
            level += 1 if byte == _OPEN else -1
            if level > limit:
                return line
    return None


_TOML_TOKEN = re.compile(
    r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}.=,\n]', re.DOTALL
)


def _deep_toml_line(text: str, limit: int) -> int:
    """The line where TOML ``text`` first nests past ``limit``, else where it nests deepest, counting as
    parsing would: the root table, a table header's keys, a dotted key's parts, arrays and inline tables."""
    line, deepest, table, header = 1, (0, -1), 0, False
    dots, kinds, in_key = [0], [""], True  # per open bracket (the statement first): its key's dots, its kind
    for match in _TOML_TOKEN.finditer(text):
        token = match.group()
        if token == "\n" or token[0] in "\"'#":
            line += token.count("\n")
            if token == "\n" and len(dots) == 1:
                dots, header, in_key = [0], False, True
            continue
        if header:
            table += token in "[."  # ``[[name]]``: an array of tables; ``[a.b]``: a table in a table
        elif token == "[" and len(dots) == 1 and in_key:
            header, table = True, 1
        elif token in "[{":
            dots.append(0)
            kinds.append(token)
            in_key = token == "{"
        elif token in "]}" and len(dots) > 1:
            dots.pop()
            kinds.pop()
            in_key = False
        elif token == "." and in_key:
            dots[-1] += 1
        elif token in "=,":
            in_key = token == "," and kinds[-1] == "{"
            dots[-1] = 0 if in_key else dots[-1]
        level = table + len(dots) + sum(dots)
        if level > limit:
            return line
        deepest = max(deepest, (level, -line))
    return -deepest[1]
