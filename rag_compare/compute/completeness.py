"""Answer completeness: does the answer keep what each of the case's required passages says?

A required passage counts as kept when every number it states appears in the answer with the same value
(``3,000`` and ``3000`` alike; see ``compute.numbers``), or, for a passage without numbers, when at least
half of its content words do. ``answer_completeness`` is the share of the required passages kept. Answer
and passages are read as the offline judge reads them, in the case's language (the records' ``language``
column, as ``LexicalJudge.languages_of`` gives it; English without one): normalized, with its stopwords,
plural suffixes and decimal separator; a case in a language without rules is not judged (null). It needs
the passages' text (a passages file), and it is lexical: it sees that an answer lost the exception's
number, or quoted a distractor's number instead of the rule's, not whether the answer's reasoning is right.
"""

from __future__ import annotations

import polars as pl

from rag_compare.compute.lexical_judge import DEFAULT_LANGUAGE
from rag_compare.compute.numbers import NUMBER_PATTERN, canonical_number
from rag_compare.compute.words import WORD_PATTERN, fold_plural, is_content_word, normalized
from rag_compare.core.contract import LANGUAGE
from rag_compare.core.rows import row_index, spread_by_row
from rag_compare.io.language_rules import Language, builtin_languages

__all__ = ["answer_completeness"]

MIN_WORD_SHARE = 0.5


def answer_completeness(
    records: pl.DataFrame, passages: pl.DataFrame, languages: tuple[Language, ...] | None = None
) -> pl.Series:
    """Per record, the share of its required passages that its answer keeps (null without an answer,
    without required passages found in ``passages``, or in a language ``languages`` (default: the shipped
    ones) has no rules for)."""
    rules = {language.code: language for language in (builtin_languages() if languages is None else languages)}
    english = pl.repeat(DEFAULT_LANGUAGE, records.height, eager=True)
    tags = records.get_column(LANGUAGE) if LANGUAGE in records.columns else english
    answers = records.select(
        row_index(),
        pl.col("required_passage_ids").alias("passage_id"),
        answer=normalized(records.get_column("answer")),
        language=pl.lit(tags, dtype=pl.String),
    ).filter(pl.col("answer").is_not_null(), pl.col("language").is_in(list(rules)))
    needed = answers.select(pl.col("passage_id").explode().unique())
    read = passages.join(needed, on="passage_id", how="semi")
    texts = read.select("passage_id", text=normalized(read.get_column("text")))
    parts = [
        _kept(group, texts, rules[str(code)])
        for (code,), group in answers.partition_by("language", as_dict=True).items()
    ]
    kept = pl.concat(parts) if parts else pl.DataFrame(schema={"row": pl.UInt32, "answer_completeness": pl.Float64})
    return spread_by_row(records.height, kept, "answer_completeness").to_series()


def _kept(answers: pl.DataFrame, texts: pl.DataFrame, language: Language) -> pl.DataFrame:
    """``row`` and ``answer_completeness`` of each answer (all in ``language``) with required passages."""
    answers = answers.select(
        "row",
        "passage_id",
        answer_numbers=_numbers(pl.col("answer"), language),
        answer_words=_words(pl.col("answer"), language),
    )
    texts = texts.select(
        "passage_id", numbers=_numbers(pl.col("text"), language), words=_words(pl.col("text"), language)
    )
    return (
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


def _numbers(text: pl.Expr, language: Language) -> pl.Expr:
    """The distinct values of a normalized text's numbers in ``language`` (``3,000`` is ``3000`` in English)."""
    separator = language.decimal_separator
    return text.str.extract_all(NUMBER_PATTERN).list.eval(canonical_number(pl.element(), separator)).list.unique()


def _words(text: pl.Expr, language: Language) -> pl.Expr:
    """The distinct content words of a normalized text in ``language``, plural suffixes folded."""
    word = pl.element()
    content = word.filter(is_content_word(word, language.stopwords))
    return text.str.extract_all(WORD_PATTERN).list.eval(fold_plural(content, language.plural_suffixes)).list.unique()
