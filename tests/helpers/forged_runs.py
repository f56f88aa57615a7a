"""A comparison of the hand-made runs whose candidate texts an attacker wrote: for the tests that show
untrusted text reaches a report escaped."""

from __future__ import annotations

import dataclasses

import polars as pl

from rag_compare import Comparison, compare
from rag_compare.io.runs import load_run
from tests.helpers.data import HANDMADE_RUNS, ROOT

FORGED_CASE = "sabbatical@2026-01"
"""The regressed case whose id and candidate answer ``forged_comparison`` replaces."""


def forged_comparison(case_id: str, answer: pl.Expr) -> Comparison:
    """The examples' comparison with the candidate's record of ``FORGED_CASE`` named ``case_id`` (in the
    baseline too) and every candidate answer replaced by ``answer`` (an expression of the records as they were)."""
    renamed = pl.when(pl.col("case_id") == FORGED_CASE).then(pl.lit(case_id)).otherwise("case_id").alias("case_id")
    runs = [load_run(HANDMADE_RUNS / f"{side}.arrow") for side in ("baseline", "candidate")]
    baseline = dataclasses.replace(runs[0], records=runs[0].records.with_columns(renamed))
    candidate = dataclasses.replace(runs[1], records=runs[1].records.with_columns(renamed, answer.alias("answer")))
    return compare(baseline, candidate, passages=ROOT / "corpora" / "handbook_passages.csv")
