"""What the benchmarks share: timing a command in its own process, and printing figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def measure_command(command: list[str], what: str) -> tuple[float, int]:
    """Seconds and peak RSS bytes of ``command`` run through ``measure.py``; stops with its stderr,
    naming ``what`` failed, when it fails."""
    measured = subprocess.run(
        [sys.executable, str(HERE / "measure.py"), *command], capture_output=True, text=True, check=False
    )
    result = json.loads(measured.stdout) if measured.returncode == 0 else {}
    if result.get("returncode") != 0:
        raise SystemExit(f"{what} failed:\n{measured.stderr}")
    return float(result["seconds"]), int(result["peak_rss_bytes"])


def each(seconds: list[float], decimals: int = 1) -> str:
    """``3: 1.2 / 1.3 / 1.1 s``: how many measurements, then each of them."""
    return f"{len(seconds)}: " + " / ".join(f"{value:.{decimals}f}" for value in seconds) + " s"


def yes(met: bool) -> str:
    """A target's verdict, loud when it is missed."""
    return "yes" if met else "NO"
