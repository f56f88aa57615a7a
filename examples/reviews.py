"""Make the shipped example reviews file: ``python examples/reviews.py [OUTPUT]`` (``make example-reviews``).

A reviewer read each answer of the candidate run and labelled it (``examples/labels.csv``: is it correct by
the case's acceptance note, grounded in the context, right to abstain or not, did retrieval find what the
answer needs); the labels are given as verdicts through a review session on the examples' comparison, as the
review page gives them, into a new review database (``build/example-reviews.sqlite``), and exported as a reviews
file (default ``runs/reviews.arrow``, which must not exist yet). Paths are relative to the repository root,
wherever this is run from. The reviewer agreed with every status shown but one:
``equipment-budget@2025-01`` is regressed only because nDCG fell, with the same passages in the context and
the same answer, so it is unchanged. ``SOURCE_DATE_EPOCH`` must be set: it fixes the verdicts' and the file's
times, so the file is the same each time it is made.
"""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LABELS = Path("examples/labels.csv")
DATABASE = Path("build/example-reviews.sqlite")
REVIEWER = "hr-policy-team"
CORRECTED = {"equipment-budget@2025-01": "unchanged"}
"""The statuses the reviewer corrected: the case's status should be this one, not the one shown."""


def main(output: Path) -> None:
    from rag_compare import compare, export_reviews
    from rag_compare.io.review_db import ReviewDatabase
    from rag_compare.serve.session import ReviewSession

    runs = [Path(f"runs/{name}.arrow") for name in ("baseline", "candidate")]
    comparison = compare(*runs, passages="corpora/handbook_passages.csv")
    DATABASE.parent.mkdir(exist_ok=True)
    DATABASE.unlink(missing_ok=True)
    with ReviewDatabase.open(DATABASE) as database:
        session = ReviewSession.open(comparison, database, reviewer=REVIEWER)
        with LABELS.open(encoding="utf-8", newline="") as stream:
            for row in csv.DictReader(stream):
                session.add_verdict(row["case_id"], _verdict(row))
        export_reviews(database, *runs, output)
    print(f"wrote {output}")


def _verdict(row: dict[str, str]) -> dict[str, object]:
    """The verdict the reviewer gave on a row's answer: its labels, a blank cell not given."""
    corrected = CORRECTED.get(row["case_id"])
    return {
        "side": row["side"],
        "agree": corrected is None,
        "status": corrected,
        "labels": {
            name: row[name] or None for name in ("answer_correct", "grounded", "abstention_correct", "retrieval_ok")
        },
        "comment": row["comment"],
    }


if __name__ == "__main__":
    if "SOURCE_DATE_EPOCH" not in os.environ:
        sys.exit("set SOURCE_DATE_EPOCH: it fixes the reviews file's times (make example-reviews sets it)")
    output = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT / "runs" / "reviews.arrow"
    os.chdir(ROOT)
    main(output.relative_to(ROOT) if output.is_relative_to(ROOT) else output)
