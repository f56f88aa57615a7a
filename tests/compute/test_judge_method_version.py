"""The offline judge's method version: runs whose signals an older method stored (``lexical-2``, before names
and abstentions by parts) still load and compare, their signals computed again by this method."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from rag_compare import LexicalJudge, compare, freeze_run, load_run
from rag_compare.compute import lexical_judge
from rag_compare.compute.comparison import Comparison
from rag_compare.compute.stored_signals import StoredSignals, reads_stored
from rag_compare.core.contract import STORED_SIGNALS
from rag_compare.io.runs import Run, freeze_records
from tests.helpers.data import ROOT

COMPARE = ROOT / "tests" / "fixtures" / "compare"
SIDES = ("baseline", "candidate")
FORGED_RECALL = 0.125
"""A recall no record of the fixture has: a comparison that shows it read the stored signals."""


class ForgedSignals(StoredSignals):
    """The signals as stored, each recall ``FORGED_RECALL``."""

    def column(self, records: pl.DataFrame, top_k: int | None) -> pl.Series:
        stored = super().column(records, top_k).struct.unnest()
        return stored.with_columns(recall=pl.when(pl.col("recall").is_not_null()).then(FORGED_RECALL)).to_struct(
            STORED_SIGNALS
        )


def frozen(signals: StoredSignals | None) -> list[Run]:
    environ = {"SOURCE_DATE_EPOCH": "1795000000"}
    return [
        freeze_records(
            COMPARE / f"{side}.jsonl",
            COMPARE / "corpus.csv",
            {"top_k": 2, "name": side},
            signals=signals,
            environ=environ,
        )
        for side in SIDES
    ]


def without_signals(run: Run) -> Run:
    return Run(records=run.records.drop(STORED_SIGNALS), config=run.config, fingerprint=run.fingerprint, path=None)


def assert_same_cases(expected: Comparison, actual: Comparison) -> None:
    assert actual.counts == expected.counts
    assert_frame_equal(actual.cases, expected.cases)
    assert_frame_equal(actual.aggregates, expected.aggregates)


def test_the_method_is_lexical_3() -> None:
    assert LexicalJudge().config["method"] == lexical_judge.METHOD_VERSION == "lexical-3"


def test_signals_an_older_method_stored_are_computed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lexical_judge, "METHOD_VERSION", "lexical-2")
    older = frozen(ForgedSignals())
    monkeypatch.undo()
    assert older[0].config[STORED_SIGNALS]["judge"] != LexicalJudge().fingerprint
    comparison = compare(older[0], older[1])
    assert FORGED_RECALL not in comparison.cases.get_column("baseline_recall").to_list()
    computed = frozen(None)
    assert_same_cases(compare(computed[0], computed[1]), comparison)


def test_run_files_frozen_by_an_older_method_load_and_compare_with_their_signals_computed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lexical_judge, "METHOD_VERSION", "lexical-2")
    for side in SIDES:
        freeze_run(COMPARE / f"{side}.jsonl", COMPARE / "corpus.csv", {"top_k": 2}, output=tmp_path / f"{side}.arrow")
    monkeypatch.undo()
    runs = [load_run(tmp_path / f"{side}.arrow") for side in SIDES]
    for run in runs:
        assert STORED_SIGNALS in run.records.columns
        assert not reads_stored(run, judge=LexicalJudge(), k=2, labels=None, passages=None, scores=None)
    assert_same_cases(compare(without_signals(runs[0]), without_signals(runs[1])), compare(runs[0], runs[1]))
