"""Signals stored with a run when it is frozen: what is stored, that a comparison reads them exactly when they
are the signals its settings give (and otherwise computes them), and that the comparison is the same either
way, in every engine of this process and for a run file, a run directory and merged runs."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from rag_compare import (
    ConfigError,
    ContractError,
    LexicalJudge,
    compare,
    freeze_run,
    load_corpus,
    load_run,
    merge_repeats,
)
from rag_compare._version import __version__
from rag_compare.compute.case_signals import case_signals
from rag_compare.compute.comparison import Comparison
from rag_compare.compute.stored_signals import StoredSignals
from rag_compare.core.contract import STORED_CLAIMS, STORED_SIGNALS
from rag_compare.io.runs import Run, freeze_records
from tests.helpers.data import ROOT

COMPARE = ROOT / "tests" / "fixtures" / "compare"
CORPUS = COMPARE / "corpus.csv"
CONFIG = {"top_k": 2}
SIDES = ("baseline", "candidate")
FORGED_RECALL = 0.125
"""A recall no record of the fixture has: a comparison that shows it read the stored signals."""
FORGED_GROUNDED = 0.375
"""A grounded no record of the fixture has: a comparison that shows it read the stored verdicts."""


class ForgedSignals(StoredSignals):
    """The shipped settings, with every stored recall ``FORGED_RECALL``: what a comparison shows when it
    reads the stored signals instead of computing them."""

    def columns(self, records: pl.DataFrame, top_k: int | None) -> list[pl.Series]:
        signals, claims = super().columns(records, top_k)
        stored = signals.struct.unnest()
        forged = stored.with_columns(recall=pl.when(pl.col("recall").is_not_null()).then(FORGED_RECALL))
        return [forged.to_struct(STORED_SIGNALS), claims]


class ForgedVerdicts(StoredSignals):
    """The shipped settings, with every stored ``grounded`` ``FORGED_GROUNDED``: what a comparison shows when it
    reads the stored verdicts instead of asking the judge."""

    def columns(self, records: pl.DataFrame, top_k: int | None) -> list[pl.Series]:
        signals, claims = super().columns(records, top_k)
        stored = signals.struct.unnest()
        forged = stored.with_columns(grounded=pl.when(pl.col("grounded").is_not_null()).then(FORGED_GROUNDED))
        return [forged.to_struct(STORED_SIGNALS), claims]


def frozen(signals: StoredSignals | None, **options: Any) -> list[Run]:
    environ = {"SOURCE_DATE_EPOCH": "1795000000"}
    return [
        freeze_records(
            COMPARE / f"{side}.jsonl", CORPUS, CONFIG | {"name": side}, signals=signals, environ=environ, **options
        )
        for side in SIDES
    ]


def assert_same_cases(expected: Comparison, actual: Comparison) -> None:
    """Both comparisons found the same of every case, and the same aggregates (the runs themselves differ)."""
    assert actual.counts == expected.counts
    assert actual.warnings == expected.warnings
    assert_frame_equal(actual.cases, expected.cases)
    assert_frame_equal(actual.aggregates, expected.aggregates)
    assert_frame_equal(actual.breakdowns, expected.breakdowns)


def recalls(comparison: Comparison) -> set[float]:
    return set(comparison.cases.get_column("baseline_recall").drop_nulls().to_list())


@pytest.fixture(scope="module")
def stored() -> list[Run]:
    return [freeze_run(COMPARE / f"{side}.jsonl", CORPUS, CONFIG | {"name": side}) for side in SIDES]


@pytest.fixture(scope="module")
def computed() -> list[Run]:
    return frozen(None)


@pytest.fixture(scope="module")
def forged() -> list[Run]:
    return frozen(ForgedSignals())


def test_a_frozen_run_stores_each_records_signals_and_what_decided_them(stored: list[Run]) -> None:
    run = stored[0]
    assert run.config[STORED_SIGNALS] == {
        "judge": LexicalJudge().fingerprint,
        "k": 2,
        "rag_compare_version": __version__,
    }
    records = run.records.drop(STORED_SIGNALS)
    judge = LexicalJudge()
    expected = case_signals(records, judge, k=2).drop("case_id").with_columns(language=judge.languages_of(records))
    assert_frame_equal(run.records.get_column(STORED_SIGNALS).struct.unnest(), expected)
    assert expected.get_column("recall").drop_nulls().len() > 5


def test_the_comparison_is_the_same_with_stored_signals_as_with_computed_ones(
    stored: list[Run], computed: list[Run]
) -> None:
    for options in ({}, {"corpus": CORPUS}, {"engine": "streaming", "buckets": 3}):
        assert_same_cases(compare(*computed, **options), compare(*stored, **options))


def test_stored_signals_are_read_when_the_settings_are_the_ones_they_were_stored_under(forged: list[Run]) -> None:
    assert recalls(compare(*forged)) == {FORGED_RECALL}
    assert recalls(compare(*forged, k=2, corpus=CORPUS, engine="streaming")) == {FORGED_RECALL}


@pytest.mark.parametrize(
    "options",
    [
        {"k": 1},
        {"judge": LexicalJudge(min_overlap=0.5)},
        {"passages": COMPARE / "passages.csv"},
    ],
    ids=["another k", "another judge", "passages"],
)
def test_other_settings_compute_the_signals(forged: list[Run], computed: list[Run], options: Mapping[str, Any]) -> None:
    comparison = compare(*forged, **options)
    assert FORGED_RECALL not in recalls(comparison)
    assert_same_cases(compare(*computed, **options), comparison)


@pytest.mark.parametrize(
    "options",
    [{"k": 1}, {"passages": COMPARE / "passages.csv"}, {"passages": COMPARE / "passages.csv", "engine": "streaming"}],
    ids=["another k", "passages", "passages, streaming"],
)
def test_with_passages_or_another_k_the_stored_verdicts_are_read_and_the_rest_computed(
    computed: list[Run], options: Mapping[str, Any]
) -> None:
    comparison = compare(*frozen(ForgedVerdicts()), **options)
    grounded = comparison.cases.get_column("baseline_grounded").drop_nulls()
    assert set(grounded.to_list()) == {FORGED_GROUNDED}
    expected = compare(*computed, **options).cases
    for computed_signal in ("baseline_recall", "candidate_context_coverage", "candidate_answer_completeness"):
        assert_frame_equal(comparison.cases.select(computed_signal), expected.select(computed_signal))
    assert (
        compare(*frozen(ForgedVerdicts()), judge=LexicalJudge(min_overlap=0.5), **options)
        .cases.get_column("baseline_grounded")
        .drop_nulls()
        .n_unique()
        > 1
    )  # another judge asks the judge


def test_a_corpus_that_relabels_a_case_computes_the_signals(forged: list[Run], computed: list[Run]) -> None:
    corpus = load_corpus(CORPUS).frame
    relabelled = corpus.with_columns(
        required_passage_ids=pl.when(pl.col("case_id") == "c-improved@v1")
        .then(pl.lit(["p1"]))
        .otherwise(pl.col("required_passage_ids"))
    )
    comparison = compare(*forged, corpus=relabelled)
    assert FORGED_RECALL not in recalls(comparison)
    assert_same_cases(compare(*computed, corpus=relabelled), comparison)
    with_category = corpus.with_columns(category=pl.lit("renamed"))  # no signal depends on the category
    assert recalls(compare(*forged, corpus=with_category)) == {FORGED_RECALL}


def test_a_run_of_another_library_version_computes_the_signals(tmp_path: Path, forged: list[Run]) -> None:
    settings = dict(forged[0].config[STORED_SIGNALS]) | {"rag_compare_version": "0.0.1"}
    older = Run(
        records=forged[0].records,
        config=dict(forged[0].config) | {STORED_SIGNALS: settings},
        fingerprint=forged[0].fingerprint,
        path=None,
    )
    assert FORGED_RECALL not in recalls(compare(older, forged[1]))


def test_a_run_directory_stores_the_signals_of_each_part(tmp_path: Path, stored: list[Run]) -> None:
    directories = [
        freeze_run(COMPARE / f"{side}.jsonl", CORPUS, CONFIG | {"name": side}, output=tmp_path / f"{side}/", buckets=3)
        for side in SIDES
    ]
    assert STORED_SIGNALS in directories[0].records.columns
    for engine in ("memory", "streaming"):
        assert_same_cases(compare(*stored), compare(tmp_path / "baseline", tmp_path / "candidate", engine=engine))


def test_merged_runs_store_the_signals_again(tmp_path: Path, stored: list[Run], computed: list[Run]) -> None:
    merged = [
        merge_repeats([runs[0], runs[1]], tmp_path / f"{name}.arrow", name=name)
        for name, runs in (("stored", stored), ("computed", computed))
    ]
    assert load_run(tmp_path / "computed.arrow").config[STORED_SIGNALS] == merged[0].config[STORED_SIGNALS]
    for run in merged:
        kept = run.records.get_column(STORED_SIGNALS).struct.unnest()
        assert_frame_equal(
            kept, StoredSignals().signals(run.records.drop(STORED_SIGNALS, STORED_CLAIMS), 2).struct.unnest()
        )


def test_a_record_column_or_config_key_of_the_stored_signals_is_refused() -> None:
    records = pl.read_ndjson(COMPARE / "baseline.jsonl").with_columns(stored_signals=pl.lit("mine"))
    with pytest.raises(ContractError, match=STORED_SIGNALS):
        freeze_run(records, CORPUS)
    with pytest.raises(ConfigError, match=STORED_SIGNALS):
        freeze_run(COMPARE / "baseline.jsonl", CORPUS, {STORED_SIGNALS: {}})


def test_stored_signals_of_other_names_or_types_are_not_read(forged: list[Run]) -> None:
    records = forged[0].records
    kept = records.get_column(STORED_SIGNALS).struct.unnest().drop("ndcg")
    fewer = records.with_columns(kept.to_struct(STORED_SIGNALS))
    run = Run(records=fewer, config=forged[0].config, fingerprint=forged[0].fingerprint)
    assert FORGED_RECALL not in recalls(compare(run, forged[1]))


def test_the_offline_judge_s_claims_are_stored_and_read_back_as_they_would_be_computed() -> None:
    stored = frozen(StoredSignals())
    for run in stored:
        claims = run.records.get_column(STORED_CLAIMS)
        computed = LexicalJudge().claims(run.records.drop(STORED_SIGNALS, STORED_CLAIMS))
        ok = run.records.get_column("status") == "ok"
        assert claims.filter(ok).to_list() == computed.filter(ok).to_list()
        assert claims.filter(~ok).null_count() == (~ok).sum()  # a failed record has no claims
    computed_runs = [
        Run(run.records.drop(STORED_SIGNALS, STORED_CLAIMS), run.config, run.fingerprint) for run in stored
    ]
    read, made = compare(*stored, corpus=CORPUS), compare(*computed_runs, corpus=CORPUS)
    assert [side.kind for side in read.claim_changes.sides] == ["stored", "stored"]
    assert [side.kind for side in made.claim_changes.sides] == ["judge", "judge"]
    ids = read.cases.get_column("case_id")
    assert read.claims(ids).to_dicts() == made.claims(ids).to_dicts()
    assert read.claim_summary == made.claim_summary
