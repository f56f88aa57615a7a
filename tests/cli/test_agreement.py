"""``rag-compare agreement`` through the entry point, on the shipped example reviews: each format, the gate's exit
codes, and bad input said in one message with exit code 2."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from junitparser import JUnitXml

from tests.helpers.reviews import CANDIDATE as HANDMADE_CANDIDATE

Cli = Callable[..., Result]
REVIEWS, CANDIDATE = Path("runs/reviews.arrow"), Path("runs/candidate.arrow")


def test_the_offline_judge_of_the_examples_against_their_reviews(cli: Cli) -> None:
    result = cli("agreement", REVIEWS, CANDIDATE)
    assert result.exit_code == 0, result.output
    assert "People's labels: runs/reviews.arrow (reviews)" in result.stdout
    assert "retrieval_ok" in result.stdout
    assert "How to read it: kappa is agreement beyond what chance gives" in result.stdout
    document = json.loads(cli("agreement", REVIEWS, CANDIDATE, "--format", "json").stdout)
    rows = {row["label"]: row for row in document["agreement"]}
    assert rows["retrieval_ok"]["confusion"] == [[23, 0], [0, 4]]
    assert rows["abstention_correct"]["not_comparable"] == {"does not apply": 27}
    assert document["unmeasured"][0]["label"] == "answer_correct"


@pytest.mark.parametrize(("suffix", "expected"), [(".md", "## Confusion matrices"), (".html", "default-src 'none'")])
def test_reports_are_written_by_the_output_file_s_extension(
    cli: Cli, tmp_path: Path, suffix: str, expected: str
) -> None:
    output = tmp_path / f"agreement{suffix}"
    result = cli("agreement", REVIEWS, CANDIDATE, "--map", "answer_correct=context_coverage", "--output", output)
    assert result.exit_code == 0, result.output
    text = output.read_text()
    assert expected in text
    assert "<script" not in text
    assert "equipment-budget" in text  # a disagreement on answer_correct, with the reviewer's comment


def test_a_gate_on_agreement_exits_1_when_a_condition_holds(cli: Cli) -> None:
    held = cli("agreement", REVIEWS, CANDIDATE, "--fail-on", "specificity[retrieval_ok]<1.1")
    assert held.exit_code == 1, held.output
    assert "gate condition held: specificity[retrieval_ok]<1.1" in held.stderr
    passed = cli(
        "agreement", REVIEWS, CANDIDATE, "--fail-on", "kappa[retrieval_ok]<0.6,sensitivity[abstention_correct]<0.9"
    )
    assert passed.exit_code == 0, passed.output
    assert "warning: gate condition not evaluated: sensitivity[abstention_correct]<0.9" in passed.stderr
    assert "under 20: too few labelled answers to decide" in passed.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--fail-on", "regressed"), "is decided on a comparison"),
        (("--map", "answer_correct"), "is not LABEL=VALUE"),
        (("--threshold", "grounded=high"), "a threshold is a number from 0 to 1"),
        (("--target-precision", "0.9", "--target-recall", "0.8"), "not both"),
    ],
)
def test_bad_options_are_refused(cli: Cli, args: tuple[str, ...], message: str) -> None:
    result = cli("agreement", REVIEWS, CANDIDATE, *args)
    assert result.exit_code == 2
    assert message in result.output


def test_reviews_of_other_runs_are_refused(cli: Cli) -> None:
    result = cli("agreement", REVIEWS, HANDMADE_CANDIDATE)
    assert result.exit_code == 2
    assert "reviews of the runs 'baseline'" in result.stderr
    assert "Measure judges of the reviewed runs" in result.stderr


def test_a_labels_table_with_no_rows_is_refused(cli: Cli, tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text("case_id,grounded\n")
    result = cli("agreement", labels, CANDIDATE)
    assert result.exit_code == 2
    assert "has a header but no rows" in result.stderr


def test_a_label_outside_its_vocabulary_is_named_with_its_row(cli: Cli, tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text("case_id,grounded\nbike-lease@2026-01,mostly\n")
    result = cli("agreement", labels, CANDIDATE)
    assert result.exit_code == 2
    assert "mostly" in result.stderr
    assert "yes, partly or no" in result.stderr


def test_ci_formats_carry_the_agreement_gate(cli: Cli, tmp_path: Path) -> None:
    gate = ("--fail-on", "specificity[retrieval_ok]<1.1", "--fail-on", "kappa[abstention_correct]<0.5")
    summary = tmp_path / "summary.md"
    github = cli(
        "agreement", REVIEWS, CANDIDATE, *gate, "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)}
    )
    assert github.exit_code == 1, github.output
    commands = github.stdout.splitlines()
    assert commands[0].startswith("::error title=rag-compare gate::specificity[retrieval_ok]<1.1: ")
    assert commands[1].startswith("::warning title=rag-compare::gate condition kappa[abstention_correct]<0.5 was not")
    assert commands[2].endswith("3 labels; gate failed: 1 of 2 conditions held")
    assert "## Release gate" in summary.read_text()
    junit = tmp_path / "agreement.xml"
    assert cli("agreement", REVIEWS, CANDIDATE, *gate, "--output", junit).exit_code == 1
    suites = {suite.name: suite for suite in JUnitXml.fromfile(str(junit))}
    assert (suites["rag-compare gate"].tests, suites["rag-compare gate"].failures) == (2, 1)
    cases = [(case.classname, case.name) for case in suites["rag-compare agreement"]]
    assert ("offline judge of 'candidate'", "retrieval_ok") in cases
