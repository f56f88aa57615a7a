"""Run a command; print its wall time, CPU time, peak resident memory and exit code as one JSON object.

    python benchmarks/measure.py COMMAND [ARG ...]

Prints ``{"seconds": ..., "cpu_seconds": ..., "peak_rss_bytes": ..., "returncode": ...}``; the CPU time
(user and system, all its threads) holds steadier than the wall time on a machine others load. The
command's stdout is discarded, its stderr passed through. The peak is the command's own maximum resident
set size, from the ``os.wait4`` rusage of its process. Start the command through this helper rather than directly from a
large process: at exec, Linux carries the peak of the memory image being replaced into the new
program's figure, so a command started by a process that peaked at 3 GiB reports at least 3 GiB; this
helper's own peak is about 10 MiB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def main() -> None:
    command = sys.argv[1:]
    if not command:
        raise SystemExit(__doc__)
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    unit = 1 if sys.platform == "darwin" else 1024  # ru_maxrss is in bytes on macOS, in KiB on Linux
    cpu_seconds = usage.ru_utime + usage.ru_stime
    peak = usage.ru_maxrss * unit
    print(
        json.dumps(
            {"seconds": seconds, "cpu_seconds": cpu_seconds, "peak_rss_bytes": peak, "returncode": child.returncode}
        )
    )


if __name__ == "__main__":
    main()
