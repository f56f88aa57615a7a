"""Freeze and load speed at scale, side by side with bare Polars/Arrow I/O of the same data.

    python benchmarks/bench_freeze.py [--cases 100000] [--repeats 5]

The reference does only what any tool must: read the corpus and records, write one Arrow IPC file,
read it back. rag-compare adds contract validation, the label join, credential scanning and the
fingerprint. Medians and their ratio are printed; the machine is shared, so compare ratios.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl

from rag_compare import freeze_run, load_corpus, load_run


def make_inputs(folder: Path, cases: int) -> tuple[Path, Path]:
    """A corpus of ``cases`` answerable cases and one ok record per case, with realistic text sizes."""
    key = pl.int_range(cases).cast(pl.String)
    base = pl.DataFrame({"n": range(cases)})
    corpus = base.select(
        case_id="q" + key + "@v1",
        question="What is the allowance for case " + key + "?",
        answerability=pl.lit("answerable"),
        source_version=pl.lit("v1"),
        required_passage_ids="p" + key + ";e" + key,
        category=pl.lit("rule_exception"),
    )
    records = base.select(
        case_id="q" + key + "@v1",
        status=pl.lit("ok"),
        retrieved_passage_ids=pl.concat_list("p" + key, "x" + key, "e" + key),
        retrieved_scores=pl.lit([3.0, 2.0, 1.0]),
        context="[p" + key + "] " + "The allowance is 45 euros per day. " * 12,
        context_passage_ids=pl.concat_list("p" + key),
        answer="The allowance is 45 euros per day for case " + key + ".",
        latency_ms=pl.lit(812.5),
        prompt_tokens=pl.lit(420),
        completion_tokens=pl.lit(18),
    )
    corpus_path, records_path = folder / "corpus.csv", folder / "records.parquet"
    corpus.write_csv(corpus_path)
    records.write_parquet(records_path)
    return corpus_path, records_path


def median_seconds(action: Callable[[int], object], repeats: int) -> float:
    timings = []
    for attempt in range(repeats):
        start = time.perf_counter()
        action(attempt)
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        corpus_path, records_path = make_inputs(folder, options.cases)

        def reference(attempt: int) -> None:
            pl.read_csv(corpus_path)
            frame = pl.read_parquet(records_path)
            frame.write_ipc(folder / f"reference-{attempt}.arrow", compression="zstd")
            pl.read_ipc(folder / f"reference-{attempt}.arrow")

        def rag_compare(attempt: int) -> None:
            corpus = load_corpus(corpus_path)
            freeze_run(records_path, corpus, {"top_k": 3}, output=folder / f"run-{attempt}.arrow", environ={})
            load_run(folder / f"run-{attempt}.arrow")

        bare = median_seconds(reference, options.repeats)
        ours = median_seconds(rag_compare, options.repeats)
        size = (folder / "run-0.arrow").stat().st_size
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"cases                      {options.cases:,}")
    print(f"bare Polars/Arrow I/O      {bare:.3f} s (median of {options.repeats})")
    print(f"rag-compare freeze + load  {ours:.3f} s (median of {options.repeats})")
    print(f"ratio                      {ours / bare:.2f}x")
    print(f"run file size              {size / 2**20:.1f} MiB")
    print(f"peak RSS of this process   {peak_mib:.0f} MiB")


if __name__ == "__main__":
    main()
