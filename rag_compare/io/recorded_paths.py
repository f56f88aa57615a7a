"""Paths a run config records (the knowledge base, the corpus, the retriever's passages): which keys hold
one, where a recorded path points, and whether two recorded paths name the same file.

A recorded path is kept as it was given, so a relative one is relative to wherever the run was made. It is
looked for from the current folder first, then from the folder of the run file that records it; the first
place where something is found is where it points (and where nothing is, it points to the current folder's).
"""

from __future__ import annotations

import os
from pathlib import Path

from rag_compare.core.contract import KNOWLEDGE_BASE

__all__ = ["PATH_KEY_NAMES", "is_path_key", "recorded_file", "same_file"]

PATH_KEY_NAMES = ("path", KNOWLEDGE_BASE)
"""A dotted config key holds a path when its last part is one of these: ``knowledge_base``, ``corpus.path``,
``records.path``, ``retriever.passages.path``."""


def is_path_key(key: str) -> bool:
    """Whether the dotted config ``key`` holds a path (see ``PATH_KEY_NAMES``)."""
    return key.rsplit(".", 1)[-1] in PATH_KEY_NAMES


def recorded_file(value: str, run_file: Path | None = None) -> Path:
    """Where the path ``value``, recorded in the config of the run at ``run_file`` (``None``: a run kept in
    memory), points: absolute and normalised (see the module)."""
    places = [Path.cwd()] if run_file is None else [Path.cwd(), Path(run_file).absolute().parent]
    candidates = [Path(os.path.normpath(place / value)) for place in places]
    return next((path for path in candidates if os.path.lexists(path)), candidates[0])


def same_file(first: str, second: str, run_files: tuple[Path | None, Path | None] = (None, None)) -> bool:
    """Whether the recorded paths ``first`` and ``second`` (of the runs at ``run_files``) name the same file:
    the same file on disk when both are there, else the same normalised absolute path."""
    paths = [recorded_file(value, run_file) for value, run_file in zip((first, second), run_files, strict=True)]
    if paths[0] == paths[1]:
        return True
    try:
        return os.path.samefile(*paths)
    except (OSError, ValueError):  # one is not there, or the path cannot be a file's (a NUL in it)
        return False
