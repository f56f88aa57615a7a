"""Reading user tables (CSV, Parquet, JSONL) into Polars frames, refusing unreadable files clearly.

Only the file is checked here (it is a regular file, has a known format, is UTF-8, has rows, nests no deeper
than ``core.nesting.MAX_DEPTH``: a JSON line before it is parsed, a Parquet file's columns by their types
before they are read). What the columns must hold is checked by ``columns`` and ``schemas``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare.core.errors import InputFileError, show_value
from rag_compare.core.input_paths import check_input
from rag_compare.core.listing import counted
from rag_compare.core.nesting import load_json, refuse_deep, refuse_deep_json

__all__ = ["ROW", "TABLE_SUFFIXES", "read_source", "read_table", "refuse_deep_columns"]

ROW = "__row__"
"""Name of the 1-based row-number column added to every frame read, for messages."""

TABLE_SUFFIXES = {
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}


def read_table(path: str | Path, what: str) -> pl.DataFrame:
    """Read ``path`` as a table of strings or native types, with a ``ROW`` column first.

    ``what`` names the table in messages ("corpus", "run records"). CSV cells are read as text;
    Parquet and JSONL keep their types. Raises ``InputFileError`` when the file cannot be read.
    """
    path = Path(path)
    check_input(path, f"{what} file", fix=f"Check the {what} path.")
    kind = table_format(path, what)
    if kind == "parquet":
        frame = _read_parquet(path, what)
    else:
        text = _read_utf8(path, what)
        frame = _read_csv(path, text) if kind == "csv" else _read_jsonl(path, text, what)
    return _numbered(frame, str(path), what)


def read_source(source: str | Path | pl.DataFrame, what: str) -> tuple[str, pl.DataFrame]:
    """A name for messages and the table with a ``ROW`` column, from a path or a frame (not modified)."""
    if isinstance(source, pl.DataFrame):
        refuse_deep_columns(source.schema, "<frame>")
        return "<frame>", _numbered(source, "<frame>", what)
    return str(source), read_table(source, what)


def _numbered(frame: pl.DataFrame, name: str, what: str) -> pl.DataFrame:
    if frame.height == 0:
        raise InputFileError(f"{name}: has a header but no rows. Add at least one {what} row.")
    if ROW in frame.columns:
        raise InputFileError(f"{name}: column name '{ROW}' is reserved. Rename that column.")
    return frame.with_row_index(ROW, offset=1)


def _read_utf8(path: Path, what: str) -> str:
    data = path.read_bytes()
    if not data.strip():
        raise InputFileError(f"{path}: the file is empty. Write the {what} into it, one row per line.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputFileError(
            f"{path}: is not UTF-8 text (byte 0x{data[error.start]:02x} on line {line}). "
            "Save the file as UTF-8 and run again."
        ) from None
    return text


_BLOCK_SIZE = 1 << 20
"""Bytes pyarrow parses per block (on several threads); a cell may not straddle two of them."""
_OTHER_DELIMITERS = {";": "semicolons (;)", "\t": "tabs", "|": "vertical bars (|)"}


def _read_csv(path: Path, text: str) -> pl.DataFrame:
    """Every cell as text, kept as written: only an empty cell is null (``NA``, ``null``, ``N/A`` are text).

    A row whose field count differs from the header's is refused; a header that is one field holding
    another delimiter gets a hint naming it.
    """
    import pyarrow as pa

    if text.count('"') % 2:
        raise InputFileError(
            f'{path}: a quote (") is opened and never closed. Close it, or double quotes inside values.'
        )
    header = next(csv.reader(io.StringIO(text)), [])
    _refuse_other_delimiter(path, header)
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise InputFileError(f"{path}: the header names {', '.join(map(repr, repeated))} more than once. Rename them.")
    data = text.encode()
    try:
        try:
            table, ragged = _parse_csv(data, header, _BLOCK_SIZE)
        except pa.ArrowInvalid as error:
            if "straddl" not in str(error):
                raise
            table, ragged = _parse_csv(data, header, len(data) + 1)  # a quoted cell longer than a block
    except (pa.ArrowInvalid, pa.ArrowException) as error:
        first_line = str(error).strip().splitlines()[0]
        raise InputFileError(f"{path}: cannot be read as CSV ({first_line}). Check that quotes are closed.") from None
    if ragged:
        listed = "\n".join(f"  - a row with {item}" for item in ragged)
        raise InputFileError(
            f"{path}: {counted(len(ragged), 'row')} with another number of fields than the header:\n{listed}\n"
            "Fix those rows (quote values that contain commas) and run again."
        )
    return pl.DataFrame(table)


def _parse_csv(data: bytes, header: list[str], block_size: int) -> tuple[Any, list[str]]:
    """The CSV ``data`` as an Arrow table of text columns (only an empty cell null), and a description of
    each row whose field count differs from the header's (those rows are skipped)."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    ragged: list[str] = []

    def note_ragged(row: pa_csv.InvalidRow) -> str:
        ragged.append(
            f"{row.actual_columns} fields where the header has {row.expected_columns}: {show_value(row.text)}"
        )
        return "skip"

    table = pa_csv.read_csv(
        io.BytesIO(data),
        read_options=pa_csv.ReadOptions(block_size=block_size),
        parse_options=pa_csv.ParseOptions(newlines_in_values=True, invalid_row_handler=note_ragged),
        convert_options=pa_csv.ConvertOptions(
            column_types={name: pa.string() for name in header},
            null_values=[""],
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
        ),
    )
    return table, ragged


def _refuse_other_delimiter(path: Path, header: list[str]) -> None:
    """Refuse a header that is one field split by another delimiter (a CSV saved with ``;`` by a spreadsheet)."""
    if len(header) != 1:
        return
    for delimiter, name in _OTHER_DELIMITERS.items():
        if delimiter in header[0]:
            raise InputFileError(
                f"{path}: the header is one field holding {name} ({show_value(header[0])}): the file looks "
                f"separated by {name}, and rag-compare reads CSV separated by commas. Save it with ',' as the "
                "delimiter (in a spreadsheet: CSV UTF-8, comma-delimited), or as JSONL or Parquet."
            )


def _read_jsonl(path: Path, text: str, what: str) -> pl.DataFrame:
    refuse_deep_json(text, str(path), lines=True)  # Polars' reader would overflow its stack
    try:
        return pl.read_ndjson(io.StringIO(text), infer_schema_length=None)
    except (pl.exceptions.PolarsError, ValueError):
        raise InputFileError(_locate_jsonl_error(path, text, what)) from None


def _locate_jsonl_error(path: Path, text: str, what: str) -> str:
    """Name the first line that is not a JSON object (only called once reading has failed)."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = load_json(line, str(path), line=number, parse_constant=_refuse_constant)
        except json.JSONDecodeError as error:
            return f"{path}: line {number} is not valid JSON ({error.msg}). Each line must be one JSON object."
        except _NonFiniteNumber as error:
            return f"{path}: line {number} holds {error}, which JSON does not allow. Write null for a missing number."
        if not isinstance(value, dict):
            return f"{path}: line {number} is not a JSON object. Each line must be one {what} object."
    return f"{path}: cannot be read as JSON lines. Each line must be one JSON object."


class _NonFiniteNumber(ValueError):
    """A JSON line holds ``NaN``, ``Infinity`` or ``-Infinity``."""


def _refuse_constant(name: str) -> None:
    raise _NonFiniteNumber(name)


def _read_parquet(path: Path, what: str) -> pl.DataFrame:
    try:
        refuse_deep_columns(pl.read_parquet_schema(path), str(path))  # Polars' reader would overflow its stack
        return pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError, ValueError) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputFileError(
            f"{path}: cannot be read as Parquet ({first_line}). Write the {what} again as Parquet, or use CSV or JSONL."
        ) from None


def refuse_deep_columns(schema: Mapping[str, pl.DataType], where: str) -> None:
    """Raise ``NestingError`` naming ``where`` and the first column whose type nests lists and structs
    deeper than a row may (``MAX_DEPTH`` levels, the row one of them, as a JSON line's object is)."""
    for name, dtype in schema.items():
        refuse_deep({name: dtype}, f"{where}: column {name!r}", _held_types)


def _held_types(held: object) -> Iterable[object] | None:
    """The types a row or a nested type holds; None for any other type."""
    if isinstance(held, Mapping):
        return held.values()
    if isinstance(held, pl.Struct):
        return [field.dtype for field in held.fields]
    return [held.inner] if isinstance(held, pl.List | pl.Array) and held.inner is not None else None


def table_format(path: Path, what: str = "table") -> str:
    """The format (``csv``, ``parquet`` or ``jsonl``) that ``path``'s suffix names; ``InputFileError`` for
    an unknown suffix."""
    kind = TABLE_SUFFIXES.get(path.suffix.lower())
    if kind is None:
        known = ", ".join(sorted(TABLE_SUFFIXES))
        raise InputFileError(f"{path}: unknown {what} file type '{path.suffix}'. Use one of: {known}.")
    return kind


def write_table(frame: pl.DataFrame, path: Path, *, replace: bool) -> None:
    """Write ``frame`` (not modified) as CSV, Parquet or JSONL by ``path``'s suffix, atomically.

    In CSV a list column becomes ``;``-joined text (a JSON array where that would not read back: an
    empty list, an item holding ``;``), a null stays an empty cell and booleans are ``true``/``false``,
    so reading the file as a corpus or records gives the same contract columns. Without ``replace`` an
    existing ``path`` is refused. Raises ``InputFileError`` for an unknown suffix or a nested column
    that CSV cannot hold.
    """
    from rag_compare.io.runfile import atomic_output

    kind = table_format(path)
    if kind == "csv":
        frame = _csv_cells(frame, path)
    with atomic_output(path, replace=replace) as stream:
        if kind == "csv":
            frame.write_csv(stream)
        elif kind == "parquet":
            frame.write_parquet(stream)
        else:
            frame.write_ndjson(stream)


def _csv_cells(frame: pl.DataFrame, path: Path) -> pl.DataFrame:
    """``frame`` with each list-of-scalars column as the text of its CSV cells."""
    lists = [
        name
        for name, dtype in frame.schema.items()
        if isinstance(dtype, pl.List) and dtype.inner is not None and not dtype.inner.is_nested()
    ]
    nested = [name for name, dtype in frame.schema.items() if dtype.is_nested() and name not in lists]
    if nested:
        raise InputFileError(
            f"{path}: nested values, which CSV cannot hold, in {counted(len(nested), 'column')}: "
            f"{', '.join(map(repr, nested))}. "
            "Write a .parquet or .jsonl file instead."
        )
    return frame.with_columns(_list_cell(name) for name in lists)


def _list_cell(name: str) -> pl.Expr:
    """``a;b`` for a list, or its JSON array where ``;``-joined text would read back otherwise."""
    column = pl.col(name)
    items = column.list.eval(pl.element().cast(pl.String))
    joined = items.list.join(";")
    unsafe_item = items.list.eval(pl.element().is_null() | pl.element().str.contains(";", literal=True)).list.any()
    plain = (items.list.len() > 0) & ~unsafe_item & ~joined.str.strip_chars_start().str.starts_with("[")
    as_json = pl.struct(column.alias("x")).struct.json_encode().str.strip_prefix('{"x":').str.strip_suffix("}")
    return pl.when(column.is_null()).then(None).when(plain).then(joined).otherwise(as_json).alias(name)
