"""The passages a comparison checks answers and contexts against: the ``passages`` given, else the knowledge
base the runs record (their config's ``knowledge_base``), with a warning that says which file was read, or,
when none was, that ``answer_completeness`` is off, why, and how to turn it on.

The runs that record a knowledge base must agree on it (name the same file, see ``recorded_paths``): both
sides are checked against one set of passages, as they are judged by one set of labels. A relative path is
looked for from the current folder, then from the run file's folder; only a regular file is read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from rag_compare.core.contract import KNOWLEDGE_BASE
from rag_compare.core.credentials import redact
from rag_compare.core.errors import RagCompareError
from rag_compare.io.passages import load_passages
from rag_compare.io.recorded_paths import recorded_file, same_file
from rag_compare.io.runs import OpenedRun, Run

__all__ = ["comparison_passages"]


def comparison_passages(
    passages: str | Path | pl.DataFrame | None, runs: Sequence[Run | OpenedRun]
) -> tuple[pl.DataFrame | None, list[str]]:
    """The passages of a comparison of ``runs`` and the warning that says where they come from: ``passages``
    when given (no warning), else the runs' recorded knowledge base (see the module)."""
    if passages is not None:
        return load_passages(passages), []
    recorded = [(run, run.config.get(KNOWLEDGE_BASE)) for run in runs if run.config.get(KNOWLEDGE_BASE) is not None]
    if not recorded:
        return None, [_off(f"neither run records a {KNOWLEDGE_BASE}")]
    paths = [(run, value) for run, value in recorded if isinstance(value, str)]
    if len(paths) < len(recorded):
        return None, [_off(f"a run's {KNOWLEDGE_BASE} is not a path")]
    first_run, first = paths[0]
    if any(not same_file(first, value, (first_run.path, run.path)) for run, value in paths[1:]):
        shown = " and ".join(f"{_shown(Path(value))} (run '{run.name}')" for run, value in paths)
        return None, [_off(f"the runs record different knowledge bases, {shown}")]
    path = recorded_file(first, first_run.path)
    whose = (
        f"the runs' {KNOWLEDGE_BASE}" if len(paths) == len(runs) else f"the {KNOWLEDGE_BASE} of run '{first_run.name}'"
    )
    if not os.path.isfile(path):
        return None, [_off(f"{whose} {_shown(path)} is not a file here")]
    try:
        frame = load_passages(path)
    except RagCompareError:  # its problems quote the file, which no one named: pass it to see them
        return None, [_off(f"{whose} {_shown(path)} is not a valid passages file (pass it as `passages` to see why)")]
    return frame, [f"passages read from {whose} {_shown(path)}; pass `passages` to use another file."]


def _off(reason: str) -> str:
    return (
        f"answer_completeness is off: no `passages` were given and {reason}. Pass `passages` (the knowledge base "
        "file) to check each answer against its required passages."
    )


def _shown(path: Path) -> str:
    """``path`` from the current folder when it is under it, else whole; credentials redacted."""
    cwd = Path.cwd()
    return redact(str(path.relative_to(cwd) if path.is_absolute() and path.is_relative_to(cwd) else path))
