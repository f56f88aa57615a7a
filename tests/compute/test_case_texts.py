"""The narrow join: a comparison's cases carry no texts, ``with_texts`` reads them back from the runs for
the cases asked (the corpus' labels first), and ``CaseTexts.beside`` for every case a slice at a time, the
same texts; both refuse a run file changed since; and computing the sides a slice at a time (and a run file
a record batch at a time) gives the comparison computed at once."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from rag_compare import CompareError, Comparison, compare, freeze_run, load_run
from rag_compare.compute import bucket_passes
from rag_compare.compute.case_texts import SIDE_TEXTS, TEXT_LABELS
from rag_compare.io import runfile
from rag_compare.io.runs import json_ready, open_run, write_run
from tests.helpers.data import HANDMADE_RUNS, ROOT

COMPARE = ROOT / "tests" / "fixtures" / "compare"
REPEATS = ROOT / "tests" / "fixtures" / "repeats"
PASSAGES = ROOT / "corpora" / "handbook_passages.csv"
TEXTS = [*TEXT_LABELS, *(f"{side}_{name}" for side in ("baseline", "candidate") for name in SIDE_TEXTS)]
READERS = {
    "asked": lambda comparison: comparison.with_texts(comparison.cases),
    "in slices": lambda comparison: pl.concat(comparison.texts.beside(comparison.case_table, 2)),
}
"""The two ways a comparison's texts are read: for the cases asked, and for every case a slice at a time."""
Reader = Callable[[Comparison], pl.DataFrame]


@pytest.fixture(params=list(READERS))
def read(request: pytest.FixtureRequest) -> Reader:
    return READERS[request.param]


def expected_texts(baseline: pl.DataFrame, candidate: pl.DataFrame, ids: list[str]) -> pl.DataFrame:
    """The texts as the runs' records hold them, joined by hand: labels from the candidate, else the baseline."""
    sides = [
        records.select("case_id", *TEXT_LABELS, *(pl.col(name).alias(f"{side}_{name}") for name in SIDE_TEXTS))
        for side, records in (("baseline", baseline), ("candidate", candidate))
    ]
    rows = pl.DataFrame({"case_id": ids}).join(sides[0], on="case_id", how="left", maintain_order="left")
    rows = rows.join(sides[1], on="case_id", how="left", suffix="_c", maintain_order="left")
    return rows.select(
        "case_id",
        *(pl.coalesce(f"{name}_c", name).alias(name) for name in TEXT_LABELS),
        *(name for name in TEXTS if name not in TEXT_LABELS),
    )


def test_cases_carry_no_texts_and_with_texts_reads_them_from_the_run_files() -> None:
    comparison = compare(HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow", passages=PASSAGES)
    assert not set(TEXTS) & set(comparison.cases.columns)
    asked = comparison.cases.filter(pl.col("status") != "unchanged").sort("case_id", descending=True)
    got = comparison.with_texts(asked)
    assert got.columns == [*asked.columns, *TEXTS]
    records = [load_run(HANDMADE_RUNS / f"{side}.arrow").records for side in ("baseline", "candidate")]
    ids = asked.get_column("case_id").to_list()
    assert_frame_equal(got.select("case_id", *TEXTS), expected_texts(*records, ids))
    missing = got.filter(pl.col("status") == "missing_in_candidate")
    assert missing.height == 1
    assert missing.item(0, "candidate_answer") is None


def test_runs_in_memory_give_the_texts_of_their_files(read: Reader) -> None:
    paths = [HANDMADE_RUNS / f"{side}.arrow" for side in ("baseline", "candidate")]
    on_disk = compare(*paths, passages=PASSAGES)
    in_memory = compare(*(load_run(path) for path in paths), passages=PASSAGES)
    assert_frame_equal(read(in_memory), on_disk.with_texts(on_disk.cases))


@pytest.mark.parametrize("rows", [1, 4, 35, 100])
def test_every_case_a_slice_at_a_time_has_the_texts_of_the_cases_asked(rows: int) -> None:
    comparison = compare(*(HANDMADE_RUNS / f"{side}.arrow" for side in ("baseline", "candidate")), passages=PASSAGES)
    slices = list(comparison.texts.beside(comparison.case_table, rows))
    assert [part.height for part in slices] == [len(part) for part in comparison.case_table.slices(rows)]
    assert_frame_equal(pl.concat(slices), comparison.with_texts(comparison.cases))


def test_run_directories_streamed_give_the_texts_of_the_runs_in_memory(tmp_path: Path, read: Reader) -> None:
    runs = [
        freeze_run(COMPARE / f"{side}.jsonl", COMPARE / "corpus.csv", {"name": side})
        for side in ("baseline", "candidate")
    ]
    folders = [
        freeze_run(
            COMPARE / f"{run.name}.jsonl",
            COMPARE / "corpus.csv",
            {"name": run.name},
            output=tmp_path / run.name,
            buckets=4,
        )
        for run in runs
    ]
    streamed = compare(
        *(tmp_path / run.name for run in folders), corpus=COMPARE / "corpus.csv", engine="streaming", buckets=3
    )
    in_memory = compare(*runs, corpus=COMPARE / "corpus.csv")
    assert_frame_equal(read(streamed), in_memory.with_texts(in_memory.cases))


def test_the_texts_read_a_slice_at_a_time_leave_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    comparison = compare(*(HANDMADE_RUNS / f"{side}.arrow" for side in ("baseline", "candidate")))
    slices = comparison.texts.beside(comparison.case_table, 4)
    next(slices)
    assert [path.name[:18] for path in tmp_path.iterdir()] == ["rag-compare-texts-"]
    slices.close()  # stopped early
    assert list(tmp_path.iterdir()) == []
    list(comparison.texts.beside(comparison.case_table, 4))
    assert list(tmp_path.iterdir()) == []


def test_the_corpus_labels_come_first_and_its_cases_without_records_have_them(read: Reader) -> None:
    corpus = pl.read_csv(COMPARE / "corpus.csv")
    runs = [freeze_run(COMPARE / f"{side}.jsonl", COMPARE / "corpus.csv") for side in ("baseline", "candidate")]
    comparison = compare(*runs, corpus=COMPARE / "corpus.csv")
    texts = read(comparison)
    both_missing = texts.filter(pl.col("status") == "missing_in_both").row(0, named=True)
    assert both_missing["question"] == corpus.filter(pl.col("case_id") == both_missing["case_id"]).item(0, "question")
    assert both_missing["baseline_answer"] is None
    assert both_missing["candidate_answer"] is None
    questions = dict(corpus.select("case_id", "question").iter_rows())
    assert dict(texts.select("case_id", "question").iter_rows()) == {
        case_id: questions[case_id] for case_id in texts.get_column("case_id")
    }


def test_a_run_file_changed_after_the_comparison_is_refused(tmp_path: Path, read: Reader) -> None:
    for side in ("baseline", "candidate"):
        freeze_run(COMPARE / f"{side}.jsonl", COMPARE / "corpus.csv", output=tmp_path / f"{side}.arrow")
    comparison = compare(tmp_path / "baseline.arrow", tmp_path / "candidate.arrow")
    os.unlink(tmp_path / "candidate.arrow")
    freeze_run(COMPARE / "baseline.jsonl", COMPARE / "corpus.csv", output=tmp_path / "candidate.arrow")
    with pytest.raises(CompareError, match=r"candidate\.arrow: has changed since it was compared"):
        read(comparison)


def test_with_repeats_the_texts_are_the_first_sample_that_succeeded(tmp_path: Path, read: Reader) -> None:
    records = pl.read_ndjson(REPEATS / "candidate.jsonl")
    # samples in reverse order of repeat, the first one failed: the answer shown is repeat 1's
    first = (pl.col("case_id") == "c1@v1") & (pl.col("repeat") == 0)
    failing_first = records.with_columns(
        status=pl.when(first).then(pl.lit("failed")).otherwise("status"),
        error=pl.when(first).then(pl.lit("boom")).otherwise("error"),
        answer=pl.format("{} (repeat {})", "answer", "repeat"),
    ).reverse()
    candidate = freeze_run(failing_first, REPEATS / "corpus.csv", {"name": "candidate"})
    baseline = freeze_run(REPEATS / "baseline.jsonl", REPEATS / "corpus.csv", {"name": "baseline"})
    write_run(candidate.records, json_ready(candidate.config), tmp_path / "candidate.arrow")
    for compared in (candidate, tmp_path / "candidate.arrow"):  # held, and read from its file
        comparison = compare(baseline, compared)
        answers = dict(read(comparison).select("case_id", "candidate_answer").iter_rows())
        assert answers["c1@v1"].endswith("(repeat 1)")
        assert answers["c2@v1"].endswith("(repeat 0)")


def _same(one: Comparison, other: Comparison) -> None:
    assert_frame_equal(one.cases, other.cases)
    assert_frame_equal(one.aggregates, other.aggregates)
    assert one.warnings == other.warnings
    assert one.baseline.repeats == other.baseline.repeats
    assert_frame_equal(one.with_texts(one.cases), other.with_texts(other.cases))


def test_sides_computed_a_few_records_at_a_time_give_the_same_comparison(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # drifted labels, cases the corpus lacks and unknown required passages are warned of across slices
    corpus = pl.read_csv(COMPARE / "corpus.csv")
    drifted = corpus.with_columns(
        question=pl.when(pl.col("case_id") == "c-improved@v1").then(pl.lit("Changed?")).otherwise("question")
    ).filter(pl.col("case_id") != "c-regressed@v1")
    (tmp_path / "corpus.csv").write_text(drifted.write_csv())
    runs = [
        freeze_run(COMPARE / f"{side}.jsonl", COMPARE / "corpus.csv", {"name": side})
        for side in ("baseline", "candidate")
    ]
    options = {"corpus": tmp_path / "corpus.csv", "passages": COMPARE / "passages.csv"}
    whole = compare(*runs, **options)
    assert len(whole.warnings) >= 3
    monkeypatch.setattr(bucket_passes, "SLICE_ROWS", 2)
    _same(compare(*runs, **options), whole)
    monkeypatch.setattr(runfile, "BATCH_ROWS", 3)
    paths = [write_run(run.records, json_ready(run.config), tmp_path / f"{run.name}.arrow").path for run in runs]
    assert len(list(open_run(paths[0]).batches())) == 4  # 11 records, 3 a batch
    batched = compare(*paths, **options)
    _same(dataclasses.replace(batched, baseline=whole.baseline, candidate=whole.candidate), whole)
