"""The comparison engines side by side on the same two runs: time, peak memory, and the same answer.

    python benchmarks/bench_engines.py [--cases 1000000] [--engines memory,streaming,ray] [--repeats 2]
        [--layout files|directories] [--buckets 16] [--workdir DIR]

``--layout files`` compares the two run files of ``synthetic.py`` (the data of ``bench_compare.py``);
``--layout directories`` compares two run directories of ``--buckets`` parts, frozen from records made a part
at a time (``bench_run_directory.write_parts``: baseline and candidate behaviour on the same cases), for sizes
whose records do not fit in memory. The data is generated once into the work folder and reused.

Then, ``--repeats`` times, engine after engine (interleaved, so load on the machine hits each alike):
``python -m rag_compare BASELINE CANDIDATE --engine E --output DIR/`` in its own process through
``measure.py`` (the summary JSON and the cases as Parquet parts). Prints each engine's median seconds and
peak RSS, its ratio to the first engine, and whether every engine's summary equals the first's: the same
counts, warnings, n, intervals and p-values, means within 1e-12; exit code 1 if not.

The peak is the driver process's: with ``ray``, the Ray workers' memory is not in it.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_run_directory import write_parts
from harness import each, measure_command
from synthetic import write_dataset

MEANS = ("baseline", "candidate", "delta", "baseline_within_variance", "candidate_within_variance")


def runs(workdir: Path, cases: int, layout: str, buckets: int) -> list[Path]:
    """The two runs to compare, generated into ``workdir`` when not there yet."""
    if layout == "files":
        if not (workdir / "candidate.arrow").exists():
            write_dataset(workdir, cases)
        return [workdir / "baseline.arrow", workdir / "candidate.arrow"]
    folders = {side: workdir / f"run-{side}-{buckets}" for side in ("baseline", "candidate")}
    if not (workdir / "corpus").is_dir():
        write_parts(workdir, cases, 250_000, sides=("baseline", "candidate"))
    for side, folder in folders.items():
        if not (folder / "manifest.json").exists():
            records = workdir / ("records" if side == "baseline" else f"{side}-records") / "*.parquet"
            freeze = ["freeze", str(records), "--corpus", str(workdir / "corpus"), "--set", f"name={side}"]
            freeze += ["--output", f"{folder}/", "--buckets", str(buckets)]
            measure_command([sys.executable, "-m", "rag_compare", *freeze], "freeze")
    return list(folders.values())


def differences(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """What differs between two summaries beyond the rounding of means."""
    kept = ("counts", "warnings", "noise_floor", "flaky", "preference")
    found = [key for key in kept if expected[key] != actual[key]]
    for name in ("aggregates", "breakdowns"):
        for left, right in zip(expected[name], actual[name], strict=True):
            for key, value in left.items():
                other = right[key]
                if key in MEANS and value is not None and other is not None:
                    if not math.isclose(value, other, rel_tol=0, abs_tol=1e-12):
                        found.append(f"{name} {left['signal']} {key}")
                elif value != other:
                    found.append(f"{name} {left['signal']} {key}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--engines", default="memory,streaming,ray")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--layout", choices=("files", "directories"), default="files")
    parser.add_argument("--buckets", type=int, default=16)
    parser.add_argument("--workdir", type=Path)
    options = parser.parse_args()
    engines = options.engines.split(",")
    workdir = options.workdir or Path(tempfile.gettempdir()) / f"rag-compare-engines-{options.layout}-{options.cases}"
    baseline, candidate = runs(workdir, options.cases, options.layout, options.buckets)
    seconds: dict[str, list[float]] = {engine: [] for engine in engines}
    peaks: dict[str, list[int]] = {engine: [] for engine in engines}
    summaries: dict[str, dict[str, Any]] = {}
    for _ in range(options.repeats):
        for engine in engines:
            output = workdir / f"comparison-{engine}"
            shutil.rmtree(output, ignore_errors=True)
            command = [sys.executable, "-m", "rag_compare", str(baseline), str(candidate), "--engine", engine]
            took, peak = measure_command([*command, "--output", f"{output}/"], f"compare --engine {engine}")
            seconds[engine].append(took)
            peaks[engine].append(peak)
            summary = json.loads((output / "summary.json").read_text(encoding="utf-8"))
            summaries[engine] = {key: value for key, value in summary.items() if key not in ("baseline", "candidate")}
    print(f"cases             {options.cases:,} ({options.layout}), {options.repeats} runs each, interleaved")
    first = engines[0]
    problems = []
    for engine in engines:
        median, peak = statistics.median(seconds[engine]), statistics.median(peaks[engine]) / 2**20
        ratio = median / statistics.median(seconds[first])
        timing = f"{median:.1f} s (each {each(seconds[engine])}), {ratio:.2f}x {first}"
        print(f"{engine:<17} {timing}; peak RSS {peak:,.0f} MiB")
        problems += [f"{engine}: {found}" for found in differences(summaries[first], summaries[engine])]
    print("same answer       " + ("yes" if not problems else "NO: " + "; ".join(problems[:10])))
    if problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
