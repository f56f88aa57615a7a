"""The served page in a real browser: a verdict given through it is stored, and still shown after the server
restarts; the page's console holds no error and no Content-Security-Policy violation.

Needs Debian's ``chromium`` and ``chromium-driver`` (see ``tests/helpers/browser.py``): without them this skips,
unless ``RAG_COMPARE_REQUIRE_BROWSER`` is set, when it fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest

from rag_compare import Comparison, compare
from tests.helpers.browser import browser, console_problems
from tests.helpers.data import HANDMADE_RUNS, ROOT
from tests.helpers.review import case_path, reviewing

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.remote.webelement import WebElement

__all__ = ["browser"]

CASE = "hotel-approval@2026-01"
WAIT_SECONDS = 20


@pytest.fixture(scope="module")
def handmade() -> Comparison:
    return compare(
        HANDMADE_RUNS / "baseline.arrow",
        HANDMADE_RUNS / "candidate.arrow",
        passages=ROOT / "corpora" / "handbook_passages.csv",
    )


def _wait_for(browser: WebDriver, css: str) -> WebElement:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, WAIT_SECONDS).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, css))
    )


def _open_case(browser: WebDriver, url: str, case_id: str) -> WebElement:
    """Open the page at ``url`` with ``case_id``'s anchor; its panel's candidate verdict form once shown."""
    browser.get(f"{url}/#case={quote(case_id, safe='')}")
    return _wait_for(browser, f'details[data-case-id="{case_id}"][open] .verdict-form[data-side="candidate"]')


def _problems(browser: WebDriver) -> list[str]:
    """The console's errors and warnings (a script error, a refused request, a CSP violation)."""
    return [entry["message"] for entry in console_problems(browser)]


def test_a_verdict_given_through_the_page_outlives_a_restart(
    browser: WebDriver, handmade: Comparison, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    db = tmp_path / "reviews.sqlite"
    browser.get_log("browser")  # what earlier tests left
    with reviewing(handmade, db, reviewer="ana") as client:
        form = _open_case(browser, client.url, CASE)
        Select(form.find_element(By.CSS_SELECTOR, 'select[name="agree"]')).select_by_value("no")
        Select(form.find_element(By.CSS_SELECTOR, 'select[name="status"]')).select_by_value("unchanged")
        Select(form.find_element(By.CSS_SELECTOR, 'select[name="answer_correct"]')).select_by_value("yes")
        form.find_element(By.CSS_SELECTOR, 'textarea[name="comment"]').send_keys("</script><b>not bold</b>")
        form.find_element(By.CSS_SELECTOR, "button").click()
        WebDriverWait(browser, WAIT_SECONDS).until(lambda _: client.get_json(case_path(CASE))["verdicts"])
        (stored,) = client.get_json(case_path(CASE))["verdicts"]
        progress = browser.find_element(By.ID, "review-progress")  # the page's last request after a verdict
        WebDriverWait(browser, WAIT_SECONDS).until(lambda _: progress.text.startswith("Reviewed 1 of "))
    assert (stored["reviewer"], stored["side"], stored["agree"], stored["status"]) == (
        "ana",
        "candidate",
        False,
        "unchanged",
    )
    assert stored["labels"] == {
        "answer_correct": "yes",
        "grounded": None,
        "abstention_correct": None,
        "retrieval_ok": None,
    }
    assert stored["comment"] == "</script><b>not bold</b>"
    with reviewing(handmade, db) as client:
        _open_case(browser, client.url, CASE)
        history = _wait_for(browser, f'details[data-case-id="{CASE}"] .history li.verdict')
        assert "ana" in history.text
        assert "</script><b>not bold</b>" in history.text
        assert not browser.find_elements(By.CSS_SELECTOR, ".history b")
        assert _problems(browser) == []


def test_next_to_review_opens_the_first_queued_case(browser: WebDriver, handmade: Comparison, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    with reviewing(handmade, tmp_path / "reviews.sqlite") as client:
        browser.get(f"{client.url}/")
        _wait_for(browser, "details[data-case-id]")
        first = client.get_json("/api/queue/next")["case_id"]
        browser.find_element(By.ID, "next-to-review").click()
        opened = _wait_for(browser, "details[data-case-id][open]")
        assert opened.get_attribute("data-case-id") == first
        assert "queued" in browser.find_element(By.ID, "review-progress").text
        assert _problems(browser) == []
