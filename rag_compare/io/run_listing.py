"""Runs found by path, folder or glob pattern, and listed from their metadata alone: a run file's schema
metadata, a run directory's manifest; never a record, nor a run file's bytes (its fingerprint is checked
when its records are read).

A path is a run file, a run directory, or a folder whose run files (``*.arrow``) and run directories are
listed (not those of its subfolders). A path that does not exist but holds ``*``, ``?`` or ``[`` is a glob
pattern (``**`` crosses folders): each match is a run file, a run directory, or a folder listed so; any other
file it matches is passed over. A run named by its path must be a run; the scores, pairs and reviews files a
folder or a pattern holds are skipped (``RunListing.skipped`` names them).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from rag_compare.core.errors import RunFileError
from rag_compare.core.input_paths import check_input
from rag_compare.core.listing import truncated
from rag_compare.core.nesting import load_json
from rag_compare.io.run_directory import MANIFEST, read_run_directory
from rag_compare.io.runfile import FINGERPRINT_KEY
from rag_compare.io.runs import (
    CONFIG_KEY,
    FORMAT_KEY,
    FORMAT_VERSION,
    PAIRS_FORMAT,
    REVIEWS_FORMAT,
    SCORES_FORMAT,
    Configured,
)

__all__ = ["ListedRun", "RunListing", "Skipped", "list_runs"]

RUN_SUFFIX = ".arrow"
"""The extension of the run files a folder or a pattern is searched for."""
_GLOB_CHARACTERS = frozenset("*?[")
_OTHER_FORMATS = {SCORES_FORMAT: "scores file", PAIRS_FORMAT: "pairs file", REVIEWS_FORMAT: "reviews file"}
_RUNS = "a run file, a run directory, a folder holding runs, or a glob pattern such as `runs/*.arrow`"


@dataclass(frozen=True)
class ListedRun(Configured):
    """A run as its metadata says: its path, config and fingerprint (not checked against its bytes here), and
    from its config its ``name`` and ``created_at``."""

    path: Path
    config: Mapping[str, Any]
    fingerprint: str

    @property
    def corpus(self) -> Mapping[str, Any]:
        """What the run's config records of its corpus (``path``, ``fingerprint``, ``cases``); empty without."""
        corpus = self.config.get("corpus")
        return corpus if isinstance(corpus, Mapping) else {}


@dataclass(frozen=True)
class Skipped:
    """A file a folder or a pattern gave that is no run: its path and what it is (``scores file``...)."""

    path: Path
    kind: str


@dataclass(frozen=True)
class RunListing:
    """The runs found, in creation order (``created_at``; ties, and a time that cannot be read, by path, the
    latter last), and the rag-compare files found that are no runs."""

    runs: tuple[ListedRun, ...]
    skipped: tuple[Skipped, ...]


def list_runs(sources: str | Path | Sequence[str | Path]) -> RunListing:
    """The runs of ``sources`` (paths, folders or glob patterns, as the module says), each once, read from
    their metadata only. Raises ``RunFileError`` for a path that is no run, a pattern that matches nothing, a
    folder or pattern holding no run, or an Arrow file among them that is not a readable frozen file."""
    given = [sources] if isinstance(sources, str | Path) else list(sources)
    if not given:
        raise RunFileError(f"give at least one run: {_RUNS}.")
    runs: dict[tuple[int, int], ListedRun] = {}
    skipped: list[Skipped] = []
    for source in given:
        found = _found(source)
        if not found:
            raise RunFileError(
                f"{source}: holds no run (no run file `*{RUN_SUFFIX}` or run directory in it). Give {_RUNS}."
            )
        for path, explicit in found:
            listed = _listed(path, explicit=explicit)
            if isinstance(listed, Skipped):
                skipped.append(listed)
            else:
                found_at = os.stat(path)
                runs.setdefault((found_at.st_dev, found_at.st_ino), listed)  # a file by another path: once
    if not runs:
        shown = truncated([str(item.path) for item in skipped])
        raise RunFileError(f"{', '.join(map(str, given))}: holds no run, only files of other kinds: {shown}.")
    ordered = sorted(runs.values(), key=lambda run: (*_moment(run.created_at), str(run.path)))
    return RunListing(tuple(ordered), tuple(dict.fromkeys(skipped)))


def _found(source: str | Path) -> list[tuple[Path, bool]]:
    """The paths ``source`` gives, each with whether it was named itself (else found in a folder or by a pattern)."""
    path = Path(source)
    if not os.path.lexists(path) and _GLOB_CHARACTERS & set(str(source)):
        matches = sorted(glob.glob(str(source), recursive=True))
        if not matches:
            raise RunFileError(
                f"{source}: the pattern matches no file or folder. Check it, or give the runs' paths ({_RUNS})."
            )
        return [(entry, False) for match in matches for entry in _entries(Path(match))]
    kind = check_input(path, "run file or run directory", RunFileError, folder=True, fix=f"Give {_RUNS}.")
    if kind == "folder" and not (path / MANIFEST).exists():
        return [(entry, False) for entry in _entries(path)]
    return [(path, True)]


def _entries(path: Path) -> list[Path]:
    """What may be a run at ``path``: a run directory or a run file itself, a folder's run files and run
    directories; nothing for any other file."""
    if not path.is_dir():
        return [path] if path.is_file() and path.suffix == RUN_SUFFIX else []
    if (path / MANIFEST).exists():
        return [path]
    return [
        entry
        for entry in sorted(path.iterdir())
        if (entry.is_file() and entry.suffix == RUN_SUFFIX) or (entry / MANIFEST).is_file()
    ]


def _listed(path: Path, *, explicit: bool) -> ListedRun | Skipped:
    """The run at ``path`` from its metadata; a frozen file of another kind ``Skipped``, or refused when
    ``explicit`` (named itself)."""
    if path.is_dir():
        directory = read_run_directory(path)
        return ListedRun(path, MappingProxyType(_checked(path, directory.config)), directory.fingerprint)
    metadata = _file_metadata(path)
    fingerprint = metadata.get(FINGERPRINT_KEY)
    kind = _OTHER_FORMATS.get(metadata.get(FORMAT_KEY, ""))
    if kind is not None and not explicit:
        return Skipped(path, kind)
    if kind is not None:
        raise RunFileError(f"{path}: is a {kind}, not a run. Give {_RUNS}.")
    if fingerprint is None:
        raise RunFileError(f"{path}: is an Arrow file but not a frozen run (no fingerprint). Use `freeze_run`.")
    if metadata.get(FORMAT_KEY) != FORMAT_VERSION or CONFIG_KEY not in metadata:
        raise RunFileError(
            f"{path}: is run format {metadata.get(FORMAT_KEY)!r}; this rag-compare reads format {FORMAT_VERSION}. "
            "Freeze the run again with this version."
        )
    config = load_json(metadata[CONFIG_KEY], f"{path}: its config", line=None)
    return ListedRun(path, MappingProxyType(_checked(path, config)), fingerprint)


def _file_metadata(path: Path) -> dict[str, str]:
    """The schema metadata of the Arrow file at ``path``, read from its footer alone."""
    import pyarrow as pa

    try:
        with pa.OSFile(str(path)) as source:
            metadata = pa.ipc.open_file(source).schema.metadata or {}
    except (pa.ArrowException, OSError):
        raise RunFileError(
            f"{path}: is not a frozen run (not an Arrow file, or one cut short or changed). Give the runs without "
            f"it ({_RUNS})."
        ) from None
    return {key.decode(errors="replace"): value.decode(errors="replace") for key, value in metadata.items()}


def _checked(path: Path, config: Any) -> dict[str, Any]:
    """``config``, refused unless it is an object whose ``created_at`` and ``corpus``, where held, are what
    freezing writes."""
    if (
        not isinstance(config, dict)
        or not isinstance(config.get("created_at", ""), str)
        or not isinstance(config.get("corpus", {}), dict)
    ):
        raise RunFileError(f"{path}: holds a run config that freezing never writes. Freeze the run again.")
    return config


def _moment(created_at: str) -> tuple[bool, datetime]:
    """How ``created_at`` sorts: a time that cannot be read after every other (a time without a zone is UTC)."""
    try:
        moment = datetime.fromisoformat(created_at)
    except ValueError:
        return True, datetime.min.replace(tzinfo=UTC)
    return False, moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
