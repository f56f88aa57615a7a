"""The frozen-run file: one Arrow IPC file that carries its own fingerprint.

The fingerprint is the SHA-256 of the file's bytes with the fingerprint itself blanked out (it is
stored in the schema metadata, which Arrow writes twice: after the magic and in the footer). So any
byte changed anywhere, or a file cut short, no longer matches and is refused when loaded. Files are
written atomically and never replace an existing file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import BinaryIO

import polars as pl

from rag_compare.errors import RunExistsError, RunFileError, RunIntegrityError

__all__ = [
    "FINGERPRINT_KEY",
    "atomic_output",
    "ensure_absent",
    "freeze_frame",
    "read_frozen",
    "serialize",
    "write_atomically",
]

FINGERPRINT_KEY = "rag_compare.fingerprint"
_DIGEST_LENGTH = 64
_ARROW_MAGIC = b"ARROW1"
"""The bytes an Arrow IPC file starts with."""


def serialize(frame: pl.DataFrame, metadata: Mapping[str, str]) -> tuple[bytes, str]:
    """The file bytes for ``frame`` with ``metadata`` in its schema, and the file's fingerprint."""
    import pyarrow as pa

    placeholder = secrets.token_hex(_DIGEST_LENGTH // 2)
    table = frame.to_arrow()
    table = table.replace_schema_metadata({**metadata, FINGERPRINT_KEY: placeholder})
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    with pa.ipc.new_file(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    data = bytearray(sink.getvalue().to_pybytes())
    positions = _positions(data, placeholder)
    fingerprint = _digest(data, positions)
    for start in positions:
        data[start : start + _DIGEST_LENGTH] = fingerprint.encode()
    return bytes(data), fingerprint


def read_frozen(path: Path) -> tuple[pl.DataFrame, dict[str, str], str]:
    """The frame, schema metadata and fingerprint of a frozen file, after checking its integrity."""
    import pyarrow as pa

    if not path.is_file():
        raise RunFileError(f"{path}: no such run file. Check the path, or freeze the run first.")
    data = path.read_bytes()
    try:
        # Arrow decodes the columns on several threads, and Polars takes its buffers without a copy. The
        # system allocator gives a run's memory back to the OS as soon as the run is let go.
        reader = pa.ipc.open_file(pa.BufferReader(data), memory_pool=pa.system_memory_pool())
        metadata = {key.decode(): value.decode() for key, value in (reader.schema.metadata or {}).items()}
    except (pa.ArrowInvalid, pa.ArrowException, OSError, UnicodeDecodeError):
        raise RunIntegrityError(
            f"{path}: is not a readable frozen run (cut short, changed, or not an Arrow file). "
            "Restore it from where it was kept, or freeze the run again."
        ) from None
    fingerprint = metadata.pop(FINGERPRINT_KEY, None)
    if fingerprint is None or not re.fullmatch(r"[0-9a-f]{64}", fingerprint):
        raise RunFileError(f"{path}: is an Arrow file but not a frozen run (no fingerprint). Use `rag-compare freeze`.")
    if _digest(data, _positions(data, fingerprint)) != fingerprint:
        raise RunIntegrityError(
            f"{path}: does not match its fingerprint {fingerprint[:12]}: the file was changed or damaged "
            "after it was frozen. Restore it, or freeze the run again under a new name."
        )
    try:
        frame = pl.DataFrame(reader.read_all())
    except (pa.ArrowException, pl.exceptions.PolarsError):
        raise RunIntegrityError(f"{path}: its records cannot be read. Freeze the run again.") from None
    return frame, metadata, fingerprint


def freeze_frame(
    frame: pl.DataFrame, metadata: Mapping[str, str], output: str | Path | None
) -> tuple[str, Path | None]:
    """Serialise ``frame`` with ``metadata``; write it to ``output`` when given (atomically, never
    replacing a file). The fingerprint, and the path written."""
    data, fingerprint = serialize(frame, metadata)
    if output is None:
        return fingerprint, None
    write_atomically(Path(output), data)
    return fingerprint, Path(output)


def write_atomically(path: Path, data: bytes, *, replace: bool = False) -> None:
    """Write ``data`` to ``path`` atomically: readers see the old file or the whole new one.

    Without ``replace`` an existing ``path`` is refused (run files are never replaced).
    """
    with atomic_output(path, replace=replace) as stream:
        stream.write(data)


@contextlib.contextmanager
def atomic_output(path: Path, *, replace: bool = False) -> Iterator[BinaryIO]:
    """A binary stream whose bytes become ``path`` only once the block ends without an error.

    Without ``replace`` an existing ``path`` is refused; with it, a folder or an Arrow file (a frozen run or
    scores file) is refused still. On an error nothing is left behind.
    """
    if replace and path.is_dir():
        raise RunFileError(f"{path}: is a folder. Give the path of a file to write.")
    if replace and _is_arrow_file(path):
        raise RunFileError(
            f"{path}: holds an Arrow file (a frozen run or scores file), which is never replaced. "
            "Give the path of a new file to write."
        )
    if not replace:
        ensure_absent(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    except OSError as error:
        raise _unwritable(path, error) from None
    try:
        os.fchmod(handle, 0o666 & ~_current_umask())
        with os.fdopen(handle, "wb") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        if replace:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)
    except FileExistsError:
        raise _exists(path) from None
    except OSError as error:
        raise _unwritable(path, error) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def _is_arrow_file(path: Path) -> bool:
    try:
        with path.open("rb") as stream:
            return stream.read(len(_ARROW_MAGIC)) == _ARROW_MAGIC
    except OSError:
        return False


def _unwritable(path: Path, error: OSError) -> RunFileError:
    return RunFileError(f"{path}: cannot be written ({error.strerror}). Check the folder and its permissions.")


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def ensure_absent(path: Path) -> None:
    """Refuse early, before any work, when ``path`` exists."""
    if path.is_dir():
        raise RunExistsError(f"{path}: is a folder. Give the path of a new run file, e.g. {path / 'run.arrow'}.")
    if path.exists():
        raise _exists(path)


def _exists(path: Path) -> RunExistsError:
    return RunExistsError(f"{path}: already exists; frozen runs are never overwritten. Choose a new --output.")


def _positions(data: bytes | bytearray, marker: str) -> list[int]:
    return [match.start() for match in re.finditer(re.escape(marker.encode()), data)]


def _digest(data: bytes | bytearray, positions: list[int]) -> str:
    """SHA-256 of ``data`` with the digest-long spans at ``positions`` (ascending, apart) read as zeros,
    hashed piece by piece rather than from a blanked copy of the whole file."""
    digest, view, done = hashlib.sha256(), memoryview(data), 0
    for start in positions:
        digest.update(view[done:start])
        digest.update(b"0" * _DIGEST_LENGTH)
        done = start + _DIGEST_LENGTH
    digest.update(view[done:])
    return digest.hexdigest()
