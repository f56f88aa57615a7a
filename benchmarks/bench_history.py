"""Listing the runs of a history from their metadata alone, beside pyarrow's own read of each file's schema.

    python benchmarks/bench_history.py [--runs 500] [--cases 100000] [--repeats 5] [--workdir DIR] [--seed 0]

The runs are made once into ``WORKDIR/history-RUNS/`` and reused after: the baseline of ``bench_compare.py``'s data
(``synthetic.py``, ``--cases`` cases at k=10, generated into ``WORKDIR`` when it is not there) frozen again ``--runs``
times with ``write_run``, without its contexts and answers so the folder stays smaller (the listing reads no record,
so a run's size does not matter to it): each run a config of its own, its name (``run-000``...), a ``top_k`` and a
``created_at`` an hour apart in a shuffled order, so creation order is not file order. Then, ``--repeats`` times in
this process, on the same folder:

- **reference**: pyarrow's own read of each ``*.arrow`` file's schema metadata (``pa.ipc.open_file(path).schema``),
  the files sorted by name: the least any listing from metadata does;
- **rag-compare**: ``io.run_listing.list_runs(folder)``: the folder listed, each file's schema metadata read and
  its format, fingerprint and config checked, the runs sorted by creation time.

Each is timed twice a repeat: first *cold*, the folder's files dropped from the page cache before
(``posix_fadvise(DONTNEED)``, as far as the system lets it: the disk under a virtual machine may cache them too),
then *warm*, read again at once. Target (the history issue): 500 runs of 100,000 cases listed in under 2 s. Prints
each measurement, the medians, and whether the runs came back in creation order.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
from bench_compare import prepare
from harness import each, print_correctness, yes

from rag_compare import load_run
from rag_compare.io.run_listing import list_runs
from rag_compare.io.runs import write_run

TARGET_SECONDS = 2.0
START = datetime(2027, 1, 1, tzinfo=UTC)
CACHES = ("cold", "warm")
DROPPED = ("context", "answer")
"""The record columns the runs are frozen without: the longest texts, which no listing reads."""
COLUMN = 23


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, help="where the data is made, or reused (default: a temp folder)")
    options = parser.parse_args()
    name = f"rag-compare-bench-{options.cases}-k10-seed{options.seed}"
    workdir = options.workdir or Path(tempfile.gettempdir()) / name
    print("data".ljust(COLUMN) + f"{workdir} ({prepare(workdir, options.cases, 10, options.seed)})")
    folder, order, made = _runs(workdir, options.runs, options.seed)
    paths = sorted(folder.glob("*.arrow"))
    size = sum(path.stat().st_size for path in paths) / 2**20
    print("runs".ljust(COLUMN) + f"{options.runs} of {options.cases:,} cases in {folder} ({size:,.0f} MiB, {made})")
    timed: dict[str, list[float]] = {}
    listed: list[str] = []
    for _ in range(options.repeats):
        for cache in CACHES:
            _evict(paths, cache)
            start = time.perf_counter()
            schemas = [pa.ipc.open_file(pa.OSFile(str(path))).schema for path in sorted(folder.glob("*.arrow"))]
            timed.setdefault(f"pyarrow schemas, {cache}", []).append(time.perf_counter() - start)
            _evict(paths, cache)
            start = time.perf_counter()
            listed = [run.name for run in list_runs(folder).runs]
            timed.setdefault(f"list_runs, {cache}", []).append(time.perf_counter() - start)
    for measured, seconds in timed.items():
        print(measured.ljust(COLUMN) + f"{statistics.median(seconds):.3f} s (median of {each(seconds, 3)})")
    medians = {measured: statistics.median(seconds) for measured, seconds in timed.items()}
    for cache in CACHES:
        ratio = medians[f"list_runs, {cache}"] / medians[f"pyarrow schemas, {cache}"]
        print(f"ratio, {cache}".ljust(COLUMN) + f"{ratio:.1f}x the reference")
    problems = [] if listed == order else [f"listed in another order than creation: {listed[:5]}..."]
    problems += [] if len(schemas) == options.runs else [f"pyarrow read {len(schemas)} schemas"]
    print_correctness(problems, COLUMN, f"the {options.runs} runs in creation order")
    met = max(medians[f"list_runs, {cache}"] for cache in CACHES) < TARGET_SECONDS
    print("target".ljust(COLUMN) + f"{options.runs} runs listed in under {TARGET_SECONDS:g} s: {yes(met)}")


def _evict(paths: list[Path], cache: str) -> None:
    """For a ``cold`` read, ask the system to drop ``paths`` from its page cache."""
    if cache != "cold":
        return
    for path in paths:
        handle = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(handle, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(handle)


def _runs(workdir: Path, count: int, seed: int) -> tuple[Path, list[str], str]:
    """The folder of ``count`` runs (made when it does not hold them), their names in creation order, and whether
    they were reused or how long making them took."""
    folder = workdir / f"history-{count}"
    hours = np.random.default_rng(seed).permutation(count)
    order = [f"run-{index:03d}" for index in np.argsort(hours)]
    if len(list(folder.glob("*.arrow"))) == count:
        return folder, order, "reused"
    start = time.perf_counter()
    folder.mkdir(exist_ok=True)
    run = load_run(workdir / "baseline.arrow")
    records = run.records.drop(DROPPED)
    for index, hour in enumerate(hours):
        path = folder / f"run-{index:03d}.arrow"
        created = (START + timedelta(hours=int(hour))).isoformat(timespec="seconds")
        config = dict(run.config) | {"name": path.stem, "created_at": created, "top_k": 5 + index % 6}
        if not path.exists():
            write_run(records, config, path)
    return folder, order, f"made in {time.perf_counter() - start:.0f} s"


if __name__ == "__main__":
    main()
