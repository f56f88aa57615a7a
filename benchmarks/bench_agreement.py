"""Agreement of three judges with people on a million labelled answers, beside scikit-learn on the same calls.

    python benchmarks/bench_agreement.py [--cases 1000000] [--k 10] [--repeats 3] [--workdir DIR] [--seed 0]

The data of ``bench_compare.py`` (generated once into the work folder, reused after). Three judges of the
candidate run: its offline judge (the run itself) and two scores files (``llm-a``, ``llm-b``: a ``grounded`` and
a ``correctness`` score per answer, noisy copies of people's calls), and people's labels of every answer
(``labels.parquet``: answer_correct, grounded, abstention_correct, retrieval_ok, drawn beside the offline
judge's signals with some disagreement). Each repeat times ``rag-compare agreement`` as a whole process, the text
report and the JSON (every disagreement in it) each to a file, and, in this process, scikit-learn's
``confusion_matrix``, ``cohen_kappa_score`` and ``roc_auc_score`` for the same judges and labels on arrays
already in memory (the reference: what the same numbers cost without reading a file, pairing the answers or
any interval). Python writes the modules' bytecode, as an installed tool's is, and one run before the timed ones
fills that cache. Target (issue 36): under 5 s.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
from bench_compare import MIB, data_options, prepare
from harness import each, measure_command

from rag_compare import load_run
from rag_compare.compute.judge_records import judge_records
from rag_compare.io.scores import make_scores

TARGET_SECONDS = 5.0
JUDGES = ("llm-a", "llm-b")


def main() -> None:
    options, workdir = data_options(__doc__.splitlines()[0])
    data = prepare(workdir, options.cases, options.k, options.seed)
    print(f"cases              {options.cases:,} at k={options.k} (data in {workdir}, {data})")
    inputs = _inputs(workdir, options.seed)
    outputs = {"text": workdir / "agreement.txt", "json": workdir / "agreement.json"}
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # the modules' bytecode cached, as an installed tool's is
    _warm_up(inputs, outputs["text"])
    seconds: dict[str, list[float]] = {name: [] for name in outputs}
    peaks: dict[str, list[int]] = {name: [] for name in outputs}
    reference = []
    for _ in range(options.repeats):
        for name, output in outputs.items():
            output.unlink(missing_ok=True)
            command = [sys.executable, "-m", "rag_compare", "agreement", *map(str, inputs), "--output", str(output)]
            elapsed, peak = measure_command(command, "rag-compare agreement")
            seconds[name].append(elapsed)
            peaks[name].append(peak)
        reference.append(_scikit_learn(inputs))
    document = json.loads(outputs["json"].read_text())
    listed = len(document["disagreements"])
    print(f"judges x labels        {len(document['agreement'])} rows, {listed:,} disagreements")
    for name, output in outputs.items():
        median, peak = statistics.median(seconds[name]), statistics.median(peaks[name]) / MIB
        size = output.stat().st_size / MIB
        times = each(seconds[name], 2)
        print(f"agreement, {name:<11} {median:.2f} s (median of {times}); peak {peak:,.0f} MiB; {size:.1f} MiB")
    print(f"scikit-learn           {statistics.median(reference):.2f} s (median of {each(reference, 2)})")
    for name in outputs:
        print(f"ratio, {name:<15} {statistics.median(seconds[name]) / statistics.median(reference):.1f}x")
    met = statistics.median(seconds["text"]) < TARGET_SECONDS
    print(f"target                 the report under {TARGET_SECONDS:g} s: {'met' if met else 'NOT met'}")


def _warm_up(inputs: list[Path], output: Path) -> None:
    """One run first, not timed: it writes the bytecode of every module it imports and reads the files once."""
    output.unlink(missing_ok=True)
    measure_command(
        [sys.executable, "-m", "rag_compare", "agreement", *map(str, inputs), "--output", str(output)], "a warm-up"
    )


def _inputs(workdir: Path, seed: int) -> list[Path]:
    """People's labels of the candidate's answers and two scores files of it, made once; the paths, labels first."""
    candidate = workdir / "candidate.arrow"
    paths = [workdir / "labels.parquet", candidate, *(workdir / f"candidate.{name}.arrow" for name in JUDGES)]
    if all(path.exists() for path in paths):
        return paths
    rng = np.random.default_rng(seed)
    offline = judge_records(candidate).frame
    labels = _labels(offline, rng)
    labels.write_parquet(paths[0])
    run = load_run(candidate)
    for name, path in zip(JUDGES, paths[2:], strict=True):
        frame = _scores(run.records.select("case_id", "status"), labels, rng)
        evaluator = {"name": name, "fingerprint": name * 8, "config": {}}
        if not path.exists():
            make_scores(run, frame, evaluator, output=path)
    return paths


def _flipped(calls: pl.Series, share: float, rng: np.random.Generator) -> pl.Series:
    """``calls`` (yes/no) with ``share`` of them turned to the other."""
    flip = pl.Series(rng.random(calls.len()) < share)
    return pl.select(
        pl.when(flip).then(pl.when(calls == "yes").then(pl.lit("no")).otherwise(pl.lit("yes"))).otherwise(calls)
    ).to_series()


def _labels(offline: pl.DataFrame, rng: np.random.Generator) -> pl.DataFrame:
    """People's labels of each answer: the offline judge's calls with 10% turned, answer_correct at random."""
    called = offline.select(
        "case_id",
        *(
            pl.when(pl.col(signal).is_null())
            .then(None)
            .when(pl.col(signal) >= 1)
            .then(pl.lit("yes"))
            .otherwise(pl.lit("no"))
            .alias(label)
            for label, signal in (
                ("grounded", "grounded"),
                ("retrieval_ok", "full_coverage"),
                ("abstention_correct", "abstention_correct"),
            )
        ),
    )
    yes = pl.Series(np.where(rng.random(offline.height) < 0.6, "yes", "no"))
    return called.with_columns(
        *(
            _flipped(called.get_column(name), 0.1, rng).alias(name)
            for name in ("grounded", "retrieval_ok", "abstention_correct")
        ),
        answer_correct=yes,
    )


def _scores(records: pl.DataFrame, labels: pl.DataFrame, rng: np.random.Generator) -> pl.DataFrame:
    """A judge's scores of each record: people's calls plus noise, clipped to [0, 1]; failed records not judged."""
    base = records.join(labels, on="case_id", how="left", maintain_order="left")
    noise = {name: pl.Series(rng.normal(0, 0.3, base.height)) for name in ("grounded", "correctness")}
    ok = pl.col("status") == "ok"
    return base.select(
        "case_id",
        judge_status=pl.when(ok).then(pl.lit("ok")).otherwise(pl.lit("not_judged")),
        judge_error=pl.lit(None, pl.String),
        grounded=pl.when(ok).then(
            ((pl.col("grounded") == "yes").cast(pl.Float64) * 0.6 + 0.2 + noise["grounded"]).clip(0, 1)
        ),
        correctness=pl.when(ok).then(
            ((pl.col("answer_correct") == "yes").cast(pl.Float64) * 0.6 + 0.2 + noise["correctness"]).clip(0, 1)
        ),
    )


def _scikit_learn(inputs: list[Path]) -> float:
    """Seconds scikit-learn takes for each judge's confusion matrix, kappa and (for scores) AUC of each label, on
    the pairs already joined in memory."""
    from sklearn.metrics import cohen_kappa_score, confusion_matrix, roc_auc_score

    labels = pl.read_parquet(inputs[0])
    judged = [judge_records(path).frame for path in inputs[1:]]
    pairs = []
    for frame in judged:
        for label, signal in (
            ("grounded", "grounded"),
            ("retrieval_ok", "full_coverage"),
            ("answer_correct", "correctness"),
        ):
            if signal not in frame.columns:
                continue
            judged_frame = frame.select("case_id", pl.col(signal).cast(pl.Float64).alias("value"))
            joined = labels.select("case_id", label).join(judged_frame, on="case_id").drop_nulls()
            people = (joined.get_column(label) == "yes").to_numpy()
            values = joined.get_column("value").to_numpy()
            pairs.append((people, values))
    start = time.perf_counter()
    for people, values in pairs:
        called = values >= 0.5
        confusion_matrix(people, called)
        cohen_kappa_score(people, called)
        if len(np.unique(people)) == 2:
            roc_auc_score(people, values)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
