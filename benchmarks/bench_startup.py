"""Start-up time: ``rag-compare --help`` and ``import rag_compare`` beside ``import click``, in one run.

    python benchmarks/bench_startup.py [--repeats 21]

Each command runs ``--repeats`` times, interleaved, each time in a fresh process started through
``measure.py``: ``rag-compare --help`` (the console script next to this Python, else ``python -m
rag_compare --help``), ``python -c "import rag_compare"``, and as the reference ``python -c "import
click"``, the least a click command line costs. Every process imports the package of this tree (each
starts in the tree's root, which also goes first on ``PYTHONPATH``), whatever the package installed.
Prints each median, its ratio to the reference and whether the target (a median of at most 0.2 s) is met.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from harness import HERE, each, measure_command, yes

TARGET_SECONDS = 0.2


def cli_command() -> list[str]:
    """The ``rag-compare`` console script of this environment, or ``python -m rag_compare`` without one."""
    script = Path(sys.executable).parent / "rag-compare"
    return [str(script)] if script.exists() else [sys.executable, "-m", "rag_compare"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    options = parser.parse_args()
    os.chdir(HERE.parent)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")]))
    commands = {
        'python -c "import click"': [sys.executable, "-c", "import click"],
        'python -c "import rag_compare"': [sys.executable, "-c", "import rag_compare"],
        "rag-compare --help": [*cli_command(), "--help"],
    }
    seconds: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(options.repeats):
        for label, command in commands.items():
            seconds[label].append(measure_command(command, label)[0])
    medians = {label: statistics.median(values) for label, values in seconds.items()}
    reference = medians['python -c "import click"']
    print(f"processes                       {options.repeats} of each, fresh, interleaved ({' '.join(cli_command())})")
    for label, median in medians.items():
        ratio = "reference" if label == next(iter(medians)) else f"{median / reference:.1f}x click"
        print(f"{label:<31} {median:.3f} s ({ratio}; median of {each(seconds[label], 2)})")
    verdicts = [f"{label} {yes(medians[label] <= TARGET_SECONDS)}" for label in list(commands)[1:]]
    print(f"target                          median <= {TARGET_SECONDS} s: {'; '.join(verdicts)}")


if __name__ == "__main__":
    main()
