"""The texts of a comparison's cases, read back by case id from the runs (and the corpus) they came from.

A comparison joins only what statuses, reasons, aggregates and the JSON need (see ``compare_runs``); the
questions, acceptance notes, answers and passage lists stay in the run files. A report reads them for the
cases it lists, and only those: ``CaseTexts.of``. A run file is opened again and checked against the
fingerprint it was compared at, so a file changed since is refused rather than read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from rag_compare.compute.case_status import SIDES
from rag_compare.compute.repeats import shown_value
from rag_compare.core.contract import REPEAT
from rag_compare.core.errors import CompareError
from rag_compare.io.runs import Run, open_run

__all__ = ["SIDE_TEXTS", "TEXT_LABELS", "CaseTexts", "RunFile"]

TEXT_LABELS = ("question", "source_version", "required_passage_ids", "acceptance_note")
"""A case's labels that only reports show."""
SIDE_TEXTS = ("retrieved_passage_ids", "context_passage_ids", "answer")
"""A side's record columns that only reports show."""


@dataclass(frozen=True)
class RunFile:
    """A run file as compared: its path and the fingerprint it had."""

    path: Path
    fingerprint: str

    def rows(self, case_ids: pl.Series, columns: list[str]) -> pl.DataFrame:
        opened = open_run(self.path)
        if opened.fingerprint != self.fingerprint:
            raise CompareError(
                f"{self.path}: has changed since it was compared (fingerprint {self.fingerprint[:12]}, now "
                f"{opened.fingerprint[:12]}): its texts are not the compared run's. Compare the runs again."
            )
        return opened.rows(case_ids, [name for name in columns if name in opened.columns])


@dataclass(frozen=True)
class CaseTexts:
    """Where a comparison's texts are: each side's run (in memory, or its file), and the corpus' labels
    when it judged both runs."""

    sides: tuple[Run | RunFile, Run | RunFile]
    labels: pl.DataFrame | None

    def of(self, case_ids: pl.Series) -> pl.DataFrame:
        """One row per id of ``case_ids``, in that order: ``case_id``, ``TEXT_LABELS`` (the corpus' where it
        has the case, else the candidate's, else the baseline's), and per side (``baseline_``/``candidate_``)
        ``SIDE_TEXTS`` of the sample the comparison shows (with repeats, the first that succeeded), null
        where the side has no record."""
        ids = pl.DataFrame({"case_id": case_ids.cast(pl.String)})
        joined = ids
        if self.labels is not None:
            joined = joined.join(self.labels.select("case_id", *TEXT_LABELS), on="case_id", how="left")
        for side, source in zip(SIDES, self.sides, strict=True):
            texts = _side_texts(source, ids.get_column("case_id"))
            joined = joined.join(
                texts.rename({name: f"{side}_{name}" for name in texts.columns if name != "case_id"}),
                on="case_id",
                how="left",
                maintain_order="left",
            )
        corpus = [[name] if self.labels is not None else [] for name in TEXT_LABELS]
        return joined.select(
            "case_id",
            *(
                pl.coalesce(*first, f"candidate_{name}", f"baseline_{name}").alias(name)
                for name, first in zip(TEXT_LABELS, corpus, strict=True)
            ),
            *(f"{side}_{name}" for side in SIDES for name in SIDE_TEXTS),
        )


def _side_texts(source: Run | RunFile, case_ids: pl.Series) -> pl.DataFrame:
    """``case_id``, ``TEXT_LABELS`` and ``SIDE_TEXTS`` of the side's cases among ``case_ids``, one row a case."""
    columns = ["case_id", REPEAT, "status", *TEXT_LABELS, *SIDE_TEXTS]
    if isinstance(source, Run):
        records = source.records
        rows = records.filter(pl.col("case_id").is_in(case_ids.implode()))
        rows = rows.select(name for name in columns if name in records.columns)
    else:
        rows = source.rows(case_ids, columns)
    texts = [*TEXT_LABELS, *SIDE_TEXTS]
    if REPEAT not in rows.columns:
        return rows.select("case_id", *texts)
    ordered = rows.sort(REPEAT, maintain_order=True)
    return ordered.group_by("case_id", maintain_order=True).agg(shown_value(name) for name in texts)
