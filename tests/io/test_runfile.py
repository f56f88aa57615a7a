"""The frozen-run file: integrity against any changed byte or truncation; atomic writes of files and folders
that replace nothing but a regular file they may replace, and never a special file, even one that appears
while they write."""

from __future__ import annotations

import contextlib
import functools
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_compare.core.errors import RunExistsError, RunFileError, RunIntegrityError
from rag_compare.io import runfile
from rag_compare.io.runfile import (
    BATCH_ROWS,
    atomic_directory,
    atomic_output,
    open_frozen,
    read_frozen,
    serialize,
    write_atomically,
)
from tests.helpers.special_files import NODES, bad_output, node_kind, not_blocked_by

FRAME = pl.DataFrame({"case_id": ["a", "b", "c"], "answer": ["yes", None, "no"], "latency_ms": [1.0, 2.5, None]})
METADATA = {"rag_compare.config": '{"name": "x"}'}
DATA, FINGERPRINT = serialize(FRAME, METADATA)


def test_round_trip_keeps_frame_metadata_and_fingerprint(tmp_path: Path) -> None:
    path = tmp_path / "run.arrow"
    write_atomically(path, DATA)
    frame, metadata, fingerprint = read_frozen(path)
    assert frame.equals(FRAME)
    assert metadata == METADATA
    assert fingerprint == FINGERPRINT


def test_same_content_serializes_to_the_same_fingerprint() -> None:
    assert serialize(FRAME, METADATA) == (DATA, FINGERPRINT)
    assert serialize(FRAME.with_columns(pl.col("answer").fill_null("?")), METADATA)[1] != FINGERPRINT
    assert serialize(FRAME, {"rag_compare.config": '{"name": "y"}'})[1] != FINGERPRINT


def test_a_large_frame_is_written_and_read_a_batch_at_a_time(tmp_path: Path) -> None:
    frame = pl.DataFrame({"case_id": [f"q{i}" for i in range(2 * BATCH_ROWS + 5)]}).with_columns(
        answer=pl.col("case_id").str.reverse()
    )
    path = tmp_path / "large.arrow"
    write_atomically(path, serialize(frame, METADATA)[0])
    batches = list(open_frozen(path).batches(["answer"]))
    assert [batch.height for batch in batches] == [BATCH_ROWS, BATCH_ROWS, 5]
    assert pl.concat(batches).equals(frame.select("answer"))
    assert pl.concat(open_frozen(path).batches(["answer", "case_id"])).equals(frame.select("answer", "case_id"))
    assert read_frozen(path)[0].equals(frame)


def test_batches_of_some_cases_hold_only_their_rows_in_file_order(tmp_path: Path) -> None:
    frame = pl.DataFrame({"case_id": [f"q{i}" for i in range(2 * BATCH_ROWS + 5)]}).with_columns(
        answer=pl.col("case_id").str.reverse()
    )
    path = tmp_path / "large.arrow"
    write_atomically(path, serialize(frame, METADATA)[0])
    wanted = pl.Series([f"q{2 * BATCH_ROWS + 1}", "q3", f"q{BATCH_ROWS}", "not a case"])
    batches = list(open_frozen(path).batches(["answer", "case_id"], [0, 2], wanted))
    assert [batch.to_dicts() for batch in batches] == [
        [{"answer": "3q", "case_id": "q3"}],
        [{"answer": f"q{2 * BATCH_ROWS + 1}"[::-1], "case_id": f"q{2 * BATCH_ROWS + 1}"}],
    ]
    none = pl.Series([], dtype=pl.String)
    assert [batch.height for batch in open_frozen(path).batches(["case_id"], None, none)] == [0, 0, 0]


@pytest.mark.parametrize("slice_bytes", [1, 7, 63, 64, 65, 4096])
def test_the_fingerprint_is_checked_the_same_in_slices_as_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slice_bytes: int
) -> None:
    # the fingerprint spans cross slice boundaries for every slice size but the largest
    monkeypatch.setattr(runfile, "_READ_BYTES", slice_bytes)
    path = tmp_path / "run.arrow"
    write_atomically(path, DATA)
    assert open_frozen(path).fingerprint == FINGERPRINT
    changed = bytearray(DATA)
    changed[len(DATA) // 2] ^= 1
    other = tmp_path / "changed.arrow"
    write_atomically(other, bytes(changed))
    with pytest.raises(RunIntegrityError, match="does not match its fingerprint"):
        open_frozen(other)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(position=st.integers(min_value=0, max_value=len(DATA) - 1), flip=st.integers(min_value=1, max_value=255))
def test_any_changed_byte_is_refused(tmp_path: Path, position: int, flip: int) -> None:
    changed = bytearray(DATA)
    changed[position] ^= flip
    path = tmp_path / f"changed-{position}-{flip}.arrow"
    path.write_bytes(bytes(changed))
    with pytest.raises(RunFileError):
        read_frozen(path)


def test_every_single_byte_position_is_covered(tmp_path: Path) -> None:
    path = tmp_path / "changed.arrow"
    mismatches = 0
    for position in range(len(DATA)):
        changed = bytearray(DATA)
        changed[position] ^= 0x01
        path.write_bytes(bytes(changed))
        with pytest.raises(RunFileError) as excinfo:
            read_frozen(path)
        assert str(path) in str(excinfo.value)
        mismatches += "does not match its fingerprint" in str(excinfo.value)
    assert mismatches > len(DATA) // 2  # the rest break the Arrow structure itself


@pytest.mark.parametrize("keep", [0, 6, len(DATA) // 2, len(DATA) - 1])
def test_cut_short_file_is_refused(tmp_path: Path, keep: int) -> None:
    path = tmp_path / "short.arrow"
    path.write_bytes(DATA[:keep])
    with pytest.raises(RunIntegrityError, match="cut short"):
        read_frozen(path)


def test_plain_arrow_file_is_not_a_run(tmp_path: Path) -> None:
    path = tmp_path / "plain.arrow"
    FRAME.write_ipc(path)
    with pytest.raises(RunFileError, match="not a frozen run"):
        read_frozen(path)


def test_existing_file_is_never_replaced(tmp_path: Path) -> None:
    path = tmp_path / "run.arrow"
    path.write_bytes(b"precious")
    with pytest.raises(RunExistsError, match="never overwritten"):
        write_atomically(path, DATA)
    assert path.read_bytes() == b"precious"
    assert list(tmp_path.iterdir()) == [path]


def test_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "run.arrow"
    write_atomically(path, DATA)
    assert list(path.parent.iterdir()) == [path]
    assert path.read_bytes() == DATA


def test_a_missing_folder_is_refused_never_created(tmp_path: Path) -> None:
    with pytest.raises(RunFileError, match=f"the folder {tmp_path / 'nested'} does not exist. Create it first"):
        write_atomically(tmp_path / "nested" / "run.arrow", DATA)
    with pytest.raises(RunFileError, match="does not exist"), atomic_directory(tmp_path / "nested" / "dir", what="d"):
        pass
    assert list(tmp_path.iterdir()) == []


@contextlib.contextmanager
def _written_folder(path: Path) -> Iterator[None]:
    with atomic_directory(path, what="run directory") as folder:
        (folder / "part").write_bytes(DATA)
        yield


@contextlib.contextmanager
def _written_file(path: Path, *, replace: bool) -> Iterator[None]:
    with atomic_output(path, replace=replace, what="report") as stream:
        stream.write(DATA)
        yield


WRITES = {
    "a new file": functools.partial(_written_file, replace=False),
    "a file that may replace one": functools.partial(_written_file, replace=True),
    "a folder": _written_folder,
}


@pytest.mark.parametrize("kind", NODES)
@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_a_special_file_is_never_opened_nor_replaced(
    tmp_path: Path, write: Callable[[Path], AbstractContextManager[None]], kind: str
) -> None:
    node = Path(bad_output(kind, tmp_path / "out"))
    before, listed = node_kind(node), sorted(tmp_path.iterdir())
    refused = pytest.raises(RunFileError, match=f"^{node}: is a (character device|FIFO|socket|symbolic link)")
    with not_blocked_by(node), refused, write(node):
        pass
    assert node_kind(node) == before
    assert sorted(tmp_path.iterdir()) == listed


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_a_fifo_that_appears_while_writing_is_not_replaced(
    tmp_path: Path, write: Callable[[Path], AbstractContextManager[None]]
) -> None:
    path = tmp_path / "out"
    with not_blocked_by(path), pytest.raises(RunFileError, match=f"^{path}: is a FIFO"), write(path):
        os.mkfifo(path)
    assert stat.S_ISFIFO(os.lstat(path).st_mode)
    assert list(tmp_path.iterdir()) == [path]


def test_a_link_is_never_replaced_nor_written_through(tmp_path: Path) -> None:
    target, link = tmp_path / "report.txt", tmp_path / "link.txt"
    target.write_text("old report")
    link.symlink_to(target)
    with pytest.raises(RunFileError, match=f"^{link}: is a symbolic link"):
        write_atomically(link, DATA, replace=True)
    assert (link.is_symlink(), target.read_text()) == (True, "old report")
    write_atomically(target, DATA, replace=True)  # the file itself may be replaced
    assert target.read_bytes() == DATA


def test_a_file_output_named_as_a_folder_is_refused(tmp_path: Path) -> None:
    for named in (f"{tmp_path}/run.arrow/", f"{tmp_path}/run.arrow/.", f"{tmp_path}/sub/.."):
        with pytest.raises(RunFileError, match="names a folder, but the frozen run is a file"):
            write_atomically(named, DATA)
    assert list(tmp_path.iterdir()) == []
    with atomic_directory(f"{tmp_path}/run/", what="run directory") as folder:
        (folder / "part").write_bytes(DATA)
    assert (tmp_path / "run" / "part").read_bytes() == DATA


def test_unwritable_place_names_the_output_not_a_temporary(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(RunFileError) as excinfo:
        write_atomically(blocker / "run.arrow", DATA)
    assert str(excinfo.value).startswith(f"{blocker / 'run.arrow'}: cannot be written")
    assert ".partial" not in str(excinfo.value)


def test_a_folder_as_output_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RunExistsError, match="is a folder"):
        write_atomically(tmp_path, DATA)
