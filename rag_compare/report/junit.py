"""A comparison as JUnit XML, for CI systems that read it (GitLab, Jenkins, Azure Pipelines).

One ``<testsuites>`` holds up to two suites, the comparison's warnings first in the first one's properties
(each a ``warning`` property):

- ``rag-compare gate`` (with a gate only): a test case per condition, in the gate's order, named by the
  condition; a ``<failure>`` with its numbers when it held, ``<skipped>`` when it could not be
  evaluated, passed otherwise (its numbers in ``<system-out>``).
- ``rag-compare cases``: a test case per case whose candidate side regressed, failed, was judge-failed or is
  missing (``FAILING_STATUSES``: a missing candidate is an error of the candidate, as the gate's error rate counts
  it), ``classname`` its status, ``name`` its id, where it changed and its reasons in the failure. At most
  ``max_cases`` per status, by case id; how many were left out is in the suite's properties (``left_out.STATUS``)
  and its ``<system-out>``, how many unreviewed synthetic cases a run left out by design in
  ``not_run.unreviewed_synthetic``.

Several candidates (``write_multi_junit``) give those two suites per candidate, in their order, named after it
(``rag-compare gate: NAME``, ``rag-compare cases: NAME``), the warnings in the first suite's properties.

An agreement with people is written the same way: the gate's suite, then ``rag-compare agreement``, a passing
test case per judge (``classname``) and label (``name``), its figures in ``<system-out>``.

The XML is built by ``xml.etree.ElementTree``; every text from data goes through ``xml_safe`` first, and
every text and attribute of the tree is redacted (``credentials.redact``) before it is written.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

import polars as pl

from rag_compare.compute.case_status import STAGED_STATUSES
from rag_compare.core.credentials import redactor
from rag_compare.core.listing import counted
from rag_compare.core.result import DEFAULT_MAX_CASES, shown_as_escapes
from rag_compare.core.signals import STAGE_PHRASES

if TYPE_CHECKING:
    from rag_compare.compute.agreement import Agreement
    from rag_compare.compute.comparison import Comparison
    from rag_compare.compute.gate_result import ConditionResult, GateResult
    from rag_compare.compute.multi_comparison import MultiComparison

__all__ = [
    "AGREEMENT_SUITE",
    "CASES_SUITE",
    "FAILING_STATUSES",
    "GATE_SUITE",
    "write_agreement_junit",
    "write_junit",
    "write_multi_junit",
    "xml_safe",
]

GATE_SUITE = "rag-compare gate"
AGREEMENT_SUITE = "rag-compare agreement"
CASES_SUITE = "rag-compare cases"
FAILING_STATUSES = (
    "regressed",
    "failed_in_candidate",
    "failed_in_both",
    "judge_failed_in_candidate",
    "judge_failed_in_both",
    "missing_in_candidate",
    "missing_in_both",
)
"""The statuses listed as failed test cases, in this order: the candidate got worse or has no answer."""
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
"""What XML 1.0 forbids in a document: C0 controls but tab, newline and CR; lone surrogates; U+FFFE/FFFF."""
_COUNTS = ("tests", "failures", "errors", "skipped")


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 forbids shown as its escape: ``\\x1b``, ``\\ufffe``, ``\\ud800``."""
    return shown_as_escapes(_XML_FORBIDDEN, text)


def write_junit(
    comparison: Comparison,
    stream: TextIO,
    *,
    max_cases: int | None = DEFAULT_MAX_CASES,
    gate: GateResult | None = None,
) -> None:
    """Write ``comparison`` and the verdict of ``gate`` to ``stream`` as JUnit XML, listing up to
    ``max_cases`` failing cases per status (``None``: all)."""
    root = ET.Element("testsuites", name="rag-compare")
    root.extend(_comparison_suites(comparison, max_cases, gate))
    _warn(root[0], comparison.warnings)
    _write_tree(root, stream)


def write_multi_junit(
    multi: MultiComparison,
    stream: TextIO,
    *,
    max_cases: int | None = DEFAULT_MAX_CASES,
    gates: Mapping[str, GateResult] | None = None,
) -> None:
    """Write several candidates and each one's gate verdict (``gates``, by name) to ``stream`` as JUnit XML:
    per candidate its gate's suite and its cases' suite (up to ``max_cases`` failing cases per status)."""
    root = ET.Element("testsuites", name="rag-compare")
    for name, comparison in zip(multi.names, multi.comparisons, strict=True):
        for suite in _comparison_suites(comparison, max_cases, (gates or {}).get(name)):
            suite.set("name", f"{suite.get('name')}: {name}")
            root.append(suite)
    _warn(root[0], multi.warnings)
    _write_tree(root, stream)


def _comparison_suites(comparison: Comparison, max_cases: int | None, gate: GateResult | None) -> list[ET.Element]:
    """The gate's suite (with a gate) and the cases' suite of one comparison."""
    return [*([] if gate is None else [_gate_suite(gate)]), _cases_suite(comparison, max_cases)]


def write_agreement_junit(result: Agreement, stream: TextIO, *, gate: GateResult | None = None) -> None:
    """Write an agreement with people and the verdict of ``gate`` as JUnit XML: the gate's suite, then a test
    case per judge and label (its figures as output)."""
    from rag_compare.report.agreement import agreement_line

    root = ET.Element("testsuites", name="rag-compare")
    if gate is not None:
        root.append(_gate_suite(gate))
    suite = _suite(AGREEMENT_SUITE, {"human": str(result.human["source"])})
    for row in result.rows:
        case = _element("testcase", classname=row.judge, name=row.label)
        case.append(_element("system-out", agreement_line(row)))
        suite.append(case)
    root.append(_counted(suite))
    _write_tree(root, stream)


def _write_tree(root: ET.Element, stream: TextIO) -> None:
    """Total the suites' counts on ``root``, redact it, and write it as an XML document."""
    for name in _COUNTS:
        root.set(name, str(sum(int(suite.get(name, "0")) for suite in root)))
    _redact_tree(root)
    ET.indent(root)
    stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    stream.write(ET.tostring(root, encoding="unicode"))
    stream.write("\n")


def _redact_tree(root: ET.Element) -> None:
    """Redact every text and attribute value under ``root``: a run's name shows no credential."""
    redact = redactor()
    for element in root.iter():
        if element.text:
            element.text = redact(element.text)
        for name, value in list(element.attrib.items()):
            element.set(name, redact(value))


def _gate_suite(gate: GateResult) -> ET.Element:
    suite = _suite(GATE_SUITE, {"alpha": f"{gate.alpha:g}"})
    for result in gate.conditions:
        suite.append(_condition_case(result))
    return _counted(suite)


def _condition_case(result: ConditionResult) -> ET.Element:
    case = _element("testcase", classname="gate", name=result.condition)
    if result.held:
        failure = _element("failure", f"{result.condition}: {result.numbers}", message=result.numbers, type="held")
        case.append(failure)
    elif not result.evaluated:
        case.append(_element("skipped", message=result.numbers))
    else:
        case.append(_element("system-out", result.numbers))
    return case


def _cases_suite(comparison: Comparison, max_cases: int | None) -> ET.Element:
    counts = comparison.counts
    left_out = {
        status: counts[status] - max_cases
        for status in FAILING_STATUSES
        if max_cases is not None and counts[status] > max_cases
    }
    properties = {
        "baseline": f"{comparison.baseline.name} ({comparison.baseline.fingerprint[:12]})",
        "candidate": f"{comparison.candidate.name} ({comparison.candidate.fingerprint[:12]})",
        "max_cases": "all" if max_cases is None else str(max_cases),
    } | {f"left_out.{status}": str(count) for status, count in left_out.items()}
    if comparison.unreviewed_left_out:
        properties["not_run.unreviewed_synthetic"] = str(len(comparison.unreviewed_left_out))
    suite = _suite(CASES_SUITE, properties)
    for row in comparison.with_texts(_failing_cases(comparison.scan_cases(), max_cases)).iter_rows(named=True):
        suite.append(_case(row))
    if left_out:
        said = "; ".join(f"{counted(count, status + ' case')} left out" for status, count in left_out.items())
        suite.append(_element("system-out", f"{said} (at most {max_cases} listed per status)"))
    return _counted(suite)


def _failing_cases(cases: pl.LazyFrame, max_cases: int | None) -> pl.DataFrame:
    """The cases of ``FAILING_STATUSES``, in that order then by id, the first ``max_cases`` of each (their
    texts not yet read)."""
    rank = pl.col("status").replace_strict({status: rank for rank, status in enumerate(FAILING_STATUSES)})
    failing = (
        cases.select(
            "case_id",
            pl.col("status").cast(pl.String),
            pl.col("stage").cast(pl.String).replace_strict(STAGE_PHRASES, default=None),
            "reasons",
        )
        .filter(pl.col("status").is_in(FAILING_STATUSES))
        .sort(rank, "case_id")
    )
    if max_cases is not None:
        failing = failing.filter(pl.int_range(pl.len()).over("status") < max_cases)
    return failing.collect()


def _case(row: Mapping[str, Any]) -> ET.Element:
    reasons = row["reasons"] or [row["status"]]
    where = [f"where it changed: {row['stage']}"] if row["status"] in STAGED_STATUSES else []
    details = [
        *where,
        *reasons,
        f"question: {row['question']}",
        *(f"{side} answer: {row[f'{side}_answer']}" for side in ("baseline", "candidate") if row[f"{side}_answer"]),
    ]
    case = _element("testcase", classname=row["status"], name=row["case_id"])
    case.append(_element("failure", "\n".join(details), message="; ".join(reasons), type=row["status"]))
    return case


def _warn(suite: ET.Element, warnings: Sequence[str]) -> None:
    """Put each of the comparison's ``warnings`` first in ``suite``'s properties, as a ``warning`` property."""
    properties = suite[0]  # ``_suite`` makes them its first element
    for index, warning in enumerate(warnings):
        properties.insert(index, _element("property", name="warning", value=warning))


def _suite(name: str, properties: Mapping[str, str]) -> ET.Element:
    suite = _element("testsuite", name=name)
    listed = ET.SubElement(suite, "properties")
    for key, value in properties.items():
        listed.append(_element("property", name=key, value=value))
    return suite


def _counted(suite: ET.Element) -> ET.Element:
    """``suite`` with its ``tests``, ``failures``, ``errors`` (always 0) and ``skipped`` counts set."""
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(case.find("failure") is not None for case in cases)))
    suite.set("errors", "0")
    suite.set("skipped", str(sum(case.find("skipped") is not None for case in cases)))
    return suite


def _element(tag: str, text: str | None = None, **attributes: str) -> ET.Element:
    """An element whose text and attribute values are ``xml_safe``."""
    element = ET.Element(tag, {key: xml_safe(value) for key, value in attributes.items()})
    if text is not None:
        element.text = xml_safe(text)
    return element
