"""The text summaries of the small results, rendered by the report floor."""

from __future__ import annotations

import re
from dataclasses import replace

import polars as pl
import pytest

from rag_compare.compute.audit import audit_corpora
from rag_compare.compute.fallback import simulate_fallback
from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.io.corpus import load_corpus
from rag_compare.io.drafts_file import DraftFailure
from rag_compare.io.runs import Run, load_run
from rag_compare.io.scores import score_run
from rag_compare.llm.plan import JudgePlan
from rag_compare.report.summaries import (
    audit_text,
    corpus_text,
    drafts_text,
    plan_text,
    run_text,
    scores_text,
    simulation_text,
)
from tests.helpers.data import EXAMPLE_CORPUS, EXAMPLE_OLD_CORPUS, HANDMADE_RUNS
from tests.helpers.drafting import drafts_of

FALLBACK = "Please contact HR."


@pytest.fixture(scope="module")
def run() -> Run:
    return load_run(HANDMADE_RUNS / "baseline.arrow")


def _scores(run: Run, low: int) -> pl.DataFrame:
    """Scores for the run's ok records: the first ``low`` at 0.1, the others at 0.9."""
    ids = run.records.filter(pl.col("status") == "ok").get_column("case_id")
    return pl.DataFrame(
        {"case_id": ids, "judge_status": "ok", "trust": [0.1 if n < low else 0.9 for n in range(ids.len())]}
    )


def test_a_fallback_simulation_names_its_rule_and_cuts_the_replaced_list_at_ten(run: Run) -> None:
    evaluator = {"name": "openai", "fingerprint": "f" * 64}
    scores = _scores(run, 12)
    simulation = simulate_fallback(run, scores, "trust", [0.5, 0.125], fallback_text=FALLBACK, evaluator=evaluator)
    text = simulation_text(simulation)
    assert "replace the answer when trust < T" in text
    assert f"name openai · fingerprint {'f' * 37}..." in text  # config values are cut to 40 characters
    assert FALLBACK in text
    assert "corpus labels (abstention, context coverage)" in text
    assert text.splitlines()[8].split()[:2] == ["threshold", "replaced"]
    first = simulation.thresholds.row(0, named=True)
    assert f"{first['catch_rate'] * 100:.1f}%" in text
    assert "0.125 " in text  # a threshold keeps the decimals it has, two at least
    ids = scores.get_column("case_id").head(10).to_list()
    assert text.endswith(f"replaced at trust < 0.50: {', '.join(ids)} … and 2 more\n")


def test_a_fallback_simulation_without_an_evaluator_or_a_replaced_answer(run: Run) -> None:
    simulation = simulate_fallback(run, _scores(run, 0), "trust", [0.0])
    text = simulation_text(simulation)
    assert "evaluator      not given" in text
    assert text.endswith("replaced at trust < 0.00: none\n")
    assert "n/a" not in text
    unknown = replace(simulation, thresholds=simulation.thresholds.with_columns(catch_rate=pl.lit(None, pl.Float64)))
    assert "n/a" in simulation_text(unknown)  # a rate without a case to count is unknown, not 0%


def test_a_corpus_lists_its_counts_and_warnings() -> None:
    corpus = load_corpus(EXAMPLE_CORPUS)
    text = corpus_text(corpus)
    assert text.startswith(f"{corpus.source}: valid corpus\n")
    assert "answerable 28 · unanswerable 6 · conflict 2" in text
    assert "warnings (1):\n  - row 5, column 'reviewed': " in text


def test_a_run_shows_its_config_one_key_a_line_in_json(run: Run) -> None:
    text = run_text(run)
    assert f"fingerprint  {run.fingerprint}" in text
    assert "cases        34 of 36 in the corpus" in text
    assert "status       ok 33 · failed 1 · timeout 0" in text
    keys = [line.split()[0] for line in text.split("config key")[1].splitlines()[1:] if line[:1] != " "]
    assert keys == sorted(keys)
    assert re.search(r'^model +"northwind-assistant-v3"$', text, re.MULTILINE)
    assert re.search(r"^retriever\.top_k +3$", text, re.MULTILINE)
    assert re.search(r"^stored_signals\.k +3$", text, re.MULTILINE)
    unwritten = Run(records=run.records, config=run.config, fingerprint=run.fingerprint)
    assert "path         (not written)" in run_text(unwritten)


def test_scores_show_the_judging_counts_and_the_means(run: Run) -> None:
    text = scores_text(score_run(run, LexicalJudge()))
    assert "scores       (not written)" in text
    assert "judging      ok 33 · not_judged 1" in text
    assert "signal" in text
    assert "grounded" in text


def test_an_audit_lists_only_the_sections_that_have_cases() -> None:
    text = audit_text(audit_corpora(EXAMPLE_OLD_CORPUS, EXAMPLE_CORPUS))
    assert text.startswith("audit ")
    assert "Added cases" in text
    assert "Removed cases" not in text


def test_drafts_say_what_was_left_out_and_what_failed() -> None:
    frame = load_corpus(EXAMPLE_CORPUS).frame.head(2)
    drafts = drafts_of(
        frame,
        failures=(DraftFailure("meal-1", "HTTP 500"),),
        requested=5,
        available=3,
        passages=3,
        source_version="v1",
        wordings=2,
        dropped=1,
        cached=1,
        sent=2,
    )
    text = drafts_text(drafts)
    assert text.startswith("drafted 2 cases from 2 passages\n")
    assert "asked for 5 passages; only 3 exist of source version v1, so all were used\n" in text
    assert "left out 1 blank or repeated texts\n" in text
    assert text.endswith("failed (1 passage, no cases drafted from them):\n  - meal-1: HTTP 500\n")


def test_a_judging_plan_counts_with_thousands_separators() -> None:
    text = plan_text(JudgePlan(cases=3, requests=9, cached=2, prompt_tokens=12_345, completion_tokens=56))
    assert text.splitlines()[0].startswith("dry run: nothing was sent")
    assert "estimated prompt tokens      12,345" in text
    assert text.endswith("at four characters a token.\n")
