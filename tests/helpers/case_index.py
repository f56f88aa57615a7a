"""Case indexes made by hand: a ``CaseIndex`` over rows written in a test, without runs to compare."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from rag_compare.compute.case_query import FLAKY, SEARCH_COLUMNS, CaseIndex, delta_column
from rag_compare.compute.case_status import CASE_STATUSES, STAGE_TYPE

CASE_COLUMNS = ("case_id", "status", "stage", "category", "answerability")


def index_of(
    rows: Sequence[Mapping[str, Any]], *, signals: Sequence[str] = ("recall", "grounded"), tolerance: float = 1e-9
) -> CaseIndex:
    """An index of ``rows``, each a case: ``case_id`` and ``status`` (default ``unchanged``), ``stage``, ``category``,
    ``answerability``, the texts of ``SEARCH_COLUMNS``, ``flaky``, and per signal of ``signals`` its delta
    under the signal's name (each null when not given), in any order (the index puts them in ``case_id`` order)."""
    columns: dict[str, pl.Series] = {
        "case_id": pl.Series([row["case_id"] for row in rows], dtype=pl.String),
        "status": pl.Series([row.get("status", "unchanged") for row in rows], dtype=pl.Enum(CASE_STATUSES)),
        "stage": pl.Series([row.get("stage") for row in rows], dtype=STAGE_TYPE),
    }
    for name in ("category", "answerability", *SEARCH_COLUMNS):
        columns[name] = pl.Series([row.get(name) for row in rows], dtype=pl.String)
    for signal in signals:
        columns[delta_column(signal)] = pl.Series([row.get(signal) for row in rows], dtype=pl.Float64)
    columns[FLAKY] = pl.Series([bool(row.get(FLAKY, False)) for row in rows], dtype=pl.Boolean)
    return CaseIndex(pl.DataFrame(columns), signals=signals, tolerance=tolerance, case_columns=CASE_COLUMNS)
