"""Scores files of the hand-made runs whose claim verdicts are written in a test."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from rag_compare import Scores, load_run
from rag_compare.core.contract import CLAIM_TYPE
from rag_compare.io.scores import make_scores
from tests.helpers.data import HANDMADE_RUNS

SAME = "Same as ever."
"""The one supported claim of every case a test gives no claims of."""


def claim(
    text: str, supported: bool | None = True, *, span: tuple[int, int] | None = None, cited: str | None = None
) -> dict[str, Any]:
    """A claim verdict, its evidence at ``span`` of the context when given."""
    start, end = span or (None, None)
    return {"text": text, "supported": supported, "passage_id": None, "start": start, "end": end, "cited": cited}


def handmade_scores(
    side: str, claims: Mapping[str, Sequence[Mapping[str, Any]]] | None, name: str = "by-hand"
) -> Scores:
    """Scores of the hand-made ``side`` run: grounded 1 on every record that succeeded, and the ``claims`` given
    by case id (``[claim(SAME)]`` for the others); ``None``: no ``claims`` column at all."""
    run = load_run(HANDMADE_RUNS / f"{side}.arrow")
    records = run.records.select("case_id", "status")
    frame = records.select(
        "case_id",
        judge_status=pl.when(pl.col("status") == "ok").then(pl.lit("ok")).otherwise(pl.lit("not_judged")),
        judge_error=pl.lit(None, pl.String),
        grounded=pl.when(pl.col("status") == "ok").then(pl.lit(1.0)),
    )
    if claims is not None:
        given = [claims.get(case_id, [claim(SAME)]) for case_id in records.get_column("case_id")]
        column = pl.Series("claims", given, dtype=pl.List(CLAIM_TYPE))
        frame = frame.with_columns(pl.when(pl.col("judge_status") == "ok").then(column).alias("claims"))
    return make_scores(run, frame, {"name": name, "fingerprint": "f" * 64, "config": {}})
