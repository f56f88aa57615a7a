"""Freezing a run directory from parts: time and peak memory, which should not grow with the run.

    python benchmarks/bench_run_directory.py --cases 1000000 [--buckets 64] [--part-cases 250000] [--workdir DIR]

Writes the synthetic corpus and baseline records of ``synthetic.py`` (the same cases and behaviour) as
Parquet parts of ``--part-cases`` cases each, generated one part at a time, into ``--workdir`` (default: a
folder in the system temp dir named after the arguments; reused when already there). Then, in its own
process through ``measure.py``, ``rag-compare freeze 'records/*.parquet' --corpus corpus/ --output
run/ --buckets B``, and ``rag-compare show run/`` (the manifest and every part's digest checked). Prints
each command's seconds and peak RSS, and the run directory's size.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
from harness import measure_command
from synthetic import SIDES, make_corpus, make_pool, make_records

__all__ = ["write_parts"]


def write_parts(
    folder: Path, cases: int, part_cases: int, k: int = 10, seed: int = 0, sides: tuple[str, ...] = ("baseline",)
) -> None:
    """``folder/corpus/part-N.parquet`` and, per side of ``sides``, ``folder/records/part-N.parquet`` (the
    baseline) or ``folder/{side}-records/part-N.parquet``: ``cases`` cases ``q{i}@v1`` in parts of
    ``part_cases``, each made and written on its own (one passage pool for all)."""
    rng = np.random.default_rng(seed)
    pool = make_pool(rng, max(1_000, min(cases, 1_000_000) // 4))
    folders = {side: folder / ("records" if side == "baseline" else f"{side}-records") for side in sides}
    for path in (folder / "corpus", *folders.values()):
        path.mkdir(parents=True)
    for index, start in enumerate(range(0, cases, part_cases)):
        size = min(part_cases, cases - start)
        corpus, gold = make_corpus(rng, size, len(pool.text))
        ids = "q" + pl.int_range(start, start + size, eager=True).cast(pl.String) + "@v1"
        corpus.with_columns(case_id=ids).write_parquet(folder / "corpus" / f"part-{index:04d}.parquet")
        for side, records_folder in folders.items():
            records = make_records(rng, SIDES[side], gold, k, pool)
            records.with_columns(case_id=ids).write_parquet(records_folder / f"part-{index:04d}.parquet")


def size_mib(folder: Path) -> float:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--buckets", type=int, default=64)
    parser.add_argument("--part-cases", type=int, default=250_000)
    parser.add_argument("--workdir", type=Path)
    options = parser.parse_args()
    workdir = (
        options.workdir or Path(tempfile.gettempdir()) / f"rag-compare-run-dir-{options.cases}-{options.part_cases}"
    )
    if not (workdir / "records").is_dir():
        start = time.perf_counter()
        write_parts(workdir, options.cases, options.part_cases)
        print(f"generated         {time.perf_counter() - start:.1f} s into {workdir}")
    output = workdir / f"run-{options.buckets}"
    shutil.rmtree(output, ignore_errors=True)
    command = [sys.executable, "-m", "rag_compare"]
    freeze = [*command, "freeze", str(workdir / "records" / "*.parquet"), "--corpus", str(workdir / "corpus")]
    seconds, peak = measure_command([*freeze, "--output", f"{output}/", "--buckets", str(options.buckets)], "freeze")
    shown_seconds, shown_peak = measure_command([*command, "show", str(output)], "show")
    print(f"cases             {options.cases:,} in parts of {options.part_cases:,}, {options.buckets} buckets")
    records, corpus = size_mib(workdir / "records"), size_mib(workdir / "corpus")
    print(f"inputs            {records:.0f} MiB records, {corpus:.0f} MiB corpus")
    print(f"freeze            {seconds:.1f} s, peak RSS {peak / 2**20:.0f} MiB")
    print(f"show (verify)     {shown_seconds:.1f} s, peak RSS {shown_peak / 2**20:.0f} MiB")
    print(f"run directory     {size_mib(output):.0f} MiB in {options.buckets} parts")


if __name__ == "__main__":
    main()
