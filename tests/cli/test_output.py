"""Writing a command's output: a report appears whole at --output, replaces an old report, never a frozen file."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.helpers.data import HANDMADE_RUNS

Cli = Callable[..., Result]


def test_a_report_never_replaces_a_frozen_file(cli: Cli, files: dict[str, Path], tmp_path: Path) -> None:
    for kept in (tmp_path / "other-run.arrow", tmp_path / "other-scores.arrow"):
        shutil.copy(files["baseline" if "run" in kept.name else "scores"], kept)
        before = kept.read_bytes()
        result = cli(files["baseline"], files["candidate"], "--format", "json", "--output", kept)
        assert result.exit_code == 2, result.output
        assert f"{kept}: holds an Arrow file (a frozen run or scores file), which is never replaced" in result.stderr
        assert kept.read_bytes() == before
    report = tmp_path / "report.json"
    report.write_text("an old report", encoding="utf-8")
    assert cli(files["baseline"], files["candidate"], "--format", "json", "--output", report).exit_code == 0
    assert json.loads(report.read_text(encoding="utf-8"))["schema_version"] == 1


@pytest.mark.parametrize("where", ["write", "fsync"])
@pytest.mark.parametrize("output_format", ["text", "html"])
def test_a_full_disk_names_the_report_path(
    cli: Cli, tmp_path: Path, full_disk: Callable[[str], None], where: str, output_format: str
) -> None:
    output = tmp_path / "report.out"
    full_disk(where)
    runs = HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow"
    result = cli(*runs, "--format", output_format, "--output", output)
    assert result.exit_code == 2
    assert f"error: {output}: cannot be written (No space left on device)" in result.stderr
    assert list(tmp_path.iterdir()) == []
