"""The frozen-run file: one Arrow IPC file that carries its own fingerprint.

The fingerprint is the SHA-256 of the file's bytes with the fingerprint itself blanked out (it is
stored in the schema metadata, which Arrow writes twice: after the magic and in the footer). So any
byte changed anywhere, or a file cut short, no longer matches and is refused when loaded. Files and
folders are written atomically, where ``outputs.check_output`` allows, and a frozen file replaces nothing.

Rows are written in record batches of ``BATCH_ROWS``, so a reader can take a large run a batch at a time
(``open_frozen``) instead of decoding it whole.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, BinaryIO, cast

import polars as pl

from rag_compare.core.digest import bytes_digest, streamed_digest
from rag_compare.core.errors import RunFileError, RunIntegrityError
from rag_compare.core.input_paths import check_input
from rag_compare.core.temporaries import register_temporary, release_temporary
from rag_compare.io.outputs import check_output, unwritable

__all__ = [
    "BATCH_ROWS",
    "FINGERPRINT_KEY",
    "FrozenFile",
    "atomic_directory",
    "atomic_output",
    "freeze_frame",
    "open_frozen",
    "read_frozen",
    "serialize",
    "write_atomically",
]

FINGERPRINT_KEY = "rag_compare.fingerprint"
BATCH_ROWS = 1 << 16
"""Rows per record batch of a frozen file."""
_READ_BYTES = 1 << 23
"""Bytes read at a time while a file's fingerprint is checked."""
_DIGEST_LENGTH = 64


def serialize(frame: pl.DataFrame, metadata: Mapping[str, str]) -> tuple[bytes, str]:
    """The file bytes for ``frame`` with ``metadata`` in its schema, and the file's fingerprint."""
    import pyarrow as pa

    placeholder = secrets.token_hex(_DIGEST_LENGTH // 2)
    table = frame.to_arrow()
    table = table.replace_schema_metadata({**metadata, FINGERPRINT_KEY: placeholder})
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    with pa.ipc.new_file(sink, table.schema, options=options) as writer:
        writer.write_table(table, max_chunksize=BATCH_ROWS)
    data = bytearray(sink.getvalue().to_pybytes())
    positions = _positions(data, placeholder)
    fingerprint = _digest(data, positions)
    for start in positions:
        data[start : start + _DIGEST_LENGTH] = fingerprint.encode()
    return bytes(data), fingerprint


@dataclass(frozen=True)
class FrozenFile:
    """A frozen file whose bytes matched its fingerprint when opened: its schema metadata, fingerprint and
    the number of record batches it holds, read one at a time by ``batches``."""

    path: Path
    metadata: Mapping[str, str]
    fingerprint: str
    schema: Mapping[str, pl.DataType]
    batch_count: int

    def batches(
        self,
        columns: Sequence[str] | None = None,
        indices: Sequence[int] | None = None,
        case_ids: pl.Series | None = None,
    ) -> Iterator[pl.DataFrame]:
        """The file's rows, a record batch at a time (``columns``: only those, in that order; the other
        columns are not read; ``indices``: only the batches of those numbers, in that order; ``case_ids``:
        only the rows of those cases). Rows are picked in Arrow, which copies the texts it keeps: a Polars
        filter would keep each whole batch's text buffers alive behind the few rows it keeps."""
        import pyarrow as pa
        import pyarrow.compute as pc

        names = list(self.schema)
        options = (
            None if columns is None else pa.ipc.IpcReadOptions(included_fields=[names.index(name) for name in columns])
        )
        try:
            with pa.OSFile(str(self.path)) as source:
                reader = pa.ipc.open_file(source, options=options, memory_pool=pa.system_memory_pool())
                wanted = None if case_ids is None else case_ids.to_arrow().cast(reader.schema.field("case_id").type)
                for index in range(reader.num_record_batches) if indices is None else indices:
                    batch = reader.get_batch(index)
                    if wanted is not None:
                        batch = batch.filter(pc.is_in(batch.column("case_id"), value_set=wanted))
                    yield pl.DataFrame(batch if columns is None else batch.select(list(columns)))
        except (pa.ArrowException, OSError, pl.exceptions.PolarsError):
            raise RunIntegrityError(f"{self.path}: its records cannot be read. Freeze the run again.") from None

    def read(self) -> pl.DataFrame:
        """Every row of the file, decoded on several threads."""
        import pyarrow as pa

        try:
            # Arrow decodes the columns on several threads, and Polars takes its buffers without a copy. The
            # system allocator gives a run's memory back to the OS as soon as the run is let go.
            with pa.OSFile(str(self.path)) as source:
                table = pa.ipc.open_file(source, memory_pool=pa.system_memory_pool()).read_all()
            return pl.DataFrame(table)
        except (pa.ArrowException, OSError, pl.exceptions.PolarsError):
            raise RunIntegrityError(f"{self.path}: its records cannot be read. Freeze the run again.") from None


def open_frozen(path: Path, what: str = "run file") -> FrozenFile:
    """A frozen file (``what`` names it in messages: ``"scores file"``...), after checking that it is a
    regular file and that its bytes match its fingerprint (read a slice at a time)."""
    import pyarrow as pa

    check_input(path, what, RunFileError, fix=f"Check the path, or make the {what} first.")
    try:
        with pa.OSFile(str(path)) as source:
            reader = pa.ipc.open_file(source)
            arrow_schema, batch_count = reader.schema, reader.num_record_batches
        metadata = {key.decode(): value.decode() for key, value in (arrow_schema.metadata or {}).items()}
        schema = pl.read_ipc_schema(path)  # not through an Arrow table, which would import pandas
    except (pa.ArrowInvalid, pa.ArrowException, OSError, UnicodeDecodeError, pl.exceptions.PolarsError):
        raise RunIntegrityError(
            f"{path}: is not a readable frozen run (cut short, changed, or not an Arrow file). "
            "Restore it from where it was kept, or freeze the run again."
        ) from None
    fingerprint = metadata.pop(FINGERPRINT_KEY, None)
    if fingerprint is None or not re.fullmatch(r"[0-9a-f]{64}", fingerprint):
        raise RunFileError(f"{path}: is an Arrow file but not a frozen run (no fingerprint). Use `freeze_run`.")
    if _file_digest(path, fingerprint) != fingerprint:
        raise RunIntegrityError(
            f"{path}: does not match its fingerprint {fingerprint[:12]}: the file was changed or damaged "
            "after it was frozen. Restore it, or freeze the run again under a new name."
        )
    return FrozenFile(path, MappingProxyType(metadata), fingerprint, MappingProxyType(dict(schema)), batch_count)


def read_frozen(path: Path, what: str = "run file") -> tuple[pl.DataFrame, dict[str, str], str]:
    """The frame, schema metadata and fingerprint of a frozen file (``what``: see ``open_frozen``), after
    checking its integrity."""
    frozen = open_frozen(path, what)
    return frozen.read(), dict(frozen.metadata), frozen.fingerprint


def freeze_frame(
    frame: pl.DataFrame, metadata: Mapping[str, str], output: str | Path | None, what: str = "frozen run"
) -> tuple[str, Path | None]:
    """Serialise ``frame`` with ``metadata``; write it to ``output`` when given (atomically, never
    replacing a file; ``what`` names it in messages). The fingerprint, and the path written."""
    data, fingerprint = serialize(frame, metadata)
    if output is None:
        return fingerprint, None
    write_atomically(output, data, what=what)
    return fingerprint, Path(output)


def write_atomically(path: str | Path, data: bytes, *, replace: bool = False, what: str = "frozen run") -> None:
    """Write ``data`` to ``path`` atomically: readers see the old file or the whole new one.

    Without ``replace`` an existing ``path`` is refused (run files are never replaced); ``what`` names
    what is written, for the messages.
    """
    with atomic_output(path, replace=replace, what=what) as stream:
        stream.write(data)


@contextlib.contextmanager
def atomic_output(path: str | Path, *, replace: bool = False, what: str = "new file") -> Iterator[BinaryIO]:
    """A binary stream whose bytes become ``path`` only once the block ends without an error.

    ``path`` is checked first (``outputs.check_output``; ``what`` names what is written, ``"report"``,
    ``"fallback table"``, ..., in its messages): without ``replace`` anything there is refused; with it, a
    regular file that is not an Arrow file (a frozen run or scores file) is replaced. On an error nothing
    is left behind, and a failed write, flush, fsync or close (a full disk) raises ``RunFileError`` naming
    ``path``, whatever error the writer of the block made of it.
    """
    path = check_output(path, what, existing="replaced" if replace else "refused")
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    except OSError as error:
        raise unwritable(path, error) from None
    register_temporary(temporary)
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
                raise unwritable(path, stream.error) from None
        _place(temporary, path, replace=replace, what=what)
    except OSError as error:
        raise unwritable(path, error) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        release_temporary(temporary)


def _place(temporary: str, path: Path, *, replace: bool, what: str) -> None:
    """Give the whole ``temporary`` file the name ``path``: with ``replace`` over what is there (checked
    again: it may have changed meanwhile), else only where nothing is yet (a hard link never replaces)."""
    if replace:
        check_output(path, what, existing="replaced")
        os.replace(temporary, path)
        return
    try:
        os.link(temporary, path)
    except FileExistsError:
        check_output(path, what)
        raise


@contextlib.contextmanager
def atomic_directory(path: str | Path, *, what: str) -> Iterator[Path]:
    """A new, empty folder whose files become the folder ``path`` only once the block ends without an error.

    ``path`` is checked first (``outputs.check_output``): anything there is refused (``what`` names what is
    written, in that message); on an error nothing is left behind, and a failed write raises
    ``RunFileError`` naming ``path``.
    """
    path = check_output(path, what, folder=True)
    try:
        temporary = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent))
    except OSError as error:
        raise unwritable(path, error) from None
    register_temporary(temporary)
    try:
        os.chmod(temporary, 0o777 & ~_current_umask())
        yield temporary
        _fsync_tree(temporary)
        check_output(path, what, folder=True)
        os.rename(temporary, path)
    except OSError as error:
        raise unwritable(path, error) from None
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
        release_temporary(temporary)


def _fsync_tree(folder: Path) -> None:
    """Flush every file under ``folder``, and the folders, to disk."""
    for file in sorted(folder.rglob("*")):
        handle = os.open(file, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)
    handle = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


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


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _file_digest(path: Path, marker: str) -> str:
    """``_digest`` of the file at ``path``, its spans holding ``marker`` read as zeros, read a slice at a time."""
    return streamed_digest(_blanked(path, marker))


def _blanked(path: Path, marker: str) -> Iterator[bytes | memoryview]:
    """The bytes of the file with each span holding ``marker`` (the ones ``_positions`` finds in the whole
    file, even across two slices) as zeros."""
    needle, tail = marker.encode(), b""
    with path.open("rb") as stream:
        while chunk := stream.read(_READ_BYTES):
            data = tail + chunk if tail else chunk
            done, at = 0, data.find(needle)
            while at != -1:
                yield memoryview(data)[done:at]
                yield b"0" * _DIGEST_LENGTH
                done = at + _DIGEST_LENGTH
                at = data.find(needle, done)
            keep = max(done, len(data) - _DIGEST_LENGTH + 1)
            yield memoryview(data)[done:keep]
            tail = data[keep:]
    yield tail


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
