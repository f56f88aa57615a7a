"""Reports at scale: the CLI writing the text summary, the Markdown report and the HTML report.

    python benchmarks/bench_report.py [--cases 1000000] [--k 10] [--repeats 3] [--workdir DIR] [--seed 0]

The same data as ``bench_compare.py`` (generated once into the work folder, reused after). For each
format, ``--repeats`` times: ``python -m rag_compare BASELINE CANDIDATE --format F --output FILE`` in
its own process, through ``measure.py``. Prints each format's median wall time, peak RSS and file size,
and what a report costs beyond the text summary of the same comparison. Reports list up to 1,000
cases per status (the default ``--max-cases``), so their size stays bounded whatever the number of cases.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from bench_compare import MIB, SIDES, data_options, prepare, run_cli
from harness import each

FORMATS = {"text": "txt", "markdown": "md", "html": "html"}


def main() -> None:
    options, workdir = data_options(__doc__.splitlines()[0])
    cases, k = options.cases, options.k
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
