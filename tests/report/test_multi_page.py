"""The page of several candidates: its policy allows only its own script, hostile text stays text, and in
headless Chromium the status matrix filters by a status in a candidate, searches case ids and keeps the
filters in the address."""

from __future__ import annotations

import base64
import hashlib
import re
from html import unescape
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from rag_compare import MultiComparison, compare_many, freeze_run
from rag_compare.report.multi_page import matrix_data, multi_script
from tests.helpers.browser import body_text, browser, console_problems, open_page
from tests.helpers.data import ROOT
from tests.helpers.hostile import PAGE_PAYLOAD

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

__all__ = ["browser"]

RUNS = ROOT / "runs"
FIXTURE = ROOT / "tests" / "fixtures" / "three_candidates"


@pytest.fixture(scope="module")
def examples() -> MultiComparison:
    return compare_many(RUNS / "baseline.arrow", [RUNS / "candidate.arrow", RUNS / "stopwords.arrow"])


@pytest.fixture(scope="module")
def page(examples: MultiComparison, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("multi") / "multi.html"
    path.write_text(examples.render("html"), encoding="utf-8")
    return path


def test_the_policy_allows_the_inlined_script_by_its_hash_and_nothing_else(examples: MultiComparison) -> None:
    html = examples.render("html")
    digest = base64.b64encode(hashlib.sha256(multi_script().encode("utf-8")).digest()).decode("ascii")
    found = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert found is not None
    policy = unescape(found[1])
    assert f"script-src 'sha256-{digest}';" in policy
    assert "connect-src 'none'" in policy
    assert html.count("<script>") == 1
    assert f"<script>{multi_script()}</script>" in html


def test_the_data_names_each_candidates_status_of_each_changed_case(examples: MultiComparison) -> None:
    data = matrix_data(examples, max_cases=None)
    assert data["names"] == ["candidate", "stopwords"]
    rows = {case_id: [data["statuses"][index] for index in statuses] for case_id, statuses in data["rows"]}
    assert rows["public-transport-pass@2026-01"] == ["missing_in_candidate", "unchanged"]
    assert len(rows) == data["total"] == 12
    assert len(matrix_data(examples, max_cases=5)["rows"]) == 5


def test_a_hostile_candidate_name_stays_text(tmp_path: Path) -> None:
    baseline = freeze_run(FIXTURE / "baseline.jsonl", FIXTURE / "corpus.csv", {"name": "baseline", "top_k": 2})
    hostile = freeze_run(FIXTURE / "a.jsonl", FIXTURE / "corpus.csv", {"name": PAGE_PAYLOAD, "top_k": 2})
    html = compare_many(baseline, [hostile]).render("html")
    assert "<script>window.pwned" not in html
    assert '<img src=x onerror="window.pwned' not in html
    assert html.count("</script>") == 2  # the data block's and the script's own


def test_the_matrix_filters_by_a_status_in_a_candidate(browser: WebDriver, page: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    open_page(browser, page)
    assert browser.find_element(By.ID, "shown").text == "12 of 12 cases shown"
    Select(browser.find_element(By.ID, "status")).select_by_value("regressed")
    assert browser.find_element(By.ID, "shown").text == "7 of 12 cases shown"  # in some candidate: candidate's 7
    Select(browser.find_element(By.ID, "candidate")).select_by_value("stopwords")
    rows = browser.find_elements(By.CSS_SELECTOR, "#matrix tbody tr")
    assert [row.find_element(By.TAG_NAME, "td").text for row in rows] == [
        "equipment-budget@2025-01",
        "equipment-budget@2026-01",
        "meal-allowance-daily@2025-01",
        "meal-allowance-daily@2026-01",
    ]
    assert browser.current_url.endswith("#status=regressed&candidate=stopwords")
    assert console_problems(browser) == []


def test_the_matrix_searches_and_opens_at_the_filters_of_its_address(browser: WebDriver, page: Path) -> None:
    from selenium.webdriver.common.by import By

    open_page(browser, page, fragment="#status=improved&q=hotel")
    assert browser.find_element(By.ID, "shown").text == "2 of 12 cases shown"
    assert "hotel-cap@2026-01" in body_text(browser)
    search = browser.find_element(By.ID, "search")
    search.clear()
    search.send_keys("mileage")
    assert browser.find_element(By.ID, "shown").text == "1 of 12 cases shown"
    assert console_problems(browser) == []
