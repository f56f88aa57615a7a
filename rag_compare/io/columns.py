"""Turning raw table columns into the types a contract asks for, reporting every bad cell.

A CSV holds only text, JSONL and Parquet hold native types; either way each contract column ends up
with one Polars type. Cells that cannot be read become ``Problem``s naming row, column and value,
all collected before anything is refused. Everything here works on whole columns.

A number is finite: NaN and infinities (``nan``, ``inf``, ``1e999`` written in a CSV or JSONL cell as
much as a native NaN in Parquet) are refused like any other cell that is not a number.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from rag_compare.core.contract import DTYPES, ColumnSpec, Kind
from rag_compare.core.errors import Problem
from rag_compare.io.tables import ROW

__all__ = ["coerce_columns", "contract_first", "problems_where"]

_JSON_STRING = r'"(?:[^"\\]|\\.)*"'
_JSON_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?"
_SCALAR = f"(?:{_JSON_STRING}|{_JSON_NUMBER})"
_JSON_TEXT_LIST = rf"^\[\s*(?:{_SCALAR}(?:\s*,\s*{_SCALAR})*)?\s*\]$"
_JSON_NUMBER_LIST = rf"^\[\s*(?:{_JSON_NUMBER}(?:\s*,\s*{_JSON_NUMBER})*)?\s*\]$"
_TRUE = ("true", "t", "yes", "y", "1")
_FALSE = ("false", "f", "no", "n", "0")

_EXPECTED: dict[Kind, str] = {
    "text": "text",
    "id": "text",
    "text_list": 'a list of ids: a JSON array such as ["a", "b"] or ids separated by ";"',
    "float_list": "a list of finite numbers: a JSON array such as [0.9, 0.5] or numbers separated by ';'",
    "bool": "true or false",
    "float": "a finite number",
    "int": "a whole number",
}


def coerce_columns(frame: pl.DataFrame, specs: Sequence[ColumnSpec]) -> tuple[pl.DataFrame, list[Problem]]:
    """Give every spec'd column its contract type; absent optional columns are added as nulls.

    Returns the new frame (the input is not modified) and the problems found: missing required
    columns and cells that cannot be read as their kind (those cells become null).
    """
    missing = [spec.name for spec in specs if spec.required and spec.name not in frame.columns]
    if missing:
        present = ", ".join(name for name in frame.columns if name != ROW) or "none"
        return frame, [
            Problem(column=name, expected=f"a column named '{name}' (required; columns found: {present})")
            for name in missing
        ]
    problems: list[Problem] = []
    converted: list[pl.Expr] = []
    for spec in specs:
        if spec.name not in frame.columns:
            converted.append(pl.lit(None, dtype=spec.dtype).alias(spec.name))
            continue
        value, bad = _convert(pl.col(spec.name), frame.schema[spec.name], spec.kind)
        problems += problems_where(frame, bad, spec.name, _EXPECTED[spec.kind])
        converted.append(pl.when(bad).then(None).otherwise(value).cast(spec.dtype).alias(spec.name))
    return frame.with_columns(converted), problems


def contract_first(frame: pl.DataFrame, specs: Sequence[ColumnSpec]) -> pl.DataFrame:
    """The contract columns ``frame`` has in contract order, then the user's metadata columns; the row
    numbers dropped."""
    contract = [spec.name for spec in specs if spec.name in frame.columns]
    return frame.select(*contract, *(name for name in frame.columns if name not in contract and name != ROW))


def problems_where(frame: pl.DataFrame, bad: pl.Expr, column: str, expected: str) -> list[Problem]:
    """One problem per row of ``frame`` where ``bad`` holds, quoting that row's ``column`` value."""
    failing = frame.select(ROW, pl.col(column).alias("value"), bad.fill_null(False).alias("bad")).filter("bad")
    return [
        Problem.at(row, column, value, expected)
        for row, value in zip(failing[ROW].to_list(), failing["value"].to_list(), strict=True)
    ]


def _convert(column: pl.Expr, dtype: pl.DataType, kind: Kind) -> tuple[pl.Expr, pl.Expr]:
    """The converted column and a mask of cells that could not be converted."""
    if dtype == pl.Null:
        return column, pl.lit(False)
    nested = isinstance(dtype, (pl.List, pl.Array, pl.Struct))
    if kind in ("text", "id"):
        if nested:
            return column, column.is_not_null()
        text = column.cast(pl.String)
        return (text.str.strip_chars() if kind == "id" else text), pl.lit(False)
    if kind in ("text_list", "float_list"):
        return _convert_list(column, dtype, kind)
    if nested:
        return column, column.is_not_null()
    if kind == "bool":
        return _convert_bool(column, dtype)
    return _convert_number(column, dtype, kind)


def _convert_list(column: pl.Expr, dtype: pl.DataType, kind: Kind) -> tuple[pl.Expr, pl.Expr]:
    target = DTYPES[kind]
    if isinstance(dtype, (pl.List, pl.Array)):
        inner = dtype.inner
        readable = inner is not None and not isinstance(inner, (pl.List, pl.Array, pl.Struct))
        if not readable or (kind == "float_list" and not inner.is_numeric()):
            return column, column.is_not_null()
        return _without_gaps(column.cast(target), kind)
    if dtype != pl.String:
        return column, column.is_not_null()
    text = column.str.strip_chars()
    is_json = text.str.starts_with("[")
    pattern = _JSON_TEXT_LIST if kind == "text_list" else _JSON_NUMBER_LIST
    valid_json = is_json & text.str.contains(pattern)
    decoded = pl.when(valid_json).then(text).otherwise(pl.lit("[]")).str.json_decode(target)
    pieces = (
        text.str.split(";").list.eval(pl.element().str.strip_chars()).list.eval(pl.element().filter(pl.element() != ""))
    )
    if kind == "float_list":
        pieces = pieces.list.eval(pl.element().cast(pl.Float64, strict=False))
    converted, gaps = _without_gaps(pl.when(valid_json).then(decoded).otherwise(pieces), kind)
    return converted, (is_json & ~valid_json) | gaps


def _without_gaps(lists: pl.Expr, kind: Kind) -> tuple[pl.Expr, pl.Expr]:
    """Ids stripped of spaces; a mask of lists holding a null, for numbers one that is not finite, or for
    ids a blank one."""
    if kind == "float_list":
        return lists, lists.list.eval(~pl.element().is_finite().fill_null(False)).list.any()
    stripped = lists.list.eval(pl.element().str.strip_chars())
    gaps = stripped.list.eval(pl.element().is_null() | (pl.element() == "")).list.any()
    return stripped, gaps


def _convert_bool(column: pl.Expr, dtype: pl.DataType) -> tuple[pl.Expr, pl.Expr]:
    if dtype == pl.Boolean:
        return column, pl.lit(False)
    words = column.cast(pl.String).str.strip_chars().str.to_lowercase()
    mapping = dict.fromkeys(_TRUE, True) | dict.fromkeys(_FALSE, False)
    converted = words.replace_strict(mapping, default=None, return_dtype=pl.Boolean)
    return converted, column.is_not_null() & (words != "") & converted.is_null()


def _convert_number(column: pl.Expr, dtype: pl.DataType, kind: Kind) -> tuple[pl.Expr, pl.Expr]:
    if dtype.is_integer():
        converted = column.cast(DTYPES[kind], strict=False)
        return converted, column.is_not_null() & converted.is_null()
    if dtype.is_float():
        finite = pl.when(column.is_finite()).then(column.cast(pl.Float64))
        if kind == "int":
            finite = pl.when(finite == finite.round()).then(finite.cast(pl.Int64, strict=False))
        return finite, column.is_not_null() & finite.is_null()
    text = column.cast(pl.String).str.strip_chars()
    number = text.cast(pl.Float64, strict=False)
    number = pl.when(number.is_finite()).then(number)
    if kind == "int":
        whole_float = pl.when(number == number.round()).then(number.cast(pl.Int64, strict=False))
        number = pl.coalesce(text.cast(pl.Int64, strict=False), whole_float)
    return number, column.is_not_null() & (text != "") & number.is_null()
