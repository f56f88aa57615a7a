"""The benchmark scripts still run (on tiny inputs; their timings live in benchmarks/README.md)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_freeze_benchmark_runs_and_reports_a_ratio() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_freeze.py"), "--cases", "300", "--repeats", "1"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "cases                      300" in result.stdout
    assert "ratio" in result.stdout
