"""The README's picture of the review page: the examples' comparison served, one regressed case open.

    python scripts/review_screenshot.py [--output docs/images/review.png]

Serves the shipped examples' comparison for review (``Comparison.review``, a review database in a temporary
folder), opens it in headless Chromium (Debian's ``chromium`` and ``chromedriver``, through Selenium) at the address
of ``equipment-budget@2026-01`` and saves what the window shows as a PNG. ``make screenshot`` runs it.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path
from urllib.parse import quote

from rag_compare import compare

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
CASE = "equipment-budget@2026-01"
WIDTH, HEIGHT = 1280, 2300
OPENED = "const case_ = document.querySelector('details.case.current'); return case_ !== null && case_.open"
LOADED = "return document.querySelector('details.case.current .verdict-form') !== null"
ONLY_REGRESSED = (
    "const badges = [...document.querySelectorAll('#case-list details.case .badge')];"
    "return badges.length > 0 && badges.every(badge => badge.textContent === 'regressed')"
)
SHOWN = "document.getElementById('review-progress').scrollIntoView({block: 'start'}); window.scrollBy(0, -12)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "images" / "review.png")
    output = parser.parse_args().output
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        raise SystemExit(f"needs {CHROMIUM} and {CHROMEDRIVER} (Debian packages chromium, chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    runs = ROOT / "runs"
    comparison = compare(
        runs / "baseline.arrow", runs / "candidate.arrow", passages=ROOT / "corpora" / "handbook_passages.csv"
    )
    with tempfile.TemporaryDirectory() as temporary:
        url = comparison.review(Path(temporary) / "reviews.sqlite", reviewer="reviewer")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"):
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={Path(temporary) / 'profile'}")
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        try:
            driver.set_window_size(WIDTH, HEIGHT)
            driver.get(url)
            WebDriverWait(driver, 30).until(lambda page: page.find_elements("css selector", "input[data-status]"))
            for box in driver.find_elements("css selector", "input[data-status]"):
                if (box.get_attribute("data-status") == "regressed") != box.is_selected():
                    box.click()
            WebDriverWait(driver, 30).until(lambda page: page.execute_script(ONLY_REGRESSED))
            driver.execute_script("location.hash = arguments[0]", f"#case={quote(CASE, safe='')}")
            WebDriverWait(driver, 30).until(lambda page: page.execute_script(OPENED))
            WebDriverWait(driver, 30).until(lambda page: page.execute_script(LOADED))
            driver.execute_script(SHOWN)
            output.write_bytes(driver.get_screenshot_as_png())
        finally:
            driver.quit()
            url.stop()
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
