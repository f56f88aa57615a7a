"""Answer completeness: does the answer keep what each of the case's required passages says?

A required passage counts as kept when every number it states appears in the answer (``3,000`` and
``3000`` alike), or, for a passage without numbers, when at least half of its content words do.
``answer_completeness`` is the share of the required passages kept. It needs the passages' text (a
passages file), and it is lexical: it sees that an answer lost the exception's number, or quoted a
distractor's number instead of the rule's, not whether the answer's reasoning is right.
"""

from __future__ import annotations

import polars as pl

from rag_compare.compute.words import NUMBER_PATTERN, WORD_PATTERN, fold_plural, is_content_word, ungrouped
from rag_compare.core.rows import row_index, spread_by_row

__all__ = ["answer_completeness"]

MIN_WORD_SHARE = 0.5


def answer_completeness(records: pl.DataFrame, passages: pl.DataFrame) -> pl.Series:
    """Per record, the share of its required passages that its answer keeps (null without an answer or
    without required passages found in ``passages``)."""
    answers = records.select(
        row_index(),
        pl.col("required_passage_ids").alias("passage_id"),
        _numbers(pl.col("answer")).alias("answer_numbers"),
        _words(pl.col("answer")).alias("answer_words"),
    ).filter(pl.col("answer_numbers").is_not_null())
    texts = passages.select(
        "passage_id", _numbers(pl.col("text")).alias("numbers"), _words(pl.col("text")).alias("words")
    )
    kept = (
        answers.explode("passage_id")
        .join(texts, on="passage_id", how="inner")
        .select(
            "row",
            pl.when(pl.col("numbers").list.len() > 0)
            .then(pl.col("numbers").list.set_difference("answer_numbers").list.len() == 0)
            .otherwise(
                pl.col("words").list.set_intersection("answer_words").list.len()
                >= MIN_WORD_SHARE * pl.col("words").list.len()
            )
            .alias("kept"),
        )
        .group_by("row")
        .agg(pl.col("kept").mean().alias("answer_completeness"))
    )
    return spread_by_row(records.height, kept, "answer_completeness")


def _numbers(text: pl.Expr) -> pl.Expr:
    """The distinct numbers of a text, thousands separators dropped (``3,000`` is ``3000``)."""
    return text.str.extract_all(NUMBER_PATTERN).list.eval(ungrouped(pl.element())).list.unique()


def _words(text: pl.Expr) -> pl.Expr:
    """The distinct content words of a text, lowercased, a trailing ``s`` dropped from longer words."""
    words = text.str.to_lowercase().str.extract_all(WORD_PATTERN)
    return words.list.eval(fold_plural(pl.element().filter(is_content_word(pl.element())))).list.unique()
