"""The interactive page in headless Chromium: filters, search, sort, anchors, j/k, the case panel and the
answer diff's markup, hostile text; after every test, a console with no script error and no CSP violation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import polars as pl
import pytest

from rag_compare import Comparison, compare, freeze_run, load_corpus, load_run
from rag_compare.core.signals import STAGE_PHRASES
from tests.helpers.browser import body_text, browser, console_problems, open_page
from tests.helpers.data import HANDMADE_RUNS, ROOT
from tests.helpers.hostile import PAGE_PAYLOAD, hostile_page_comparison
from tests.helpers.page import page_parts

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

__all__ = ["browser"]

LISTED = "return [...document.querySelectorAll('#case-list details.case')].map(e => e.dataset.caseId)"
CURRENT = "const c = document.querySelector('details.case.current'); return c && [c.dataset.caseId, c.open]"


@pytest.fixture(scope="module")
def every_case(tmp_path_factory: pytest.TempPathFactory, examples: Comparison) -> Path:
    page = tmp_path_factory.mktemp("page") / "every-case.html"
    page.write_text(examples.render("html", all_cases=True), encoding="utf-8")
    return page


@pytest.fixture(scope="module")
def data(every_case: Path) -> dict[str, Any]:
    return page_parts(every_case.read_text(encoding="utf-8")).data


@pytest.fixture(autouse=True)
def quiet_console(browser: WebDriver) -> Iterator[None]:
    """Every test ends with no script error, no CSP violation and no other warning in the console."""
    browser.get_log("browser")
    yield
    assert console_problems(browser) == []


def listed(browser: WebDriver) -> list[str]:
    ids: list[str] = browser.execute_script(LISTED)
    return ids


def choose(browser: WebDriver, element_id: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("id", element_id)).select_by_value(value)


def toggle_status(browser: WebDriver, status: str) -> None:
    browser.find_element("css selector", f'input[data-status="{status}"]').click()


def search(browser: WebDriver, text: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    box = browser.find_element("id", "case-search")
    box.clear()
    box.send_keys(text)
    WebDriverWait(browser, 3).until(
        lambda driver: driver.execute_script("return document.getElementById('case-search').value") == text
    )
    browser.execute_script("return new Promise(done => setTimeout(done, 300))")


def test_every_case_is_listed_in_report_order_and_regressions_and_failures_open(
    browser: WebDriver, every_case: Path, data: dict[str, Any], examples: Comparison
) -> None:
    open_page(browser, every_case)
    assert listed(browser) == [case["case_id"] for case in data["cases"]]
    assert len(listed(browser)) == examples.n_cases == 34
    opened = browser.execute_script(
        "return [...document.querySelectorAll('#case-list details.case[open]')].map(e => e.dataset.caseId)"
    )
    expected = [
        case["case_id"]
        for case in data["cases"]
        if case["status"] == "regressed" or case["status"].startswith(("failed", "missing"))
    ]
    assert opened == expected
    assert len(expected) == 8
    assert "Showing 34 of 34 matching cases." in body_text(browser)


def test_status_filters_combine_and_the_counts_follow_the_other_filters(
    browser: WebDriver, every_case: Path, examples: Comparison
) -> None:
    open_page(browser, every_case)
    cases = examples.cases
    toggle_status(browser, "regressed")
    assert sorted(listed(browser)) == sorted(cases.filter(pl.col("status") == "regressed").get_column("case_id"))
    toggle_status(browser, "improved")
    chosen = cases.filter(pl.col("status").is_in(["regressed", "improved"]))
    assert sorted(listed(browser)) == sorted(chosen.get_column("case_id"))
    choose(browser, "filter-category", "rule_exception")
    narrowed = chosen.filter(pl.col("category") == "rule_exception").get_column("case_id")
    assert sorted(listed(browser)) == sorted(narrowed)
    counted = cases.filter(pl.col("category") == "rule_exception").group_by("status").len()
    counts = dict(zip(counted.get_column("status").cast(pl.String), counted.get_column("len"), strict=True))
    label = browser.find_element("css selector", 'input[data-status="unchanged"] ~ .count').text
    assert label == f"{counts.get('unchanged', 0)} of 18"
    assert f"Showing {len(narrowed)} of {len(narrowed)} matching cases." in body_text(browser)
    browser.find_element("id", "clear-filters").click()
    assert len(listed(browser)) == 34


def test_search_finds_ids_questions_and_answers_whatever_their_case(browser: WebDriver, every_case: Path) -> None:
    open_page(browser, every_case)
    search(browser, "SABBATICAL")
    assert listed(browser) == ["sabbatical@2026-01"]
    search(browser, "line manager in concur")  # words of an answer
    found = listed(browser)
    assert "hotel-approval@2026-01" in found
    assert len(found) < 34
    search(browser, "no case says this")
    assert listed(browser) == []
    assert "Showing 0 of 0 matching cases." in body_text(browser)


def test_sort_by_a_delta_puts_the_lowest_first_and_nulls_last(
    browser: WebDriver, every_case: Path, data: dict[str, Any]
) -> None:
    open_page(browser, every_case)
    deltas = {case["case_id"]: case["deltas"]["recall"] for case in data["cases"]}
    choose(browser, "case-sort", "delta:recall:asc")
    ordered = [deltas[case] for case in listed(browser)]
    known = [delta for delta in ordered if delta is not None]
    assert known == sorted(known)
    assert ordered == known + [None] * (len(ordered) - len(known))
    assert known[0] < known[-1]
    choose(browser, "case-sort", "delta:recall:desc")
    assert [deltas[case] for case in listed(browser)][: len(known)] == sorted(known, reverse=True)


def test_what_moved_filters_on_a_signal_and_says_what_its_direction_means(
    browser: WebDriver, every_case: Path, data: dict[str, Any]
) -> None:
    open_page(browser, every_case)
    tolerance = data["tolerance"]
    for signal, direction, meaning in [("context_construction_failure", "up", "worse"), ("recall", "up", "better")]:
        choose(browser, "moved-signal", signal)
        choose(browser, "moved-direction", direction)
        expected = [
            case["case_id"]
            for case in data["cases"]
            if case["deltas"][signal] is not None and case["deltas"][signal] > tolerance
        ]
        assert expected
        assert listed(browser) == expected
        option = browser.find_element("css selector", f"#moved-direction option[value='{direction}']").text
        assert option == f"went {direction} ({meaning})"
    choose(browser, "moved-direction", "down")
    assert listed(browser) == [
        case["case_id"]
        for case in data["cases"]
        if case["deltas"]["recall"] is not None and case["deltas"]["recall"] < -tolerance
    ]


def test_an_address_opens_and_scrolls_to_its_case_and_follows_the_case_opened(
    browser: WebDriver, every_case: Path
) -> None:
    case_id = "meal-allowance-client-meal@2026-01"
    open_page(browser, every_case, fragment=f"#case={quote(case_id, safe='')}")
    assert browser.execute_script(CURRENT) == [case_id, True]
    top = browser.execute_script("return document.querySelector('details.case.current').getBoundingClientRect().top")
    at_bottom = browser.execute_script("return window.scrollY + window.innerHeight >= document.body.scrollHeight - 2")
    assert abs(top) < 5 or (at_bottom and 0 <= top < 1000)
    browser.find_element("xpath", "//summary[contains(., 'hotel-cap@2026-01')]").click()
    assert browser.execute_script("return location.hash") == "#case=" + quote("hotel-cap@2026-01", safe="")
    browser.execute_script(f"location.hash = 'case={quote('sabbatical@2026-01', safe='')}'")
    assert browser.execute_script(CURRENT) == ["sabbatical@2026-01", True]


def test_an_address_of_a_filtered_out_case_clears_the_filters(browser: WebDriver, every_case: Path) -> None:
    open_page(browser, every_case)
    search(browser, "sabbatical")
    browser.execute_script("location.hash = 'case=' + encodeURIComponent('hotel-cap@2026-01')")
    assert browser.execute_script(CURRENT) == ["hotel-cap@2026-01", True]
    assert len(listed(browser)) == 34


def test_j_and_k_move_to_the_next_and_previous_case(browser: WebDriver, every_case: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    open_page(browser, every_case)
    order = listed(browser)
    ActionChains(browser).send_keys("j").perform()
    assert browser.execute_script(CURRENT) == [order[0], True]
    ActionChains(browser).send_keys("jj").perform()
    assert browser.execute_script(CURRENT) == [order[2], True]
    assert browser.execute_script("return location.hash") == "#case=" + quote(order[2], safe="")
    ActionChains(browser).send_keys("k").perform()
    assert browser.execute_script(CURRENT) == [order[1], True]
    search(browser, "j")  # typed into the search box: not a move
    assert browser.find_element("id", "case-search").get_attribute("value") == "j"


def test_the_answer_diff_marks_words_by_more_than_colour(browser: WebDriver, every_case: Path) -> None:
    open_page(browser, every_case, fragment="#case=" + quote("equipment-budget@2026-01", safe=""))
    panel = "document.querySelector('details.case.current')"
    words = "[...e.childNodes].filter(n => !n.classList).map(n => n.textContent).join('').trim()"
    labels = "[...e.querySelectorAll('.visually-hidden')].map(n => n.textContent).join('')"
    marked = f"return [...{panel}.querySelectorAll('.side-%s blockquote.answer %s')].map(e => [{words}, {labels}])"
    deleted = browser.execute_script(marked % ("baseline", "del"))
    inserted = browser.execute_script(marked % ("candidate", "ins"))
    assert deleted == [["You have", "[deleted: ]"]]
    assert inserted == [["Each employee has", "[inserted: ]"]]
    styles = browser.execute_script(
        f"const d = {panel}.querySelector('del'), i = {panel}.querySelector('ins'), h = d.querySelector('.visually-hidden');"
        "return [getComputedStyle(d).textDecorationLine, getComputedStyle(i).textDecorationLine,"
        " h.getBoundingClientRect().width, getComputedStyle(h).position]"
    )
    assert styles == ["line-through", "underline", 1, "absolute"]
    assert browser.execute_script(f"return {panel}.querySelectorAll('.side-candidate del').length") == 0
    text = browser.find_element("css selector", "details.case.current .side-baseline blockquote.answer").text
    assert "an equipment budget of 800 euros" in text


def test_identical_answers_are_shown_once_and_said_to_be(
    browser: WebDriver, every_case: Path, data: dict[str, Any]
) -> None:
    same = next(case for case in data["cases"] if case["answer_diff"] and len(case["answer_diff"]) == 1)
    open_page(browser, every_case, fragment="#case=" + quote(same["case_id"], safe=""))
    panel = browser.find_element("css selector", "details.case.current")
    assert "The two answers are identical." in panel.text
    assert len(panel.find_elements("css selector", "blockquote.answer")) == 1


def test_a_side_shows_its_passages_marks_context_usage_and_failure(browser: WebDriver, every_case: Path) -> None:
    open_page(browser, every_case, fragment="#case=" + quote("equipment-budget@2026-01", safe=""))
    candidate = browser.find_element("css selector", "details.case.current .side-candidate")
    items = candidate.find_elements("css selector", "ol.passages > li")
    exception = next(item for item in items if "equipment-budget-exception-1@2026-01" in item.text)
    assert "required" in exception.text
    assert "✗ not in the context" in exception.text
    assert "latency" in candidate.text
    assert "prompt tokens" in candidate.text
    open_page(browser, every_case, fragment="#case=" + quote("phone-allowance@2026-01", safe=""))
    failed = browser.find_element("css selector", "details.case.current .side-candidate")
    assert "failed" in failed.find_element("css selector", "p.error").text
    missing = "public-transport-pass@2026-01"
    open_page(browser, every_case, fragment="#case=" + quote(missing, safe=""))
    assert "no record" in browser.find_element("css selector", "details.case.current .side-candidate").text


def test_hostile_text_stays_text_and_the_layout_holds(browser: WebDriver, tmp_path: Path) -> None:
    page = tmp_path / "hostile.html"
    page.write_text(hostile_page_comparison().render("html", all_cases=True), encoding="utf-8")
    open_page(browser, page, width=390)
    assert browser.execute_script("return typeof window.pwned") == "undefined"
    assert browser.title.startswith("rag-compare: baseline")
    assert len(listed(browser)) == 3
    counts = browser.execute_script(
        "return [document.querySelectorAll('img, iframe, object, a, script:not(#rag-compare-data)').length,"
        " [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length]"
    )
    assert counts == [1, 0]
    for case_id in listed(browser):
        browser.execute_script(f"location.hash = 'case=' + encodeURIComponent({case_id!r})")
    question = browser.execute_script("return document.querySelector('details.case dd .data').textContent")
    assert question == PAGE_PAYLOAD
    overflow = browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    assert browser.execute_script("return typeof window.pwned") == "undefined"


def test_the_notebook_frame_runs_the_page(browser: WebDriver, examples: Comparison, tmp_path: Path) -> None:
    cell = tmp_path / "cell.html"
    cell.write_text(f"<!DOCTYPE html><html><body>{examples._repr_html_()}</body></html>", encoding="utf-8")
    open_page(browser, cell)
    browser.switch_to.frame(browser.find_element("tag name", "iframe"))
    try:
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(browser, 5).until(listed)
        assert len(listed(browser)) == 16
        toggle_status(browser, "improved")
        assert len(listed(browser)) == examples.counts["improved"] == 5
    finally:
        browser.switch_to.default_content()


def test_the_context_highlights_required_passages_and_marks_where_one_was_cut(
    browser: WebDriver, tmp_path: Path
) -> None:
    rule = "Meals on business trips are reimbursed up to 50 euros per day."
    corpus = load_corpus(
        pl.DataFrame(
            {
                "case_id": ["meal@v1"],
                "question": ["How much for meals?"],
                "answerability": ["answerable"],
                "source_version": ["v1"],
                "required_passage_ids": [["meal"]],
            }
        )
    )
    contexts = {"baseline": f"[meal] {rule}", "candidate": f"[meal] {rule[:30]}"}
    runs = [
        freeze_run(
            pl.DataFrame(
                {"case_id": ["meal@v1"], "retrieved_passage_ids": [["meal"]], "context": [context], "answer": ["50."]}
            ),
            corpus,
            {"name": side, "top_k": 1},
        )
        for side, context in contexts.items()
    ]
    passages = pl.DataFrame({"passage_id": ["meal"], "source_version": ["v1"], "text": [rule]})
    page = tmp_path / "cut.html"
    page.write_text(compare(*runs, passages=passages).render("html", all_cases=True), encoding="utf-8")
    open_page(browser, page, fragment="#case=meal%40v1")
    marks = browser.execute_script(
        "return ['baseline', 'candidate'].map(side => {"
        " const context = document.querySelector('details.case.current .side-' + side + ' pre.context');"
        " return [[...context.querySelectorAll('mark.required')].map(m => m.textContent),"
        " [...context.querySelectorAll('.cut')].map(m => m.textContent.trim())]; })"
    )
    assert (
        marks
        == [
            [[f"[required meal: [evidence: {rule}]]"], []],  # "50." is there: the sentence holding 50 is its evidence
            [[f"[required meal: {rule[:30]}]"], ["✂ cut: meal continues beyond the context"]],
        ]
    )


def test_the_stage_filter_lists_the_cases_that_changed_there_and_each_shows_its_stage(
    browser: WebDriver, every_case: Path, examples: Comparison
) -> None:
    open_page(browser, every_case)
    stages = examples.cases.select("case_id", pl.col("stage").cast(pl.String))
    options = browser.execute_script(
        "return [...document.querySelectorAll('#filter-stage option')].map(o => [o.value, o.textContent])"
    )
    present = sorted(stages.get_column("stage").drop_nulls().unique())
    assert options == [["", "any stage"], *([stage, STAGE_PHRASES[stage]] for stage in present)]
    choose(browser, "filter-stage", "answer")
    at_answer = stages.filter(pl.col("stage") == "answer").get_column("case_id")
    assert len(at_answer) > 0
    assert sorted(listed(browser)) == sorted(at_answer)
    tags = browser.execute_script(
        "return [...document.querySelectorAll('#case-list details.case .tag.stage')].map(e => e.textContent.trim())"
    )
    assert tags == ["at the answer"] * len(at_answer)
    browser.find_element("id", "clear-filters").click()
    assert len(listed(browser)) == examples.n_cases


HOTEL = "hotel-cap@2026-01"
HOTEL_ANSWER_CLAIMS = (
    "Hotel stays are capped at 150 euros per night, including taxes, except in Paris, London and Zurich, where the"
    " cap is 210 euros per night.",
    "Bookings above the cap need prior approval from your line manager in Concur.",
)
PARIS = "in Paris, London and Zurich the cap is 210 euros per night."
APPROVAL = "need prior approval from your line manager"


@pytest.fixture(scope="module")
def claimed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hand-made runs with claims by hand on HOTEL: the candidate's approval claim became unsupported; its
    Paris claim cites the exception passage, the baseline's approval claim the approval passage."""
    from tests.helpers.claims import claim, handmade_scores

    runs = [HANDMADE_RUNS / f"{side}.arrow" for side in ("baseline", "candidate")]
    contexts = [load_run(run).records.filter(pl.col("case_id") == HOTEL).item(0, "context") for run in runs]
    paris = contexts[1].index(PARIS)
    approval = contexts[0].index(APPROVAL)
    baseline = {HOTEL: [claim(HOTEL_ANSWER_CLAIMS[1], span=(approval, approval + len(APPROVAL)), cited=APPROVAL)]}
    candidate = {
        HOTEL: [
            claim(HOTEL_ANSWER_CLAIMS[0], span=(paris, paris + len(PARIS)), cited=PARIS),
            claim(HOTEL_ANSWER_CLAIMS[1], False),
        ]
    }
    comparison = compare(
        *runs,
        passages=ROOT / "corpora" / "handbook_passages.csv",
        baseline_scores=handmade_scores("baseline", baseline),
        candidate_scores=handmade_scores("candidate", candidate),
    )
    page = tmp_path_factory.mktemp("claims") / "claims.html"
    page.write_text(comparison.render("html", all_cases=True), encoding="utf-8")
    return page


def test_unsupported_claims_are_marked_in_the_answer_and_evidence_in_the_context(
    browser: WebDriver, claimed: Path
) -> None:
    open_page(browser, claimed, fragment="#case=" + quote(HOTEL, safe=""))
    panel = "document.querySelector('details.case.current')"
    texts = "[...e.childNodes].filter(n => !n.classList || !n.classList.contains('visually-hidden')).map(n => n.textContent).join('')"
    marks = f"return [...{panel}.querySelectorAll('.side-%s %s')].map(e => {texts})"
    assert (
        "".join(browser.execute_script(marks % ("candidate", "blockquote.answer mark.unsupported")))
        == (HOTEL_ANSWER_CLAIMS[1])
    )
    assert browser.execute_script(marks % ("baseline", "blockquote.answer mark.unsupported")) == []
    assert browser.execute_script(marks % ("candidate", "pre.context mark.evidence")) == [PARIS]
    assert browser.execute_script(marks % ("baseline", "pre.context mark.evidence")) == [APPROVAL]
    claims = browser.execute_script(
        f"return [...{panel}.querySelectorAll('.side-candidate ul.claims > li')].map(e => e.textContent)"
    )
    assert claims == [
        f"✓ supported {HOTEL_ANSWER_CLAIMS[0]} · added · in travel-hotel-exception-1@2026-01 · cited: {PARIS}",
        f"✗ unsupported {HOTEL_ANSWER_CLAIMS[1]} · became unsupported",
    ]
    other = "#case=" + quote("bike-lease@2026-01", safe="")
    open_page(browser, claimed, fragment=other)
    assert (
        "Same as ever." in browser.find_element("css selector", "details.case.current .side-candidate ul.claims").text
    )
