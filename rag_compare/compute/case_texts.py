"""The texts of a comparison's cases, read back by case id from the runs (and the corpus) they came from.

A comparison joins only what statuses, reasons, aggregates and the JSON need (see ``compare_runs``); the
questions, acceptance notes, answers and passage lists stay in the run files. A report reads them for the
cases it lists, and only those: ``CaseTexts.of``. The JSON of every case with its texts reads them a slice
of cases at a time: ``CaseTexts.beside``. A run file is opened again and checked against the fingerprint it
was compared at, so a file changed since is refused rather than read.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from rag_compare.compute.case_status import SIDES
from rag_compare.compute.case_table import CaseTable, range_of
from rag_compare.compute.repeats import shown_value
from rag_compare.core.contract import CLAIM_TYPE, CORPUS_COLUMNS, LANGUAGE, RECORD_COLUMNS, REPEAT, STORED_CLAIMS
from rag_compare.core.errors import CompareError
from rag_compare.io.runs import OpenedRun, Run, open_run

__all__ = [
    "DETAIL_TEXTS",
    "REPORT_TEXTS",
    "SIDE_TEXTS",
    "TEXT_LABELS",
    "CaseTexts",
    "RunFile",
    "TextColumns",
    "passage_texts",
]

TEXT_LABELS = ("question", "source_version", "required_passage_ids", "acceptance_note")
"""A case's labels that only reports show."""
SIDE_TEXTS = ("retrieved_passage_ids", "context_passage_ids", "answer")
"""A side's record columns that only reports show."""
_RANGE = "range"
_TYPES: dict[str, pl.DataType] = {
    spec.name: spec.dtype for spec in (*CORPUS_COLUMNS, *RECORD_COLUMNS) if spec.name not in ("status", REPEAT)
} | {"failed_stage": pl.String(), STORED_CLAIMS: pl.List(CLAIM_TYPE)}
"""The type of each column a selection may name, for a run that lacks it (an optional one)."""


@dataclass(frozen=True)
class TextColumns:
    """Which texts are read: a case's ``labels`` and a side's record columns (``side``)."""

    labels: tuple[str, ...]
    side: tuple[str, ...]

    @property
    def read(self) -> tuple[str, ...]:
        """What is read of a side's records: its texts, and what picks the sample shown."""
        return ("case_id", REPEAT, "status", *self.labels, *self.side)

    def __or__(self, other: TextColumns) -> TextColumns:
        """The texts of both, each once, in order."""
        return TextColumns(
            tuple(dict.fromkeys((*self.labels, *other.labels))), tuple(dict.fromkeys((*self.side, *other.side)))
        )


def passage_texts(passages: pl.DataFrame | None, texts: pl.DataFrame, named: Sequence[str]) -> dict[str, str]:
    """The text of each passage the lists of ``named`` columns of ``texts`` name, by id, of those ``passages``
    (``passage_id``, ``text``) hold; none without ``passages``."""
    if passages is None:
        return {}
    ids = texts.select(pl.concat_list(named).explode().drop_nulls().unique().alias("passage_id"))
    return dict(passages.join(ids, on="passage_id", how="semi").select("passage_id", "text").iter_rows())


REPORT_TEXTS = TextColumns(TEXT_LABELS, SIDE_TEXTS)
"""What reports and the JSON of ``with_texts`` show (``TEXT_LABELS``, ``SIDE_TEXTS``)."""
DETAIL_TEXTS = TextColumns(
    (*TEXT_LABELS, LANGUAGE),
    (
        *SIDE_TEXTS,
        "retrieved_scores",
        "context",
        "failed_stage",
        "latency_ms",
        "prompt_tokens",
        "completion_tokens",
    ),
)
"""What one case's details show (``case_details``): the report's texts, the case's language, and per side its
passages' scores, the context sent, the stage a failure happened at, the latency and the tokens."""


@dataclass(frozen=True)
class RunFile:
    """A run file as compared: its path and the fingerprint it had."""

    path: Path
    fingerprint: str

    def opened(self) -> OpenedRun:
        """The run file opened again, refused when it has changed since it was compared."""
        opened = open_run(self.path)
        if opened.fingerprint != self.fingerprint:
            raise CompareError(
                f"{self.path}: has changed since it was compared (fingerprint {self.fingerprint[:12]}, now "
                f"{opened.fingerprint[:12]}): its texts are not the compared run's. Compare the runs again."
            )
        return opened

    def rows(self, case_ids: pl.Series, columns: Sequence[str]) -> pl.DataFrame:
        opened = self.opened()
        return opened.rows(case_ids, [name for name in columns if name in opened.columns])


@dataclass(frozen=True)
class CaseTexts:
    """Where a comparison's texts are: each side's run (in memory, or its file), and the corpus' labels
    when it judged both runs."""

    sides: tuple[Run | RunFile, Run | RunFile]
    labels: pl.DataFrame | None

    def of(self, case_ids: pl.Series, columns: TextColumns = REPORT_TEXTS) -> pl.DataFrame:
        """One row per id of ``case_ids``, in that order: ``case_id``, the labels of ``columns`` (the
        corpus' where it has the case, else the candidate's, else the baseline's), and per side
        (``baseline_``/``candidate_``) its record columns of ``columns`` of the sample the comparison shows
        (with repeats, the first that succeeded), null where the side has no record or the run no such
        column."""
        ids = case_ids.cast(pl.String)
        side_rows = [_side_rows(source, ids, columns) for source in self.sides]
        return _joined(ids, self.labels, side_rows, columns)

    def beside(
        self, table: CaseTable, rows: int, columns: TextColumns = REPORT_TEXTS
    ) -> Generator[pl.DataFrame, None, None]:
        """The cases of ``table`` ``rows`` at a time, in ``case_id`` order, each slice with the columns of
        ``of`` beside it. Each run is read once, its texts put by slice in a folder of the system's
        temporary one (``$TMPDIR``) and read back a slice at a time, so one slice's texts are held."""
        bounds = table.slice_bounds(rows)
        labels = self.labels
        if labels is not None:
            labels = labels.with_columns(range_of(labels.get_column("case_id"), bounds))
        with tempfile.TemporaryDirectory(prefix="rag-compare-texts-") as folder:
            sides = [
                _rows_by_range(source, bounds, Path(folder) / side, columns)
                for side, source in zip(SIDES, self.sides, strict=True)
            ]
            for index, cases in enumerate(table.slices(rows)):
                in_range = None if labels is None else labels.filter(pl.col(_RANGE) == index).drop(_RANGE)
                texts = _joined(cases.get_column("case_id"), in_range, [side(index) for side in sides], columns)
                yield pl.concat([cases, texts.drop("case_id")], how="horizontal")


def _joined(
    case_ids: pl.Series, labels: pl.DataFrame | None, side_rows: Sequence[pl.DataFrame], columns: TextColumns
) -> pl.DataFrame:
    """The rows of ``CaseTexts.of`` for ``case_ids``, from the corpus' ``labels`` and each side's records
    among them (``side_rows``)."""
    ids = case_ids.cast(pl.String).to_frame("case_id")
    joined = ids
    held = [] if labels is None else [name for name in columns.labels if name in labels.columns]
    if labels is not None:
        joined = joined.join(labels.select("case_id", *held), on="case_id", how="left", maintain_order="left")
    for side, rows in zip(SIDES, side_rows, strict=True):
        texts = _side_texts(rows, columns)
        joined = joined.join(
            texts.rename({name: f"{side}_{name}" for name in texts.columns if name != "case_id"}),
            on="case_id",
            how="left",
            maintain_order="left",
        )
    return joined.select(
        "case_id",
        *(
            pl.coalesce(*([name] if name in held else []), f"candidate_{name}", f"baseline_{name}").alias(name)
            for name in columns.labels
        ),
        *(f"{side}_{name}" for side in SIDES for name in columns.side),
    )


def _side_rows(source: Run | RunFile, case_ids: pl.Series, columns: TextColumns) -> pl.DataFrame:
    """The side's records of ``case_ids``, in the columns ``columns`` reads, in the run's order."""
    if isinstance(source, RunFile):
        return source.rows(case_ids, columns.read)
    records = source.records
    rows = records.filter(pl.col("case_id").is_in(case_ids.implode()))
    return rows.select(name for name in columns.read if name in records.columns)


def _rows_by_range(
    source: Run | RunFile, bounds: pl.Series, folder: Path, columns: TextColumns
) -> Callable[[int], pl.DataFrame]:
    """The side's records in the columns ``columns`` reads by range of ids (``range_of`` of ``bounds``), in
    the run's order: a run in memory is filtered a range at a time; a run file is read once, a record batch
    at a time, into one Arrow IPC piece per batch and range in ``folder``."""
    if isinstance(source, Run):
        records = source.records.select(name for name in columns.read if name in source.records.columns)
        ranges = range_of(records.get_column("case_id"), bounds)
        return lambda index: records.filter(ranges == index)
    opened = source.opened()
    names = [name for name in columns.read if name in opened.columns]
    template = pl.DataFrame(schema={name: opened.frozen.schema[name] for name in names})
    for number, batch in enumerate(opened.batches(names)):
        ranged = batch.with_columns(range_of(batch.get_column("case_id"), bounds))
        for (index,), piece in ranged.partition_by(_RANGE, as_dict=True, include_key=False).items():
            (folder / f"{index:06d}").mkdir(parents=True, exist_ok=True)
            piece.write_ipc(folder / f"{index:06d}" / f"{number:06d}.arrow", compression="lz4")

    def read(index: int) -> pl.DataFrame:
        pieces = sorted((folder / f"{index:06d}").glob("*.arrow"))
        return pl.concat([template, *(pl.read_ipc(piece) for piece in pieces)])

    return read


def _side_texts(rows: pl.DataFrame, columns: TextColumns) -> pl.DataFrame:
    """``case_id`` and the labels and record columns of ``columns`` of a side's records ``rows``, one row a
    case; a column the run lacks is null."""
    texts = [*columns.labels, *columns.side]
    rows = rows.with_columns(pl.lit(None, _TYPES[name]).alias(name) for name in texts if name not in rows.columns)
    if REPEAT not in rows.columns:
        return rows.select("case_id", *texts)
    ordered = rows.sort(REPEAT, maintain_order=True)
    return ordered.group_by("case_id", maintain_order=True).agg(shown_value(name) for name in texts)
