"""Capture the shipped example runs, offline: ``python examples/capture.py [OUTPUT_DIR [RUN...]]`` (``make
examples``).

Writes ``baseline.arrow``, ``candidate.arrow`` and ``stopwords.arrow`` (or only the RUNs named) to OUTPUT_DIR
(default ``runs/``), which must not hold them yet. Paths in the run configs are relative to the repository
root, wherever this is run from. ``SOURCE_DATE_EPOCH`` must be set: it fixes the runs' creation time; the
latencies they record are measured anew, so two captures differ in ``latency_ms`` (and fingerprint) only.

- baseline: main's pipeline, the same run as ``rag-compare capture corpora/handbook.csv --passages
  corpora/handbook_passages.csv --top-k 3 --context-budget 600 --set name=baseline``.
- candidate: a branch that retrieves 5 passages instead of 3, keeps stopwords in the BM25 index
  (``stopwords=None``) and lets the extractive generator answer on weaker matches (``min_overlap`` 0.3
  instead of 0.4), within the same 600-character budget. Its branch was cut before
  ``public-transport-pass@2026-01`` was added to the corpus, so it ran on that older corpus
  (``examples/handbook_at_branch.csv``); and its model endpoint was down for
  ``sick-leave-certificate@2026-01`` (``EndpointOutage`` in ``examples/parts.py``).
- stopwords: main's pipeline with one of the candidate's changes alone, stopwords kept in the BM25 index: the
  third run of a sweep (``rag-compare runs/baseline.arrow runs/candidate.arrow runs/stopwords.arrow``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rag_compare import Run

ROOT = Path(__file__).resolve().parents[1]
PASSAGES = "corpora/handbook_passages.csv"
CORPUS = "corpora/handbook.csv"
BRANCH_CORPUS = "examples/handbook_at_branch.csv"
"""``corpora/handbook.csv`` as it was when the candidate's branch was cut: without ``public-transport-pass@2026-01``."""
OUTAGE = ("sick-leave-certificate@2026-01",)
"""The cases whose generation request the candidate's endpoint answered with HTTP 503."""
BUDGET_CHARS = 600
RUNS = ("baseline", "candidate", "stopwords")


def main(output_dir: Path, names: tuple[str, ...] = RUNS) -> None:
    for name in names:
        run = _capture(name, output_dir)
        statuses = run.records.get_column("status").value_counts(sort=True).rows()
        counted = ", ".join(f"{status} {count}" for status, count in statuses)
        print(f"captured {run.records.height} cases of '{name}' ({counted}; fingerprint {run.fingerprint[:12]})")


def _capture(name: str, output_dir: Path) -> Run:
    """Capture the example run ``name`` into ``output_dir``."""
    from parts import EndpointOutage

    from rag_compare import BM25Retriever, BudgetContextBuilder, ExtractiveGenerator, capture

    builder = BudgetContextBuilder(BUDGET_CHARS)
    if name == "stopwords":
        return capture(
            CORPUS,
            BM25Retriever(PASSAGES, stopwords=None),
            ExtractiveGenerator(),
            top_k=3,
            context_builder=builder,
            config={"name": "stopwords"},
            output=output_dir / "stopwords.arrow",
        )
    if name == "baseline":
        return capture(
            CORPUS,
            BM25Retriever(PASSAGES),
            ExtractiveGenerator(),
            top_k=3,
            context_builder=builder,
            config={"name": "baseline"},
            output=output_dir / "baseline.arrow",
        )
    return capture(
        BRANCH_CORPUS,
        BM25Retriever(PASSAGES, stopwords=None),
        EndpointOutage(ExtractiveGenerator(min_overlap=0.3), OUTAGE),
        top_k=5,
        context_builder=builder,
        config={"name": "candidate"},
        output=output_dir / "candidate.arrow",
    )


if __name__ == "__main__":
    if "SOURCE_DATE_EPOCH" not in os.environ:
        sys.exit("examples/capture.py: set SOURCE_DATE_EPOCH (make examples does) so the runs' creation time is fixed.")
    output = Path(sys.argv[1] if len(sys.argv) > 1 else "runs").resolve()
    unknown = [name for name in sys.argv[2:] if name not in RUNS]
    if unknown:
        sys.exit(f"examples/capture.py: no example run is named {', '.join(unknown)}; the runs are {', '.join(RUNS)}.")
    os.chdir(ROOT)
    main(output, tuple(sys.argv[2:]) or RUNS)
