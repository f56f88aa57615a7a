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
the directory that the manifest does not list is refused too, and so is a manifest whose fingerprint was
made again to match but that this module would not write (a key missing or unknown, a type, a row count),
or whose parts do not hold what it says (their rows, one schema, each case once and in its bucket's part).
Directories are written in a temporary folder beside the output and renamed into place once whole; an
existing output is never replaced.
"""

from __future__ import annotations

import io
import json
import mmap
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare.core.digest import bytes_digest, case_hash, json_digest
from rag_compare.core.errors import RunFileError, RunIntegrityError
from rag_compare.core.input_paths import check_input
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
_RESTORE = "Restore the directory whole from where it was kept, or freeze the run again."


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
    """A checked run directory's records as an opened run reads them: its parts' one schema (see
    ``verify_parts``), its parts one at a time (each checked as it is read: see ``iter_buckets``), or all
    of them."""

    def __init__(self, directory: RunDirectory, schema: Mapping[str, pl.DataType]) -> None:
        self.directory = directory
        self.schema = schema

    @property
    def batch_count(self) -> int:
        """The parts ``batches`` gives."""
        return self.directory.buckets

    def batches(self, columns: Sequence[str] | None = None) -> Iterator[pl.DataFrame]:
        """Its records a part at a time, by bucket (``columns``: only those)."""
        for _, frame in iter_buckets(self.directory, columns):
            yield frame

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
    """The run directory at ``path``, its manifest checked against its fingerprint and the format, and its
    files against the manifest (missing or extra files, or a part that is not a regular file, are refused);
    the parts' bytes are not read here."""
    manifest_path = path / MANIFEST
    if check_input(manifest_path, "run directory manifest", RunFileError, missing=True, fix=_RESTORE) == "missing":
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
    problem = _manifest_problem(manifest)
    if problem is not None:
        raise RunFileError(f"{manifest_path}: does not describe a run directory: {problem}. Freeze the run again.")
    parts = tuple(Part(**item) for item in manifest["parts"])
    _check_listing(path, parts)
    for part in parts:
        check_input(path / part.file, "Parquet part of a run directory", RunIntegrityError, fix=_RESTORE)
    return RunDirectory(path, manifest["config"], len(parts), parts, fingerprint)


def iter_buckets(
    run_dir: str | Path | RunDirectory, columns: Sequence[str] | None = None
) -> Iterator[tuple[int, pl.DataFrame]]:
    """Each bucket of a run directory and its records (``columns``: only those), one part in memory at a
    time, each part checked before it is given (``RunIntegrityError`` naming the part if not): its bytes
    against its digest, its rows against the manifest's count, each case in the part of its bucket and
    no case (with repeats: no case's repeat) twice."""
    directory = run_dir if isinstance(run_dir, RunDirectory) else read_run_directory(Path(run_dir))
    for bucket, part in enumerate(directory.parts):
        path = directory.path / part.file
        data = _part_bytes(path)
        if bytes_digest(data) != part.sha256:
            raise _changed_part(path, "its bytes do not match the SHA-256 the manifest lists")
        frame = _part_frame(path, data, columns)
        if frame.height != part.rows:
            raise _changed_part(path, f"it holds {frame.height} rows where the manifest lists {part.rows}")
        _check_cases(path, frame, bucket, directory.buckets)
        yield bucket, frame if columns is None else frame.select(columns)


def verify_parts(directory: RunDirectory) -> dict[str, pl.DataType]:
    """Check every part: its digest (reading the file a chunk at a time), and that it is Parquet of the
    manifest's row count in the schema of every other part; that schema."""
    schema: dict[str, pl.DataType] | None = None
    for part in directory.parts:
        path = directory.path / part.file
        if _file_digest(path) != part.sha256:
            raise _changed_part(path, "its bytes do not match the SHA-256 the manifest lists")
        rows, part_schema = _footer(path)
        if rows != part.rows:
            raise _changed_part(path, f"it holds {rows} rows where the manifest lists {part.rows}")
        if schema is not None and part_schema != schema:
            raise _changed_part(path, f"its columns differ from those of {directory.parts[0].file}")
        schema = schema or part_schema
    return schema or {}


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


_MANIFEST_KEYS = ("buckets", "bucket_rule", "config", "format", "parts")
"""The manifest's keys besides its fingerprint."""
_PART_KEYS = ("file", "rows", "sha256")


def _manifest_problem(manifest: Mapping[str, Any]) -> str | None:
    """What keeps ``manifest`` (without its fingerprint) from describing a run directory: a key missing or
    unknown, a config that is not an object, another bucket rule, not one part per bucket in order, a part
    whose rows are not a whole number of 0 or more, or whose SHA-256 is not 64 hexadecimal digits; ``None``
    when it describes one."""
    missing = [key for key in _MANIFEST_KEYS if key not in manifest]
    unknown = sorted(set(manifest) - set(_MANIFEST_KEYS))
    if missing or unknown:
        return f"it lacks {', '.join(missing)}" if missing else f"it has unknown keys {', '.join(unknown)}"
    if not isinstance(manifest["config"], dict):
        return "its config is not a JSON object"
    if manifest["bucket_rule"] != BUCKET_RULE:
        return f"its bucket rule is {manifest['bucket_rule']!r}, not {BUCKET_RULE!r}"
    buckets, parts = manifest["buckets"], manifest["parts"]
    if not _whole(buckets) or buckets < 1:
        return f"its buckets are {buckets!r}, not a whole number of 1 or more"
    if not isinstance(parts, list):
        return "its parts are not a list"
    if len(parts) != buckets:
        return f"it lists {len(parts)} parts for {buckets} buckets (one part per bucket)"
    for bucket, item in enumerate(parts):
        found = _part_problem(bucket, item)
        if found is not None:
            return f"part {bucket} {found}"
    return None


def _part_problem(bucket: int, item: Any) -> str | None:
    """What is wrong with the manifest's entry ``item`` of ``bucket``'s part, if anything."""
    if not isinstance(item, dict) or sorted(item) != list(_PART_KEYS):
        return f"is not an object of exactly {', '.join(_PART_KEYS)}"
    if item["file"] != part_name(bucket):
        return f"is the file {item['file']!r}, where bucket {bucket}'s part is {part_name(bucket)!r}"
    if not _whole(item["rows"]) or item["rows"] < 0:
        return f"lists {item['rows']!r} rows, not a whole number of 0 or more"
    if not isinstance(item["sha256"], str) or not re.fullmatch(r"[0-9a-f]{64}", item["sha256"]):
        return f"lists the SHA-256 {item['sha256']!r}, not 64 hexadecimal digits"
    return None


def _whole(value: Any) -> bool:
    """Whether ``value`` is a JSON whole number (not ``true``, not ``1.0``)."""
    return isinstance(value, int) and not isinstance(value, bool)


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


def _part_frame(path: Path, data: bytes, columns: Sequence[str] | None) -> pl.DataFrame:
    """The part's records from its ``data``: ``columns`` and those its checks read, or all."""
    try:
        present = pl.read_parquet_schema(io.BytesIO(data))
        refuse_deep_columns(present, str(path))  # before the data is decoded
        if columns is not None:
            columns = list(dict.fromkeys([*columns, *(name for name in _SORT if name in present)]))
        return pl.read_parquet(io.BytesIO(data), columns=columns)
    except (pl.exceptions.PolarsError, OSError, ValueError):
        raise _changed_part(path, "it cannot be read as Parquet") from None


def _check_cases(path: Path, frame: pl.DataFrame, bucket: int, buckets: int) -> None:
    """Refuse a part holding a case of another bucket, a case without an id, or a case (or a case's
    repeat) twice."""
    case_ids = frame.get_column("case_id")
    if case_ids.null_count():
        raise _changed_part(path, "it holds a record without a case id")
    keys = [name for name in _SORT if name in frame.columns]
    twice = frame.filter(pl.struct(keys).is_duplicated()).get_column("case_id")
    if twice.len():
        raise _changed_part(path, f"it holds the case {twice[0]!r} twice")
    distinct = case_ids.unique().sort()
    elsewhere = distinct.filter(bucket_of(distinct, buckets) != bucket)
    if elsewhere.len():
        raise _changed_part(path, f"it holds the case {elsewhere[0]!r}, which belongs in another bucket's part")


def _footer(path: Path) -> tuple[int, dict[str, pl.DataType]]:
    """The row count and schema a Parquet part's footer gives; a column nesting too deep to read is refused."""
    import pyarrow.parquet as pq

    try:
        schema = dict(pl.read_parquet_schema(path))
        refuse_deep_columns(schema, str(path))  # before Arrow reads the footer, which it could not
        return pq.read_metadata(path).num_rows, schema
    except (pl.exceptions.PolarsError, OSError, ValueError):
        raise _changed_part(path, "it cannot be read as Parquet") from None


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
