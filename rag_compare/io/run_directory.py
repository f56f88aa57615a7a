"""The run directory: a frozen run as a folder of Parquet parts and a manifest, checked part by part.

    DIR/manifest.json
    DIR/part-00000.parquet ... DIR/part-{B-1}.parquet      (five digits: part-00000 to part-00063 for B = 64)

Bucket rule (``case_hash-mod-buckets``): the records of case id ``c`` are in part ``case_hash(c) % B``,
where ``case_hash`` (``core.digest``) is the first 8 bytes of the SHA-256 of ``c``'s UTF-8, read as a
big-endian unsigned 64-bit integer, and ``B`` is the run's bucket count. Every bucket has its part, an empty
one included; all parts have one schema; within a part rows are sorted by ``case_id``, then ``repeat``.
Parts are Parquet with zstd. A case's samples are all in one part, so a bucket holds whole cases.

The manifest is canonical JSON (sorted keys, no spaces, ASCII) with ``format`` (``run-directory-1``),
``config`` (the run config, exactly what a run file holds in its metadata), ``buckets``, ``bucket_rule``,
``parts`` (per part, in bucket order: ``file``, ``rows``, ``sha256`` of its bytes) and ``fingerprint``:
the run's fingerprint, the SHA-256 of the manifest's canonical JSON without that key. So every part is
covered through its digest, and a manifest changed by hand no longer matches its fingerprint. A file in
the directory that the manifest does not list is refused too. Directories are written in a temporary
folder beside the output and renamed into place once whole; an existing output is never replaced.
"""

from __future__ import annotations

import io
import json
import mmap
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare.core.digest import bytes_digest, case_hash, json_digest
from rag_compare.core.errors import RunFileError, RunIntegrityError
from rag_compare.core.listing import counted
from rag_compare.core.nesting import load_json
from rag_compare.io.config import check_config
from rag_compare.io.outputs import names_folder
from rag_compare.io.tables import refuse_deep_columns

__all__ = [
    "BUCKET_RULE",
    "DEFAULT_BUCKETS",
    "DIRECTORY_FORMAT",
    "MANIFEST",
    "RUN_DIRECTORY",
    "DirectoryRecords",
    "Part",
    "RunDirectory",
    "bucket_of",
    "is_directory_output",
    "iter_buckets",
    "part_name",
    "read_run_directory",
    "verify_parts",
    "write_manifest",
    "write_part",
]

DIRECTORY_FORMAT = "run-directory-1"
MANIFEST = "manifest.json"
BUCKET_RULE = "case_hash-mod-buckets"
"""The name of the bucket rule in the manifest: ``case_hash(case_id) % buckets``."""
DEFAULT_BUCKETS = 16
"""Buckets of a run directory asked for without a count: a few parts for a small run, and a sixteenth of
a large one in memory at a time for an engine that compares bucket by bucket."""
_SORT = ("case_id", "repeat")


@dataclass(frozen=True)
class Part:
    """One part as the manifest lists it: its file name, row count and SHA-256."""

    file: str
    rows: int
    sha256: str

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "rows": self.rows, "sha256": self.sha256}


@dataclass(frozen=True)
class RunDirectory:
    """A run directory whose manifest matches its fingerprint and lists exactly the files present (the
    parts' bytes are checked as they are read: see ``iter_buckets``)."""

    path: Path
    config: Mapping[str, Any]
    buckets: int
    parts: tuple[Part, ...]
    fingerprint: str

    @property
    def part_paths(self) -> tuple[Path, ...]:
        """The parts' paths, by bucket."""
        return tuple(self.path / part.file for part in self.parts)


class DirectoryRecords:
    """A checked run directory's records as an opened run reads them: its schema, its parts one at a time
    (each checked against its digest as it is read), or all of them."""

    def __init__(self, directory: RunDirectory) -> None:
        self.directory = directory
        schemas = [_part_schema(path) for path in directory.part_paths]  # none nests too deep to read
        self.schema: Mapping[str, pl.DataType] = schemas[0]

    @property
    def batch_count(self) -> int:
        """The parts ``batches`` gives."""
        return self.directory.buckets

    def batches(self, columns: Sequence[str] | None = None) -> Iterator[pl.DataFrame]:
        """Its records a part at a time, by bucket (``columns``: only those)."""
        for _, frame in iter_buckets(self.directory):
            yield frame if columns is None else frame.select(columns)

    def read(self) -> pl.DataFrame:
        """Every part, by bucket."""
        return pl.concat(list(self.batches()), how="vertical")


def is_directory_output(output: str | Path | None, buckets: int | None) -> bool:
    """Whether ``output`` asks for a run directory: ``buckets`` given, a path naming a folder (a trailing
    ``/``: ``outputs.names_folder``), or an existing folder (which is then refused as existing)."""
    if output is None:
        return False
    return buckets is not None or names_folder(output) or Path(output).is_dir()


def bucket_of(case_ids: pl.Series, buckets: int) -> pl.Series:
    """The bucket of each case id (``UInt64`` named ``bucket``): ``case_hash(case_id) % buckets``."""
    return (case_hash(case_ids) % buckets).alias("bucket")


def part_name(bucket: int) -> str:
    """The file name of ``bucket``'s part."""
    return f"part-{bucket:05d}.parquet"


RUN_DIRECTORY = "run directory"
"""What a run directory is called in the messages of the folder writer."""


def write_part(frame: pl.DataFrame, folder: Path, bucket: int) -> Part:
    """Write ``frame`` (one bucket's rows) into ``folder`` as that bucket's part, sorted by case id then
    repeat, zstd-compressed; its manifest entry."""
    path = folder / part_name(bucket)
    frame.sort([name for name in _SORT if name in frame.columns], maintain_order=True).write_parquet(
        path, compression="zstd", statistics=False
    )
    return Part(file=path.name, rows=frame.height, sha256=_file_digest(path))


def write_manifest(folder: Path, config: Mapping[str, Any], parts: tuple[Part, ...]) -> str:
    """Write the manifest of ``parts`` (by bucket) and ``config`` into ``folder``; the run's fingerprint. The
    config is checked as a user's is (``check_config``): what rag-compare adds to it holds no credential either."""
    check_config(config)
    body = {
        "format": DIRECTORY_FORMAT,
        "config": config,
        "buckets": len(parts),
        "bucket_rule": BUCKET_RULE,
        "parts": [part.to_dict() for part in parts],
    }
    fingerprint = json_digest(body)
    (folder / MANIFEST).write_bytes(_canonical({**body, "fingerprint": fingerprint}))
    return fingerprint


def read_run_directory(path: Path) -> RunDirectory:
    """The run directory at ``path``, its manifest checked against its fingerprint and its files against
    the manifest (missing or extra files are refused); the parts' bytes are not read here."""
    manifest_path = path / MANIFEST
    if not manifest_path.is_file():
        raise RunFileError(
            f"{path}: is a folder without {MANIFEST}, not a run directory. Give the path of a run file or "
            "of a folder written by `freeze_run(..., output='DIR/')`."
        )
    data = manifest_path.read_bytes()
    manifest = _parsed_manifest(manifest_path, data)
    if manifest.get("format") != DIRECTORY_FORMAT:
        raise RunFileError(
            f"{manifest_path}: is run directory format {manifest.get('format')!r}; this rag-compare reads "
            f"{DIRECTORY_FORMAT}. Freeze the run again with this version."
        )
    fingerprint = manifest.pop("fingerprint", None)
    if data != _canonical({**manifest, "fingerprint": fingerprint}) or fingerprint != json_digest(manifest):
        raise RunIntegrityError(
            f"{manifest_path}: does not match the run's fingerprint {str(fingerprint)[:12]}: the manifest was "
            "changed after the run was frozen. Restore the directory from where it was kept, or freeze the run "
            "again under a new name."
        )
    parts = _parts(manifest_path, manifest)
    _check_listing(path, parts)
    return RunDirectory(path, manifest["config"], len(parts), parts, fingerprint)


def iter_buckets(run_dir: str | Path | RunDirectory) -> Iterator[tuple[int, pl.DataFrame]]:
    """Each bucket of a run directory and its records, one part in memory at a time, each part checked
    against its digest and row count before it is given (``RunIntegrityError`` naming the part if not)."""
    directory = run_dir if isinstance(run_dir, RunDirectory) else read_run_directory(Path(run_dir))
    for bucket, part in enumerate(directory.parts):
        path = directory.path / part.file
        data = _part_bytes(path)
        if bytes_digest(data) != part.sha256:
            raise _changed_part(path, "its bytes do not match the SHA-256 the manifest lists")
        try:
            refuse_deep_columns(pl.read_parquet_schema(io.BytesIO(data)), str(path))
            frame = pl.read_parquet(io.BytesIO(data))
        except (pl.exceptions.PolarsError, OSError, ValueError):
            raise _changed_part(path, "it cannot be read as Parquet") from None
        if frame.height != part.rows:
            raise _changed_part(path, f"it holds {frame.height} rows where the manifest lists {part.rows}")
        yield bucket, frame


def verify_parts(directory: RunDirectory) -> None:
    """Check every part's digest, reading each file a chunk at a time."""
    for part in directory.parts:
        path = directory.path / part.file
        if _file_digest(path) != part.sha256:
            raise _changed_part(path, "its bytes do not match the SHA-256 the manifest lists")


def _parsed_manifest(manifest_path: Path, data: bytes) -> dict[str, Any]:
    try:
        manifest = load_json(data.decode(), str(manifest_path))
    except (UnicodeDecodeError, json.JSONDecodeError):
        manifest = None
    if not isinstance(manifest, dict):
        raise RunIntegrityError(
            f"{manifest_path}: is not a readable manifest (changed, cut short, or not JSON). Restore the "
            "directory from where it was kept, or freeze the run again."
        )
    return manifest


def _parts(manifest_path: Path, manifest: Mapping[str, Any]) -> tuple[Part, ...]:
    """The manifest's parts, refusing a manifest whose parts are not one per bucket in order."""
    try:
        parts = tuple(Part(str(item["file"]), int(item["rows"]), str(item["sha256"])) for item in manifest["parts"])
        buckets = int(manifest["buckets"])
        config = manifest["config"]
    except (KeyError, TypeError, ValueError):
        parts, buckets, config = (), -1, None
    if (
        not isinstance(config, dict)
        or manifest.get("bucket_rule") != BUCKET_RULE
        or buckets != len(parts)
        or [part.file for part in parts] != [part_name(bucket) for bucket in range(buckets)]
    ):
        raise RunFileError(
            f"{manifest_path}: does not describe a run directory (a config, the bucket rule {BUCKET_RULE} and "
            "one part per bucket). Freeze the run again."
        )
    return parts


def _check_listing(path: Path, parts: tuple[Part, ...]) -> None:
    listed = {part.file for part in parts}
    present = {entry.name for entry in path.iterdir()} - {MANIFEST}
    missing = sorted(listed - present)
    if missing:
        raise RunIntegrityError(
            f"{path / missing[0]}: is missing from the run directory ({counted(len(missing), 'part')} missing: "
            f"{', '.join(missing[:5])}). Restore the directory whole from where it was kept, or freeze the "
            "run again."
        )
    extra = sorted(present - listed)
    if extra:
        raise RunIntegrityError(
            f"{path / extra[0]}: is in the run directory but not in its manifest ({len(extra)} unlisted: "
            f"{', '.join(extra[:5])}). A run directory holds only its manifest and parts: move the file "
            "out of the folder, or restore the directory from where it was kept."
        )


def _part_schema(path: Path) -> dict[str, pl.DataType]:
    """The schema of the part at ``path``, refused when a column nests too deep to read (see ``tables``)."""
    try:
        schema = dict(pl.read_parquet_schema(path))
    except (pl.exceptions.PolarsError, OSError, ValueError):
        raise _changed_part(path, "it cannot be read as Parquet") from None
    refuse_deep_columns(schema, str(path))
    return schema


def _part_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        raise _changed_part(path, "it cannot be read") from None


def _file_digest(path: Path) -> str:
    """The SHA-256 of the file at ``path``, hashed from a read-only map of it (pages read as hashed, never
    copied whole into memory)."""
    try:
        with path.open("rb") as stream:
            if os.fstat(stream.fileno()).st_size == 0:
                return bytes_digest(b"")
            with mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                return bytes_digest(memoryview(mapped))
    except OSError:
        raise _changed_part(path, "it cannot be read") from None


def _changed_part(path: Path, why: str) -> RunIntegrityError:
    return RunIntegrityError(
        f"{path}: this part of the run directory was changed or damaged after it was frozen ({why}). "
        "Restore the directory whole from where it was kept, or freeze the run again under a new name."
    )


def _canonical(value: Any) -> bytes:
    """The canonical JSON bytes of ``value``: sorted keys, no spaces, ASCII (what ``json_digest`` hashes)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
