"""Comparing runs with repeats, beside comparing the same records as if each sample were a case of its own.

    python benchmarks/bench_repeats.py --cases 100000 --samples 3 [--k 10] [--repeats 3] [--workdir DIR]

The data is ``synthetic.py``'s, ``--samples`` records of each case a side (each sample drawn anew from the
same corpus and behaviour), frozen twice a side:

- **with repeats**: one run a side whose records carry ``repeat``, compared with repeats (per-case means
  and spreads, statuses against the case's own samples, the noise floor, the flaky cases);
- **as cases**: the same records with each sample renamed a case of its own (``q1@v1`` repeat 2 is case
  ``q1.2@v1``) against a corpus of those cases, compared as a run of one sample a case: the count of rows
  alone, which is what a tool that counts repeats as cases does.

Both are the CLI's text summary, end to end in its own process, timed in turn.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl
from harness import each, measure_command
from synthetic import EPOCH, SIDES, make_corpus, make_pool, make_records

from rag_compare import freeze_run

MIB = 1 << 20
FORMS = ("repeats", "cases")


def write_runs(out: Path, cases: int, samples: int, k: int, seed: int) -> dict[str, dict[str, Path]]:
    """Freeze both sides in both forms into ``out`` (reused when there); return the run paths by form and side."""
    paths = {form: {side: out / f"{form}-{side}.arrow" for side in SIDES} for form in FORMS}
    if all(path.exists() for sides in paths.values() for path in sides.values()):
        return paths
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    pool = make_pool(rng, max(1_000, cases // 4))
    corpus, gold = make_corpus(rng, cases, len(pool.text))
    as_cases = pl.concat(
        corpus.with_columns(pl.col("case_id").str.replace("@", f".{sample}@")) for sample in range(samples)
    )
    environ = {"SOURCE_DATE_EPOCH": EPOCH}
    config = {"top_k": k, "retriever": {"top_k": k}}
    for side, behaviour in SIDES.items():
        records = pl.concat(
            make_records(rng, behaviour, gold, k, pool).with_columns(repeat=pl.lit(sample, pl.Int64))
            for sample in range(samples)
        )
        freeze_run(records, corpus, {"name": side, **config}, output=paths["repeats"][side], environ=environ)
        renamed = records.with_columns(
            pl.col("case_id").str.replace("@", pl.format(".{}@", pl.col("repeat")), literal=True)
        ).drop("repeat")
        freeze_run(renamed, as_cases, {"name": side, **config}, output=paths["cases"][side], environ=environ)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=3, help="samples of each case a side")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each form")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, help="where the data is generated, or reused (default: a temp folder)")
    options = parser.parse_args()
    name = f"rag-compare-bench-repeats-{options.cases}x{options.samples}-k{options.k}-seed{options.seed}"
    workdir = options.workdir or Path(tempfile.gettempdir()) / name
    paths = write_runs(workdir, options.cases, options.samples, options.k, options.seed)
    seconds: dict[str, list[float]] = {form: [] for form in FORMS}
    peaks: dict[str, list[int]] = {form: [] for form in FORMS}
    for _ in range(options.repeats):
        for form in FORMS:
            command = [sys.executable, "-m", "rag_compare", *map(str, paths[form].values())]
            took, peak = measure_command(command, f"comparing the runs {form}")
            seconds[form].append(took)
            peaks[form].append(peak)
    median = {form: statistics.median(seconds[form]) for form in FORMS}
    samples = options.cases * options.samples
    print(f"cases                      {options.cases:,} x {options.samples} samples a side (data in {workdir})")
    for form, label in (("repeats", "with repeats"), ("cases", "samples as cases")):
        print(
            f"{label:<27}{median[form]:.3f} s (median of {each(seconds[form])}), peak {max(peaks[form]) / MIB:,.0f} MiB"
        )
    print(f"ratio                      {median['repeats'] / median['cases']:.2f}x ({samples:,} records a side)")


if __name__ == "__main__":
    main()
