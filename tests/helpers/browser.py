"""Headless Chromium through Selenium, for the tests of the HTML page, with the browser's console log kept.

Needs Debian's ``chromium`` and ``chromium-driver``. Without them the tests that use ``browser`` skip, unless
``RAG_COMPARE_REQUIRE_BROWSER`` is set (``.ci/run`` installs both and sets it), when they fail.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def require_chromium() -> None:
    """Skip the test calling it where Chromium or its driver is missing; fail instead when the browser is required."""
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        message = f"needs {CHROMIUM} and {CHROMEDRIVER} (Debian packages chromium, chromium-driver)"
        if os.environ.get("RAG_COMPARE_REQUIRE_BROWSER"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    """One headless Chromium for a test module, keeping every message of its console."""
    require_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    for flag in (*FLAGS, f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_window_size(1280, 1000)
    yield driver
    driver.quit()


def open_page(browser: WebDriver, page: Path, width: int = 1280, fragment: str = "") -> None:
    """Open ``page`` (at ``fragment``, e.g. ``#case=...``) in a window ``width`` pixels wide, the console
    emptied first."""
    browser.get_log("browser")
    browser.set_window_size(width, 1000)
    browser.get("about:blank")
    browser.get(page.as_uri() + fragment)
    assert browser.execute_script("return document.readyState") == "complete"


def console_problems(browser: WebDriver) -> list[dict[str, Any]]:
    """The console's warnings and errors since it was last read: script errors, CSP violations."""
    return [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]


def body_text(browser: WebDriver) -> str:
    from selenium.webdriver.common.by import By

    text: str = browser.find_element(By.TAG_NAME, "body").text
    return text
