"""Reports at scale: the CLI writing the text summary, the Markdown report and the HTML report.

    python benchmarks/bench_report.py [--cases 1000000] [--k 10] [--repeats 3] [--workdir DIR] [--seed 0]

The same data as ``bench_compare.py`` (generated once into the work folder, reused after). For each
format, ``--repeats`` times: ``python -m rag_compare BASELINE CANDIDATE --format F --output FILE`` in
its own process, through ``measure.py``. Prints each format's median wall time, peak RSS and file size,
and what a report costs beyond the text summary of the same comparison. Reports list up to 1,000
cases per status (the default ``--max-cases``), so their size stays bounded whatever the number of cases.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from bench_compare import MIB, SIDES, each, prepare, run_cli

FORMATS = {"text": "txt", "markdown": "md", "html": "html"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, help="where the data is generated, or reused (default: a temp folder)")
    options = parser.parse_args()
    cases, k = options.cases, options.k
    workdir = options.workdir or Path(tempfile.gettempdir()) / f"rag-compare-bench-{cases}-k{k}-seed{options.seed}"
    data = prepare(workdir, cases, k, options.seed)
    runs = [workdir / f"{side}.arrow" for side in SIDES]
    print(f"cases         {cases:,} at k={k} (data in {workdir}, {data})")
    medians = {}
    with tempfile.TemporaryDirectory() as temporary:
        for output_format, suffix in FORMATS.items():
            output = Path(temporary) / f"comparison.{suffix}"
            measured = [run_cli(*runs, output, output_format) for _ in range(options.repeats)]
            seconds = [value for value, _ in measured]
            medians[output_format] = statistics.median(seconds)
            peak = max(peak for _, peak in measured)
            beyond = "" if output_format == "text" else f", {medians[output_format] - medians['text']:+.1f} s over text"
            print(
                f"{output_format:<13} {medians[output_format]:.1f} s (median of {each(seconds)}{beyond}), "
                f"peak {peak / MIB:,.0f} MiB, file {output.stat().st_size / MIB:,.1f} MiB"
            )


if __name__ == "__main__":
    main()
