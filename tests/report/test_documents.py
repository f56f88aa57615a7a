"""Markdown and HTML reports: content and order, escaping of untrusted text, the golden file, the CLI."""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest
from click.testing import Result

from rag_compare import Comparison, compare
from rag_compare.compute.comparison import REPORTED_STATUSES
from rag_compare.report.documents import markdown_escape
from rag_compare.report.page import DATA_ID
from tests.helpers.data import HANDMADE_RUNS, IMAGE, PAYLOAD, ROOT, SCRIPT
from tests.helpers.page import framed_page, page_parts

PASSAGES = ROOT / "corpora" / "handbook_passages.csv"


class _Markup(HTMLParser):
    """Collects the elements and attributes a browser would build from a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [name for name, _ in attrs]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(html: str) -> _Markup:
    markup = _Markup()
    markup.feed(html)
    markup.close()
    return markup


def positions(text: str, *needles: str) -> list[int]:
    found = [text.find(needle) for needle in needles]
    assert -1 not in found, dict(zip(needles, found, strict=True))
    return found


def listed(report: str, format: str) -> str:
    """What a report lists, as text: the Markdown report itself, or the ids of the cases in the page's data."""
    return report if format == "markdown" else "\n".join(case["case_id"] for case in page_parts(report).data["cases"])


@pytest.mark.parametrize("format", ["markdown", "html"])
def test_sections_and_case_groups_come_in_the_order_a_reviewer_reads(examples: Comparison, format: str) -> None:
    report = examples.render(format)
    headings = ("Runs", "Config differences", "Cases by status", "Aggregates", "Breakdowns", "Cases")
    level = {"Config differences": 3}
    marked = [
        f"{'#' * level.get(heading, 2)} {heading}\n"
        if format == "markdown"
        else f"<h{level.get(heading, 2)}>{heading}<"
        for heading in headings
    ]
    sections = positions(report, *marked)
    assert sections == sorted(sections)
    assert "By category" in report
    assert "By answerability" in report
    # the examples: 4 regressed, 2 failed in the candidate, 1 failed in the baseline, 1 missing, 3 mixed, 5 improved
    groups = [status for status in REPORTED_STATUSES if examples.counts[status]]
    assert groups == [
        "regressed",
        "failed_in_candidate",
        "failed_in_baseline",
        "missing_in_candidate",
        "mixed",
        "improved",
    ]
    anchors = [f"### {status}" if format == "markdown" else f'id="{status}"' for status in groups]
    headings = [report.find(anchor.replace("_", r"\_") if format == "markdown" else anchor) for anchor in anchors]
    assert -1 not in headings
    assert headings == sorted(headings)


@pytest.mark.parametrize("format", ["markdown", "html"])
def test_unchanged_cases_are_counted_unless_all_cases(examples: Comparison, format: str) -> None:
    unchanged = examples.cases.filter(pl.col("status") == "unchanged").get_column("case_id").to_list()
    assert len(unchanged) == 18
    listed_by_default = examples.render(format)
    assert "18 unchanged cases are counted, not listed" in listed_by_default
    assert not [case for case in unchanged if case in listed(listed_by_default, format)]
    everything = examples.render(format, all_cases=True)
    assert all(case in listed(everything, format) for case in unchanged)
    assert "counted, not listed" not in everything


def test_a_markdown_case_shows_labels_gold_marks_context_answers_and_reasons(examples: Comparison) -> None:
    report = examples.render("markdown")
    start = report.index("#### equipment-budget@2026-01")
    case = report[start : report.index("\n#### ", start + 1)]
    # the candidate retrieved both required passages but its context cut the exception:
    # a context-construction failure, shown as a cross beside that passage
    assert "- **Required passages:** equipment-budget-1@2026-01, equipment-budget-exception-1@2026-01" in case
    assert "**equipment-budget-exception-1@2026-01**" in case
    in_context = next(line for line in case.splitlines() if line.startswith("| in context |"))
    candidate_cell = in_context.split(" | ")[2]
    assert "equipment-budget-exception-1@2026-01 ✗" in candidate_cell
    assert "equipment-budget-1@2026-01 ✓" in candidate_cell
    assert "- **Reasons:** recall 0.5 -&gt; 1 (better)" in case
    assert "context\\_construction\\_failure false -&gt; true (worse)" in case
    answer = next(line for line in case.splitlines() if line.startswith("| answer |"))
    assert answer.count(" | ") == 2  # both answers side by side, each in its own cell


def test_markdown_report_of_the_examples_matches_the_golden_file(
    golden: Callable[[str, str], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the report names the run files by the paths they were opened with
    comparison = compare(
        Path("tests/fixtures/handmade/baseline.arrow"),
        Path("tests/fixtures/handmade/candidate.arrow"),
        passages=PASSAGES,
    )
    report = comparison.render("markdown")
    assert report == comparison.render("markdown")  # byte-stable within a run
    golden("handmade.md", report)


def test_html_escapes_every_value_from_data(hostile: Comparison) -> None:
    page = hostile.render("html")
    parts = page_parts(page)
    # the only scripts: the data block (JSON, inert) and the page's own script
    assert [attrs for attrs, _ in parts.scripts] == [{"type": "application/json", "id": DATA_ID}, {}]
    assert page.count("<script") == 2
    assert "img" not in parts.tags
    assert not [name for name, _ in parts.attributes if name.startswith("on")]
    assert "javascript:" not in " ".join(str(value) for _, value in parts.attributes)
    # the payload survives as text a reader sees: in the title, the run names, the config, and in the cases' data
    text = "".join(parts.text)
    assert text.count(SCRIPT) >= 6
    assert IMAGE in text
    cases = {case["case_id"]: case for case in parts.data["cases"]}
    assert cases["a@v1"]["question"] == cases["a@v1"]["acceptance_note"] == PAYLOAD
    assert cases["c@v1"]["sides"]["candidate"]["error"] == PAYLOAD


def test_the_notebook_shows_the_escaped_page_in_a_frame(hostile: Comparison, examples: Comparison) -> None:
    cell = hostile._repr_html_()
    markup = parsed(cell)
    assert markup.tags == ["iframe"]
    page = page_parts(framed_page(cell))
    assert "img" not in page.tags
    assert SCRIPT in "".join(page.text)
    framed = framed_page(examples._repr_html_())
    assert 'id="aggregates-paired"' in framed
    assert "regressed 4" in framed
    assert "equipment-budget@2026-01" in {case["case_id"] for case in page_parts(framed).data["cases"]}
    names = f"baseline ({examples.baseline.fingerprint[:12]}) → candidate ({examples.candidate.fingerprint[:12]})"
    assert repr(examples) == (
        f"<Comparison {names}: 34 cases: missing_in_candidate 1, "
        "failed_in_baseline 1, failed_in_candidate 2, improved 5, regressed 4, mixed 3, unchanged 18>"
    )


def test_markdown_escapes_every_value_from_data(hostile: Comparison) -> None:
    report = hostile.render("markdown")
    assert "<script" not in report
    assert "<img" not in report
    assert "&lt;script&gt;window.\\_\\_pwned = 1&lt;/script&gt;" in report
    assert "\\[link\\](javascript:alert(1))" in report
    assert "\\*\\*bold\\*\\*" in report
    # a pipe in an answer does not open a new table cell; a line break stays inside the cell
    answer = next(line for line in report.splitlines() if line.startswith("| answer |") and "pwned" in line)
    assert len(re.findall(r"(?<!\\)\|", answer)) == 4
    assert "<br>second line" in answer


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain text, 0.5", "plain text, 0.5"),
        ("a | b", "a \\| b"),
        ("<b>&amp;</b>", "&lt;b&gt;&amp;amp;&lt;/b&gt;"),
        ("*x* _y_ `z` [l](u) ~s~ #h \\", "\\*x\\* \\_y\\_ \\`z\\` \\[l\\](u) \\~s\\~ \\#h \\\\"),
        ("one\ntwo\r\nthree", "one<br>two<br>three"),
        (None, ""),
        (0.25, "0.25"),
    ],
)
def test_markdown_escape(value: object, expected: str) -> None:
    assert markdown_escape(value) == expected


def test_unknown_format_is_refused(examples: Comparison) -> None:
    with pytest.raises(ValueError, match="use one of text, json, markdown, html"):
        examples.render("pdf")


def test_cli_writes_each_report_format(cli: Callable[..., Result], tmp_path: Path) -> None:
    runs = [HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow"]
    page = tmp_path / "report.html"
    result = cli(*runs, "--passages", PASSAGES, "--format", "html", "--output", page)
    assert result.exit_code == 0, result.output
    assert f"wrote the html comparison to {page}" in result.output
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert html.rstrip().endswith("</html>")
    assert "http://" not in html
    assert "https://" not in html
    markdown = cli(*runs, "--passages", PASSAGES, "--format", "markdown", "--all-cases")
    assert markdown.exit_code == 0
    assert markdown.output.startswith("# baseline → candidate\n")
    assert "counted, not listed" not in markdown.output
    refused = cli(*runs, "--format", "pdf")
    assert refused.exit_code == 2
    assert "'pdf' is not one of" in refused.output


@pytest.mark.parametrize("format", ["markdown", "html"])
def test_a_report_lists_at_most_max_cases_per_status_and_says_how_many_more(examples: Comparison, format: str) -> None:
    regressed = sorted(examples.cases.filter(pl.col("status") == "regressed").get_column("case_id"))
    assert len(regressed) == 4
    report = examples.render(format, max_cases=2)
    # the first two regressed cases by id are listed, the other two counted
    assert [case in listed(report, format) for case in regressed] == [True, True, False, False]
    assert "… and 2 more regressed cases, not listed" in report
    assert "more failed" not in report  # 2 failed in the candidate: all listed
    assert "more regressed" not in examples.render(format, max_cases=None)
    with pytest.raises(ValueError, match="max_cases must be 1 or more"):
        examples.render(format, max_cases=0)


def test_cli_max_cases(cli: Callable[..., Result]) -> None:
    runs = [HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow"]
    capped = cli(*runs, "--format", "markdown", "--max-cases", "1")
    assert capped.exit_code == 0
    assert capped.output.count("\n#### ") == 6  # one per listed status
    every = cli(*runs, "--format", "markdown", "--max-cases", "0", "--all-cases")
    assert every.output.count("\n#### ") == 34
    refused = cli(*runs, "--format", "markdown", "--max-cases", "-1")
    assert refused.exit_code == 2


def test_warnings_stand_out_in_both_reports() -> None:
    comparison = compare(
        HANDMADE_RUNS / "baseline.arrow",
        HANDMADE_RUNS / "candidate.arrow",
        ROOT / "corpora" / "handbook_2025.csv",
        passages=PASSAGES,
    )
    assert len(comparison.warnings) == 2
    markdown = comparison.render("markdown")
    assert markdown.count("> **warning:** run ") == 2
    assert "\n>\n> **warning:**" in markdown  # one blockquote, a paragraph per warning
    html = comparison.render("html")
    assert html.count("<li><strong>warning:</strong> run &#39;") == 2
