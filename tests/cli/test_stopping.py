"""SIGTERM and SIGINT end the real entry point with 143 and 130 even when its main thread waits in native
code, and leave no temporary behind: not the report's hidden file, not the streaming engine's spill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rag_compare.cli.stopping import GRACE_SECONDS
from tests.helpers.data import HANDMADE_RUNS

STUCK_WRITER = """\
import sys
import pyarrow as pa
from rag_compare.compute.comparison import Comparison
FIFO = sys.argv.pop()
def write(self, stream, *args, **kwargs):
    stream.write("<html>" * 1000)
    stream.flush()
    pa.OSFile(FIFO)  # no writer ever comes: Arrow waits in native code, and retries when a signal cuts the wait
Comparison.write = write
from rag_compare.cli.main import main
main(sys.argv[1:])
"""
"""The entry point, its report's writer stuck opening a FIFO once the hidden temporary file holds a part."""


@pytest.mark.parametrize(
    ("signal_number", "code", "said"),
    [(signal.SIGTERM, 143, ""), (signal.SIGINT, 130, "interrupted: no output was left half-written.")],
    ids=["sigterm", "ctrl-c"],
)
def test_a_signal_ends_a_process_stuck_in_native_code_leaving_no_temporary(
    tmp_path: Path, signal_number: int, code: int, said: str
) -> None:
    fifo, output, spill = tmp_path / "fifo", tmp_path / "out" / "report.html", tmp_path / "spill"
    os.mkfifo(fifo)
    output.parent.mkdir()
    spill.mkdir()
    command = [sys.executable, "-c", STUCK_WRITER, str(HANDMADE_RUNS / "baseline.arrow")]
    command += [str(HANDMADE_RUNS / "candidate.arrow"), "--engine", "streaming", "--format", "html"]
    command += ["--output", str(output), str(fifo)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(spill)})
    try:
        deadline = time.monotonic() + 60
        while not list(output.parent.glob(".report.html.*.partial")) or not list(spill.iterdir()):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the report was never started"
            time.sleep(0.05)
        time.sleep(0.5)  # the writer is waiting on the FIFO by now
        process.send_signal(signal_number)
        sent = time.monotonic()
        _, stderr = process.communicate(timeout=GRACE_SECONDS + 10)
    finally:
        process.kill()
    assert time.monotonic() - sent < GRACE_SECONDS + 5
    assert process.returncode == code
    assert stderr.strip() == said
    assert list(output.parent.iterdir()) == []
    assert list(spill.iterdir()) == []
