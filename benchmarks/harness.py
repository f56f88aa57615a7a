"""What the benchmarks share: timing a command in its own process, and printing figures."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ENDPOINT = HERE / "chat_endpoint.py"

Measured = defaultdict[str, list[Any]]
"""What a benchmark measured, by name, one value a repeat (``Measured(list)``; ``measured["cli"].append(1.2)``),
and ``problems``: what went wrong."""


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


def print_correctness(problems: list[str], column: int, fine: str) -> None:
    """The ``correctness`` line, its value from ``column`` on: ``fine``, or ``FAILED:`` and a line a problem."""
    if not problems:
        print("correctness".ljust(column) + fine)
        return
    print("correctness".ljust(column) + "FAILED:")
    for problem in problems:
        print(" " * column + problem)


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


def chat_parser(description: str, inputs: str) -> argparse.ArgumentParser:
    """The options of a benchmark against ``chat_endpoint.py``: ``--cases --latency --concurrency --repeats --seed
    --workdir`` (where its ``inputs`` are made, or reused)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--cases", type=int, default=2_000)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds the server waits before each reply")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, help=f"where {inputs} made, or reused (default: a temp folder)")
    return parser
