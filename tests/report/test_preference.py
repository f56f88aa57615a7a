"""The pairwise preference in every report, on the pairs fixture (tests/helpers/pairs.py, its numbers worked
out by hand there): counts, win rate, position bias and its warning, the judge's reasons, the lists."""

from __future__ import annotations

import re

import polars as pl
import pytest

from rag_compare import Comparison, compare, freeze_run
from rag_compare.compute.preference import PositionBias
from rag_compare.io.pairs import Pairs, judge_pairs, make_pairs
from rag_compare.io.runs import Run
from rag_compare.report import rendering
from rag_compare.report.preference import bias_warning, pairs_text
from tests.helpers.data import HANDMADE_RUNS, PAYLOAD, SCRIPT
from tests.helpers.page import framed_page, page_parts
from tests.helpers.pairs import BASELINE, CANDIDATE, CORPUS, ScriptedPairJudge
from tests.helpers.pairs import SCRIPT as CHOICES
from tests.report.test_documents import positions
from tests.report.test_repeats import _Tables

ALWAYS_FIRST = dict.fromkeys(CHOICES, ("first", "first"))
"""Six pairs asked, 12 replies, every one the answer shown first: 0 of 6 consistent, 12 of 12 first."""


@pytest.fixture(scope="module")
def runs() -> tuple[Run, Run]:
    return freeze_run(BASELINE, CORPUS, {"name": "base"}), freeze_run(CANDIDATE, CORPUS, {"name": "cand"})


@pytest.fixture(scope="module")
def pairs(runs: tuple[Run, Run]) -> Pairs:
    return judge_pairs(*runs, ScriptedPairJudge())


@pytest.fixture(scope="module")
def comparison(runs: tuple[Run, Run], pairs: Pairs) -> Comparison:
    return compare(*runs, pairs=pairs)


def _judged(runs: tuple[Run, Run], script: dict[str, tuple[str | None, str | None]]) -> Comparison:
    return compare(*runs, pairs=judge_pairs(*runs, ScriptedPairJudge(script)))


def _with_reason(runs: tuple[Run, Run], pairs: Pairs, reason: str, name: str = "scripted") -> Comparison:
    """The fixture's pairs with every baseline-first reason replaced by ``reason``, by a judge called ``name``."""
    frame = pairs.frame.with_columns(
        baseline_first_reason=pl.when(pl.col("baseline_first").is_not_null()).then(pl.lit(reason))
    )
    evaluator = {"name": name, "fingerprint": "f" * 64, "config": {"model": "m"}}
    return compare(*runs, pairs=make_pairs(*runs, frame, evaluator))


def _rows(text: str) -> list[list[str]]:
    """The cells of a text table's rows (columns apart by two spaces or more)."""
    return [re.split(r"\s{2,}", line.strip()) for line in text.splitlines()]


def _section(text: str, start: str, end: str) -> str:
    first = text.index(start)
    return text[first : text.index(end, first)]


def test_the_text_shows_the_counts_the_win_rate_and_the_position_bias(comparison: Comparison) -> None:
    text = comparison.render("text")
    section = _section(text, "Pairwise preference (judge scripted scripted-fin)\n", "Cases that changed")
    rows = _rows(section)
    # candidate 1, baseline 1, tie 2, inconsistent 2, judge_failed 1, not_judged 2 (tests/helpers/pairs.py)
    for row in (
        ["candidate preferred (wins)", "1"],
        ["baseline preferred (losses)", "1"],
        ["ties", "2"],
        ["inconsistent", "2"],
        ["judge_failed", "1"],
        ["not judged", "2"],
    ):
        assert row in rows
    # 1 win of 2 decided: 0.5; Clopper-Pearson 95% for 1 of 2: [0.0126, 0.9874]; sign test of 1 against 1: p 1
    assert ["win rate (decided pairs)", "0.500 [0.013, 0.987], sign test p 1.000"] in rows
    assert ["position consistency", "60% (3 of 5 pairs judged in both orders)"] in rows  # a, b, c of a, b, c, d, i
    assert ["first-position preference", "62% (5 of 8 replies that chose an answer)"] in rows  # 0.625
    assert "warning" not in section  # 8 replies: too few to call the judge biased
    order = positions(text, "All cases: a missing", "Pairwise preference", "Cases that changed", "Inconsistent pairs")
    assert order == sorted(order)


def test_the_text_lists_the_judges_reason_under_each_listed_case(comparison: Comparison) -> None:
    text = comparison.render("text")
    for case_id in ("a_better@v1", "b_worse@v1"):
        lines = text[text.index(f" {case_id}  (at the answer)\n") :].splitlines()[:3]
        assert lines[1].strip().startswith("the pairwise judge preferred the ")
        assert lines[2].strip() == "judge: baseline_first reason"
    failed = text[text.index(" f_failed@v1\n") :].splitlines()[:3]
    assert not any("judge:" in line for line in failed)  # not judged: no reason


def test_the_text_lists_the_inconsistent_and_the_unjudged_pairs(comparison: Comparison) -> None:
    text = comparison.render("text")
    inconsistent = _section(text, "Inconsistent pairs", "Pairs the judge could not judge")
    flat = " ".join(inconsistent.split())
    assert [case for case in ("d_first@v1", "i_halftie@v1") if case in inconsistent] == ["d_first@v1", "i_halftie@v1"]
    # d: both orders chose the answer shown first, so each order a different side
    assert "baseline shown first: baseline (baseline_first reason); candidate shown first: candidate" in flat
    assert "baseline shown first: a tie (baseline_first reason); candidate shown first: candidate" in flat
    unjudged = text[text.index("Pairs the judge could not judge") :]
    assert "h_judgefail@v1" in unjudged
    assert "the pairwise judge failed: candidate_first: HTTP 500 (gave up after 3 attempts)" in unjudged


def test_a_long_reason_is_cut_in_the_text_and_whole_in_the_reports(runs: tuple[Run, Run], pairs: Pairs) -> None:
    reason = "because " * 100  # 800 characters
    comparison = _with_reason(runs, pairs, reason.strip())
    text = comparison.render("text")
    judge_line = next(line.strip() for line in text.splitlines() if line.strip().startswith("judge: because"))
    assert len(judge_line) == len("judge: ") + 200
    assert judge_line.endswith("...")
    assert reason.strip() in comparison.render("markdown")


def test_markdown_has_the_section_after_the_aggregates_and_the_lists_after_the_cases(comparison: Comparison) -> None:
    markdown = comparison.render("markdown")
    headings = [
        "## Aggregates\n",
        "## Pairwise preference (judge scripted scripted-fin)\n",
        "## Breakdowns\n",
        "## Cases\n",
        "## Inconsistent pairs",
        "## Pairs the judge could not judge\n",
    ]
    found = positions(markdown, *headings)
    assert found == sorted(found)
    assert "| win rate (decided pairs) | 0.500 \\[0.013, 0.987\\], sign test p 1.000 |" in markdown
    assert "| position consistency | 60% (3 of 5 pairs judged in both orders) |" in markdown
    assert "| first-position preference | 62% (5 of 8 replies that chose an answer) |" in markdown
    case = _section(markdown, "#### a\\_better@v1", "| answer |")
    assert "- **Pairwise judge (candidate):** baseline\\_first reason" in case
    assert "- **Pairwise judge (baseline):** baseline\\_first reason" in _section(
        markdown, "#### b\\_worse", "| answer"
    )
    assert (
        "| d\\_first@v1 | baseline shown first: baseline (baseline\\_first reason); candidate shown first" in markdown
    )
    assert "| h\\_judgefail@v1 | the pairwise judge failed: candidate\\_first: HTTP 500" in markdown


def test_html_has_the_section_the_reasons_and_the_lists(comparison: Comparison) -> None:
    page = comparison.render("html")
    tables = _Tables()
    tables.feed(page)
    section = tables.tables["preference"]
    assert ["win rate (decided pairs)", "0.500 [0.013, 0.987], sign test p 1.000"] in section
    assert ["candidate preferred (wins)", "1"] in section
    assert ["position consistency", "60% (3 of 5 pairs judged in both orders)"] in section
    assert [row[0] for row in tables.tables["inconsistent"][1:]] == ["d_first@v1", "i_halftie@v1"]
    assert tables.tables["inconsistent"][1][1].startswith("baseline shown first: baseline (baseline_first reason)")
    assert [row[0] for row in tables.tables["judge-failed"][1:]] == ["h_judgefail@v1"]
    preferences = {case["case_id"]: case["preference"] for case in page_parts(page).data["cases"]}
    assert preferences["a_better@v1"]["preferred"] == "candidate"
    order = positions(page, "<h2>Aggregates<", 'id="preference"', "<h2>Breakdowns<", 'id="inconsistent"')
    assert order == sorted(order)


def test_the_notebook_shows_the_section(comparison: Comparison) -> None:
    summary = framed_page(comparison._repr_html_())
    assert 'id="preference"' in summary
    assert "62% (5 of 8 replies that chose an answer)" in summary
    assert summary == comparison.render("html")


def test_the_lists_are_cut_at_max_cases(comparison: Comparison) -> None:
    for format in ("markdown", "html"):
        report = comparison.render(format, max_cases=1)
        lists = report[report.index("Inconsistent pairs") :]
        assert "d_first@v1" in lists.replace("\\_", "_")
        assert "i_halftie@v1" not in lists.replace("\\_", "_")
        assert "… and 1 more, not listed" in lists


def test_a_reason_from_the_judge_is_escaped(runs: tuple[Run, Run], pairs: Pairs) -> None:
    comparison = _with_reason(runs, pairs, PAYLOAD, name=f"judge {SCRIPT}")
    page = comparison.render("html")
    parts = page_parts(page)
    assert page.count("<script") == 2
    assert "img" not in parts.tags
    # the title, and d and i in the inconsistent list; a and b beside their (listed) cases, in the page's data
    assert "".join(parts.text).count(SCRIPT) == 3
    reasons = [case["preference"]["reason"] or "" for case in parts.data["cases"]]
    assert sum(SCRIPT in reason for reason in reasons) == 2
    markdown = comparison.render("markdown")
    assert "<script" not in markdown
    assert "<img" not in markdown
    reason = next(line for line in markdown.splitlines() if line.startswith("- **Pairwise judge (candidate):**"))
    assert "&lt;script&gt;window.\\_\\_pwned = 1&lt;/script&gt;" in reason
    assert "\\[link\\](javascript:alert(1))" in reason
    listed = next(line for line in markdown.splitlines() if line.startswith("| d\\_first@v1 |"))
    assert len(re.findall(r"(?<!\\)\|", listed)) == 3  # the payload's pipe opens no cell


def test_without_pairs_no_report_has_the_section() -> None:
    comparison = compare(HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow")
    for format in ("text", "markdown", "html", "notebook"):
        report = comparison._repr_html_() if format == "notebook" else comparison.render(format)
        assert "Pairwise preference" not in report
        assert "Inconsistent pairs" not in report
        assert "judge:" not in report


def test_a_judge_that_always_picks_the_first_answer_is_called_biased(
    runs: tuple[Run, Run], comparison: Comparison
) -> None:
    biased = _judged(runs, ALWAYS_FIRST)
    text = biased.render("text")
    rows = _rows(text)
    assert ["candidate preferred (wins)", "0"] in rows
    assert ["inconsistent", "6"] in rows  # every pair asked
    assert ["win rate (decided pairs)", "-"] in rows  # no pair decided for a side
    assert ["position consistency", "0% (0 of 6 pairs judged in both orders)"] in rows
    assert ["first-position preference", "100% (12 of 12 replies that chose an answer)"] in rows
    warning = (
        "warning: the pairwise judge looks position-biased (position consistency 0%, below 80%; first-position "
        "preference 100%, outside 35% to 65%): its verdicts follow the position of an answer, not the answer."
    )
    assert warning in text
    assert "> **warning:** the pairwise judge looks position-biased" in biased.render("markdown")
    assert "<li><strong>warning:</strong> the pairwise judge looks position-biased" in biased.render("html")
    assert "position-biased" not in comparison.render("text") + comparison.render("markdown")


@pytest.mark.parametrize(
    ("bias", "warns"),
    [
        (PositionBias(pairs=5, consistent=0, replies=9, first=9), False),  # 9 replies: too few
        (PositionBias(pairs=5, consistent=5, replies=10, first=5), False),  # 100%, 50%
        (PositionBias(pairs=5, consistent=4, replies=10, first=6), False),  # 80% is not below 80%; 60%
        (PositionBias(pairs=5, consistent=5, replies=20, first=13), False),  # 65% is inside
        (PositionBias(pairs=20, consistent=15, replies=40, first=20), True),  # 75% < 80%
        (PositionBias(pairs=5, consistent=5, replies=10, first=7), True),  # 70% > 65%
        (PositionBias(pairs=5, consistent=5, replies=10, first=3), True),  # 30% < 35%
    ],
)
def test_the_bias_warning_thresholds(bias: PositionBias, warns: bool) -> None:
    assert (bias_warning(bias) is not None) is warns


def test_a_pairs_file_shows_its_runs_judge_counts_bias_and_usage(runs: tuple[Run, Run], pairs: Pairs) -> None:
    assert rendering.text.dispatch(Pairs) is pairs_text
    text = pairs.render("text")
    rows = _rows(text)
    baseline, candidate = runs
    assert ["baseline", f"base ({baseline.fingerprint[:12]})"] in rows
    assert ["candidate", f"cand ({candidate.fingerprint[:12]})"] in rows
    assert ["judge", "scripted (scripted-fin)"] in rows  # no model in the scripted judge's config
    assert ["created", pairs.created_at] in rows
    assert ["inconsistent", "2"] in rows
    assert ["not judged", "2"] in rows
    assert ["position consistency", "60% (3 of 5 pairs judged in both orders)"] in rows
    # 6 pairs asked, 2 requests each; 20 prompt and 5 completion tokens a reply, h's second failed: 11 replies
    assert ["requests", "12"] in rows
    assert ["prompt_tokens", "220"] in rows
    assert ["completion_tokens", "55"] in rows
    assert "warning" not in text
    with_model = make_pairs(
        *runs, pairs.frame, {"name": "gpt-judge", "fingerprint": "a" * 64, "config": {"model": "m"}}
    )
    assert ["judge", f"gpt-judge ({'a' * 12}), model m"] in _rows(with_model.render("text"))
    assert "position-biased" in judge_pairs(*runs, ScriptedPairJudge(ALWAYS_FIRST)).render("text")
