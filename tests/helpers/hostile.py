"""A comparison whose untrusted text (questions, notes, ids, answers, errors, config) could run or restructure."""

from __future__ import annotations

import polars as pl

from rag_compare import Comparison, compare, freeze_run, load_corpus
from tests.helpers.data import IMAGE, PAYLOAD, SCRIPT


def hostile_comparison() -> Comparison:
    """Two runs whose questions, notes, ids, answers, errors and config values carry ``PAYLOAD``."""
    corpus = load_corpus(
        pl.DataFrame(
            {
                "case_id": ["a@v1", f"b{SCRIPT}@v1", "c@v1"],
                "question": [PAYLOAD, "Q?", "Q?"],
                "answerability": ["answerable"] * 3,
                "source_version": ["v1"] * 3,
                "required_passage_ids": [["p1"], [f"p{IMAGE}"], ["p1"]],
                "acceptance_note": [PAYLOAD, None, None],
                "category": [PAYLOAD, "rule", "rule"],
            }
        )
    )
    records = {
        "baseline": pl.DataFrame(
            {
                "case_id": ["a@v1", f"b{SCRIPT}@v1", "c@v1"],
                "status": ["ok", "ok", "ok"],
                "retrieved_passage_ids": [["p1"], [f"p{IMAGE}"], ["p1"]],
                "context_passage_ids": [["p1"], [f"p{IMAGE}"], ["p1"]],
                "answer": ["p1 says yes.", "Fine.", "Yes."],
            }
        ),
        "candidate": pl.DataFrame(
            {
                "case_id": ["a@v1", f"b{SCRIPT}@v1", "c@v1"],
                "status": ["ok", "ok", "failed"],
                "error": [None, None, PAYLOAD],
                "retrieved_passage_ids": [["x"], [f"p{IMAGE}"], None],
                "context_passage_ids": [["x"], [f"p{IMAGE}"], None],
                "answer": [f"{PAYLOAD}\nsecond line", "Fine.", None],
            }
        ),
    }
    runs = [
        freeze_run(records[side], corpus, {"name": f"{side}{SCRIPT}", "top_k": 1, "prompt": PAYLOAD})
        for side in ("baseline", "candidate")
    ]
    return compare(*runs)
