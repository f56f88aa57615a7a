"""``rag-compare BASELINE CANDIDATE CANDIDATE...``: several candidates at the command line, their output, the
gate per candidate, and what is refused with exit code 2 and nothing written."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.helpers.data import ROOT

Cli = Callable[..., Result]
RUNS = ROOT / "runs"
BASELINE, CANDIDATE, STOPWORDS = RUNS / "baseline.arrow", RUNS / "candidate.arrow", RUNS / "stopwords.arrow"
PASSAGES = ROOT / "corpora" / "handbook_passages.csv"
THREE = (BASELINE, CANDIDATE, STOPWORDS, "--passages", PASSAGES)


def test_three_runs_give_the_candidates_side_by_side(cli: Cli) -> None:
    result = cli(*THREE)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "candidate  stopwords  af541b4283f9  runs/stopwords.arrow" not in out  # a row per run, its own name
    lines = out.splitlines()
    assert any(line.split()[:3] == ["candidate", "stopwords", "af541b4283f9"] for line in lines)
    assert any(line.split() == ["stopwords", "0", "0", "1", "4", "30"] for line in lines)  # its statuses
    assert any(line.split() == ["candidate", "1", "1", "3", "7", "23"] for line in lines)
    assert "no clear winner: candidate leads on recall but is not better" in out
    assert "Leaderboard of recall (paired), best first" in out
    assert "adjusted over 2 candidates x 12 signals" in out
    assert "warning: candidate: 3 settings differ" in out


def test_the_readme_shows_the_verdict_the_command_gives(cli: Cli) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = readme.split("## Comparing several candidates", 1)[1].split("```text\n", 1)[1].split("\n```", 1)[0]
    assert shown in cli(*THREE).stdout.splitlines()


def test_json_of_several_candidates(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "many.json"
    result = cli(*THREE, "--format", "json", "--output", output, "--rank-by", "mrr,all_cases.recall")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"wrote the json comparison of 2 candidates to {output}: no clear winner")
    payload = json.loads(output.read_text(encoding="utf-8"))
    assert list(payload) == [
        "schema_version",
        "warnings",
        "baseline",
        "candidates",
        "aggregates",
        "ranking",
        "changed_cases",
    ]
    assert [candidate["name"] for candidate in payload["candidates"]] == ["candidate", "stopwords"]
    assert payload["ranking"]["rank_by"] == ["mrr", "all_cases.recall"]
    assert {row["run"] for row in payload["aggregates"]} == {"candidate", "stopwords"}
    changed = {case["case_id"]: case["statuses"] for case in payload["changed_cases"]}
    assert changed["equipment-budget@2026-01"] == {"candidate": "regressed", "stopwords": "regressed"}
    assert changed["public-transport-pass@2026-01"] == {"candidate": "missing_in_candidate", "stopwords": "unchanged"}


def test_markdown_lists_each_changed_case_with_its_candidates(cli: Cli) -> None:
    result = cli(*THREE, "--format", "markdown", "--max-cases", "3")
    assert result.exit_code == 0, result.output
    assert "| equipment-budget@2025-01 | candidate, stopwords |  |  |  |" in result.stdout
    assert "12 cases, the first 3 listed." in result.stdout
    assert "| candidate | -0.037 | -0.178\\* |" in result.stdout  # precision fell, in the family too


def test_the_gate_is_evaluated_on_each_candidate(cli: Cli) -> None:
    result = cli(*THREE, "--fail-on", "regressed>5")
    assert result.exit_code == 1
    assert (
        "candidate: gate condition held: regressed>5: 7 of 35 cases (20%) regressed; the limit is > 5" in result.stderr
    )
    assert "stopwords: gate passed" in result.stderr
    assert cli(*THREE, "--fail-on", "regressed>7").exit_code == 0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ((BASELINE, CANDIDATE, CANDIDATE), "is given twice: give each candidate once"),
        (
            (*THREE, "--all-cases", "--format", "html"),
            "--all-cases lists a comparison's unchanged cases",
        ),
        ((*THREE, "--pairs", PASSAGES), "--pairs holds the verdicts of two runs"),
        ((*THREE, "--with-texts"), "--with-texts is for two runs"),
        ((*THREE, "--rank-by", "recal"), "--rank-by names 'recal', which is no signal"),
        ((BASELINE, CANDIDATE, "--rank-by", "recall"), "--rank-by ranks several candidates"),
        ((*THREE, "--candidate-scores", PASSAGES), "--candidate-scores holds 1 scores files for 2 candidates"),
        ((BASELINE, CANDIDATE, "--candidate-scores", PASSAGES, "--candidate-scores", PASSAGES), "given 2 times"),
    ],
)
def test_bad_input_is_refused_with_exit_code_2(
    cli: Cli, tmp_path: Path, arguments: tuple[object, ...], message: str
) -> None:
    output = tmp_path / "out.md"
    result = cli(*arguments, "--output", output)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert not output.exists()


def test_a_folder_output_is_refused_for_several_candidates(cli: Cli, tmp_path: Path) -> None:
    result = cli(*THREE, "--output", f"{tmp_path / 'many'}/")
    assert result.exit_code == 2
    assert "--output with a trailing / writes the folder of one comparison" in result.output
    assert not (tmp_path / "many").exists()


def test_github_annotates_each_candidates_gate_and_summarises_them_all(cli: Cli, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    result = cli(*THREE, "--format", "github", "--fail-on", "regressed>5", "--output", summary)
    assert result.exit_code == 1
    commands = result.stdout.splitlines()
    assert (
        "::error title=rag-compare gate::candidate: regressed>5: 7 of 35 cases (20%25) regressed; the limit is > 5"
        in commands
    )
    notices = [line for line in commands if line.startswith("::notice")]
    assert [line.split("::")[2].split(":")[0] for line in notices[:2]] == ["candidate", "stopwords"]
    assert notices[1].endswith("gate passed: 0 of 1 condition held")
    assert notices[2].startswith("::notice title=rag-compare::no clear winner")
    written = summary.read_text(encoding="utf-8")
    assert "## Release gate, per candidate" in written
    assert "| stopwords | gate passed: 1 condition, none held | none |" in written


def test_junit_has_a_gate_and_a_cases_suite_per_candidate(cli: Cli) -> None:
    result = cli(*THREE, "--format", "junit", "--fail-on", "regressed>5", "--max-cases", "2")
    assert result.exit_code == 1
    root = ET.fromstring(result.stdout)
    names = [suite.get("name") for suite in root]
    assert names == [
        "rag-compare gate: candidate",
        "rag-compare cases: candidate",
        "rag-compare gate: stopwords",
        "rag-compare cases: stopwords",
    ]
    failures = {suite.get("name"): int(suite.get("failures", "-1")) for suite in root}
    assert failures["rag-compare gate: candidate"] == 1
    assert failures["rag-compare gate: stopwords"] == 0
    assert failures["rag-compare cases: stopwords"] == 2  # 4 regressed, at most 2 listed
    assert root.get("failures") == str(sum(failures.values()))


def test_html_is_one_page_with_the_matrix(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "many.html"
    result = cli(*THREE, "--output", output)  # the format from the extension
    assert result.exit_code == 0, result.output
    page = output.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert '<div id="matrix-app">' in page
    assert "Leaderboard of recall (paired)" in page
