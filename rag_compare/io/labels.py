"""People's labels of a run's answers, the truth judges are measured against: from a reviews file or a table.

A reviews file (``io.reviews``) gives each case and side its labels, names the two runs it is of, and says
which side people preferred through the status they gave the case (improved: the candidate; regressed: the
baseline; unchanged: a tie; any other status: no preference). A labels table (CSV, Parquet or JSONL) holds
``case_id``, optionally ``side`` (baseline or candidate) and ``repeat``, any of the label columns
(``answer_correct``, ``grounded``, ``abstention_correct``, ``retrieval_ok``: the values of ``LABELS``;
``preferred``: baseline, tie or candidate) and ``comment``, checked against ``LabelsSchema`` with every
broken rule reported at once, and refused when a cell holds a credential (the labels are written into reports).
A blank cell is a label not given, never a "no".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare.core.contract import REPEAT, ColumnSpec
from rag_compare.core.errors import AgreementError, ContractError, InputFileError
from rag_compare.io.columns import coerce_columns
from rag_compare.io.credential_scan import refuse_credentials
from rag_compare.io.reviews import Reviews, load_reviews
from rag_compare.io.runs import REVIEWS_FORMAT, frozen_format
from rag_compare.io.tables import ROW, read_source
from rag_compare.io.verdicts import LABELS

__all__ = ["ATTRIBUTES", "HUMAN_LABELS", "LABEL_COLUMNS", "HumanLabels", "load_labels"]

HUMAN_LABELS = (*LABELS, "preferred")
"""Every label people may give: those of a side's answer, and which side's answer they preferred."""
ATTRIBUTES = ("category", "answerability", "language")
"""What agreement is broken down by, read from the corpus, the runs judged or the labels table."""
LABEL_COLUMNS = (
    ColumnSpec("case_id", "id", required=True),
    ColumnSpec("side", "id"),
    ColumnSpec(REPEAT, "int"),
    *(ColumnSpec(name, "id") for name in HUMAN_LABELS),
    ColumnSpec("comment", "text"),
    *(ColumnSpec(name, "id") for name in ATTRIBUTES),
)
_PREFERRED_BY_STATUS = {"improved": "candidate", "regressed": "baseline", "unchanged": "tie"}


@dataclass(frozen=True)
class HumanLabels:
    """People's labels: ``frame`` (``case_id``, ``side`` and ``repeat`` (null where not given), each of
    ``HUMAN_LABELS``, ``comment``, and any of ``ATTRIBUTES`` the table holds), and where they come from.

    ``runs``: for a reviews file, the ``baseline`` and ``candidate`` runs it is of (``name``, ``fingerprint``,
    ``path``); None for a table, whose labels are of whatever runs they are measured with."""

    frame: pl.DataFrame = field(repr=False)
    source: str
    kind: str
    """``reviews`` or ``table``."""
    fingerprint: str | None = None
    """The human evaluator's fingerprint (a reviews file's)."""
    runs: Mapping[str, Mapping[str, Any]] | None = None

    @property
    def given(self) -> tuple[str, ...]:
        """The labels at least one row gives, in ``HUMAN_LABELS`` order."""
        counts = self.frame.select(pl.col(HUMAN_LABELS).is_not_null().any())
        return tuple(name for name in HUMAN_LABELS if counts.item(0, name))

    @property
    def sides(self) -> list[str]:
        """The sides the rows name, sorted (a table without a ``side`` column: none)."""
        return sorted(self.frame.get_column("side").drop_nulls().unique().to_list())

    def side_of(self, fingerprint: str) -> str | None:
        """The side of a reviews file whose run has ``fingerprint`` (the baseline first); None for a table, or
        for a run the reviews are not of."""
        runs = self.runs or {}
        return next((side for side, run in runs.items() if str(run["fingerprint"]) == fingerprint), None)

    def describe(self) -> dict[str, Any]:
        """What an agreement report records of these labels."""
        runs = None if self.runs is None else {side: dict(run) for side, run in self.runs.items()}
        return {"source": self.source, "kind": self.kind, "fingerprint": self.fingerprint, "runs": runs}


def load_labels(source: str | Path | Reviews | pl.DataFrame) -> HumanLabels:
    """People's labels from a reviews file (a path, or one loaded) or a labels table (a path or a frame, not
    modified). Raises ``ContractError`` naming every broken rule of a table, ``InputFileError`` when it has no
    rows or no label column."""
    if isinstance(source, Reviews):
        return _of_reviews(source)
    if not isinstance(source, pl.DataFrame) and frozen_format(source) == REVIEWS_FORMAT:
        return _of_reviews(load_reviews(source))
    name, raw = read_source(source, "labels")
    if raw.is_empty():
        raise InputFileError(f"{name}: the labels table has no rows. Give one row per labelled case.")
    if not set(HUMAN_LABELS) & set(raw.columns):
        raise InputFileError(
            f"{name}: the labels table has no label column; give any of {', '.join(HUMAN_LABELS)} beside case_id."
        )
    frame, problems = coerce_columns(raw, LABEL_COLUMNS)
    if any(problem.row is None for problem in problems):
        raise ContractError(name, "labels table", problems)
    from rag_compare.io.schemas import LabelsSchema, contract_problems  # Pandera loads on first validation

    problems = contract_problems(frame, LabelsSchema, ROW, already=problems)
    if problems:
        raise ContractError(name, "labels table", problems)
    kept = ["case_id", "side", REPEAT, *HUMAN_LABELS, "comment", *(name for name in ATTRIBUTES if name in raw.columns)]
    labels = frame.select(kept)
    texts = labels.select("case_id", "comment", *(name for name in ATTRIBUTES if name in labels.columns))
    refuse_credentials(texts, f"labels of {name}", "agreement report", AgreementError)  # the rest: a vocabulary
    return HumanLabels(labels, source=name, kind="table")


def _of_reviews(reviews: Reviews) -> HumanLabels:
    """The labels of a reviews file, each case's preference from the status its latest verdict gave it."""
    given = pl.when(pl.col("agree")).then(pl.col("shown_status")).otherwise(pl.col("status"))
    preferred = given.replace_strict(_PREFERRED_BY_STATUS, default=None, return_dtype=pl.String)
    latest = preferred.sort_by("reviewed_at", "verdict_id").last().over("case_id")
    frame = reviews.frame.select(
        "case_id",
        "side",
        pl.lit(None, pl.Int64).alias(REPEAT),
        *LABELS,
        latest.alias("preferred"),
        "comment",
    )
    runs = {"baseline": reviews.baseline, "candidate": reviews.candidate}
    source = "(not written)" if reviews.path is None else str(reviews.path)
    return HumanLabels(frame, source=source, kind="reviews", fingerprint=reviews.evaluator["fingerprint"], runs=runs)
