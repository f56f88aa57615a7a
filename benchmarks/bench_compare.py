"""Comparison at scale: the rag-compare CLI end to end, side by side with ranx on the same two runs.

    python benchmarks/bench_compare.py [--cases 1000000] [--k 10] [--repeats 3] [--workdir DIR] [--seed 0]

The data (``synthetic.py``: a corpus and two frozen runs) is generated once into the work folder, and
reused when it is already there. Then, ``--repeats`` times:

- CLI: ``python -m rag_compare BASELINE CANDIDATE --format json --output FILE`` in its own process, end
  to end (interpreter start, imports, verified load, comparison, statistics, lexical judge, JSON
  written), its wall time and peak RSS taken by ``measure.py``;
- ranx, in this process: read both run files with Polars, build ``Qrels`` and ``Run`` per side (ok
  records with gold passages; scores 1/rank after dropping repeated ids) and evaluate the five retrieval
  metrics per case. numba compiles for each input type (the longest id, for one), so one untimed pass
  over the same data warms it up before any timing.

Prints the medians, the ratio ranx / CLI, peak memory, and whether the CLI's aggregates of those five
metrics (both sides' means, paired and over all cases) equal ranx's means over the same cases within
1e-9; exit code 1 if they do not.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl
from harness import each, measure_command, yes
from ranx import Qrels, Run, evaluate

from rag_compare.compute.metrics import retrieval_signals

HERE = Path(__file__).resolve().parent
METRICS = ("recall", "precision", "mrr", "ndcg", "hit_rate")
SIDES = ("baseline", "candidate")
GOLD, RANKED = "required_passage_ids", "retrieved_passage_ids"
TOLERANCE = 1e-9
TARGET_SECONDS, TARGET_BYTES, TARGET_SPEEDUP = 30.0, 4 * 2**30, 10.0
MIB = 2**20


def prepare(workdir: Path, cases: int, k: int, seed: int) -> str:
    """Make sure ``workdir`` holds the data; say whether it was reused or how long generating took."""
    corpus = workdir / "corpus.parquet"
    if all((workdir / f"{side}.arrow").exists() for side in SIDES) and corpus.exists():
        held = pl.scan_parquet(corpus).select(pl.len()).collect().item()
        if held != cases:
            raise SystemExit(f"{workdir} holds {held:,} cases, not {cases:,}: choose another --workdir")
        return "reused"
    start = time.perf_counter()
    generate = [sys.executable, str(HERE / "synthetic.py"), "--cases", str(cases), "--k", str(k), "--seed", str(seed)]
    if subprocess.run([*generate, "--out", str(workdir)], check=False, stdout=subprocess.DEVNULL).returncode:
        raise SystemExit(f"generating the data into {workdir} failed (see above)")
    return f"generated in {time.perf_counter() - start:.1f} s"


def run_cli(baseline: Path, candidate: Path, output: Path, output_format: str = "json") -> tuple[float, int]:
    """Seconds and peak RSS bytes of one CLI comparison written to ``output``, run through ``measure.py``."""
    command = [sys.executable, "-m", "rag_compare", str(baseline), str(candidate), "--format", output_format]
    return measure_command([*command, "--output", str(output)], "the CLI comparison")


def ranx_scores(path: Path, k: int) -> tuple[float, pl.DataFrame]:
    """ranx on one run file: the seconds from reading it to per-case scores, and those scores by case."""
    start = time.perf_counter()
    frame = pl.read_ipc(path, columns=["case_id", "status", GOLD, RANKED]).filter(
        (pl.col("status") == "ok") & (pl.col(GOLD).list.len() > 0)
    )
    ranked = frame.get_column(RANKED).list.unique(maintain_order=True)
    scores = [1.0 / rank for rank in range(1, ranked.list.len().to_numpy().max(initial=0) + 1)]
    cases = frame.get_column("case_id").to_list()
    golds = frame.get_column(GOLD).to_list()
    qrels = Qrels({case: dict.fromkeys(gold, 1) for case, gold in zip(cases, golds, strict=True)})
    run = Run({case: dict(zip(ids, scores, strict=False)) for case, ids in zip(cases, ranked.to_list(), strict=True)})
    results = evaluate(
        qrels, run, [f"{metric}@{k}" for metric in METRICS], return_mean=False, save_results_in_run=False
    )
    seconds = time.perf_counter() - start
    by_case = {"case_id": run.get_query_ids(), **{metric: results[f"{metric}@{k}"] for metric in METRICS}}
    return seconds, pl.DataFrame(by_case)


def metric_seconds(path: Path, k: int) -> float:
    """rag-compare's retrieval metrics on one run file, like for like with ``ranx_scores``: read, compute."""
    start = time.perf_counter()
    frame = pl.read_ipc(path, columns=["case_id", "status", GOLD, RANKED]).filter(
        (pl.col("status") == "ok") & (pl.col(GOLD).list.len() > 0)
    )
    retrieval_signals(frame, k)
    return time.perf_counter() - start


def json_fields(path: Path, wanted: set[str]) -> dict[str, Any]:
    """The top-level ``wanted`` fields of the JSON object in ``path``, decoding nothing after them.

    Reads a growing prefix of the file, so a large field that comes later (the cases) is never decoded.
    """
    size = 2**20
    with path.open("rb") as file:
        while True:
            head = file.read(size)
            file.seek(0)
            try:
                return _leading_fields(head.decode("utf-8", errors="ignore"), wanted)
            except (ValueError, IndexError):
                if len(head) < size:
                    raise
            size *= 8


def _leading_fields(text: str, wanted: set[str]) -> dict[str, Any]:
    """Decode ``text``'s top-level fields in order until all of ``wanted`` are found (or the object ends).

    Raises ``ValueError`` or ``IndexError`` when ``text`` ends before that.
    """
    decoder, found = json.JSONDecoder(), dict[str, Any]()
    position = _skip_space(text, text.index("{") + 1)
    while not wanted <= found.keys() and text[position] != "}":
        key, position = decoder.raw_decode(text, position)
        value, position = decoder.raw_decode(text, _skip_space(text, text.index(":", position) + 1))
        if key in wanted:
            found[key] = value
        position = _skip_space(text, position)
        if text[position] == ",":
            position = _skip_space(text, position + 1)
    return found


def _skip_space(text: str, position: int) -> int:
    while text[position] in " \t\r\n":
        position += 1
    return position


def gold_cases(runs: dict[str, Path]) -> pl.Series:
    """The ids of the cases with gold passages on either side, whatever their status."""
    labels = pl.concat([pl.read_ipc(path, columns=["case_id", GOLD]) for path in runs.values()])
    return labels.filter(pl.col(GOLD).list.len() > 0).get_column("case_id").unique()


def ranx_means(scores: dict[str, pl.DataFrame], cases: pl.Series) -> dict[str, dict[str, Any]]:
    """ranx's means by scope (``n`` and ``<side>/<metric>``): ``paired`` over the cases scored on both
    sides; ``all_cases`` over ``cases``, at 0 on a side that failed or lacks the case."""
    joined = pl.DataFrame({"case_id": cases})
    for side in SIDES:
        named = scores[side].rename({metric: f"{side}/{metric}" for metric in METRICS})
        joined = joined.join(named, on="case_id", how="left")
    return {
        scope: frame.select(pl.len().alias("n"), pl.exclude("case_id").mean()).row(0, named=True)
        for scope, frame in (("paired", joined.drop_nulls()), ("all_cases", joined.fill_null(0.0)))
    }


def check(output: Path, scores: dict[str, pl.DataFrame], cases: pl.Series) -> tuple[list[str], float, dict[str, int]]:
    """Where the CLI's aggregates of ``METRICS`` differ from ranx's means; the largest difference; n by scope."""
    rows = {(row["scope"], row["signal"]): row for row in json_fields(output, {"aggregates"}).get("aggregates", [])}
    problems, largest, sizes = [], 0.0, {}
    for scope, means in ranx_means(scores, cases).items():
        sizes[scope] = means["n"]
        for metric in METRICS:
            row = rows.get((scope, metric))
            if row is None:
                problems.append(f"{scope} {metric}: not among the CLI's aggregates")
                continue
            expected = {side: means[f"{side}/{metric}"] for side in SIDES}
            expected["delta"] = expected["candidate"] - expected["baseline"]
            for field, value in expected.items():
                gap = math.inf if row[field] is None else abs(row[field] - value)
                largest = max(largest, gap)
                if gap > TOLERANCE:
                    problems.append(f"{scope} {metric} {field}: CLI {row[field]}, ranx {value}")
            if row["n"] != means["n"]:
                problems.append(f"{scope} {metric} n: CLI {row['n']}, ranx {means['n']}")
    return problems, largest, sizes


def data_options(description: str) -> tuple[argparse.Namespace, Path]:
    """The options of the scale benchmarks (``--cases --k --repeats --seed --workdir``) and the data folder."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, help="where the data is generated, or reused (default: a temp folder)")
    options = parser.parse_args()
    name = f"rag-compare-bench-{options.cases}-k{options.k}-seed{options.seed}"
    return options, options.workdir or Path(tempfile.gettempdir()) / name


def main() -> None:
    options, workdir = data_options(__doc__.splitlines()[0])
    cases, k, repeats = options.cases, options.k, options.repeats
    data = prepare(workdir, cases, k, options.seed)
    runs = {side: workdir / f"{side}.arrow" for side in SIDES}
    for path in runs.values():  # numba compiles per input type (such as the longest id), so warm up on the data
        ranx_scores(path, k)
    cli_seconds, cli_peaks, ranx_seconds, metrics_seconds = [], [], [], []
    with tempfile.TemporaryDirectory() as temporary:
        output = Path(temporary) / "comparison.json"
        for _ in range(repeats):
            seconds, peak = run_cli(runs["baseline"], runs["candidate"], output)
            cli_seconds.append(seconds)
            cli_peaks.append(peak)
            timed = {side: ranx_scores(path, k) for side, path in runs.items()}
            ranx_seconds.append(sum(seconds for seconds, _ in timed.values()))
            metrics_seconds.append(sum(metric_seconds(path, k) for path in runs.values()))
        ranx_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
        output_size = output.stat().st_size
        problems, largest, sizes = check(output, {side: frame for side, (_, frame) in timed.items()}, gold_cases(runs))
    cli, ranx, peak = statistics.median(cli_seconds), statistics.median(ranx_seconds), max(cli_peaks)
    print(f"cases                      {cases:,} at k={k} (data in {workdir}, {data})")
    print(f"rag-compare CLI            {cli:.3f} s (median of {each(cli_seconds)}; one process end to end)")
    print(f"ranx                       {ranx:.3f} s (median of {each(ranx_seconds)}; read, build Qrels and Run,")
    print("                           evaluate, after one untimed pass that compiles and warms up numba)")
    print(f"ratio ranx / CLI           {ranx / cli:.1f}x")
    metrics = statistics.median(metrics_seconds)
    print(f"rag-compare metrics only   {metrics:.3f} s (median of {each(metrics_seconds)}; the same reads and")
    print(f"                           five metrics as ranx, in this process): ranx / metrics {ranx / metrics:.1f}x")
    print(f"peak RSS, CLI              {peak / MIB:,.0f} MiB (largest of {repeats}; the CLI process alone)")
    print(f"peak RSS, ranx             {ranx_peak / MIB:,.0f} MiB (this process: ranx and the frames it read)")
    print(f"CLI JSON output            {output_size / MIB:,.1f} MiB")
    scopes = ", ".join(f"{scope} n={n:,}" for scope, n in sizes.items())
    if problems:
        print(f"correctness                MISMATCH between the CLI's aggregates and ranx ({scopes}):")
        for problem in problems:
            print(f"                           {problem}")
    else:
        print(f"correctness                CLI aggregates of {', '.join(METRICS)} equal ranx's means")
        print(f"                           within {TOLERANCE:g} ({scopes}; largest difference {largest:.1e})")
    verdicts = (
        f"under {TARGET_SECONDS:.0f} s: {yes(cli < TARGET_SECONDS)}",
        f"under {TARGET_BYTES // 2**30} GiB: {yes(peak < TARGET_BYTES)}",
        f"at least {TARGET_SPEEDUP:.0f}x faster than ranx: {yes(ranx / cli >= TARGET_SPEEDUP)}",
    )
    print(f"targets                    {'; '.join(verdicts)} (set for 1,000,000 cases at k=10)")
    if problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
