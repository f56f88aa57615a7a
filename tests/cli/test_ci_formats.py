"""``rag-compare BASELINE CANDIDATE --format github|junit``: the gate's verdict for a CI system, read back
as GitHub's runner reads workflow commands and as JUnit readers read XML (junitparser), on the hand-made
runs compared without their knowledge base (see tests/cli/test_gate.py for their numbers: 34 cases, 2
regressed = 5.88%, 2 failed and 1 missing in the candidate = 8.82%)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from junitparser import Failure, JUnitXml

from tests.helpers.data import HANDMADE_RUNS
from tests.helpers.special_files import not_blocked_by
from tests.helpers.workflow_commands import parsed

pytestmark = pytest.mark.usefixtures("away_from_the_knowledge_base")

Cli = Callable[..., Result]
RUNS = (HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow")
GATE = ("--fail-on", "regressed>5%", "--fail-on", "error_rate>10%")
"""One condition that holds (5.88% > 5%) and one that does not (8.82% < 10%)."""
COUNTS = (
    "missing_in_candidate 1, failed_in_baseline 1, failed_in_candidate 2, improved 5, regressed 2, mixed 3, "
    "unchanged 20; regressed 2: 2 at the answer; improved 5: 1 at the answer, 4 at the context; "
    "mixed 3: 2 at the answer, 1 at the context"
)

OFF = (
    "answer_completeness is off: no --passages were given and the runs' knowledge_base "
    "corpora/handbook_passages.csv is not a file here. Pass --passages (the knowledge base file) to check each "
    "answer against its required passages."
)
"""The comparison's one warning, first of the commands."""


def _commands(stdout: str) -> list[tuple[str, dict[str, str], str]]:
    return parsed([line for line in stdout.splitlines() if line.startswith("::")])


def test_github_annotates_the_held_condition_and_appends_the_report_to_the_step_summary(
    cli: Cli, tmp_path: Path
) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    result = cli(*RUNS, "--format", "github", *GATE, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.exit_code == 1
    assert _commands(result.stdout) == [
        ("warning", {"title": "rag-compare"}, OFF),
        ("error", {"title": "rag-compare gate"}, "regressed>5%: 2 of 34 cases (5.88%) regressed; the limit is > 5%"),
        (
            "notice",
            {"title": "rag-compare"},
            f"baseline → candidate: 34 cases: {COUNTS}; gate failed: 1 of 2 conditions held",
        ),
    ]
    assert len(result.stdout.splitlines()) == 3  # the report went to the step summary, after what was there
    written = summary.read_text(encoding="utf-8")
    assert written.startswith("earlier step\n# baseline → candidate\n")
    assert "gate failed: 1 of 2 conditions held" in result.stderr


def test_a_step_summary_that_is_a_fifo_is_refused_unopened(cli: Cli, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    os.mkfifo(summary)
    with not_blocked_by(summary):
        result = cli(*RUNS, "--format", "github", *GATE, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.exit_code == 2, result.output
    assert f"{summary}: is a FIFO (named pipe), which the step summary is never written to" in result.stderr
    assert stat.S_ISFIFO(os.lstat(summary).st_mode)


def test_github_with_output_writes_the_report_there_and_leaves_the_step_summary_alone(cli: Cli, tmp_path: Path) -> None:
    summary, report = tmp_path / "summary.md", tmp_path / "report.md"
    result = cli(*RUNS, "--format", "github", *GATE, "--output", report, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.exit_code == 1
    assert [name for name, _, _ in _commands(result.stdout)] == ["warning", "error", "notice"]
    assert report.read_text(encoding="utf-8").startswith("# baseline → candidate\n")
    assert not summary.exists()
    assert f"wrote the Markdown summary to {report}" in result.stderr


def test_github_without_a_step_summary_prints_the_report_after_the_commands(cli: Cli) -> None:
    result = cli(*RUNS, "--format", "github", "--fail-on", "regressed>=3", env={"GITHUB_STEP_SUMMARY": ""})
    assert result.exit_code == 0  # 2 regressed cases are fewer than 3
    lines = result.stdout.splitlines()
    assert _commands("\n".join(lines[:2])) == [
        ("warning", {"title": "rag-compare"}, OFF),
        (
            "notice",
            {"title": "rag-compare"},
            f"baseline → candidate: 34 cases: {COUNTS}; gate passed: 0 of 1 condition held",
        ),
    ]
    assert lines[2] == "# baseline → candidate"
    assert not any(line.startswith("::") for line in lines[2:])


def test_junit_has_a_test_case_per_condition_and_per_failing_case(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "gate.xml"
    result = cli(*RUNS, "--format", "junit", *GATE, "--output", output)
    assert result.exit_code == 1
    xml = JUnitXml.fromfile(str(output))
    suites = {suite.name: suite for suite in xml}
    gate = suites["rag-compare gate"]
    verdicts = {case.name: [type(part).__name__ for part in case.result] for case in gate}
    assert verdicts == {"regressed>5%": ["Failure"], "error_rate>10%": []}
    (failure,) = next(case for case in gate if case.name == "regressed>5%").result
    assert isinstance(failure, Failure)
    assert failure.message == "2 of 34 cases (5.88%) regressed; the limit is > 5%"
    # Regressed 2, failed_in_candidate 2 and missing_in_candidate 1: five failed test cases.
    cases = suites["rag-compare cases"]
    assert (cases.tests, cases.failures) == (5, 5)
    assert sorted(case.classname for case in cases) == [
        "failed_in_candidate",
        "failed_in_candidate",
        "missing_in_candidate",
        "regressed",
        "regressed",
    ]
    assert (xml.tests, xml.failures, xml.errors, xml.skipped) == (7, 6, 0, 0)


@pytest.mark.parametrize("output_format", ["github", "junit"])
def test_a_bad_condition_is_refused_before_anything_is_written(cli: Cli, tmp_path: Path, output_format: str) -> None:
    output = tmp_path / "out"
    result = cli(*RUNS, "--format", output_format, "--fail-on", "regresed>2%", "--output", output)
    assert result.exit_code == 2
    assert "regresed" in result.stderr
    assert not output.exists()
