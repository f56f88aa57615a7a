"""The frozen-run file: integrity against any changed byte or truncation, atomic no-clobber writes."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_compare.core.errors import RunExistsError, RunFileError, RunIntegrityError
from rag_compare.io import runfile
from rag_compare.io.runfile import BATCH_ROWS, open_frozen, read_frozen, serialize, write_atomically

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


def test_write_leaves_no_temporary_file_and_creates_folders(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "run.arrow"
    write_atomically(path, DATA)
    assert list(path.parent.iterdir()) == [path]
    assert path.read_bytes() == DATA


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
