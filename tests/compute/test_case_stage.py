"""Each case's stage and each reason's, on frames written by hand: where in the pipeline a case changed."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from rag_compare.compute.case_status import case_stage, case_status, with_reasons
from rag_compare.core.signals import SIGNALS_BY_NAME

SIGNALS = tuple(SIGNALS_BY_NAME[name] for name in ("recall", "mrr", "context_coverage", "grounded"))
STEADY = {"recall": 1.0, "mrr": 1.0, "context_coverage": 1.0, "grounded": 1.0}


def case(
    candidate: dict[str, float],
    *,
    baseline: dict[str, float] | None = None,
    status: str | None = "ok",
    preferred: str | None = None,
) -> dict[str, Any]:
    """One case whose sides have ``STEADY`` values, with ``baseline`` and ``candidate`` over them."""
    row: dict[str, Any] = {"baseline_status": "ok", "candidate_status": status, "preferred": preferred}
    for side, moved in (("baseline", baseline or {}), ("candidate", candidate)):
        row |= {f"{side}_error": None, f"{side}_judge_status": None, f"{side}_judge_error": None}
        row |= {f"{side}_{name}": value for name, value in (STEADY | moved).items()}
    return row


def staged(rows: list[dict[str, Any]], *, preferred: bool = False) -> pl.DataFrame:
    frame = pl.DataFrame(
        rows, schema_overrides={name: pl.String for name, value in rows[0].items() if not isinstance(value, float)}
    )
    statuses = frame.with_columns(case_status(SIGNALS, 1e-9, preferred=preferred))
    stages = statuses.with_columns(case_stage(SIGNALS, 1e-9, preferred=preferred))
    cases = with_reasons(stages, SIGNALS, 1e-9, preferred=preferred)
    strings = [pl.col(name).cast(pl.String) for name in ("status", "stage")]
    return cases.select(*strings, pl.col("reason_stages").cast(pl.List(pl.String)))


@pytest.mark.parametrize(
    ("candidate", "expected"),
    [
        ({"mrr": 0.5}, ("regressed", "retrieval_rank", ["retrieval_rank"])),
        ({"recall": 0.5, "mrr": 0.5}, ("regressed", "retrieval_coverage", ["retrieval_coverage"] * 2)),
        ({"recall": 0.5, "context_coverage": 0.5}, ("regressed", "context", ["retrieval_coverage", "context"])),
        ({"mrr": 0.5, "grounded": 0.5}, ("regressed", "answer", ["retrieval_rank", "answer"])),
        ({"context_coverage": 0.5, "grounded": 0.0}, ("regressed", "answer", ["context", "answer"])),
        ({}, ("unchanged", None, [])),
    ],
    ids=["rank-only", "coverage", "context", "answer-after-rank", "answer-after-context", "unchanged"],
)
def test_the_latest_stage_that_moved_is_the_cases(
    candidate: dict[str, float], expected: tuple[str, str | None, list[str]]
) -> None:
    assert staged([case(candidate)]).row(0) == expected


def test_a_mixed_case_takes_the_latest_stage_of_either_direction() -> None:
    rows = [
        case({"grounded": 0.5}, baseline={"recall": 0.5}),
        case({"context_coverage": 0.5}, baseline={"mrr": 0.5}),
    ]
    assert staged(rows).rows() == [
        ("mixed", "answer", ["retrieval_coverage", "answer"]),
        ("mixed", "context", ["retrieval_rank", "context"]),
    ]


def test_a_failed_or_missing_side_is_a_failure() -> None:
    got = staged([case({}, status="failed"), case({}, status=None)])
    assert got.get_column("stage").to_list() == ["failure", "failure"]
    assert got.get_column("reason_stages").to_list() == [["failure"], ["failure"]]


def test_a_decided_preference_alone_counts_at_the_answer() -> None:
    got = staged([case({}, preferred="candidate"), case({"mrr": 0.5}, preferred="candidate")], preferred=True)
    assert got.rows() == [
        ("improved", "answer", ["answer"]),
        ("regressed", "retrieval_rank", ["retrieval_rank", "answer"]),
    ]
