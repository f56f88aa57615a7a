"""Tests for ``rag_compare.io.tables.read_table``: every unreadable file is refused with a clear message."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from rag_compare.core.errors import InputFileError
from rag_compare.io.tables import ROW, read_table


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _error(path: Path, what: str = "corpus") -> str:
    with pytest.raises(InputFileError) as excinfo:
        read_table(path, what)
    return str(excinfo.value)


def test_missing_path_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.csv"
    message = _error(path)
    assert str(path) in message
    assert "no such file" in message
    assert "corpus path" in message


def test_directory_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    message = _error(folder, "run records")
    assert "is not a file" in message
    assert "run records file" in message


def test_unknown_suffix_is_refused_and_known_ones_are_listed(tmp_path: Path) -> None:
    path = _write(tmp_path, "corpus.xlsx", b"id,text\n1,a\n")
    message = _error(path)
    assert "unknown corpus file type '.xlsx'" in message
    for suffix in (".csv", ".jsonl", ".parquet"):
        assert suffix in message


def test_csv_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "corpus.csv", b"id,text\n1,ok\n2,caf\xe9\n")
    message = _error(path)
    assert "not UTF-8" in message
    assert "line 3" in message
    assert "0xe9" in message
    assert "Save the file as UTF-8" in message


@pytest.mark.parametrize("data", [b"", b"   \n\n \t\n"], ids=["zero-bytes", "whitespace-only"])
@pytest.mark.parametrize("name", ["corpus.csv", "corpus.jsonl"])
def test_empty_file_is_refused(tmp_path: Path, name: str, data: bytes) -> None:
    message = _error(_write(tmp_path, name, data))
    assert "the file is empty" in message
    assert "Write the corpus into it" in message


def test_csv_with_header_but_no_rows_is_refused(tmp_path: Path) -> None:
    message = _error(_write(tmp_path, "corpus.csv", b"id,text\n"))
    assert "has a header but no rows" in message
    assert "Add at least one corpus row" in message


@pytest.mark.parametrize(
    ("data", "quoted"),
    [
        pytest.param(
            b"id,text\n1,a\n2,b,extra\n", "a row with 3 fields where the header has 2: '2,b,extra'", id="extra"
        ),
        pytest.param(b"id,text\n1,a\n2\n3,c\n", "a row with 1 fields where the header has 2: '2'", id="missing"),
    ],
)
def test_ragged_csv_rows_are_refused_and_quoted(tmp_path: Path, data: bytes, quoted: str) -> None:
    message = _error(_write(tmp_path, "corpus.csv", data))
    assert "1 row(s) do not have as many fields as the header" in message
    assert quoted in message


def test_csv_with_unclosed_quote_is_refused(tmp_path: Path) -> None:
    message = _error(_write(tmp_path, "corpus.csv", b'id,text\n1,"never closed\n2,b\n'))
    assert "never closed" in message


def test_csv_with_repeated_header_name_is_refused(tmp_path: Path) -> None:
    message = _error(_write(tmp_path, "corpus.csv", b"id,text,id\n1,a,2\n"))
    assert "the header names 'id' more than once" in message


def test_jsonl_with_broken_third_line_names_line_3(tmp_path: Path) -> None:
    path = _write(tmp_path, "records.jsonl", b'{"id": "a"}\n{"id": "b"}\n{"id": \n{"id": "d"}\n')
    message = _error(path, "run records")
    assert "line 3" in message
    assert "not valid JSON" in message
    assert "Each line must be one JSON object" in message


def test_jsonl_line_that_is_an_array_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "records.jsonl", b'{"id": "a"}\n["a", "b"]\n')
    message = _error(path, "run records")
    assert "line 2 is not a JSON object" in message
    assert "one run records object" in message


def test_parquet_that_is_really_text_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "corpus.parquet", b"id,text\n1,a\n")
    message = _error(path)
    assert "cannot be read as Parquet" in message
    assert "use CSV or JSONL" in message


def test_good_csv_reads_text_with_1_based_rows(tmp_path: Path) -> None:
    path = _write(tmp_path, "corpus.csv", b'id,text,score\nd1,hello,0.5\nd2,"a, b",7\n')
    frame = read_table(path, "corpus")
    assert frame.columns == [ROW, "id", "text", "score"]
    assert frame[ROW].to_list() == [1, 2]
    assert frame["text"].to_list() == ["hello", "a, b"]
    assert frame.schema["score"] == pl.String
    assert frame["score"].to_list() == ["0.5", "7"]


def test_csv_cells_are_kept_as_written_and_only_an_empty_cell_is_null(tmp_path: Path) -> None:
    path = _write(tmp_path, "records.csv", b'id,text\nd1,NA\nd2,null\nd3,N/A\nd4,nan\nd5,\nd6,""\n')
    assert read_table(path, "records")["text"].to_list() == ["NA", "null", "N/A", "nan", None, ""]


def test_csv_cell_longer_than_a_read_block_is_read(tmp_path: Path) -> None:
    long = "x" * (3 << 20)
    path = _write(tmp_path, "corpus.csv", f'id,text\nd1,"{long}"\nd2,short\n'.encode())
    assert read_table(path, "corpus")["text"].str.len_chars().to_list() == [len(long), 5]


def test_semicolon_separated_csv_is_refused_with_a_hint(tmp_path: Path) -> None:
    message = _error(_write(tmp_path, "corpus.csv", b"id;text\nd1;hello\n"))
    assert "separated by semicolons (;)" in message


def test_good_jsonl_keeps_native_types(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "records.ndjson",
        b'{"id": "q1", "k": 3, "ids": ["a", "b"]}\n{"id": "q2", "k": 4, "ids": []}\n',
    )
    frame = read_table(path, "run records")
    assert frame.columns == [ROW, "id", "k", "ids"]
    assert frame[ROW].to_list() == [1, 2]
    assert frame["k"].to_list() == [3, 4]
    assert frame["ids"].to_list() == [["a", "b"], []]


@pytest.mark.parametrize("suffix", [".parquet", ".pq", ".PARQUET"])
def test_good_parquet_keeps_native_types(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"corpus{suffix}"
    pl.DataFrame({"id": ["a", "b", "c"], "weight": [1.5, 2.0, None]}).write_parquet(path)
    frame = read_table(path, "corpus")
    assert frame.columns == [ROW, "id", "weight"]
    assert frame[ROW].to_list() == [1, 2, 3]
    assert frame.schema["weight"] == pl.Float64
    assert frame["weight"].to_list() == [1.5, 2.0, None]


def test_utf8_bom_is_not_part_of_the_first_column_name(tmp_path: Path) -> None:
    path = _write(tmp_path, "corpus.csv", "\ufeffid,text\nd1,café\n".encode())
    frame = read_table(path, "corpus")
    assert frame.columns == [ROW, "id", "text"]
    assert frame["id"].to_list() == ["d1"]
    assert frame["text"].to_list() == ["café"]


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("corpus.csv", b"__row__,text\n1,a\n"),
        ("corpus.jsonl", b'{"__row__": 1, "text": "a"}\n'),
    ],
)
def test_reserved_row_column_is_refused(tmp_path: Path, name: str, data: bytes) -> None:
    message = _error(_write(tmp_path, name, data))
    assert f"column name '{ROW}' is reserved" in message
    assert "Rename that column" in message
