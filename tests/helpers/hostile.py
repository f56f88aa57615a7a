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


BIDI = "\u202e"
"""A right-to-left override: text after it shows reversed unless it is isolated."""
PAGE_PAYLOAD = (
    "</script><script>window.pwned = 1; document.title = 'pwned'</script><!-- "
    f'<img src=x onerror="window.pwned = 1"> <a href="javascript:window.pwned = 1">link</a> {BIDI}\'"&amp; \u2028\u2029 end'
)
"""What could end the page's data block or script, open a comment, run, link, reverse text or end a line."""
LARGE_ANSWER = ("word " * 210_000)[:1_048_576]
"""A 1 MiB answer: too long to compare word by word."""


def hostile_page_comparison() -> Comparison:
    """Two runs whose case ids, questions, notes, answers, passages and contexts carry ``PAGE_PAYLOAD``; one
    answer is ``LARGE_ANSWER``. Both ``bad…@v1`` and ``large@v1`` regressed: their candidates missed the passage."""
    ids = [f"bad{PAGE_PAYLOAD}@v1", "large@v1", "plain@v1"]
    corpus = load_corpus(
        pl.DataFrame(
            {
                "case_id": ids,
                "question": [PAGE_PAYLOAD, f"Large? {PAGE_PAYLOAD}", "Plain?"],
                "answerability": ["answerable"] * 3,
                "source_version": ["v1"] * 3,
                "required_passage_ids": [["evil"], ["p1"], ["p1"]],
                "acceptance_note": [PAGE_PAYLOAD, None, None],
                "category": [PAGE_PAYLOAD, "rule", "rule"],
            }
        )
    )
    passages = pl.DataFrame(
        {"passage_id": ["evil", "p1"], "source_version": ["v1", "v1"], "text": [f"Evil {PAGE_PAYLOAD}", "One."]}
    )
    contexts = {"baseline": [f"Evil {PAGE_PAYLOAD}", "One.", "One."], "candidate": ["One.", "One.", "One."]}
    answers = {"baseline": [PAGE_PAYLOAD, LARGE_ANSWER, "Yes."], "candidate": ["No.", LARGE_ANSWER + "x", "Yes."]}
    runs = [
        freeze_run(
            pl.DataFrame(
                {
                    "case_id": ids,
                    "retrieved_passage_ids": [["evil", "p1"], ["p1"], ["p1"]]
                    if side == "baseline"
                    else [["p1"], ["evil"], ["p1"]],
                    "context": contexts[side],
                    "answer": answers[side],
                }
            ),
            corpus,
            {"name": side, "top_k": 2},
        )
        for side in ("baseline", "candidate")
    ]
    return compare(*runs, passages=passages)
