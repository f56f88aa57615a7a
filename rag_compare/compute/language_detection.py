"""The language a text is written in, told by its function words and its letters.

Each language scores, for each text, every one of its stopwords among the text's words
(``words.WORD_PATTERN`` of the ``words.normalized`` text) and every one of its ``letters`` in it. A
piece of evidence that n of the languages share counts 1/n for each: "de" is a word of French,
Spanish, Portuguese and Dutch, a quarter each; "ñ" is Spanish alone. The highest score names the
language; a tie goes to the language given first; a text without evidence for any language has none.
It is offline, deterministic and vectorised: one search of every stopword and letter at once
(Aho-Corasick), whose finds are summed for seven languages at a time as the fields of one 128-bit
integer.
"""

from __future__ import annotations

from collections import Counter
from functools import cache

import polars as pl

from rag_compare.compute.words import normalized
from rag_compare.io.language_rules import Language

__all__ = ["detect_languages"]

_NOT_WORD = r"[^\p{L}\p{M}\p{N} ]+"
"""What lies between the words of ``words.WORD_PATTERN`` besides spaces (made spaces: each word then has a
space on each side, shared with its neighbour, which the overlapping search allows)."""
_SCALE = 420
"""A share of 1/n counts ``_SCALE // n``: exactly, for evidence shared by up to seven languages."""
_FIELD_BITS = 18
_PER_PACK = 7
"""Languages summed in one 128-bit integer: seven fields of 18 bits."""
_MOST_EVIDENCE = (2**_FIELD_BITS - 1) // _SCALE
"""Pieces of evidence read in a text (the first 624), so that no field overflows into the next."""


def detect_languages(texts: pl.Series, languages: tuple[Language, ...]) -> pl.Series:
    """The code of the language of each of ``texts`` among ``languages`` (of distinct codes; see the
    module), in their order: null for a null text or one without a stopword or a letter of any of them.
    A tie goes to the language that comes first in ``languages``."""
    evidence = _evidence(languages)
    if not evidence:
        return pl.repeat(None, texts.len(), dtype=pl.String, eager=True).alias("language")
    spaced = pl.lit(" ") + pl.col("text").str.replace_all(_NOT_WORD, " ") + pl.lit(" ")
    found = spaced.str.extract_many(_marks(languages), overlapping=True).list.head(_MOST_EVIDENCE)
    packs, scores = [], []
    for start in range(0, len(languages), _PER_PACK):
        pack = f"pack{start}"
        fields = range(min(_PER_PACK, len(languages) - start))
        packs.append(found.list.eval(_packed(languages, start, fields)).list.sum().alias(pack))
        scores += [pl.col(pack) // 2 ** (_FIELD_BITS * field) % 2**_FIELD_BITS for field in fields]
    codes = [language.code for language in languages]
    scored = (
        pl.LazyFrame({"text": normalized(texts)})
        .select(packs)
        .select(score.alias(code) for score, code in zip(scores, codes, strict=True))
    )
    best = pl.max_horizontal(pl.all())
    first_best = pl.coalesce(pl.when(pl.col(code) == best).then(pl.lit(code)) for code in codes)
    detected = scored.select(pl.when(best > 0).then(first_best).alias("language"))
    return detected.collect(engine="streaming").to_series()


@cache
def _packed(languages: tuple[Language, ...], start: int, fields: range) -> pl.Expr:
    """What each piece of evidence (a list element) counts for the languages ``start + field``, one
    field of 18 bits each."""
    evidence = _evidence(languages)
    packed = [sum(weights[start + field] << (_FIELD_BITS * field) for field in fields) for weights in evidence.values()]
    marks = pl.Series(list(evidence), dtype=pl.String)
    return pl.element().replace_strict(marks, pl.Series(packed, dtype=pl.Int128), return_dtype=pl.Int128)


@cache
def _marks(languages: tuple[Language, ...]) -> list[str]:
    """The pieces of evidence of ``languages``, as the search takes them."""
    return list(_evidence(languages))


@cache
def _evidence(languages: tuple[Language, ...]) -> dict[str, list[int]]:
    """Each stopword (between spaces, as ``detect_languages`` spaces the words) and each letter of
    ``languages``, with what it counts for each of them."""
    marks = [{f" {word} " for word in language.stopwords} | set(language.letters) for language in languages]
    shared = Counter(mark for language_marks in marks for mark in language_marks)
    return {
        mark: [_SCALE // shared[mark] if mark in language_marks else 0 for language_marks in marks]
        for mark in sorted(shared)
    }
