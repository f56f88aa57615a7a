"""The HTML page at scale: its size, and how soon Chromium shows its cases and follows a filter.

    python benchmarks/bench_page.py [--cases 1000000] [--k 10] [--repeats 5] [--workdir DIR] [--seed 0]

The data of ``bench_compare.py`` (generated once into the work folder, reused after). The CLI writes the page
(``--format html``, the default ``--max-cases``) and, as the reference, the text summary of the same comparison,
each in its own process. Then one headless Chromium (Debian's ``chromium`` and ``chromedriver``, through Selenium)
opens, ``--repeats`` times, interleaved: the text summary (the least any page takes to show), and the page, timed
from the request to its first case listed; then a status filter (improved only) until every case listed is
improved, and a search for the last case listed until the list starts with it. Targets (issue 35): the page
under 10 MB, usable within 3 s.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bench_compare import MIB, SIDES, data_options, prepare, run_cli
from harness import each, yes

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

TARGET_BYTES, TARGET_SECONDS = 10 * 10**6, 3.0
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FIRST_CASE = "return document.querySelectorAll('#case-list details.case').length > 0"
ONLY_IMPROVED = (
    "const badges = [...document.querySelectorAll('#case-list details.case .badge')];"
    "return badges.length > 0 && badges.every(badge => badge.textContent === 'improved')"
)
LISTED = "document.querySelectorAll('#case-list details.case')"
LAST_LISTED = f"const cases = {LISTED}; return cases[cases.length - 1].dataset.caseId"
SEARCHED = f"return {LISTED}[0]?.dataset.caseId === arguments[0]"


def chromium(profile: Path) -> WebDriver:
    """A headless Chromium 1280 pixels wide, or the benchmark stops saying what it needs."""
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        raise SystemExit(f"needs {CHROMIUM} and {CHROMEDRIVER} (Debian packages chromium, chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_window_size(1280, 1000)
    return driver


def until(driver: WebDriver, script: str, *arguments: str) -> float:
    """Seconds until ``script`` returns true in the page (polled every 10 ms, at most 60 s)."""
    from selenium.webdriver.support.ui import WebDriverWait

    start = time.perf_counter()
    WebDriverWait(driver, 60, poll_frequency=0.01).until(lambda page: page.execute_script(script, *arguments))
    return time.perf_counter() - start


def opened(driver: WebDriver, path: Path, ready: str) -> float:
    """Seconds from asking for ``path`` until ``ready`` holds in it."""
    driver.get("about:blank")
    start = time.perf_counter()
    driver.get(path.as_uri())
    until(driver, ready)
    return time.perf_counter() - start


def page_times(driver: WebDriver, page: Path, summary: Path) -> dict[str, float]:
    """One round: the summary shown, the page's first case, a status filter, a search."""
    times = {"text summary shown": opened(driver, summary, "return document.body.innerText.length > 0")}
    times["page: first case listed"] = opened(driver, page, FIRST_CASE)
    for box in driver.find_elements("css selector", "input[data-status]"):
        if (box.get_attribute("data-status") == "improved") != box.is_selected():
            box.click()
    times["filter: improved only"] = until(driver, ONLY_IMPROVED)
    wanted = driver.execute_script(LAST_LISTED)
    driver.find_element("id", "case-search").send_keys(wanted)
    times["search (after its 150 ms pause)"] = until(driver, SEARCHED, wanted)
    return times


def main() -> None:
    options, workdir = data_options(__doc__.splitlines()[0])
    data = prepare(workdir, options.cases, options.k, options.seed)
    runs = [workdir / f"{side}.arrow" for side in SIDES]
    print(f"cases                            {options.cases:,} at k={options.k} (data in {workdir}, {data})")
    with tempfile.TemporaryDirectory() as temporary:
        page, summary = Path(temporary) / "page.html", Path(temporary) / "summary.txt"
        seconds, peak = run_cli(*runs, page, "html")
        run_cli(*runs, summary, "text")
        size = page.stat().st_size
        print(f"page written                     {seconds:.1f} s by the CLI, peak {peak / MIB:,.0f} MiB")
        print(f"page size                        {size / 10**6:.2f} MB (summary {summary.stat().st_size:,} bytes)")
        driver = chromium(Path(temporary) / "profile")
        try:
            rounds = [page_times(driver, page, summary) for _ in range(options.repeats)]
            problems = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        finally:
            driver.quit()
    medians = {name: statistics.median(round_[name] for round_ in rounds) for name in rounds[0]}
    for name, median in medians.items():
        print(f"{name:<32} {median:.2f} s (median of {each([round_[name] for round_ in rounds], 2)})")
    ratio = medians["page: first case listed"] / medians["text summary shown"]
    print(f"ratio page / summary             {ratio:.1f}x")
    usable = max(medians["page: first case listed"], medians["filter: improved only"])
    print(f"targets                          page < 10 MB: {yes(size < TARGET_BYTES)}; "
          f"cases listed and filtered within {TARGET_SECONDS:.0f} s: {yes(usable < TARGET_SECONDS)}")  # fmt: skip
    if problems:
        sys.exit(f"the browser's console reported errors: {problems}")


if __name__ == "__main__":
    main()
