"""What a word and a number are, for every lexical measure (the offline judge, answer completeness,
the extractive generator's stopwords).

Text is lowercased first. A word is a run of ASCII letters, digits and underscores (``WORD_PATTERN``);
a content word is a word of two characters or more that starts with a letter and is not a stopword;
``fold_plural`` makes ``rates`` and ``rate`` one word. A number is a run of digits that may hold
``.`` or ``,`` between digits (``NUMBER_PATTERN``); a comma in a number groups thousands, so
``3,000`` and ``3000`` are the same number (``ungrouped``, ``other_writing``).
"""

from __future__ import annotations

import polars as pl

__all__ = [
    "NUMBER_PATTERN",
    "STOPWORDS",
    "WORD_PATTERN",
    "fold_plural",
    "is_content_word",
    "other_writing",
    "ungrouped",
]

WORD_PATTERN = r"[a-z0-9_]+"
"""A word of lowercased text (Rust regex syntax)."""
NUMBER_PATTERN = r"[0-9]+(?:[.,][0-9]+)*"
"""A number as written: ``180``, ``3,000``, ``0.35``, ``12,345,678``."""

_STOPWORD_TEXT = """
about above after again against all also am an and any are aren as at be because been before being below between
both but by can cannot could couldn did didn do does doesn doing don down during each either else etc few for from
further had hadn has hasn have haven having he her here hers herself him himself his how however if in into is isn it
its itself just ll me might more most must mustn my myself neither no nor not now of off on once only or other our
ours ourselves out over own please re same shall shan she should shouldn so some such than that the their theirs them
themselves then there these they this those through thus to too under until up ve very was wasn we were weren what
when where which while who whom why will with won would wouldn yes yet you your yours yourself yourselves
"""
STOPWORDS: tuple[str, ...] = tuple(sorted(_STOPWORD_TEXT.split()))
"""Words that carry no claim; words of one character are never content words either."""


def is_content_word(word: pl.Expr, stopwords: tuple[str, ...] = STOPWORDS) -> pl.Expr:
    """Whether ``word`` (a word of lowercased text) carries a claim: two characters or more, a letter
    first, not one of ``stopwords``."""
    return (word.str.len_bytes() >= 2) & (word >= "a") & ~word.is_in(sorted(set(stopwords)))


def fold_plural(word: pl.Expr) -> pl.Expr:
    """``word`` without a trailing ``s`` when it is longer than three letters (``rates`` and ``rate`` alike)."""
    return pl.when(word.str.len_bytes() > 3).then(word.str.strip_suffix("s")).otherwise(word)


def ungrouped(number: pl.Expr) -> pl.Expr:
    """``number`` (as ``NUMBER_PATTERN`` finds it) without its thousands separators: ``3,000`` is ``3000``."""
    return number.str.replace_all(",", "", literal=True)


def other_writing(number: pl.Expr) -> pl.Expr:
    """``3000`` for ``3,000`` and the reverse; null for a number written one way only (``150``, ``1.5``)."""
    plain = ungrouped(number)
    integer = plain.str.extract(r"^[0-9]+", 0)
    grouped = integer.str.reverse().str.replace_all(r"[0-9]{3}", "$0,").str.strip_chars_end(",").str.reverse()
    return (
        pl.when(number.str.contains(",", literal=True))
        .then(plain)
        .when(integer.str.len_bytes() > 3)
        .then(grouped + plain.str.slice(integer.str.len_bytes()))
    )
