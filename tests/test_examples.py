"""The shipped example runs: recaptured as ``make examples`` does, they equal the shipped ones, and
``make demo``'s comparison shows every outcome a reviewer must see (see corpora/README.md)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from click.testing import Result
from polars.testing import assert_frame_equal

from rag_compare import compare, load_corpus, load_run
from rag_compare.compute.comparison import Comparison
from tests.helpers.data import EXAMPLE_CORPUS, ROOT

RUNS = ROOT / "runs"
PASSAGES = ROOT / "corpora" / "handbook_passages.csv"
BRANCH_CORPUS = ROOT / "examples" / "handbook_at_branch.csv"
NAMES = ("baseline", "candidate", "stopwords")


def example_epoch() -> str:
    """The ``SOURCE_DATE_EPOCH`` that ``make examples`` sets (``EXAMPLE_EPOCH`` in the Makefile)."""
    found = re.search(r"^EXAMPLE_EPOCH := (\d+)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.MULTILINE)
    if found is None:
        raise AssertionError("the Makefile sets no EXAMPLE_EPOCH")
    return found.group(1)


@pytest.fixture(scope="module")
def recaptured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The runs ``examples/capture.py`` makes, run from elsewhere than the repository root."""
    output = tmp_path_factory.mktemp("runs")
    env = {**os.environ, "SOURCE_DATE_EPOCH": example_epoch(), "PYTHONPATH": str(ROOT)}
    env.pop("OPENAI_API_KEY", None)
    subprocess.run(
        [sys.executable, str(ROOT / "examples" / "capture.py"), str(output)],
        cwd=output,
        env=env,
        check=True,
        capture_output=True,
    )
    return output


@pytest.fixture(scope="module")
def demo() -> Comparison:
    return compare(RUNS / "baseline.arrow", RUNS / "candidate.arrow", passages=PASSAGES)


@pytest.mark.parametrize("name", NAMES)
def test_recaptured_runs_equal_the_shipped_ones_but_for_latencies(recaptured: Path, name: str) -> None:
    shipped, again = load_run(RUNS / f"{name}.arrow"), load_run(recaptured / f"{name}.arrow")
    assert again.config == shipped.config  # created_at included: SOURCE_DATE_EPOCH
    assert_frame_equal(again.records.drop("latency_ms"), shipped.records.drop("latency_ms"))
    assert again.records.get_column("latency_ms").is_not_null().all()  # measured anew, so not compared


def test_the_demo_shows_every_outcome(demo: Comparison) -> None:
    counts = demo.counts
    # 35 cases: missing_in_candidate 1 · failed_in_candidate 1 · improved 3 · regressed 7 · unchanged 23
    assert counts["missing_in_candidate"] == 1
    assert counts["failed_in_candidate"] == 1
    assert counts["improved"] == 3
    assert counts["regressed"] == 7
    assert sum(counts.values()) == 35


def test_a_regression_is_the_budget_cutting_a_retrieved_exception(demo: Comparison) -> None:
    case = demo.with_texts(demo.cases.filter(pl.col("case_id") == "equipment-budget@2026-01")).row(0, named=True)
    exception = "equipment-budget-exception-1@2026-01"
    assert case["status"] == "regressed"
    assert exception in case["baseline_context_passage_ids"]
    # retrieved at rank 5 of 5, but the 600-character budget is full after rank 4
    assert case["candidate_retrieved_passage_ids"].index(exception) == 4
    assert exception not in case["candidate_context_passage_ids"]
    assert "context_construction_failure false -> true (worse)" in case["reasons"]


def test_unanswerable_cases_answered_anyway(demo: Comparison) -> None:
    answered = demo.cases.filter(
        (pl.col("answerability") == "unanswerable")
        & pl.col("baseline_abstention_correct")
        & ~pl.col("candidate_abstention_correct")
    )
    assert sorted(answered.get_column("case_id")) == [
        "ceo-salary@2026-01",
        "sabbatical@2026-01",
        "stock-options@2026-01",
    ]
    assert (answered.get_column("status") == "regressed").all()


def test_the_failed_case_kept_what_an_unavailable_endpoint_left(demo: Comparison) -> None:
    failed = load_run(RUNS / "candidate.arrow").records.filter(pl.col("status") != "ok").row(0, named=True)
    assert failed["case_id"] == "sick-leave-certificate@2026-01"
    assert failed["error"] == "HTTP 503: Service Unavailable (an outage simulated by examples/parts.py)"
    assert failed["failed_stage"] == "generate"
    assert failed["attempts"] == 3  # the first try and capture's 2 retries
    # what the stages before generation gave is kept: 5 passages retrieved, the 4 that fit in 600 characters
    assert len(failed["retrieved_passage_ids"]) == 5
    assert failed["context_passage_ids"] == failed["retrieved_passage_ids"][:4]
    assert failed["answer"] is None


def test_the_missing_case_was_added_after_the_candidates_corpus(demo: Comparison) -> None:
    current, branch = load_corpus(EXAMPLE_CORPUS).frame, load_corpus(BRANCH_CORPUS).frame
    added = current.join(branch, on="case_id", how="anti").get_column("case_id").to_list()
    assert added == ["public-transport-pass@2026-01"]
    assert_frame_equal(current.filter(pl.col("case_id") != added[0]), branch)
    missing = demo.cases.filter(pl.col("status") == "missing_in_candidate").get_column("case_id").to_list()
    assert missing == added


def test_make_demo_shows_every_kind_and_stage_on_its_first_screen_as_the_readme_does(
    cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the paths as make demo gives them
    result = cli("runs/baseline.arrow", "runs/candidate.arrow", "--passages", "corpora/handbook_passages.csv")
    assert result.exit_code == 0
    first_screen = result.stdout.splitlines()[:24]
    counts = next(index for index, line in enumerate(first_screen) if line.startswith("35 cases: "))
    assert first_screen[counts : counts + 3] == [
        "35 cases: missing_in_candidate 1 · failed_in_candidate 1 · improved 3 · regressed 7 · unchanged 23",
        "  regressed 7: 3 at the answer, 3 at the context, 1 rank only",
        "  improved 3: 1 at the answer, 2 at the context",
    ]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("What `make demo` shows, from the top", 1)[1].split("```\n", 2)[1]
    assert block.splitlines() == result.stdout.splitlines()[: len(block.splitlines())]


def test_without_passages_the_runs_knowledge_base_gives_the_same_verdict_and_says_so(demo: Comparison) -> None:
    bare = compare(RUNS / "baseline.arrow", RUNS / "candidate.arrow")
    assert bare.counts == demo.counts
    assert bare.warnings[0] == (
        "passages read from the runs' knowledge_base corpora/handbook_passages.csv; pass `passages` to use another file."
    )
    assert not any("knowledge_base" in warning for warning in demo.warnings)


def test_the_corpus_clears_its_warning_and_the_unreviewed_draft_is_not_missing(cli: Callable[..., Result]) -> None:
    runs = (RUNS / "baseline.arrow", RUNS / "candidate.arrow")
    with_corpus = compare(*runs, EXAMPLE_CORPUS, passages=PASSAGES)
    assert not any("different corpora" in warning for warning in with_corpus.warnings)
    assert with_corpus.counts["missing_in_both"] == 0
    assert with_corpus.unreviewed_left_out == ("meal-allowance-per-day-alt@2026-01",)
    assert with_corpus.n_cases == 35
    result = cli(*runs, "--passages", PASSAGES, "--corpus", EXAMPLE_CORPUS)
    assert "pass --corpus" not in result.stdout
    assert (
        "35 cases: missing_in_candidate 1 · failed_in_candidate 1 · improved 3 · regressed 7 · unchanged 23 · "
        "not run: unreviewed synthetic 1" in result.stdout.splitlines()
    )


def test_the_example_reviews_are_made_again_byte_for_byte(tmp_path: Path) -> None:
    """``make example-reviews`` gives the reviewer's labels as verdicts through a review session and exports them:
    made again from elsewhere, the file is the shipped one."""
    output = tmp_path / "reviews.arrow"
    env = {**os.environ, "SOURCE_DATE_EPOCH": example_epoch(), "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [sys.executable, str(ROOT / "examples" / "reviews.py"), str(output)],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
    )
    assert output.read_bytes() == (RUNS / "reviews.arrow").read_bytes()


def test_the_readme_shows_the_offline_judge_s_agreement_as_it_is(cli: Callable[..., Result]) -> None:
    """The walkthrough's agreement table is the command's, line for line."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("$ rag-compare agreement runs/reviews.arrow runs/candidate.arrow\n", 1)[1].split("```", 1)[0]
    shown = [line for line in block.splitlines() if line != "..."]
    result = cli("agreement", RUNS / "reviews.arrow", RUNS / "candidate.arrow")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    start = lines.index(shown[0])
    assert lines[start : start + 8] == shown[:8]
    assert "\n".join(shown[8:]) in result.stdout
