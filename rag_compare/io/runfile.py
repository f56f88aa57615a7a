"""The frozen-run file: one Arrow IPC file that carries its own fingerprint.

The fingerprint is the SHA-256 of the file's bytes with the fingerprint itself blanked out (it is
stored in the schema metadata, which Arrow writes twice: after the magic and in the footer). So any
byte changed anywhere, or a file cut short, no longer matches and is refused when loaded. Files are
written atomically and never replace an existing file.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import secrets
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO, cast

import polars as pl

from rag_compare.core.digest import bytes_digest
from rag_compare.core.errors import RunExistsError, RunFileError, RunIntegrityError

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
        raise RunFileError(f"{path}: is an Arrow file but not a frozen run (no fingerprint). Use `freeze_run`.")
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
    frame: pl.DataFrame, metadata: Mapping[str, str], output: str | Path | None, what: str = "frozen run"
) -> tuple[str, Path | None]:
    """Serialise ``frame`` with ``metadata``; write it to ``output`` when given (atomically, never
    replacing a file; ``what`` names it in messages). The fingerprint, and the path written."""
    data, fingerprint = serialize(frame, metadata)
    if output is None:
        return fingerprint, None
    write_atomically(Path(output), data, what=what)
    return fingerprint, Path(output)


def write_atomically(path: Path, data: bytes, *, replace: bool = False, what: str = "frozen run") -> None:
    """Write ``data`` to ``path`` atomically: readers see the old file or the whole new one.

    Without ``replace`` an existing ``path`` is refused (run files are never replaced); ``what`` names
    what is written, for the messages.
    """
    with atomic_output(path, replace=replace, what=what) as stream:
        stream.write(data)


@contextlib.contextmanager
def atomic_output(path: Path, *, replace: bool = False, what: str = "new file") -> Iterator[BinaryIO]:
    """A binary stream whose bytes become ``path`` only once the block ends without an error.

    Without ``replace`` an existing ``path`` is refused (``what`` names what is written, ``"report"``,
    ``"fallback table"``, ..., in that message); with it, a folder or an Arrow file (a frozen run or scores
    file) is refused still. On an error nothing is left behind, and a failed write, flush, fsync or close
    (a full disk) raises ``RunFileError`` naming ``path``, whatever error the writer of the block made of it.
    """
    if replace and path.is_dir():
        raise RunFileError(f"{path}: is a folder. Give the path of a file to write.")
    if replace and _is_arrow_file(path):
        raise RunFileError(
            f"{path}: holds an Arrow file (a frozen run or scores file), which is never replaced. "
            "Give the path of a new file to write."
        )
    if not replace:
        ensure_absent(path, what)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    except OSError as error:
        raise _unwritable(path, error) from None
    try:
        os.fchmod(handle, 0o666 & ~_current_umask())
        with os.fdopen(handle, "wb") as target, _Recorded(target) as stream:
            try:
                yield cast(BinaryIO, stream)  # a binary file to every writer, save fileno
                stream.flush()
                os.fsync(target.fileno())
            except Exception:
                if stream.error is None:
                    raise
                raise _unwritable(path, stream.error) from None
        if replace:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)
    except FileExistsError:
        raise _exists(path, what) from None
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


class _Recorded(io.BufferedIOBase):
    """A write-only binary stream over ``target`` that keeps the first OS error of a write or flush.

    Writers above it (Polars, Arrow, a text wrapper) may turn that error into one of their own, or
    into one without its errno; the kept one says what really failed. It has no ``fileno``, so every
    writer goes through ``write``.
    """

    def __init__(self, target: BinaryIO) -> None:
        super().__init__()
        self._target = target
        self.error: OSError | None = None

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        try:
            return self._target.write(data)
        except OSError as error:
            self.error = self.error or error
            raise

    def flush(self) -> None:
        if self._target.closed:
            return
        try:
            self._target.flush()
        except OSError as error:
            self.error = self.error or error
            raise


def _unwritable(path: Path, error: OSError) -> RunFileError:
    reason = error.strerror or (os.strerror(error.errno) if error.errno else str(error))
    hint = (
        "Free some space on that disk, or write somewhere else."
        if error.errno in {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
        else "Check the folder and its permissions."
    )
    return RunFileError(f"{path}: cannot be written ({reason}). {hint}")


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def ensure_absent(path: Path, what: str = "frozen run") -> None:
    """Refuse early, before any work, when ``path`` exists; ``what`` names what would be written there."""
    if path.is_dir():
        raise RunExistsError(f"{path}: is a folder. Give the path of a new file for the {what}.")
    if path.exists():
        raise _exists(path, what)


def _exists(path: Path, what: str) -> RunExistsError:
    return RunExistsError(
        f"{path}: already exists and is never overwritten by the {what}. Choose a new output path, "
        "or move the file away first."
    )


def _positions(data: bytes | bytearray, marker: str) -> list[int]:
    return [match.start() for match in re.finditer(re.escape(marker.encode()), data)]


def _digest(data: bytes | bytearray, positions: list[int]) -> str:
    """SHA-256 of ``data`` with the digest-long spans at ``positions`` (ascending, apart) read as zeros,
    hashed piece by piece rather than from a blanked copy of the whole file."""
    view, done, pieces = memoryview(data), 0, []
    for start in positions:
        pieces += [view[done:start], memoryview(b"0" * _DIGEST_LENGTH)]
        done = start + _DIGEST_LENGTH
    return bytes_digest(*pieces, view[done:])
