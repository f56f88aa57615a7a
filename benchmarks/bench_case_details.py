"""One case's details at scale: what the review page shows of cases picked from a 1M-case comparison.

    python benchmarks/bench_case_details.py [--cases 1000000] [--k 10] [--repeats 3] [--shown 1000] [--workdir DIR]

The same data as ``bench_compare.py`` (generated once into the work folder, reused after), and its
knowledge base rebuilt from ``synthetic.py``'s seeded passage pool, so each passage shown has its text.
The two run files are compared once in this process (``compare(..., passages=...)``, the memory engine);
then, ``--repeats`` times, ``case_details`` of ``--shown`` cases drawn at random (seeded), of one page of
50 and of one case, and ``case_summaries`` of ``--shown`` rows. Prints each median wall time, and the
growth of this process' resident memory during the calls (sampled every 5 ms) over what it held before.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from bench_compare import MIB, SIDES, prepare
from harness import each
from synthetic import make_pool

from rag_compare import compare
from rag_compare.compute.case_details import case_details, case_summaries

PAGE = 50


def options() -> tuple[argparse.Namespace, Path]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shown", type=int, default=1_000)
    parser.add_argument("--workdir", type=Path, help="where the data is generated, or reused (default: a temp folder)")
    parsed = parser.parse_args()
    name = f"rag-compare-bench-{parsed.cases}-k{parsed.k}-seed{parsed.seed}"
    return parsed, parsed.workdir or Path("/tmp") / name


def knowledge_base(cases: int, seed: int) -> pl.DataFrame:
    """The passages ``synthetic.py`` drew first from its seeded generator: ``p{j}`` and their texts."""
    pool = make_pool(np.random.default_rng(seed), max(1_000, cases // 4))
    return pl.DataFrame({"passage_id": [f"p{j}" for j in range(len(pool.text))], "source_version": "v1"}).with_columns(
        text=pool.text
    )


def resident() -> int:
    """This process' resident memory, in bytes."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * 4096


def measured(call: Callable[[], Any]) -> tuple[float, int, Any]:
    """Seconds ``call`` took, the most this process' resident memory grew meanwhile, and what it returned."""
    before = peak = resident()
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.005):
            peak = max(peak, resident())

    sampler = threading.Thread(target=sample)
    sampler.start()
    start = time.perf_counter()
    result = call()
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    return seconds, max(peak, resident()) - before, result


def main() -> None:
    parsed, workdir = options()
    data = prepare(workdir, parsed.cases, parsed.k, parsed.seed)
    passages = knowledge_base(parsed.cases, parsed.seed)
    print(f"cases         {parsed.cases:,} at k={parsed.k} (data in {workdir}, {data}), {passages.height:,} passages")
    start = time.perf_counter()
    comparison = compare(*(workdir / f"{side}.arrow" for side in SIDES), passages=passages)
    print(
        f"compare       {time.perf_counter() - start:.1f} s (once, memory engine), resident {resident() / MIB:,.0f} MiB"
    )
    ids = comparison.cases.get_column("case_id").sample(parsed.shown, seed=parsed.seed).to_list()
    rows = comparison.cases.filter(pl.col("case_id").is_in(ids))
    calls: dict[str, Callable[[], Any]] = {
        f"details of {parsed.shown:,}": lambda: case_details(comparison, ids),
        f"details of {PAGE}": lambda: case_details(comparison, ids[:PAGE]),
        "details of 1": lambda: case_details(comparison, ids[:1]),
        f"summaries of {parsed.shown:,}": lambda: case_summaries(comparison, rows, None),
    }
    for name, call in calls.items():
        runs = [measured(call) for _ in range(parsed.repeats)]
        seconds = [run[0] for run in runs]
        grown = max(run[1] for run in runs)
        size = len(json.dumps(runs[-1][2], allow_nan=False).encode())
        print(
            f"{name:<20} {statistics.median(seconds):.2f} s (median of {each(seconds, 2)}), "
            f"memory +{grown / MIB:,.0f} MiB, JSON {size / MIB:,.1f} MiB"
        )


if __name__ == "__main__":
    main()
