"""Abstentions, for the offline judge: whether an answer declines to answer.

An answer (read ``words.normalized``) abstains when it is blank, or when one of its sentences
(``sentences``) says so and goes no further:

- a sentence says so when it matches an abstention pattern of any of the judge's languages, or holds one
  of each part of one language's ``AbstentionParts``: a negation, a noun for what the answer was given and
  a verb of holding or saying, in any order ("Dazu enthält der Kontext keine Informationen", "Il contesto
  non fornisce informazioni su questo"); a pattern that matches across sentences makes the whole answer
  one such sentence;
- it goes further when, beyond what the patterns matched, it holds ``ANSWERING_WORDS`` words that are
  content words in every language of the judge (a case's language may be detected wrong from a short
  question), none of any language's parts or ``others`` and none of its question's words (a plural of its
  case's language folded), or a number its question does not hold. "It's not mentioned as a requirement;
  it's optional, though it can strengthen your application" goes on to answer: it is an answer. "The
  handbook does not say. It only covers the pension fund." has a sentence that goes no further: it abstains.

Without a question nothing tells the two apart: an answer with a sentence that says so abstains.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import polars as pl

from rag_compare.compute.numbers import NUMBER_PATTERN
from rag_compare.compute.words import fold_plural, is_content_word, normalized, words_of
from rag_compare.io.language_rules import PART_KEYS, Language

__all__ = ["ANSWERING_WORDS", "abstains", "sentences"]

ANSWERING_WORDS = 2
"""Content words beyond the parts and the question that make an answer that says it abstains an answer."""
_SENTENCE_END = r"([.!?])\s+"


def sentences(text: pl.Expr) -> pl.Expr:
    """The sentences of each ``text``, a list per row: split after ``.``, ``!`` or ``?`` and a space, and at
    line breaks (the judge's claims)."""
    return text.str.replace_all(_SENTENCE_END, "$1\n").str.split("\n")


def abstains(cases: pl.DataFrame, languages: tuple[Language, ...]) -> pl.Series:
    """Whether each answer of ``cases`` abstains (see the module): ``answer`` (normalized), ``question`` (as
    written, or null) and ``language`` (a code of ``languages``; null where the case is not judged)."""
    answer = cases.get_column("answer")
    patterns = dict.fromkeys(pattern for language in languages for pattern in language.abstention_patterns)
    says = _Saying("(?i)" + "|".join(f"(?:{pattern})" for pattern in patterns), languages)
    said = answer.str.contains(says.phrasing).fill_null(False)
    said = said | says.by_parts(answer, ~said)
    rules = {language.code: language for language in languages}
    judged = cases.get_column("language").is_in(list(rules)).fill_null(False)
    rows = (said & judged & cases.get_column("question").is_not_null()).arg_true()
    rest = answer.gather(rows).str.replace_all(says.phrasing, " ")
    more = rest.str.contains(r"[\p{L}\p{N}]").arg_true()  # words beyond the phrasing ("I don't know." has none)
    if more.len():
        candidates = cases.select(pl.col("answer", "question", "language").gather(rows.gather(more)))
        candidates = candidates.with_columns(row=rows.gather(more))
        stopping = _stopping(candidates, says, rules)
        answering = candidates.get_column("row").filter(~candidates.get_column("row").is_in(stopping.implode()))
        said = said.scatter(answering, False)
    blank = answer.str.strip_chars() == ""
    return pl.select(pl.when(pl.lit(judged)).then(pl.lit(blank) | pl.lit(said))).to_series().alias("abstained")


class _Saying:
    """How a sentence says it abstains: ``phrasing`` (every pattern), or the parts of one of ``languages``."""

    def __init__(self, phrasing: str, languages: tuple[Language, ...]) -> None:
        self.phrasing = phrasing
        parts = [language.abstention_parts for language in languages if language.abstention_parts is not None]
        self.parts = [[r"\b" + _any_of(getattr(each, key), r"\b") for key in PART_KEYS[:3]] for each in parts]
        every_part = (word for each in parts for key in PART_KEYS for word in getattr(each, key))
        self.beyond = "^" + _any_of(every_part, "$")
        """Any word of any language's parts or ``others``, as a whole word."""
        self.stopwords = tuple(sorted({word for language in languages for word in language.stopwords}))

    def holds_parts(self, text: pl.Expr) -> pl.Expr:
        """Whether ``text`` (a sentence) holds each part of one language."""
        if not self.parts:
            return pl.lit(False)
        each = (pl.all_horizontal(text.str.contains(regex) for regex in regexes) for regexes in self.parts)
        return pl.any_horizontal(each).fill_null(False)

    def by_parts(self, answer: pl.Series, open_rows: pl.Series) -> pl.Series:
        """Whether each answer of ``open_rows`` has a sentence that holds each part of one language; the
        others false. An answer without any language's negation is not split."""
        found = pl.repeat(False, answer.len(), dtype=pl.Boolean, eager=True)
        if not self.parts:
            return found
        negations = "|".join(regexes[0] for regexes in self.parts)
        rows = (open_rows & answer.str.contains(negations).fill_null(False)).arg_true()
        if rows.len() == 0:
            return found
        split = pl.DataFrame({"row": rows, "sentence": answer.gather(rows)}).with_columns(sentences(pl.col("sentence")))
        holding = split.explode("sentence").filter(self.holds_parts(pl.col("sentence")))
        return found.scatter(holding.get_column("row").unique(), True)


def _stopping(cases: pl.DataFrame, says: _Saying, rules: dict[str, Language]) -> pl.Series:
    """The ``row`` of each of ``cases`` (``row``, ``answer``, ``question``, ``language``) with a sentence that
    says it abstains and goes no further (see the module)."""
    split = cases.with_columns(sentence=sentences(pl.col("answer"))).explode("sentence")
    saying = split.filter(pl.col("sentence").str.contains(says.phrasing) | says.holds_parts(pl.col("sentence")))
    across = cases.join(saying, on="row", how="anti").with_columns(sentence=pl.col("answer"))
    units = pl.concat([saying, across.select(saying.columns)]).with_row_index("unit")
    units = units.with_columns(
        sentence=pl.col("sentence").str.replace_all(says.phrasing, " "),
        question=normalized(units.get_column("question")),
    )
    going = [pl.Series("unit", [], dtype=pl.UInt32)]
    for (code,), group in units.partition_by("language", as_dict=True).items():
        going.append(_going_on(group, rules[str(code)].plural_suffixes, says))
    return units.filter(~pl.col("unit").is_in(pl.concat(going).implode())).get_column("row").unique()


def _any_of(words: Iterable[str], end: str) -> str:
    """A regex group of any of ``words``, each followed by ``end``, or, ending in ``*``, the start of a word."""
    alternatives = []
    for word in words:
        written = re.escape(word.removesuffix("*"))
        alternatives.append(written if word.endswith("*") or not written[-1].isalnum() else written + end)
    return "(?:" + "|".join(alternatives) + ")"


def _going_on(units: pl.DataFrame, suffixes: tuple[str, ...], says: _Saying) -> pl.Series:
    """The ``unit`` of each of ``units`` (a ``sentence`` that says it abstains, without what the patterns
    matched, beside its answer's ``row`` and ``question``) that goes further: ``ANSWERING_WORDS`` words that
    are no part nor stopword of any language nor its question's words (the plural ``suffixes`` folded), or a
    number its question lacks."""

    def words(column: str) -> pl.DataFrame:
        word = pl.col("word")
        found = units.select("unit", "row", word=words_of(pl.col(column))).explode("word")
        return found.filter(is_content_word(word, says.stopwords)).with_columns(needle=fold_plural(word, suffixes))

    def numbers(column: str) -> pl.DataFrame:
        return units.select("unit", "row", number=pl.col(column).str.extract_all(NUMBER_PATTERN)).explode("number")

    said = words("sentence").filter(~pl.col("word").str.contains(says.beyond))
    unasked = said.join(words("question").unique(["row", "needle"]), on=["row", "needle"], how="anti")
    counted = unasked.group_by("unit").agg(pl.col("needle").n_unique())
    asked = numbers("question").unique(["row", "number"])
    new_numbers = numbers("sentence").drop_nulls().join(asked, on=["row", "number"], how="anti")
    going = counted.filter(pl.col("needle") >= ANSWERING_WORDS).get_column("unit")
    return pl.concat([going, new_numbers.get_column("unit")]).unique()
