"""The capture checkpoint: an append-only JSON Lines file beside the run being captured.

Its first line names the settings it belongs to (a digest of the run config and the corpus); each
further line is the record of one finished sample (a case and its ``repeat``; a line without
``repeat``, as older checkpoints wrote them, is repeat 0), written and flushed as soon as the sample
ends. A process killed mid-write leaves at most one cut-off last line, which is dropped on resume. A
sample recorded twice counts by its last line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from rag_compare.core.errors import CaptureError
from rag_compare.core.nesting import load_json
from rag_compare.io.outputs import check_output

__all__ = ["Checkpoint", "Sample", "checkpoint_path", "sample_of"]

_FORMAT = "rag-compare-checkpoint-1"
_MOVE_AWAY = "Move it away, or choose another `output` for the run."
Sample = tuple[str, int]
"""A sample of a capture: a case id and its repeat."""


def checkpoint_path(output: Path) -> Path:
    """Where the checkpoint of a capture into ``output`` lives."""
    return output.with_name(f"{output.name}.checkpoint.jsonl")


def sample_of(record: Mapping[str, Any]) -> Sample:
    """The sample a record is of: its case id and repeat (0 when it has none). ``KeyError`` without a
    case id, ``TypeError`` for a repeat that is not a whole number of 0 or more."""
    case_id = str(record["case_id"])
    repeat = record.get("repeat", 0)
    if not isinstance(repeat, int) or isinstance(repeat, bool) or repeat < 0:
        raise TypeError(f"repeat {repeat!r}")
    return case_id, repeat


class Checkpoint:
    """The finished samples of one capture, on disk: ``records`` by ``Sample``, each with its ``repeat``.
    Open it with ``Checkpoint.open``."""

    def __init__(self, path: Path, records: dict[Sample, dict[str, Any]], stream: IO[str]) -> None:
        self.path, self.records, self._stream = path, records, stream

    @classmethod
    def open(cls, path: Path, settings: str) -> Checkpoint:
        """The checkpoint at ``path`` for ``settings`` (a digest), created when absent.

        Raises ``CaptureError`` when the file belongs to other settings or is damaged before its end, and
        ``RunFileError`` when ``path`` is no place for it (``outputs.check_output``: a FIFO, a folder...).
        """
        check_output(path, "capture checkpoint", existing="updated")
        records: dict[Sample, dict[str, Any]] = {}
        if path.is_file() and b"\n" not in path.read_bytes():  # killed before its first line was whole
            path.unlink()
        if path.exists():
            records, good_length = _read(path, settings)
            with path.open("r+b") as raw:  # drop a line cut off by a killed process
                raw.truncate(good_length)
            stream = path.open("a", encoding="utf-8")
        else:
            stream = path.open("x", encoding="utf-8")
            stream.write(json.dumps({"format": _FORMAT, "settings": settings}) + "\n")
            stream.flush()
        return cls(path, records, stream)

    def append(self, record: Mapping[str, Any]) -> None:
        """Record one finished sample, on disk before this returns."""
        sample = sample_of(record)
        self._stream.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._stream.flush()
        self.records[sample] = {**record, "repeat": sample[1]}

    def close(self) -> None:
        self._stream.close()

    def remove(self) -> None:
        """Close and delete the file (its records are in the frozen run now)."""
        self.close()
        self.path.unlink(missing_ok=True)


def _read(path: Path, settings: str) -> tuple[dict[Sample, dict[str, Any]], int]:
    """The records in ``path`` by sample (each with its ``repeat``), and the length of its whole lines."""
    data = path.read_bytes()
    complete = data[: data.rfind(b"\n") + 1]
    lines = complete.decode("utf-8", errors="replace").splitlines()
    try:
        header = load_json(lines[0], str(path)) if lines else {}
    except json.JSONDecodeError:
        header = {}
    if header.get("format") != _FORMAT:
        raise CaptureError(f"{path}: is not a capture checkpoint. {_MOVE_AWAY}")
    if header.get("settings") != settings:
        raise CaptureError(
            f"{path}: holds the cases of a capture with other settings or another corpus. To resume it, run "
            "the same command as before; to start over with these settings, delete the checkpoint."
        )
    records: dict[Sample, dict[str, Any]] = {}
    for number, line in enumerate(lines[1:], start=2):
        try:
            record = load_json(line, str(path), line=number)
            case_id, repeat = sample_of(record)
            records[case_id, repeat] = record | {"repeat": repeat}
        except (json.JSONDecodeError, KeyError, TypeError):
            raise CaptureError(
                f"{path}: line {number} is damaged. Delete the checkpoint to capture every case again."
            ) from None
    return records, len(complete)
