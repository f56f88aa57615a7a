"""A run to judge: six answerable cases, one that abstains, one without context and one failed."""

from __future__ import annotations

import polars as pl

# Six answerable cases (q0..q5), one unanswerable that abstains, one with no context recorded, one failed.
QUESTIONS = [f"What is rule {index}?" for index in range(6)]
CORPUS = pl.DataFrame(
    {
        "case_id": [f"q{index}@v1" for index in range(6)] + ["none@v1", "nocontext@v1", "failed@v1"],
        "question": [*QUESTIONS, "What does the CEO earn?", "What is the bike rule?", "What is the car rule?"],
        "answerability": ["answerable"] * 6 + ["unanswerable", "answerable", "answerable"],
        "source_version": ["v1"] * 9,
        "required_passage_ids": [[f"p{index}"] for index in range(6)] + [[], ["bike"], ["car"]],
        "acceptance_note": [f"says rule {index}" for index in range(6)] + [None, "says bike", "says car"],
    }
)
RECORDS = pl.DataFrame(
    {
        "case_id": CORPUS.get_column("case_id"),
        "status": ["ok"] * 8 + ["failed"],
        "error": [None] * 8 + ["HTTP 500"],
        "context": [f"[p{index}] Rule {index} is {index} days." for index in range(6)]
        + ["[x] Pay is private."]
        + [None, None],
        "answer": [f"Rule {index} is {index} days." for index in range(6)] + ["I don't know.", "Bikes are fine.", None],
    }
)
# Requests per run with the default checks (context_sufficiency, groundedness, helpfulness):
# q0..q5: 3 each = 18; none@v1: sufficiency + helpfulness (an abstention makes no claim) = 2;
# nocontext@v1: helpfulness only = 1; failed@v1: none. Total 21.
DEFAULT_REQUESTS = 21
SAMPLED_RECORDS = pl.concat(
    [
        RECORDS.with_columns(repeat=pl.lit(0)),
        RECORDS.with_columns(
            repeat=pl.lit(1),
            answer=pl.when(pl.col("case_id") == "q0@v1").then(pl.lit("Rule 0 is 9 days.")).otherwise(pl.col("answer")),
        ),
    ]
)
"""RECORDS sampled twice: repeat 0 as they are, repeat 1 the same but q0's answer (9 days, not 0); 18 records."""
