"""A comparison's text summary: its list of the cases that changed, failed or are missing; the golden file."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
import pytest
from click.testing import Result

from rag_compare.compute.compare_runs import compare
from rag_compare.compute.freezing import freeze_run
from rag_compare.io.corpus import load_corpus
from rag_compare.report.comparison_text import comparison_text
from tests.helpers.data import ROOT
from tests.helpers.golden import HANDMADE_COMPARISON

CASES = 105


def _comparison(failed: int) -> str:
    """Two runs of ``CASES`` cases whose candidate failed the first ``failed``; the summary's text."""
    ids = [f"q{n:03}@v1" for n in range(CASES)]
    corpus = load_corpus(
        pl.DataFrame(
            {
                "case_id": ids,
                "question": ["Q?"] * CASES,
                "answerability": ["answerable"] * CASES,
                "source_version": ["v1"] * CASES,
                "required_passage_ids": [["p1"]] * CASES,
            }
        )
    )
    baseline = pl.DataFrame({"case_id": ids, "status": "ok", "answer": "p1 says yes."})
    candidate = baseline.with_columns(
        status=pl.when(pl.int_range(CASES) < failed).then(pl.lit("failed")).otherwise(pl.lit("ok"))
    )
    runs = [freeze_run(records, corpus, {"name": name}) for name, records in (("a", baseline), ("b", candidate))]
    return comparison_text(compare(*runs))


def test_the_first_hundred_cases_are_listed_then_the_rest_counted() -> None:
    text = _comparison(failed=CASES)
    listing = text.split("Cases that changed, failed or are missing\n")[1]
    lines = listing.splitlines()
    assert lines[0].split() == ["failed_in_candidate", "q000@v1"]
    assert [line.split()[1] for line in lines[:-1] if not line.startswith(" ")] == [f"q{n:03}@v1" for n in range(100)]
    assert lines[-1] == "… and 5 more (--format json lists every case)"


def test_a_short_listing_has_no_tail_and_no_change_says_so() -> None:
    listing = _comparison(failed=3).split("Cases that changed, failed or are missing\n")[1]
    assert "more" not in listing
    assert len([line for line in listing.splitlines() if not line.startswith(" ")]) == 3
    assert _comparison(failed=0).endswith("No case changed, failed or is missing.\n")


def test_text_summary_of_the_handmade_runs_matches_the_golden_file(
    cli: Callable[..., Result], golden: Callable[[str, str], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the summary names the run files by the paths they were opened with
    result = cli(*HANDMADE_COMPARISON, env={"COLUMNS": "50"})  # the tables' width is fixed, not the terminal's
    assert (result.exit_code, result.stderr) == (0, "")
    golden("handmade.txt", result.stdout)


def test_the_all_cases_table_is_left_out_only_when_it_shows_the_paired_values() -> None:
    # No case failed: every signal's all-cases row has the paired cases and values (n 105 in both).
    same = _comparison(failed=0)
    assert "All cases: the same as paired (no case is missing or failed on a side)\n" in same
    assert "All cases: a missing" not in same
    assert same.count("signal ") == 1
    # 3 failed candidates count at abstained's worst value (1): 3/105 = 0.029 over n 105; paired n 102.
    differs = _comparison(failed=3)
    assert "the same as paired" not in differs
    paired, all_cases = differs.split("Paired: the cases with a value on both sides\n")[1].split(
        "All cases: a missing or failed case counts at the signal's worst value\n"
    )
    assert paired.splitlines()[1].split()[:4] + paired.splitlines()[1].split()[-1:] == [
        "abstained",
        "0.000",
        "0.000",
        "+0.000",
        "102",
    ]
    assert all_cases.splitlines()[1].split()[:4] + all_cases.splitlines()[1].split()[-1:] == [
        "abstained",
        "0.000",
        "0.029",
        "+0.029",
        "105",
    ]
