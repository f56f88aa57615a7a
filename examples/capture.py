"""Capture the shipped example runs, offline: ``python examples/capture.py [OUTPUT_DIR]`` (``make examples``).

Writes ``baseline.arrow`` and ``candidate.arrow`` to OUTPUT_DIR (default ``runs/``), which must not hold
them yet. Paths in the run configs are relative to the repository root, wherever this is run from.
``SOURCE_DATE_EPOCH`` must be set: it fixes the runs' creation time; the latencies they record are
measured anew, so two captures differ in ``latency_ms`` (and fingerprint) only.

- baseline: main's pipeline, the same run as ``rag-compare capture corpora/handbook.csv --passages
  corpora/handbook_passages.csv --top-k 3 --context-budget 600 --set name=baseline``.
- candidate: a branch that retrieves 5 passages instead of 3, keeps stopwords in the BM25 index
  (``stopwords=None``) and lets the extractive generator answer on weaker matches (``min_overlap`` 0.3
  instead of 0.4), within the same 600-character budget. Its branch was cut before
  ``public-transport-pass@2026-01`` was added to the corpus, so it ran on that older corpus
  (``examples/handbook_at_branch.csv``); and its model endpoint was down for
  ``sick-leave-certificate@2026-01`` (``EndpointOutage`` in ``examples/parts.py``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PASSAGES = "corpora/handbook_passages.csv"
CORPUS = "corpora/handbook.csv"
BRANCH_CORPUS = "examples/handbook_at_branch.csv"
"""``corpora/handbook.csv`` as it was when the candidate's branch was cut: without ``public-transport-pass@2026-01``."""
OUTAGE = ("sick-leave-certificate@2026-01",)
"""The cases whose generation request the candidate's endpoint answered with HTTP 503."""
BUDGET_CHARS = 600


def main(output_dir: Path) -> None:
    from parts import EndpointOutage

    from rag_compare import BM25Retriever, BudgetContextBuilder, ExtractiveGenerator, capture

    builder = BudgetContextBuilder(BUDGET_CHARS)
    runs = {
        "baseline": capture(
            CORPUS,
            BM25Retriever(PASSAGES),
            ExtractiveGenerator(),
            top_k=3,
            context_builder=builder,
            config={"name": "baseline"},
            output=output_dir / "baseline.arrow",
        ),
        "candidate": capture(
            BRANCH_CORPUS,
            BM25Retriever(PASSAGES, stopwords=None),
            EndpointOutage(ExtractiveGenerator(min_overlap=0.3), OUTAGE),
            top_k=5,
            context_builder=builder,
            config={"name": "candidate"},
            output=output_dir / "candidate.arrow",
        ),
    }
    for name, run in runs.items():
        statuses = run.records.get_column("status").value_counts(sort=True).rows()
        counted = ", ".join(f"{status} {count}" for status, count in statuses)
        print(f"captured {run.records.height} cases of '{name}' ({counted}; fingerprint {run.fingerprint[:12]})")


if __name__ == "__main__":
    if "SOURCE_DATE_EPOCH" not in os.environ:
        sys.exit("examples/capture.py: set SOURCE_DATE_EPOCH (make examples does) so the runs' creation time is fixed.")
    output = Path(sys.argv[1] if len(sys.argv) > 1 else "runs").resolve()
    os.chdir(ROOT)
    main(output)
