"""Several candidates against one baseline, beside one comparison of two runs: time, peak memory, and the same
answer.

    python benchmarks/bench_many.py [--cases 1000000] [--candidates 4] [--repeats 3] [--engines memory]
        [--workdir DIR]

The data is ``synthetic.py``'s (a baseline and a candidate of ``--cases`` cases) and ``--candidates - 1`` more
candidates between them (``synthetic.write_sweep``), generated once into the work folder and reused. Then,
``--repeats`` times, interleaved so load on the machine hits each alike, each in its own process through
``measure.py``:

- **two runs** (the reference): ``rag-compare BASELINE CANDIDATE --output FILE``, one comparison of two runs
  and its text summary;
- **N candidates**, per engine: ``rag-compare BASELINE CANDIDATE SWEEP-1 ... --output FILE`` and theirs.

Prints each one's median seconds and peak RSS, the ratio of N candidates to two runs (target, for 4 candidates:
under 3x in memory) and whether the peak stays under 4 GiB. Then, once and untimed, in this process: whether the first
candidate's comparison among N is the comparison of two runs (its cases, and its aggregates but for the
family's Holm p); exit code 1 if not.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from harness import each, measure_command, print_correctness, yes
from synthetic import write_dataset, write_sweep

TARGET_RATIO = 3.0
TARGET_PEAK_GIB = 4.0
TARGET_CANDIDATES = 4
"""The time target is set for this many candidates (a baseline and 4); the peak target for any."""
_COLUMN = 24


def inputs(workdir: Path, cases: int, candidates: int) -> list[Path]:
    """The baseline and the candidates, generated into ``workdir`` when not there yet."""
    if not (workdir / "candidate.arrow").exists():
        write_dataset(workdir, cases)
    sweep = [workdir / f"sweep-{number}.arrow" for number in range(1, candidates)]
    if not all(path.exists() for path in sweep):
        for path in sweep:
            path.unlink(missing_ok=True)
        sweep = write_sweep(workdir, cases, candidates - 1)
    return [workdir / "baseline.arrow", workdir / "candidate.arrow", *sweep]


def differences(runs: list[str]) -> list[str]:
    """Where the first candidate's comparison among all of ``runs[1:]`` differs from the comparison of the first
    two runs (the family's Holm p aside)."""
    from polars.testing import assert_frame_equal

    from rag_compare import compare, compare_many

    two = compare(runs[0], runs[1])
    among = compare_many(runs[0], runs[1:]).comparisons[0]
    found = []
    for name, left, right in (
        ("cases", two.cases, among.cases),
        ("aggregates", two.aggregates.drop("p_adjusted"), among.aggregates.drop("p_adjusted")),
    ):
        try:
            assert_frame_equal(left, right)
        except AssertionError:
            found.append(f"the first candidate's {name}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--engines", default="memory")
    parser.add_argument("--workdir", type=Path)
    options = parser.parse_args()
    if options.candidates < 2:
        parser.error("--candidates must be 2 or more")
    workdir = options.workdir or Path(tempfile.gettempdir()) / f"rag-compare-many-{options.cases}"
    runs = [str(path) for path in inputs(workdir, options.cases, options.candidates)]
    commands = {"two runs": [*runs[:2]]} | {
        f"{options.candidates} candidates, {engine}": [*runs, "--engine", engine]
        for engine in options.engines.split(",")
    }
    seconds: dict[str, list[float]] = {name: [] for name in commands}
    peaks: dict[str, list[int]] = {name: [] for name in commands}
    output = workdir / "summary.txt"
    for _ in range(options.repeats):
        for name, arguments in commands.items():
            output.unlink(missing_ok=True)
            took, peak = measure_command(
                [sys.executable, "-m", "rag_compare", *arguments, "--output", str(output)], name
            )
            seconds[name].append(took)
            peaks[name].append(peak)
    report(options, seconds, peaks)
    problems = differences(runs)
    print_correctness(problems, _COLUMN, "the first candidate's comparison is the two runs' but for the family's p")
    if problems:
        sys.exit(1)


def report(options: argparse.Namespace, seconds: dict[str, list[float]], peaks: dict[str, list[int]]) -> None:
    """Print the figures and the targets' verdicts."""
    print(
        "cases".ljust(_COLUMN)
        + f"{options.cases:,} a run, {options.candidates} candidates, {options.repeats} runs each"
    )
    reference = statistics.median(seconds["two runs"])
    for name, taken in seconds.items():
        median, peak = statistics.median(taken), statistics.median(peaks[name]) / 2**30
        timing = f"{median:.1f} s (each {each(taken)}), {median / reference:.2f}x; peak {peak:.2f} GiB"
        print(name.ljust(_COLUMN) + timing)
    memory = [name for name in seconds if name.endswith(", memory")]
    if memory:
        ratio = statistics.median(seconds[memory[0]]) / reference
        peak = statistics.median(peaks[memory[0]]) / 2**30
        if options.candidates == TARGET_CANDIDATES:
            verdict = f"{yes(ratio < TARGET_RATIO)} ({ratio:.2f}x)"
            print("target".ljust(_COLUMN) + f"under {TARGET_RATIO:g}x two runs: {verdict}")
        else:
            print("target".ljust(_COLUMN) + f"under {TARGET_RATIO:g}x two runs: set for {TARGET_CANDIDATES} candidates")
        print(
            "target".ljust(_COLUMN)
            + f"peak under {TARGET_PEAK_GIB:g} GiB: {yes(peak < TARGET_PEAK_GIB)} ({peak:.2f} GiB)"
        )


if __name__ == "__main__":
    main()
