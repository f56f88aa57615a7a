"""Reports of a comparison with repeats (tests/fixtures/repeats, see its EXPECTED.md): every format shows
the samples per side, the counts beside the noise floor, the within-case variance and the flaky cases."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from rag_compare.compute.compare_runs import compare
from rag_compare.compute.comparison import Comparison
from tests.compute.test_repeats import _side


@pytest.fixture(scope="module")
def comparison() -> Comparison:
    return compare(_side("baseline"), _side("candidate"))


def _rows(text: str) -> list[list[str]]:
    """The cells of a text table's rows (columns apart by two spaces or more)."""
    return [re.split(r"\s{2,}", line.strip()) for line in text.splitlines()]


def test_the_text_shows_each_count_beside_what_noise_alone_would_give(comparison: Comparison) -> None:
    text = comparison.render("text")
    assert "repeats: baseline 3 samples a case (24 samples, 0 failed) · candidate 3 samples a case" in text
    rows = _rows(text)
    assert ["regressed", "1", "0.50"] in rows
    assert ["improved", "1", "0.50"] in rows
    assert ["failed_in_candidate", "1", "0.17"] in rows
    assert ["unstable", "4", "-"] in rows  # an A/A comparison of single samples cannot be unstable
    assert ["recall", "-0.167", "0.056", "0.056", "6"] in rows  # within-case variance beside the delta
    assert ["c6@v1", "candidate", "1", "failed in 1 of 3 samples"] in rows


def test_markdown_has_the_noise_floor_the_variance_and_the_flaky_tables(comparison: Comparison) -> None:
    markdown = comparison.render("markdown")
    assert "| regressed | 1 | 0.50 |" in markdown
    assert "| recall | -0.167 | 0.056 | 0.056 | 6 |" in markdown
    assert "| c5@v1 | candidate | 1 | abstention\\_correct in 2 of 3 samples |" in markdown
    assert "| status | ok (3 samples, 0 failed) | ok (3 samples, 1 failed): read timed out after 30 s |" in markdown


class _Tables(HTMLParser):
    """The text of each cell of the tables with an id."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._table = dict(attrs).get("id")
            if self._table:
                self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table:
            self.tables[self._table][-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._table and self.tables[self._table] and self.tables[self._table][-1]:
            self.tables[self._table][-1][-1] += data.strip()


def test_html_has_the_noise_floor_the_variance_and_the_flaky_tables(comparison: Comparison) -> None:
    parser = _Tables()
    parser.feed(comparison.render("html"))
    assert ["regressed", "1", "0.50"] in parser.tables["noise-floor"]
    assert ["recall", "-0.167", "0.056", "0.056", "6"] in parser.tables["within-variance"]
    assert [row[0] for row in parser.tables["flaky"][1:]] == ["c2@v1", "c7@v1", "c5@v1", "c6@v1"]


def test_the_flaky_list_is_cut_at_max_cases_and_says_how_many_more(comparison: Comparison) -> None:
    markdown = comparison.render("markdown", max_cases=2)
    flaky = markdown[markdown.index("## Flaky cases") :]
    assert flaky.count("@v1 |") == 2
    assert "… and 2 more flaky cases, not listed." in flaky


def test_json_lists_the_flaky_cases_with_their_details(comparison: Comparison) -> None:
    document = json.loads(comparison.render("json"))
    assert document["flaky"][3] == {
        "case_id": "c6@v1",
        "side": "candidate",
        "repeats": 3,
        "disagreements": 1,
        "spread": pytest.approx(1 / 3),
        "details": ["failed in 1 of 3 samples"],
    }
