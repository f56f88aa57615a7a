"""GitHub Actions: the workflow commands read back as the runner reads them (each line one command,
unescaped as the toolkit escapes), the Markdown report after them, and the example workflow."""

from __future__ import annotations

import dataclasses
import io
import tomllib
from typing import Any

import polars as pl
import yaml

from rag_compare import Comparison
from rag_compare.compute.gate_result import ConditionResult, GateResult
from rag_compare.core.result import terminal_safe
from rag_compare.report.github import escape_data, escape_property, workflow_commands, write_github
from tests.helpers.data import PAYLOAD, ROOT
from tests.helpers.forged_runs import forged_comparison
from tests.helpers.workflow_commands import parsed, unescape_property

GATE = GateResult(
    (
        ConditionResult("regressed>2%", True, True, "4 of 34 cases (11.8%) regressed; the limit is 2%"),
        ConditionResult("recall:worse", False, False, "recall has no paired values"),
        ConditionResult("error_rate>10%", False, True, "3 of 34 cases (8.8%) failed or are missing; the limit is 10%"),
        ConditionResult("failed_in_candidate", True, True, "2 cases failed_in_candidate"),
    ),
    alpha=0.05,
)
# The hand-made runs (with passages): 34 cases
COUNTS = (
    "missing_in_candidate 1, failed_in_baseline 1, failed_in_candidate 2, improved 5, regressed 4, mixed 3, unchanged 18"
    "; regressed 4: 4 at the answer; improved 5: 5 at the answer; mixed 3: 2 at the answer, 1 at the context"
)
EXAMPLES = ROOT / "examples"


def test_the_toolkit_escapes() -> None:
    assert escape_data("100% a\r\nb: c, d") == "100%25 a%0D%0Ab: c, d"
    assert escape_property("100% a\r\nb: c, d") == "100%25 a%0D%0Ab%3A c%2C d"
    assert unescape_property(escape_property("%0A: ,%")) == "%0A: ,%"


def test_held_conditions_are_errors_then_warnings_then_a_notice(examples: Comparison) -> None:
    gate_title, title = {"title": "rag-compare gate"}, {"title": "rag-compare"}
    assert parsed(workflow_commands(examples, GATE)) == [
        ("error", gate_title, "regressed>2%: 4 of 34 cases (11.8%) regressed; the limit is 2%"),
        ("error", gate_title, "failed_in_candidate: 2 cases failed_in_candidate"),
        ("warning", title, "gate condition recall:worse was not evaluated: recall has no paired values"),
        ("notice", title, f"baseline → candidate: 34 cases: {COUNTS}; gate failed: 2 of 4 conditions held"),
    ]
    # escaped on the line itself: % of the numbers as %25
    assert workflow_commands(examples, GATE)[0].endswith("(11.8%25) regressed; the limit is 2%25")


def test_a_passed_gate_and_no_gate_say_so_in_the_notice(examples: Comparison) -> None:
    passed = GateResult((GATE.conditions[2],), alpha=0.05)
    [(name, _, message)] = parsed(workflow_commands(examples, passed))
    assert (name, message) == (
        "notice",
        f"baseline → candidate: 34 cases: {COUNTS}; gate passed: 0 of 1 condition held",
    )
    [(name, _, message)] = parsed(workflow_commands(examples))
    assert (name, message) == ("notice", f"baseline → candidate: 34 cases: {COUNTS}")


def test_the_commands_go_first_then_the_markdown_report(examples: Comparison) -> None:
    commands, summary = io.StringIO(), io.StringIO()
    write_github(examples, commands, summary, max_cases=2, gate=GATE)
    assert commands.getvalue() == "".join(f"{line}\n" for line in workflow_commands(examples, GATE))
    assert summary.getvalue() == examples.render("markdown", max_cases=2, gate=GATE)
    assert summary.getvalue().startswith("# baseline → candidate\n\n## Release gate\n")
    together = examples.render("github", max_cases=2, gate=GATE)
    assert together == commands.getvalue() + summary.getvalue()
    assert examples.render("github") == "".join(f"{line}\n" for line in workflow_commands(examples)) + examples.render(
        "markdown"
    )


def test_untrusted_text_cannot_end_a_command_or_start_another(examples: Comparison) -> None:
    warning = f"{PAYLOAD} 50%0A\r\n::error title=forged::the gate passed\x1b[2K, a: b"
    condition = ConditionResult(f"x\n::error::{PAYLOAD}", True, True, "numbers\r\n%0D\x1b]8;;")
    hostile = dataclasses.replace(examples, warnings=(warning,))
    lines = workflow_commands(hostile, GateResult((condition,), alpha=0.05))
    assert len(lines) == 3
    assert not [line for line in lines if "\n" in line or "\r" in line or "\x1b" in line]
    (_, _, forged), (_, _, error), _ = parsed(lines)
    assert error == terminal_safe(f"x\n::error::{PAYLOAD}: numbers\r\n%0D\x1b]8;;")
    assert error == f"x\n::error::{PAYLOAD}: numbers\\x0d\n%0D\\x1b]8;;"
    assert forged == f"{PAYLOAD} 50%0A\\x0d\n::error title=forged::the gate passed\\x1b[2K, a: b"


def workflow_steps() -> list[dict[str, Any]]:
    workflow = yaml.safe_load((EXAMPLES / "github-actions.yml").read_text(encoding="utf-8"))
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` key as true
    assert set(triggers) == {"push", "pull_request"}
    assert triggers["push"] == {"branches": ["main"]}
    assert workflow["permissions"]["pull-requests"] == "write"
    [job] = workflow["jobs"].values()
    steps: list[dict[str, Any]] = job["steps"]
    return steps


def step(steps: list[dict[str, Any]], text: str) -> tuple[int, dict[str, Any]]:
    [found] = [(index, step) for index, step in enumerate(steps) if text in step.get("run", "")]
    return found


def test_the_example_workflow_compares_comments_and_fails_on_the_gate_last() -> None:
    steps = workflow_steps()
    uploaded = [step for step in steps if step.get("uses", "").startswith("actions/upload-artifact")]
    assert [step["with"] for step in uploaded] == [{"name": "rag-run", "path": "main.arrow"}]
    downloading, _ = step(steps, "gh run download")
    comparing, compare_step = step(steps, "rag-compare main.arrow pr.arrow")
    command = " ".join(compare_step["run"].replace("\\\n", " ").split())
    assert "--format github --output report.md --gate gate.toml" in command
    summarising, _ = step(steps, 'cat report.md >> "$GITHUB_STEP_SUMMARY"')
    commenting, comment_step = step(steps, "gh pr comment")
    assert "--body-file report.md" in comment_step["run"]
    failing, fail_step = step(steps, "the release gate held")
    assert "exit 1" in fail_step["run"]
    assert fail_step["if"].endswith("steps.compare.outputs.gate_exit == '1'")
    assert compare_step["id"] == "compare"
    assert downloading < comparing < summarising < commenting < failing == len(steps) - 1


def test_the_example_gate_is_a_gate_table() -> None:
    gate = tomllib.loads((EXAMPLES / "gate.toml").read_text(encoding="utf-8"))["gate"]
    assert gate["alpha"] == 0.05
    assert {"regressed>2%", "recall:worse", "all_cases.context_coverage:worse", "error_rate>5%"} <= set(gate["fail_on"])


def test_on_one_stream_no_line_of_the_markdown_report_is_a_command() -> None:
    forged = "::error title=forged::the gate held"
    forged_texts = forged_comparison(f"{forged}\n{forged}", pl.col("answer").str.replace(r"^", f"{forged}\n"))
    hostile = dataclasses.replace(forged_texts, warnings=(forged,))
    lines = hostile.render("github", gate=GATE).splitlines()
    commands = workflow_commands(hostile, GATE)
    assert lines[: len(commands)] == commands
    assert forged in "\n".join(lines[len(commands) :])  # the case is in the report, but not at a line's start
    assert not [line for line in lines[len(commands) :] if line.lstrip().startswith("::")]
