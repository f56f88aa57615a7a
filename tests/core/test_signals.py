"""The signal registry: one name per signal, where each applies, which ones a table holds, failed judging."""

from __future__ import annotations

import polars as pl

from rag_compare.core.signals import (
    ALL_SIGNALS,
    JUDGE_VERDICTS,
    SCORE_SIGNALS,
    SIGNALS,
    SIGNALS_BY_NAME,
    applies,
    judge_failed,
    signals_in,
)


def test_each_signal_has_one_name_and_the_judge_verdicts_are_judged_signals() -> None:
    assert len(SIGNALS_BY_NAME) == len(ALL_SIGNALS)
    assert all(SIGNALS_BY_NAME[name].judged for name in JUDGE_VERDICTS)
    assert SIGNALS_BY_NAME["recall"].worst == 0.0
    assert SIGNALS_BY_NAME["abstained"].worst == 1.0


def test_a_signal_applies_by_the_case_label() -> None:
    labels = pl.DataFrame({"answerability": ["answerable", "unanswerable", "conflict"]})
    applied = {
        name: labels.with_columns(applies(SIGNALS_BY_NAME[name], pl.col("answerability")).alias("applies"))
        .get_column("applies")
        .to_list()
        for name in ("recall", "abstained", "abstention_correct", "grounded")
    }
    assert applied == {
        "recall": [True, False, True],
        "abstained": [True, False, True],
        "abstention_correct": [False, True, False],
        "grounded": [True, True, True],
    }


def test_signals_in_adds_only_the_score_signals_the_columns_hold() -> None:
    assert signals_in(["recall"]) == SIGNALS
    held = signals_in(["baseline_helpfulness", "helpfulness", "candidate_query_ease"], prefix="baseline_")
    assert held == (*SIGNALS, SIGNALS_BY_NAME["helpfulness"])
    assert signals_in([f"x{signal.name}" for signal in SCORE_SIGNALS], prefix="x")[len(SIGNALS) :] == SCORE_SIGNALS


def test_judge_failed_is_false_where_a_case_was_never_scored() -> None:
    frame = pl.DataFrame({"candidate_judge_status": ["judge_failed", "ok", None]})
    assert frame.select(judge_failed("candidate")).to_series().to_list() == [True, False, False]
