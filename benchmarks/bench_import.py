"""Importing traces: ``read_records`` over OpenInference OTLP/JSON lines beside parsing the same lines alone.

    python benchmarks/bench_import.py [--copies 1000] [--repeats 3]

The traces are real: ``tests/producers/make_openinference.py`` (LlamaIndex and LangChain pipelines traced by
OpenInference, run with the producers' environment ``.venv-producers``) writes them once; the file is then
copied ``--copies`` times with new trace ids, so each copy is another set of traces (their case ids
repeat, so the import keeps the last of each). Each repeat times, in this process and interleaved, the
reference (``json.loads`` of every line, the least a Python reader of the file pays) and ``read_records(...,
keep="last")`` (parse, spans, traces, source rows, case ids, repeats, context ids). Prints the medians,
the traces a second and the ratio.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import HERE, each

ROOT = HERE.parent
PRODUCERS_PYTHON = ROOT / ".venv-producers" / "bin" / "python"


def produced_traces(directory: Path) -> list[str]:
    """The lines of the OTLP file the real producer writes (hex ids, as the Collector writes them)."""
    if not PRODUCERS_PYTHON.exists():
        raise SystemExit(f"{PRODUCERS_PYTHON} is missing: `make producers` makes it")
    subprocess.run(
        [str(PRODUCERS_PYTHON), str(ROOT / "tests" / "producers" / "make_openinference.py"), str(directory)],
        check=True,
        cwd=directory,
        capture_output=True,
    )
    return (directory / "traces.jsonl").read_text(encoding="utf-8").splitlines()


def scaled(lines: list[str], copies: int, path: Path) -> int:
    """Write ``copies`` copies of ``lines`` to ``path``, each copy's trace ids new; the traces written."""
    traces: set[str] = set()
    with path.open("w", encoding="utf-8") as out:
        for copy in range(copies):
            for line in lines:
                request = json.loads(line)
                for resource in request["resourceSpans"]:
                    for scope in resource["scopeSpans"]:
                        for span in scope["spans"]:
                            span["traceId"] = hashlib.md5(f"{copy}:{span['traceId']}".encode()).hexdigest()
                            traces.add(span["traceId"])
                out.write(json.dumps(request) + "\n")
    return len(traces)


def parse_only(path: Path) -> int:
    with path.open(encoding="utf-8") as lines:
        return sum(1 for line in lines if json.loads(line))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from rag_compare import read_records

    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        source = directory / "scaled.jsonl"
        traces = scaled(produced_traces(directory), options.copies, source)
        seconds: dict[str, list[float]] = {"json.loads of every line": [], "read_records": []}
        for _ in range(options.repeats):
            started = time.perf_counter()
            parse_only(source)
            seconds["json.loads of every line"].append(time.perf_counter() - started)
            started = time.perf_counter()
            records = read_records(source, "openinference", keep="last")
            seconds["read_records"].append(time.perf_counter() - started)
        size = source.stat().st_size / 2**20
    medians = {label: statistics.median(values) for label, values in seconds.items()}
    reference = medians["json.loads of every line"]
    print(f"traces                      {traces:,} ({size:,.0f} MiB of OTLP/JSON lines); {records.height} cases kept")
    for label, median in medians.items():
        ratio = "reference" if median == reference else f"{median / reference:.1f}x the reference"
        rate = f"{traces / median:,.0f} traces/s"
        print(f"{label:<27} {median:.2f} s ({rate}; {ratio}; median of {each(seconds[label], 2)})")


if __name__ == "__main__":
    main()
