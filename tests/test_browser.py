"""The HTML report in a real browser: headless Chromium renders it, shows the cases and stays inert
(the fixture: ``tests/helpers/browser.py``; the page's interactions: ``tests/report/test_page_browser.py``)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from rag_compare import Comparison, compare
from tests.helpers.browser import body_text, browser, console_problems, open_page
from tests.helpers.data import HANDMADE_RUNS, ROOT

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

__all__ = ["browser"]


@pytest.fixture(scope="module")
def examples_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    comparison = compare(
        HANDMADE_RUNS / "baseline.arrow",
        HANDMADE_RUNS / "candidate.arrow",
        passages=ROOT / "corpora" / "handbook_passages.csv",
    )
    page = tmp_path_factory.mktemp("report") / "report.html"
    page.write_text(comparison.render("html"), encoding="utf-8")
    return page


def test_the_report_shows_the_regressed_cases_and_the_aggregates_table(browser: WebDriver, examples_page: Path) -> None:
    from selenium.webdriver.common.by import By

    open_page(browser, examples_page)
    text = body_text(browser)
    for case_id in (
        "hotel-approval@2026-01",
        "parental-leave-weeks@2026-01",
        "remote-abroad-days@2026-01",
        "sabbatical@2026-01",
    ):
        assert case_id in text
    table = browser.find_element(By.ID, "aggregates-paired")
    rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert len(rows) == 12
    assert rows[0].text.split() == ["recall", "0.860", "1.000", "+0.140", "[+0.056,", "+0.237]", "0.016", "0.172", "25"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg")) == 4  # statuses, two delta charts, categories


def test_a_case_opens_to_show_both_answers(browser: WebDriver, examples_page: Path) -> None:
    from selenium.webdriver.common.by import By

    open_page(browser, examples_page)
    answer = "where the cap is 210 euros per night"
    assert answer not in body_text(browser)  # an improved case starts collapsed; regressions and failures open
    summary = browser.find_element(By.XPATH, "//summary[contains(., 'hotel-cap@2026-01')]")
    summary.click()
    assert answer in body_text(browser)
    assert console_problems(browser) == []


@pytest.mark.parametrize("width", [1280, 390])
def test_the_page_fits_the_window_and_the_screenshot_is_not_blank(
    browser: WebDriver, examples_page: Path, width: int, tmp_path: Path
) -> None:
    from PIL import Image, ImageStat

    open_page(browser, examples_page, width)
    overflow = browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0  # wide tables scroll inside their own box, the page does not
    png = browser.get_screenshot_as_png()
    (tmp_path / f"report-{width}.png").write_bytes(png)
    image = Image.open(io.BytesIO(png)).convert("L")
    assert image.size[0] >= width * 0.9
    low, high = image.getextrema()
    assert high - low > 150  # text dark on light, not one flat colour
    assert ImageStat.Stat(image).stddev[0] > 10
    assert len(image.getcolors(maxcolors=1 << 16) or range(1 << 16)) > 20


def test_dark_mode_follows_the_system_setting(browser: WebDriver, examples_page: Path) -> None:
    script = "return getComputedStyle(document.querySelector('main')).backgroundColor"
    open_page(browser, examples_page)
    light = browser.execute_script(script)
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]}
    )
    try:
        dark = browser.execute_script(script)
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    assert light == "rgb(255, 255, 255)"
    assert dark == "rgb(13, 17, 23)"


def test_hostile_text_stays_text_in_the_browser(
    browser: WebDriver,
    hostile: Comparison,
    tmp_path: Path,
) -> None:
    page = tmp_path / "hostile.html"
    page.write_text(hostile.render("html"), encoding="utf-8")
    open_page(browser, page)
    counts = browser.execute_script(
        "return [document.querySelectorAll('img, iframe, object, script:not(#rag-compare-data)').length,"
        " [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,"
        " typeof window.__pwned]"
    )
    assert counts == [1, 0, "undefined"]  # the page's own script, no other
    assert "<script>window.__pwned = 1</script>" in body_text(browser)
