"""Tests for ``rag_compare.io.tables``: every unreadable file is refused with a clear message; tables written read back."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rag_compare.core.errors import InputFileError, NestingError, RunExistsError
from rag_compare.core.nesting import MAX_DEPTH
from rag_compare.io.corpus import load_corpus
from rag_compare.io.tables import ROW, read_source, read_table, write_table
from tests.helpers.nesting import DEEP, nested_json, nested_type


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
    assert "no such corpus file" in message
    assert "corpus path" in message


@pytest.mark.parametrize(
    ("name", "data", "what", "expected"),
    [
        ("folder.csv", None, "run records", ["is a folder, not a run records file"]),
        (
            "corpus.xlsx",
            b"id,text\n1,a\n",
            "corpus",
            ["unknown corpus file type '.xlsx'", ".csv", ".jsonl", ".parquet"],
        ),
        (
            "corpus.csv",
            b"id,text\n1,ok\n2,caf\xe9\n",
            "corpus",
            ["not UTF-8", "line 3", "0xe9", "Save the file as UTF-8"],
        ),
        ("corpus.csv", b"id,text\n", "corpus", ["has a header but no rows", "Add at least one corpus row"]),
        ("corpus.csv", b'id,text\n1,"never closed\n2,b\n', "corpus", ["never closed"]),
        ("corpus.csv", b"id,text,id\n1,a,2\n", "corpus", ["the header names 'id' more than once"]),
        (
            "records.jsonl",
            b'{"id": "a"}\n{"id": "b"}\n{"id": \n{"id": "d"}\n',
            "run records",
            ["line 3", "not valid JSON", "Each line must be one JSON object"],
        ),
        (
            "records.jsonl",
            b'{"id": "a"}\n["a", "b"]\n',
            "run records",
            ["line 2 is not a JSON object", "one run records object"],
        ),
        ("corpus.parquet", b"id,text\n1,a\n", "corpus", ["cannot be read as Parquet", "use CSV or JSONL"]),
    ],
    ids=[
        "a folder",
        "unknown suffix, the known ones listed",
        "csv not UTF-8, its line named",
        "csv header without rows",
        "csv quote never closed",
        "csv header naming a column twice",
        "jsonl line not JSON, its line named",
        "jsonl line an array",
        "parquet that is text",
    ],
)
def test_an_unreadable_file_is_refused_saying_why(
    tmp_path: Path, name: str, data: bytes | None, what: str, expected: list[str]
) -> None:
    """``data`` None: a folder stands where the file should."""
    path = tmp_path / name
    if data is None:
        path.mkdir()
    else:
        _write(tmp_path, name, data)
    message = _error(path, what)
    assert [part for part in expected if part not in message] == []


@pytest.mark.parametrize("data", [b"", b"   \n\n \t\n"], ids=["zero-bytes", "whitespace-only"])
@pytest.mark.parametrize("name", ["corpus.csv", "corpus.jsonl"])
def test_empty_file_is_refused(tmp_path: Path, name: str, data: bytes) -> None:
    message = _error(_write(tmp_path, name, data))
    assert "the file is empty" in message
    assert "Write the corpus into it" in message


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
    assert "1 row with another number of fields than the header" in message
    assert quoted in message


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


# -- write_table ------------------------------------------------------------------------------------------------------

TRICKY = pl.DataFrame(
    {
        "case_id": ["a@v1", "b@v1", "c@v1", "d@v1"],
        "question": ['Quotes "here", commas, and\na new line?', "Ünïcode?", "Nothing?", "Odd ids?"],
        "answerability": ["answerable", "answerable", "unanswerable", "conflict"],
        "source_version": ["v1"] * 4,
        "required_passage_ids": [["p1", "p2"], ["p;3"], [], ["[p4]", 'p"5']],
        "acceptance_note": ["150, and 210 in Paris", "", None, "flag it"],
        "category": ["rule", None, "unanswerable", "conflict"],
        "origin": ["manual", "synthetic", "synthetic", "manual"],
        "reviewed": [True, False, True, True],
        "drafted_from": [None, ["p;3"], ["p1", "p2"], []],
        "team": ["ops", None, "hr", "ops"],
    }
)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_write_table_reads_back_as_the_same_corpus(tmp_path: Path, suffix: str) -> None:
    corpus = load_corpus(TRICKY).frame
    path = tmp_path / f"corpus{suffix}"
    write_table(corpus, path, replace=False)
    reread = load_corpus(path).frame
    if suffix == ".csv":  # metadata columns come back as text
        contract = corpus.columns[:9]
        assert reread.select(contract).equals(corpus.select(contract))
        assert reread.get_column("drafted_from").to_list() == [None, '["p;3"]', "p1;p2", "[]"]
        assert reread.get_column("team").to_list() == ["ops", None, "hr", "ops"]
    else:
        assert reread.equals(corpus)
    assert corpus.equals(load_corpus(TRICKY).frame)  # the caller's frame is not modified


def test_write_table_csv_cells(tmp_path: Path) -> None:
    path = tmp_path / "corpus.csv"
    write_table(load_corpus(TRICKY).frame, path, replace=False)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[1].startswith('a@v1,"Quotes ""here"", commas, and')
    assert lines[2] == 'a new line?",answerable,v1,p1;p2,"150, and 210 in Paris",rule,manual,true,,ops'
    assert ",[],,unanswerable,synthetic,true,p1;p2,hr" in lines[4]


def test_write_table_refuses_what_it_cannot_write(tmp_path: Path) -> None:
    frame = pl.DataFrame({"id": ["a"], "nested": [{"x": 1}]})
    with pytest.raises(InputFileError, match=r"unknown table file type '\.txt'"):
        write_table(frame, tmp_path / "t.txt", replace=False)
    with pytest.raises(InputFileError, match=r"nested values, which CSV cannot hold, in 1 column: 'nested'"):
        write_table(frame, tmp_path / "t.csv", replace=False)
    assert not (tmp_path / "t.csv").exists()
    write_table(frame, tmp_path / "t.jsonl", replace=False)
    with pytest.raises(RunExistsError):
        write_table(frame, tmp_path / "t.jsonl", replace=False)
    write_table(frame.with_columns(id=pl.lit("b")), tmp_path / "t.jsonl", replace=True)
    assert pl.read_ndjson(tmp_path / "t.jsonl").get_column("id").to_list() == ["b"]


def test_a_json_line_nested_too_deep_is_refused_before_polars_reads_it(tmp_path: Path) -> None:
    deep = nested_json({"case_id": "b", "extra": DEEP}, 1000)  # objects in lists: Polars' reader overflows its stack
    path = tmp_path / "t.jsonl"
    path.write_text(f'{{"case_id": "a"}}\n{deep}\n', encoding="utf-8")
    with pytest.raises(NestingError, match=f"^{path}: line 2: nests lists or objects more than {MAX_DEPTH} levels"):
        read_table(path, "records")


@pytest.mark.parametrize("levels", [MAX_DEPTH, 1000])
def test_a_parquet_column_nested_too_deep_is_refused_before_it_is_read(tmp_path: Path, levels: int) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"case_id": ["a"], "extra": pa.array([None], type=nested_type(levels))}), path)
    with pytest.raises(NestingError, match=f"^{path}: column 'extra': nests lists or objects more than {MAX_DEPTH}"):
        read_table(path, "records")


def test_a_table_as_deep_as_the_limit_is_read(tmp_path: Path) -> None:
    """A row is one level, as a JSON line's object is: its columns may nest one fewer."""
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"case_id": ["a"], "extra": pa.array([None], type=nested_type(MAX_DEPTH - 1))}), path)
    assert read_table(path, "records").height == 1
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text(nested_json({"case_id": "a", "extra": DEEP}, MAX_DEPTH) + "\n", encoding="utf-8")
    assert read_table(jsonl, "records").height == 1


def test_a_frame_given_with_a_column_nested_too_deep_is_refused() -> None:
    frame = pl.DataFrame({"case_id": ["a"], "extra": pa.array([None], type=nested_type(MAX_DEPTH))})
    with pytest.raises(NestingError, match=r"^<frame>: column 'extra': "):
        read_source(frame, "records")
