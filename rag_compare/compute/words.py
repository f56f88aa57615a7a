"""What a word and a number are, for every lexical measure (the offline judge, answer completeness,
the extractive generator's stopwords).

Text is read ``normalized``: every apostrophe and quote variant (U+2019, U+02BC, the grave accent,
U+00B4, U+2018, U+201B) made ``'``, NFKC normalised, case folded (``Straße`` is ``strasse``), every space
character (no-break, narrow, thin...) a plain space and invisible format characters (soft hyphens,
zero-width spaces) dropped. A word is a run of Unicode letters, marks and digits (``WORD_PATTERN``); a
content word is a word of two characters or more that starts with a letter and is not one of its
language's stopwords; ``fold_plural`` makes ``rates`` and ``rate`` one word with the language's plural
suffixes. Numbers are read by ``compute.numbers``.
"""

from __future__ import annotations

from functools import cache

import polars as pl

from rag_compare.io.language_rules import builtin_languages

__all__ = [
    "PYTHON_WORD_PATTERN",
    "STOPWORDS",
    "WORD_PATTERN",
    "fold_plural",
    "is_content_word",
    "normalized",
    "words_of",
]

WORD_PATTERN = r"[\p{L}\p{M}\p{N}]+"
"""A word of normalized text (Rust regex syntax)."""
_ASCII_BETWEEN_WORDS = [chr(code) for code in range(128) if not chr(code).isalnum()]
"""Every ASCII character that is not a letter or a digit: what separates the words of ASCII text."""
PYTHON_WORD_PATTERN = r"[^\W_]+"
"""A word for Python's ``re``: a run of Unicode letters and digits (``re`` knows no marks)."""

STOPWORDS: tuple[str, ...] = next(language.stopwords for language in builtin_languages() if language.code == "en")
"""The English stopwords (``rag_compare/io/languages/en.toml``), for the parts that read English only."""

_APOSTROPHES = ("\u2019", "\u02bc", "`", "\u00b4", "\u2018", "\u201b")
_NOT_NFKC_STABLE = "[^\\x00-\\x9f\\xa1-\\xa7\\xa9\\xab-\\xae\\xb0\\xb1\\xb6\\xb7\\xbb\\xbf-\\xff]"
"""A character NFKC may change: past Latin-1, or one of the few Latin-1 ones it does (no-break space,
``ª``, ``²``, ``½``...). Text without one is its own NFKC, and is not normalised again."""
_LAST_CASED = 0x20000
"""Every character whose lower case and case fold differ lies below this code point."""


def normalized(texts: pl.Series) -> pl.Series:
    """``texts`` as every lexical measure reads them (see the module); nulls stay null.

    Text of ASCII letters alone is only lower-cased (NFKC and case folding leave it so): the full
    normalisation costs only the texts that need it.
    """
    texts = texts.cast(pl.String)
    lowered = texts.str.to_lowercase()
    special = (lowered.str.len_bytes() != lowered.str.len_chars()) | lowered.str.contains("`", literal=True)
    rows = special.arg_true()
    if rows.len() == 0:
        return lowered
    return lowered.scatter(rows, _fully_normalized(texts.gather(rows)))


def _fully_normalized(texts: pl.Series) -> pl.Series:
    apostrophes = texts.str.replace_many(list(_APOSTROPHES), ["'"] * len(_APOSTROPHES))
    composed = apostrophes.str.contains(_NOT_NFKC_STABLE)
    rows = composed.arg_true()
    if rows.len():
        apostrophes = apostrophes.scatter(rows, apostrophes.gather(rows).str.normalize("NFKC"))
    keys, values = _case_folds()
    folded = apostrophes.str.to_lowercase().str.replace_many(keys, values)
    return folded.str.replace_all(r"[\p{Zs}&&[^ ]]", " ").str.replace_all(r"\p{Cf}", "")


@cache
def _case_folds() -> tuple[list[str], list[str]]:
    """Each lower-case text whose case fold differs (``ß``, final ``ς``...), and its fold."""
    folds = {}
    for code in range(_LAST_CASED):
        lower = chr(code).lower()
        if lower.casefold() != lower:
            folds[lower] = lower.casefold()
    return list(folds), list(folds.values())


def words_of(text: pl.Expr, *, ascii_only: bool = False) -> pl.Expr:
    """The words (``WORD_PATTERN``) of ``text``, a list per row. ``ascii_only`` (every text in ASCII) finds
    them several times faster, by splitting at every other character, and also lists empty words, which
    no content word is."""
    if not ascii_only:
        return text.str.extract_all(WORD_PATTERN)
    return text.str.replace_many(_ASCII_BETWEEN_WORDS, [" "] * len(_ASCII_BETWEEN_WORDS)).str.split(" ")


def is_content_word(word: pl.Expr, stopwords: tuple[str, ...] = STOPWORDS, length: pl.Expr | None = None) -> pl.Expr:
    """Whether ``word`` (a word of normalized text) carries a claim: two characters or more, a letter (or
    a character past ASCII) first, not one of ``stopwords``. ``length`` is the word's length in characters
    (default: counted; ``len_bytes`` is the same, and cheaper, for ASCII words)."""
    length = word.str.len_chars() if length is None else length
    return (length >= 2) & (word >= "a") & ~word.is_in(sorted(set(stopwords)))


def fold_plural(word: pl.Expr, suffixes: tuple[str, ...] = ("s",), length: pl.Expr | None = None) -> pl.Expr:
    """``word`` without the longest of ``suffixes`` it ends with, when three characters or more remain
    (``rates`` and ``rate`` alike with the English ``s``); ``length`` as for ``is_content_word``."""
    length = word.str.len_chars() if length is None else length
    folded = word
    for suffix in sorted(suffixes, key=len):  # the longest suffix is tested first, as the outermost
        strips = word.str.ends_with(suffix) & (length >= len(suffix) + 3)
        folded = pl.when(strips).then(word.str.strip_suffix(suffix)).otherwise(folded)
    return folded
