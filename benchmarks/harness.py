"""What the benchmarks share: timing a command in its own process, and printing figures."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENDPOINT = HERE / "chat_endpoint.py"


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


@contextmanager
def chat_server(latency: float) -> Iterator[str]:
    """The base URL of ``chat_endpoint.py`` serving in its own process, terminated on the way out."""
    server = subprocess.Popen(
        [sys.executable, str(ENDPOINT), "--latency", str(latency)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        if not url.startswith("http"):
            raise SystemExit(f"the chat endpoint did not start (it printed {url!r}; exit code {server.poll()})")
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
