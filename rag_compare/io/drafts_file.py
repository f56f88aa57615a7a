"""The drafts file: the ``Drafts`` that drafting returns, writing them as a corpus file, and admitting
the reviewed cases as gold.

A drafts file is a corpus (CSV, Parquet or JSONL) whose cases are synthetic and unreviewed until a
person reviews them and ``admit_cases`` marks them; it is never overwritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from rag_compare.core.errors import ConfigError
from rag_compare.core.listing import counted
from rag_compare.core.result import Report
from rag_compare.core.rows import count_by
from rag_compare.io.corpus import load_corpus
from rag_compare.io.outputs import Existing, check_output
from rag_compare.io.tables import table_format, write_table

__all__ = ["DraftFailure", "Drafts", "admit_cases", "check_drafts_output", "write_drafts"]


class DraftFailure(NamedTuple):
    """A passage whose drafting request failed for good: it yields no rows."""

    passage_id: str
    error: str


@dataclass(frozen=True)
class Drafts(Report):
    """Drafted cases: ``frame`` is a valid corpus (every row synthetic and unreviewed) with the
    metadata columns ``drafted_from``, ``draft_group`` and ``drafted_by``; ``failures`` the passages
    whose request failed. ``requested`` passages were asked for, ``available`` were eligible (of
    ``source_version`` when given) and ``passages`` were sent; ``dropped`` texts were left out (blank,
    or repeating another text of the same passage)."""

    frame: pl.DataFrame = field(repr=False)
    failures: tuple[DraftFailure, ...]
    requested: int
    available: int
    passages: int
    model: str
    endpoint: str
    source_version: str | None
    seed: int
    wordings: int
    dropped: int = 0
    cached: int = 0
    sent: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __repr__(self) -> str:
        failed = f", {len(self.failures)} failed" if self.failures else ""
        return (
            f"<Drafts {counted(self.frame.height, 'case')} from {self.drafted} of {counted(self.passages, 'passage')}"
            f"{failed}, by model {self.model}>"
        )

    @property
    def drafted(self) -> int:
        """Passages that gave cases."""
        return self.passages - len(self.failures)

    def to_dict(self) -> dict[str, Any]:
        return {
            "cases": self.frame.height,
            "counts": {
                "answerability": count_by(self.frame, "answerability"),
                "category": count_by(self.frame, "category"),
            },
            "passages": {
                "requested": self.requested,
                "available": self.available,
                "sent": self.passages,
                "drafted": self.drafted,
                "failed": len(self.failures),
            },
            "model": self.model,
            "endpoint": self.endpoint,
            "source_version": self.source_version,
            "seed": self.seed,
            "wordings": self.wordings,
            "dropped": self.dropped,
            "failures": [failure._asdict() for failure in self.failures],
            "usage": {
                "requests": self.sent,
                "cached": self.cached,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
            },
        }


def check_drafts_output(output: str | Path) -> Path:
    """``output`` as a ``Path``, refused before any request is paid for where the drafts file cannot be
    written (``outputs.check_output``: it exists...) or when it names no table format."""
    path = check_output(output, "drafts file")
    table_format(path, "drafts")
    return path


def write_drafts(drafts: Drafts, output: str | Path) -> None:
    """Write the drafted cases to ``output`` (CSV, Parquet or JSONL by suffix), atomically; an existing
    file is refused (drafts are never overwritten)."""
    write_table(drafts.frame, check_drafts_output(output), replace=False)


def admit_cases(drafts_path: Path, ids: Sequence[str], *, output: str | Path | None = None) -> pl.DataFrame:
    """Mark the cases ``ids`` of the corpus file ``drafts_path`` as reviewed (gold), all at once.

    Writes to ``output`` (refused if it exists), else back to ``drafts_path`` atomically, in the
    format of the file written. An id already reviewed stays so. Any id not in the file raises
    ``ConfigError`` naming every one, and nothing is written. Returns the frame written.
    """
    wanted = list(dict.fromkeys(case_id.strip() for case_id in ids if case_id.strip()))
    if not wanted:
        raise ConfigError("no case id to admit: give `ids=[ID, ...]` (the case_id of each reviewed draft).")
    in_place = output is None or (Path(output).exists() and Path(output).resolve() == drafts_path.resolve())
    existing: Existing = "replaced" if in_place else "refused"
    target = check_output(drafts_path if output is None else output, "admitted corpus", existing=existing)
    table_format(target, "drafts")
    corpus = load_corpus(drafts_path)
    known = set(corpus.frame.get_column("case_id").to_list())
    unknown = [case_id for case_id in wanted if case_id not in known]
    if unknown:
        noun = "id" if len(unknown) == 1 else "ids"
        raise ConfigError(
            f"{drafts_path}: no case of this file has the {noun} {', '.join(map(repr, unknown))}. "
            "Nothing was admitted. Check the ids against the file's case_id column and run again."
        )
    frame = corpus.frame.with_columns(pl.col("reviewed") | pl.col("case_id").is_in(wanted))
    write_table(frame, target, replace=in_place)
    return frame
