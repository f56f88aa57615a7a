"""Tests for ``rag_compare.io.columns.coerce_columns``: each kind of column, and bad cells as Problems."""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import Result
from hypothesis import given
from hypothesis import strategies as st

from rag_compare.core.contract import ColumnSpec, Kind
from rag_compare.core.errors import Problem
from rag_compare.io.columns import coerce_columns
from rag_compare.io.tables import ROW


def _frame(values: list[Any], dtype: pl.DataType | None = None, name: str = "c") -> pl.DataFrame:
    schema = {name: dtype} if dtype is not None else None
    return pl.DataFrame({name: values}, schema=schema).with_row_index(ROW, offset=1)


def _coerce(
    values: list[Any], kind: Kind, dtype: pl.DataType | None = None
) -> tuple[list[Any], list[Problem], pl.DataType]:
    out, problems = coerce_columns(_frame(values, dtype), [ColumnSpec("c", kind)])
    return out["c"].to_list(), problems, out.schema["c"]


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ('["a", "b"]', ["a", "b"]),
        ("[1, 2]", ["1", "2"]),
        ("[]", []),
        (" [ ] ", []),
        ('["doc 1", "x;y"]', ["doc 1", "x;y"]),
        ("a; b;", ["a", "b"]),
        ("single", ["single"]),
        ("", []),
    ],
)
def test_text_list_from_text(cell: str, expected: list[str]) -> None:
    values, problems, dtype = _coerce([cell], "text_list")
    assert problems == []
    assert dtype == pl.List(pl.String)
    assert values == [expected]


def test_text_list_from_native_list_column() -> None:
    values, problems, dtype = _coerce([["a", " b "], [], None], "text_list", pl.List(pl.String))
    assert problems == []
    assert dtype == pl.List(pl.String)
    assert values == [["a", "b"], [], None]


def test_text_list_from_native_int_list_column() -> None:
    values, problems, _ = _coerce([[1, 2]], "text_list", pl.List(pl.Int64))
    assert problems == []
    assert values == [["1", "2"]]


@pytest.mark.parametrize(
    ("cell", "expected"),
    [("[0.9, 0.5]", [0.9, 0.5]), ("[1, -2e-1]", [1.0, -0.2]), ("0.1; 2;", [0.1, 2.0]), ("[]", [])],
)
def test_float_list_from_text(cell: str, expected: list[float]) -> None:
    values, problems, dtype = _coerce([cell], "float_list")
    assert problems == []
    assert dtype == pl.List(pl.Float64)
    assert values == [pytest.approx(expected)]


@pytest.mark.parametrize("cell", ['["a", 1]', "0.5; high", "[0.5, null]"])
def test_float_list_with_non_number_is_a_problem(cell: str) -> None:
    values, problems, _ = _coerce(["[1.0]", cell], "float_list")
    assert values == [[1.0], None]
    assert [(p.row, p.column, p.value) for p in problems] == [(2, "c", repr(cell))]
    assert "a list of finite numbers" in problems[0].expected


NON_FINITE_TEXT = ("nan", "NaN", "inf", "-Infinity", "1e999")


@pytest.mark.parametrize("cell", NON_FINITE_TEXT)
@pytest.mark.parametrize("kind", ["float", "int"])
def test_a_number_that_is_not_finite_is_a_problem(cell: str, kind: Kind) -> None:
    values, problems, _ = _coerce(["1", cell], kind)
    assert values == [1, None]
    assert [(p.row, p.column, p.value) for p in problems] == [(2, "c", repr(cell))]
    assert problems[0].expected == ("a finite number" if kind == "float" else "a whole number")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_native_number_that_is_not_finite_is_a_problem(value: float) -> None:
    values, problems, _ = _coerce([1.5, value], "float", pl.Float64)
    assert values == [1.5, None]
    assert [(p.row, p.value, p.expected) for p in problems] == [(2, repr(value), "a finite number")]
    lists, list_problems, _ = _coerce([[1.5], [0.5, value]], "float_list", pl.List(pl.Float64))
    assert lists == [[1.5], None]
    assert [(p.row, p.value) for p in list_problems] == [(2, repr([0.5, value]))]
    assert "a list of finite numbers" in list_problems[0].expected


@pytest.mark.parametrize("cell", ["0.5; nan", "inf;1", "0.5;-inf"])
def test_a_number_list_holding_a_non_finite_number_is_a_problem(cell: str) -> None:
    values, problems, _ = _coerce([cell], "float_list")
    assert values == [None]
    assert [(p.row, p.value) for p in problems] == [(1, repr(cell))]


def test_broken_json_list_is_a_problem_at_its_row_and_becomes_null() -> None:
    values, problems, _ = _coerce(['["ok"]', "a;b", '["a", '], "text_list")
    assert values == [["ok"], ["a", "b"], None]
    assert len(problems) == 1
    problem = problems[0]
    assert (problem.row, problem.column, problem.value) == (3, "c", repr('["a", '))
    assert "JSON array" in problem.expected
    assert str(problem).startswith("row 3, column 'c': got '[\"a\", '")


@pytest.mark.parametrize(
    ("cell", "dtype"),
    [
        pytest.param('["a", null]', None, id="json-null"),
        pytest.param('["a", ""]', None, id="json-empty-id"),
        pytest.param('["a", "  "]', None, id="json-blank-id"),
        pytest.param(["a", None], pl.List(pl.String), id="native-null"),
        pytest.param(["a", ""], pl.List(pl.String), id="native-empty-id"),
    ],
)
def test_list_holding_null_or_empty_id_is_a_problem(cell: Any, dtype: pl.DataType | None) -> None:
    values, problems, _ = _coerce([cell], "text_list", dtype)
    assert [(p.row, p.column) for p in problems] == [(1, "c")]
    assert values == [None]


@pytest.mark.parametrize(
    ("cell", "expected"),
    [("true", True), ("False", False), ("yes", True), ("0", False), (" N ", False), ("", None), (None, None)],
)
def test_bool_words(cell: str | None, expected: bool | None) -> None:
    values, problems, dtype = _coerce([cell], "bool")
    assert problems == []
    assert dtype == pl.Boolean
    assert values == [expected]


def test_unknown_bool_word_is_a_problem() -> None:
    values, problems, _ = _coerce(["true", "maybe"], "bool")
    assert values == [True, None]
    assert [(p.row, p.value, p.expected) for p in problems] == [(2, "'maybe'", "true or false")]


def test_numbers_and_ints() -> None:
    floats, float_problems, float_dtype = _coerce(["12", "1.5", " -3e2 ", "abc", "", None], "float")
    assert float_dtype == pl.Float64
    assert floats == [12.0, 1.5, -300.0, None, None, None]
    assert [(p.row, p.value, p.expected) for p in float_problems] == [(4, "'abc'", "a finite number")]

    ints, int_problems, int_dtype = _coerce(["12", "1.5", "abc", " 7 ", None], "int")
    assert int_dtype == pl.Int64
    assert ints == [12, None, None, 7, None]
    assert [(p.row, p.value) for p in int_problems] == [(2, "'1.5'"), (3, "'abc'")]
    assert all(p.expected == "a whole number" for p in int_problems)


def test_missing_required_column_names_it_and_lists_columns_found() -> None:
    frame = pl.DataFrame({"query": ["q"], "answer": ["a"]}).with_row_index(ROW, offset=1)
    out, problems = coerce_columns(frame, [ColumnSpec("query", "text"), ColumnSpec("id", "id", required=True)])
    assert len(problems) == 1
    problem = problems[0]
    assert problem.row is None
    assert problem.column == "id"
    assert "a column named 'id'" in problem.expected
    assert "columns found: query, answer" in problem.expected
    assert ROW not in problem.expected
    assert out.equals(frame)


@pytest.mark.parametrize(
    ("kind", "dtype"),
    [
        ("text", pl.String),
        ("text_list", pl.List(pl.String)),
        ("float_list", pl.List(pl.Float64)),
        ("bool", pl.Boolean),
        ("float", pl.Float64),
        ("int", pl.Int64),
    ],
)
def test_missing_optional_column_is_added_as_nulls(kind: Kind, dtype: pl.DataType) -> None:
    frame = pl.DataFrame({"query": ["q1", "q2"]}).with_row_index(ROW, offset=1)
    out, problems = coerce_columns(frame, [ColumnSpec("extra", kind)])
    assert problems == []
    assert out.schema["extra"] == dtype
    assert out["extra"].to_list() == [None, None]
    assert out["query"].to_list() == ["q1", "q2"]


@pytest.mark.parametrize(
    ("values", "dtype"),
    [([["a"], None], pl.List(pl.String)), ([{"k": 1}, None], None)],
    ids=["list", "struct"],
)
def test_nested_value_where_text_is_expected_is_a_problem(values: list[Any], dtype: pl.DataType | None) -> None:
    out, problems, out_dtype = _coerce(values, "text", dtype)
    assert out_dtype == pl.String
    assert out == [None, None]
    assert [(p.row, p.column, p.expected) for p in problems] == [(1, "c", "text")]


def test_id_is_stripped_and_text_is_not() -> None:
    frame = pl.DataFrame({"id": [" d1 "], "text": [" hi "]}).with_row_index(ROW, offset=1)
    out, problems = coerce_columns(frame, [ColumnSpec("id", "id"), ColumnSpec("text", "text")])
    assert problems == []
    assert out.row(0, named=True) == {ROW: 1, "id": "d1", "text": " hi "}


def test_input_frame_is_not_modified() -> None:
    frame = pl.DataFrame({"ids": ['["a"]', "b;c"], "flag": ["yes", "maybe"], "k": ["1", "x"]}).with_row_index(
        ROW, offset=1
    )
    before = frame.clone()
    specs = [
        ColumnSpec("ids", "text_list"),
        ColumnSpec("flag", "bool"),
        ColumnSpec("k", "int"),
        ColumnSpec("new", "float"),
    ]
    out, problems = coerce_columns(frame, specs)
    assert len(problems) == 2
    assert frame.equals(before)
    assert frame.schema == before.schema
    assert "new" not in frame.columns
    assert out.schema["ids"] == pl.List(pl.String)


_ID_ALPHABET = string.ascii_letters + string.digits + "-_@."


@given(ids=st.lists(st.text(alphabet=_ID_ALPHABET, min_size=1), unique=True, max_size=8))
def test_id_lists_survive_both_encodings(ids: list[str]) -> None:
    cells = [json.dumps(ids), ";".join(ids)]
    values, problems, _ = _coerce(cells, "text_list")
    assert problems == []
    assert values == [ids, ids]


def _records_file(tmp_path: Path, file_format: str, field: str, value: object) -> Path:
    """Records for SMALL_CORPUS's hotel@v2 with ``field`` set to ``value``, written as ``file_format``."""
    record: dict[str, object] = {"case_id": "hotel@v2", "retrieved_passage_ids": ["hotel-1", "x"], "latency_ms": 12.5}
    record[field] = value
    path = tmp_path / f"records.{file_format}"
    if file_format == "jsonl":
        path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    elif file_format == "csv":
        cells = {
            name: ";".join(map(str, cell)) if isinstance(cell, list) else str(cell) for name, cell in record.items()
        }
        path.write_text(",".join(cells) + "\n" + ",".join(cells.values()) + "\n", encoding="utf-8")
    else:
        pl.DataFrame([record]).write_parquet(path)
    return path


@pytest.mark.parametrize(
    ("file_format", "field", "value", "shown"),
    [
        ("csv", "latency_ms", "inf", "'inf'"),
        ("csv", "latency_ms", "nan", "'nan'"),
        ("csv", "latency_ms", "NaN", "'NaN'"),
        ("csv", "latency_ms", "1e999", "'1e999'"),
        ("csv", "retrieved_scores", [0.5, "nan"], "'0.5;nan'"),
        ("jsonl", "latency_ms", "NaN", "'NaN'"),  # JSON has no NaN: a JSON null is the empty value
        ("jsonl", "retrieved_scores", [0.5, "Infinity"], "['0.5', 'Infinity']"),
        ("parquet", "latency_ms", float("nan"), "nan"),
        ("parquet", "latency_ms", float("-inf"), "-inf"),
        ("parquet", "retrieved_scores", [0.5, float("inf")], "[0.5, inf]"),
    ],
)
def test_freeze_refuses_a_record_number_that_is_not_finite(
    cli: Callable[..., Result],
    tmp_path: Path,
    small_corpus: Path,
    file_format: str,
    field: str,
    value: object,
    shown: str,
) -> None:
    records = _records_file(tmp_path, file_format, field, value)
    output = tmp_path / "run.arrow"
    result = cli("freeze", records, "--corpus", small_corpus, "--output", output)
    assert result.exit_code == 2
    assert f"row 1, column '{field}': got {shown}; expected a " in result.stderr
    assert "finite number" in result.stderr
    assert not output.exists()


@pytest.mark.parametrize(
    ("file_format", "value"), [("csv", "-Infinity"), ("jsonl", "Infinity"), ("parquet", float("inf"))]
)
def test_freeze_refuses_a_token_count_that_is_not_finite(
    cli: Callable[..., Result], tmp_path: Path, small_corpus: Path, file_format: str, value: object
) -> None:
    records = _records_file(tmp_path, file_format, "prompt_tokens", value)
    result = cli("freeze", records, "--corpus", small_corpus, "--output", tmp_path / "run.arrow")
    assert result.exit_code == 2
    assert f"row 1, column 'prompt_tokens': got {value!r}; expected a whole number" in result.stderr


def test_freeze_refuses_a_bare_nan_in_json_lines(
    cli: Callable[..., Result], tmp_path: Path, small_corpus: Path
) -> None:
    records = tmp_path / "records.jsonl"
    records.write_text('{"case_id": "hotel@v2", "latency_ms": NaN}\n', encoding="utf-8")
    result = cli("freeze", records, "--corpus", small_corpus, "--output", tmp_path / "run.arrow")
    assert result.exit_code == 2
    assert "line 1 holds NaN, which JSON does not allow" in result.stderr
