"""What a reader of another tool's file hands on: one row per unit (a trace, a row, a test case, a run)
that may be a case, in the source's own terms, before its case id is resolved against a corpus.

Each format's reader (``io/sources/<format>.py``) returns ``SourceRows``; ``io/run_import`` resolves the
case ids, maps passage texts to ids and makes the run records.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from rag_compare.core.contract import RECORD_COLUMNS, REPEAT
from rag_compare.core.errors import Problem

__all__ = ["SOURCE_SCHEMA", "Skipped", "SourceRows", "skipped_reasons", "source_frame"]

SOURCE_SCHEMA: dict[str, pl.DataType] = {
    "position": pl.Int64(),
    "source_id": pl.String(),
    "case_key": pl.String(),
    "question": pl.String(),
    "started_ns": pl.Int64(),
    **{spec.name: spec.dtype for spec in RECORD_COLUMNS if spec.name not in ("case_id", REPEAT)},
    "failed_stage": pl.String(),
    "retrieved_texts": pl.List(pl.String()),
}
"""The columns of ``SourceRows.frame``: where the unit is and what names its case, then the run-record
contract's columns (but ``case_id``, and ``repeat``: an import holds one sample per case), the stage that
failed, and the retrieved texts:

- ``position``: where the unit is in the source, for messages: its line (JSON lines), row (CSV,
  Parquet) or index from 1 (a JSON array); never null.
- ``source_id``: the producer's own id of the unit (trace id in hex, run id, test case name), if any.
- ``case_key``: the value under the case-id metadata key the reader was given; null when absent.
- ``question``: the question asked (for matching against the corpus by text).
- ``started_ns``: when the unit started (nanoseconds since the epoch), if known; orders units that
  name the same case, then ``position``.
- ``status`` (``ok``, ``failed`` or ``timeout``), ``error``, ``failed_stage`` (the stage as the source names it:
  a span kind, a run type, ``generate``): a failed unit keeps
  whatever else it recorded.
- ``retrieved_passage_ids``, ``retrieved_texts``, ``retrieved_scores``: the ranked retrieval, best
  first; null when not recorded. When both ids and texts are given they have the same length; an id
  list is null when the source has texts only (ids are then mapped from passages, never invented).
- ``context``: the text actually sent to the model; ``context_passage_ids``: the passages in it, when
  the source says so (null: derived from the retrieved texts found in ``context``).
- ``answer``, ``latency_ms``, ``prompt_tokens``, ``completion_tokens``.
"""


@dataclass(frozen=True)
class Skipped:
    """A unit of the source that holds no case (an indexing trace, a span without a query), and why."""

    position: int
    reason: str
    source_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"position": self.position, "source_id": self.source_id, "reason": self.reason}


@dataclass(frozen=True)
class SourceRows:
    """A reader's result: the units that may be cases, how many units it read, and what it could not use.

    ``unit`` names a unit in messages ("trace", "row", "result", "test case", "run"); ``problems`` are
    units that could not be read at all (``Problem.row`` is their position).
    """

    frame: pl.DataFrame
    read: int
    unit: str
    skipped: tuple[Skipped, ...] = ()
    problems: tuple[Problem, ...] = field(default=())


def source_frame(rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """``rows`` (mappings of some of ``SOURCE_SCHEMA``'s columns; a missing key is null) as a frame of
    exactly ``SOURCE_SCHEMA``."""
    return pl.DataFrame(
        [{name: row.get(name) for name in SOURCE_SCHEMA} for row in rows], schema=SOURCE_SCHEMA, orient="row"
    )


def skipped_reasons(skipped: Iterable[Skipped | Mapping[str, Any]]) -> dict[str, int]:
    """How many units were skipped for each reason, the most common first (``Skipped`` or their dicts)."""
    reasons = (unit.reason if isinstance(unit, Skipped) else str(unit["reason"]) for unit in skipped)
    return dict(Counter(reasons).most_common())
