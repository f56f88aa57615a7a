"""The offline judge before and after a change, on the same records: the verdicts that moved, by rule, and
the judge's time.

    python benchmarks/bench_lexical_judge.py --before DIR [--records 1000000] [--repeats 3] [--seed 0] [--workdir DIR]

``--before`` is a checkout of the code before the change (``git worktree add /tmp/judge-before 403e222``).
The records are ``synthetic.py``'s baseline run of ``--records`` cases (English, without a ``language``
column, so each case's language is detected from its question as in a comparison): each record's answer
and context beside its case's question and answerability. Each of ``--repeats`` rounds judges them with
each code in turn (the order alternating from round to round), each in a process of its own with its code
first on the path, timing ``LexicalJudge().judge`` alone. Then the last verdicts of the two are compared
row by row. Each rule of the change moves a verdict one way, so a moved verdict names its rule:

- ``abstained`` false to true: an abstention built from parts (a negation, a noun, a verb);
- ``abstained`` true to false: an answer that says it abstains but goes on to answer;
- ``grounded`` lower, ``abstained`` the same: a claim with a name the context and the question lack;
- anything else: ``other``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
INPUT = ("answer", "context", "answerability", "question")
RULES = {
    "abstention by parts": ~pl.col("abstained_before") & pl.col("abstained_after"),
    "says it abstains, goes on to answer": pl.col("abstained_before") & ~pl.col("abstained_after"),
    "a name the context lacks": (pl.col("abstained_before") == pl.col("abstained_after"))
    & (pl.col("grounded_after") < pl.col("grounded_before")),
}
EXAMPLES = 3


def write_records(workdir: Path, records: int, seed: int) -> Path:
    """``workdir/judged.parquet``: the judge's input from ``synthetic.py``'s baseline records (made once)."""
    path = workdir / "judged.parquet"
    if path.exists():
        return path
    from synthetic import write_inputs

    paths = write_inputs(workdir, records, seed=seed)
    corpus = pl.read_parquet(paths["corpus"], columns=["case_id", "question", "answerability"])
    baseline = pl.read_parquet(paths["baseline_records"], columns=["case_id", "answer", "context"])
    baseline.join(corpus, on="case_id", how="left", maintain_order="left").select(INPUT).write_parquet(path)
    return path


def judge(code: Path, path: Path, verdicts: Path) -> float:
    """Seconds ``code``'s judge takes on the records at ``path``, in a process of its own; its verdicts go to
    ``verdicts``."""
    environ = os.environ | {"PYTHONPATH": os.pathsep.join([str(code), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, __file__, "--judge", str(code), "--input", str(path), "--verdicts", str(verdicts)]
    result = subprocess.run(command, capture_output=True, text=True, env=environ, check=False)
    if result.returncode:
        raise SystemExit(f"judging with the code in {code} failed:\n{result.stderr}")
    return float(json.loads(result.stdout)["seconds"])


def judge_here(code: Path, path: Path, verdicts: Path) -> None:
    """The worker: judge the records at ``path`` with the judge of ``code`` (which must be the one imported)."""
    from rag_compare.compute import lexical_judge

    if not Path(lexical_judge.__file__).resolve().is_relative_to(code.resolve()):
        raise SystemExit(f"the judge came from {lexical_judge.__file__}, not from {code}")
    cases = pl.read_parquet(path)
    start = time.perf_counter()
    found = lexical_judge.LexicalJudge().judge(cases)
    seconds = time.perf_counter() - start
    found.write_parquet(verdicts)
    print(json.dumps({"seconds": seconds}))


def moved(before: Path, after: Path, path: Path) -> pl.DataFrame:
    """The rows whose verdicts differ, with both verdicts, the rule that moved them and the texts."""
    both = pl.concat(
        [
            pl.read_parquet(before).select(pl.all().name.suffix("_before")),
            pl.read_parquet(after).select(pl.all().name.suffix("_after")),
            pl.read_parquet(path),
        ],
        how="horizontal",
    ).with_row_index("record")
    differs = pl.any_horizontal(
        pl.col(f"{name}_before").ne_missing(pl.col(f"{name}_after")) for name in ("abstained", "grounded")
    )
    rule = pl.lit("other")
    for name, condition in reversed(RULES.items()):
        rule = pl.when(condition.fill_null(False)).then(pl.lit(name)).otherwise(rule)
    return both.filter(differs).with_columns(rule=rule)


def report(options: argparse.Namespace, workdir: Path, seconds: dict[str, list[float]], changed: pl.DataFrame) -> None:
    per_million = 1_000_000 / options.records
    medians = {code: statistics.median(values) * per_million for code, values in seconds.items()}
    pairs = sorted(after / before for after, before in zip(seconds["after"], seconds["before"], strict=True))
    print(f"records                    {options.records:,} (synthetic.py's baseline run, seed {options.seed})")
    print(f"data                       {workdir}")
    for code, where in (("before", options.before), ("after", ROOT)):
        times = " / ".join(f"{value * per_million:.2f}" for value in seconds[code])
        print(f"{code:<27}{medians[code]:.2f} s per 1M records, median of {times} s ({where})")
    pair = f"pair by pair {statistics.median(pairs):.2f}x, {pairs[0]:.2f}x-{pairs[-1]:.2f}x"
    print(f"after / before             {medians['after'] / medians['before']:.2f}x ({pair})")
    print(f"verdicts moved             {changed.height:,} of {options.records:,}")
    counts = dict(changed.group_by("rule").len().iter_rows())
    for name in (*RULES, "other"):
        print(f"  {name:<40}{counts.get(name, 0):,}")
        for row in changed.filter(rule=name).head(EXAMPLES).iter_rows(named=True):
            verdicts = (
                f"abstained {row['abstained_before']} -> {row['abstained_after']}, "
                f"grounded {row['grounded_before']} -> {row['grounded_after']}"
            )
            print(f"    record {row['record']}: {verdicts}: {row['answer']!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="a checkout of the code before the change")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3, help="timed rounds, each judging with both codes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, help="where the records are made, or reused (default: a temp folder)")
    parser.add_argument("--judge", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--input", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--verdicts", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.judge is not None:
        judge_here(options.judge, options.input, options.verdicts)
        return
    if options.before is None or not (options.before / "rag_compare").is_dir():
        parser.error("--before must be a checkout of rag-compare (a folder holding rag_compare/)")
    name = f"rag-compare-bench-lexical-judge-{options.records}-seed{options.seed}"
    workdir = options.workdir or Path(tempfile.gettempdir()) / name
    path = write_records(workdir, options.records, options.seed)
    codes = {"before": options.before, "after": ROOT}
    seconds: dict[str, list[float]] = {code: [] for code in codes}
    for round_ in range(options.repeats):
        for code in codes if round_ % 2 == 0 else reversed(codes):
            seconds[code].append(judge(codes[code], path, workdir / f"verdicts-{code}.parquet"))
    changed = moved(workdir / "verdicts-before.parquet", workdir / "verdicts-after.parquet", path)
    report(options, workdir, seconds, changed)


if __name__ == "__main__":
    main()
