"""JUnit XML: a suite of gate conditions and a suite of failing cases, read back by junitparser and by
xml.etree; counts, names, messages, the cap per status, and untrusted text kept to XML 1.0."""

from __future__ import annotations

import dataclasses
import io
import xml.etree.ElementTree as ET

import polars as pl
from junitparser import Failure, JUnitXml, Skipped, TestSuite

from rag_compare import Comparison
from rag_compare.compute.case_table import CaseTable
from rag_compare.compute.comparison import FORMATS
from rag_compare.compute.gate_result import ConditionResult, GateResult
from rag_compare.report.junit import CASES_SUITE, GATE_SUITE, write_junit, xml_safe
from tests.helpers.data import PAYLOAD
from tests.helpers.forged_runs import FORGED_CASE, forged_comparison

GATE = GateResult(
    (
        ConditionResult("regressed>2%", True, True, "4 of 34 cases (11.8%) regressed; the limit is 2%"),
        ConditionResult("recall:worse", False, False, "recall has no paired values"),
        ConditionResult("error_rate>10%", False, True, "3 of 34 cases (8.8%) failed or are missing; the limit is 10%"),
    ),
    alpha=0.05,
)
# The hand-made runs (with passages): 4 regressed, 2 failed in the candidate, 1 missing in the
# candidate; failed_in_baseline, mixed, improved and unchanged cases are not listed.
FAILING = [
    ("regressed", "hotel-approval@2026-01"),
    ("regressed", "parental-leave-weeks@2026-01"),
    ("regressed", "remote-abroad-days@2026-01"),
    ("regressed", "sabbatical@2026-01"),
    ("failed_in_candidate", "leave-carryover@2025-01"),
    ("failed_in_candidate", "phone-allowance@2026-01"),
    ("missing_in_candidate", "public-transport-pass@2026-01"),
]


def suites(xml: JUnitXml) -> dict[str, TestSuite]:
    return {suite.name: suite for suite in xml}


def counts(element: ET.Element) -> tuple[int, ...]:
    return tuple(int(element.attrib[name]) for name in ("tests", "failures", "errors", "skipped"))


def test_the_ci_formats_are_formats_of_a_comparison(examples: Comparison) -> None:
    assert {"github", "junit"} <= set(FORMATS)
    stream = io.StringIO()
    write_junit(examples, stream, gate=GATE)
    assert examples.render("junit", gate=GATE) == stream.getvalue()


def test_each_gate_condition_is_a_test_case(examples: Comparison) -> None:
    xml = JUnitXml.fromstring(examples.render("junit", gate=GATE).encode())
    gate = suites(xml)[GATE_SUITE]
    assert (gate.tests, gate.failures, gate.errors, gate.skipped) == (3, 1, 0, 1)
    assert {prop.name: prop.value for prop in gate.properties()} == {"alpha": "0.05"}
    held, unevaluated, passed = list(gate)
    assert [case.name for case in gate] == ["regressed>2%", "recall:worse", "error_rate>10%"]
    assert isinstance(held.result[0], Failure)
    assert held.result[0].message == "4 of 34 cases (11.8%) regressed; the limit is 2%"
    assert held.result[0].text == "regressed>2%: 4 of 34 cases (11.8%) regressed; the limit is 2%"
    assert isinstance(unevaluated.result[0], Skipped)
    assert unevaluated.result[0].message == "recall has no paired values"
    assert passed.is_passed
    assert passed.system_out == "3 of 34 cases (8.8%) failed or are missing; the limit is 10%"


def test_each_failing_case_is_a_failed_test_case_with_its_reasons(examples: Comparison) -> None:
    text = examples.render("junit", gate=GATE)
    cases = suites(JUnitXml.fromstring(text.encode()))[CASES_SUITE]
    assert (cases.tests, cases.failures, cases.errors, cases.skipped) == (7, 7, 0, 0)
    assert [(case.classname, case.name) for case in cases] == FAILING
    sabbatical = next(case for case in cases if case.name == "sabbatical@2026-01")
    failure = sabbatical.result[0]
    assert (failure.message, failure.type) == ("abstention_correct true -> false (worse)", "regressed")
    assert failure.text.splitlines()[:3] == [
        "where it changed: at the answer",
        "abstention_correct true -> false (worse)",
        "question: Can I take an unpaid sabbatical of several months, and how long can it be?",
    ]
    assert "candidate answer: Yes, you can take unpaid leave" in failure.text
    properties = {prop.name: prop.value for prop in cases.properties()}
    assert properties["max_cases"] == "1000"
    assert not [name for name in properties if name.startswith("left_out.")]
    # the same document read by the standard library: totals over both suites (3 + 7 tests)
    root = ET.fromstring(text)
    assert root.tag == "testsuites"
    assert counts(root) == (10, 8, 0, 1)
    assert [(suite.get("name"), counts(suite)) for suite in root] == [
        (GATE_SUITE, (3, 1, 0, 1)),
        (CASES_SUITE, (7, 7, 0, 0)),
    ]


def test_cases_are_capped_per_status_and_the_rest_is_counted(examples: Comparison) -> None:
    root = ET.fromstring(examples.render("junit", max_cases=1))
    [cases] = root
    assert [(case.get("classname"), case.get("name")) for case in cases.iter("testcase")] == [
        FAILING[0],
        FAILING[4],
        FAILING[6],
    ]
    properties = {prop.get("name"): prop.get("value") for prop in cases.iter("property")}
    # 4 regressed, 1 listed: 3 left out; 2 failed in the candidate, 1 listed: 1 left out
    assert properties["left_out.regressed"] == "3"
    assert properties["left_out.failed_in_candidate"] == "1"
    assert "left_out.missing_in_candidate" not in properties
    assert cases.findtext("system-out") == (
        "3 regressed cases left out; 1 failed_in_candidate case left out (at most 1 listed per status)"
    )
    assert counts(root) == counts(cases) == (3, 3, 0, 0)


def test_without_a_gate_only_the_cases_suite_is_written(examples: Comparison) -> None:
    xml = JUnitXml.fromstring(examples.render("junit").encode())
    assert list(suites(xml)) == [CASES_SUITE]
    assert (xml.tests, xml.failures, xml.errors, xml.skipped) == (7, 7, 0, 0)


def test_xml_safe_escapes_what_xml_forbids_and_keeps_the_rest() -> None:
    kept = "tab\t newline\n return\r \u00e9 \u202e \x85 \U0001f600"
    assert xml_safe(kept) == kept
    assert xml_safe("a\x00b\x1bc\x0bd\ufffee\uffff\ud800") == "a\\x00b\\x1bc\\x0bd\\ufffee\\uffff\\ud800"


def test_untrusted_text_reaches_the_xml_as_text_with_forbidden_characters_escaped() -> None:
    # a frame's strings are UTF-8 (no lone surrogate); a gate's condition is Python text (it may hold one)
    hostile = f"{PAYLOAD}\x00\x1b[31m\ufffe"
    escaped = f"{PAYLOAD}\\x00\\x1b[31m\\ufffe"
    target = pl.col("case_id") == hostile
    answer = pl.when(pl.col("case_id") == FORGED_CASE).then(pl.lit(f"line one\x0c\nline two {PAYLOAD}"))
    forged = forged_comparison(hostile, answer.otherwise("answer"))
    cases = forged.cases.with_columns(
        pl.when(target).then(pl.lit([f"{PAYLOAD}\x07"])).otherwise("reasons").alias("reasons"),
    )
    condition = ConditionResult(f"regressed\x1b>2%{PAYLOAD}\ud800", True, True, f"numbers\x00{PAYLOAD}")
    text = dataclasses.replace(forged, case_table=CaseTable.held(cases)).render(
        "junit", gate=GateResult((condition,), 0.05)
    )
    document = text.encode("utf-8")  # a lone surrogate would not encode
    root = ET.fromstring(document)  # a strict XML 1.0 parser: a forbidden character would not parse
    assert not [element for element in root.iter() if element.tag in {"script", "img"}]
    [gate_case] = root[0].iter("testcase")
    assert gate_case.get("name") == f"regressed\\x1b>2%{PAYLOAD}\\ud800"
    assert [failure.get("message") for failure in gate_case.iter("failure")] == [f"numbers\\x00{PAYLOAD}"]
    listed = suites(JUnitXml.fromstring(document))[CASES_SUITE]
    failed = next(item for item in listed if item.classname == "regressed" and item.name == escaped)
    assert failed.result[0].message == f"{PAYLOAD}\\x07"
    assert f"candidate answer: line one\\x0c\nline two {PAYLOAD}" in failed.result[0].text
