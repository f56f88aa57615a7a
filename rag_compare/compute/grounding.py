"""Grounding, for the offline judge: the claims of an answer and whether its context supports each.

A claim is a sentence of the answer (``abstention.sentences``, of the answer ``words.normalized``) that holds
a content word or a number. It is supported when every number in it has its value in the context
(``compute.numbers``), every name in it (``compute.names``) is in the context or the question, and at least
``min_overlap`` of its content words are in the context as whole words, a plural suffix of the language
folded. ``claim_support`` gives each claim's verdict; ``share_supported`` the share of an answer's claims supported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import polars as pl

from rag_compare.compute.abstention import sentences
from rag_compare.compute.names import names_of, shares_piece
from rag_compare.compute.numbers import NUMBER_PATTERN, canonical_number, number_writings
from rag_compare.compute.words import fold_plural, is_content_word, normalized, words_of
from rag_compare.io.language_rules import Language

__all__ = ["claim_support", "share_supported"]

_ROUNDS = 4
_DOT, _COMMA, _SPACE = ord("."), ord(","), ord(" ")


def share_supported(answered: pl.DataFrame, min_overlap: float, language: Language) -> pl.DataFrame:
    """``row`` and ``grounded`` for each answered row (all in ``language``) with at least one claim."""
    support = claim_support(answered, min_overlap, language)
    return (
        support.group_by("pos")
        .agg(grounded=pl.col("supported").mean())
        .join(answered.select("row").with_row_index("pos"), on="pos")
        .select("row", "grounded")
    )


def claim_support(
    answered: pl.DataFrame, min_overlap: float, language: Language, *, every_word: bool = False
) -> pl.DataFrame:
    """One row per claim of the answered rows (``row``, ``answer`` normalized, ``written``, ``context``,
    ``question``; all in ``language``), in order: ``pos`` (the answered row's position), ``claim`` (the sentence's
    index over all of them), ``text`` (normalized), ``supported``, and ``anchor``: what evidence of it is looked
    for in the context (its first number, else its longest content word found there, the first of the longest;
    null for neither). The
    words of a claim already unsupported by a number are looked for only with ``every_word`` (for its anchor)."""
    haystacks = normalized(answered.get_column("context"))
    claims = _claims(answered)
    numbers = _numbers(claims)
    missing = _flags(claims.height, _numbers_missing(numbers, haystacks, language))
    words = _content_words(claims if every_word else claims.filter(~pl.lit(missing).gather(pl.col("claim"))), language)
    words = words.with_columns(found=_found(words, haystacks, _words_kind(language)))
    missing = missing.scatter(_names_missing(words, answered, haystacks, language), True)
    counts = words.group_by("claim").agg(
        n_words=pl.len(),
        n_found=pl.col("found").sum(),
        word=pl.col("token")
        .filter("found")
        .sort_by(pl.col("token").filter("found").str.len_chars(), descending=True, maintain_order=True)
        .first(),
    )
    first_number = numbers.group_by("claim").agg(number_token=pl.col("token").first())
    judged = (
        claims.select(
            "claim", "pos", "text", number=_flags(claims.height, numbers.get_column("claim")), missing=missing
        )
        .join(counts, on="claim", how="left")
        .join(first_number, on="claim", how="left")
        .filter(pl.col("number") | pl.col("n_words").is_not_null())
    )
    overlap = (pl.col("n_found") / pl.col("n_words")).fill_null(1.0)
    return judged.select(
        "pos",
        "claim",
        "text",
        supported=~pl.col("missing") & (overlap >= min_overlap),
        anchor=pl.when(~pl.col("missing")).then(pl.coalesce("number_token", "word")).otherwise(pl.col("word")),
    )


def _names_missing(words: pl.DataFrame, answered: pl.DataFrame, haystacks: pl.Series, language: Language) -> pl.Series:
    """The ``claim`` of each content word of ``words`` that is a name (``compute.names``) its context does not
    hold (``found``) and its question does not either; with the language's ``piece``, nor a piece of it."""
    none = pl.Series("claim", [], dtype=pl.UInt32)
    if language.names is None:
        return none
    names = names_of(answered.get_column("written"), language.names)
    if names.height == 0:
        return none
    unfound = words.filter(~pl.col("found"), pl.col("pos").is_in(names.get_column("pos").unique().implode()))
    unfound = unfound.join(names, on=["pos", "token"], how="semi")
    if unfound.height == 0:
        return none
    questions = normalized(answered.get_column("question"))
    unfound = unfound.filter(~_found(unfound, questions, _words_kind(language)))
    piece = language.names.piece
    if piece and unfound.height:
        at, token = unfound.get_column("pos"), pl.col("token")
        texts = unfound.with_columns(context=haystacks.gather(at), question=questions.gather(at))
        unfound = texts.filter(*(~shares_piece(token, pl.col(text), piece) for text in ("context", "question")))
    return unfound.get_column("claim").cast(pl.UInt32)


def _flags(height: int, indices: pl.Series) -> pl.Series:
    """``height`` booleans, true at ``indices``."""
    return pl.repeat(False, height, dtype=pl.Boolean, eager=True).scatter(indices, True)


def _claims(answered: pl.DataFrame) -> pl.DataFrame:
    """One row per sentence of each (normalized) answer: ``claim`` (0, 1, ...), ``pos`` (the answer's
    position) and ``text``."""
    return (
        answered.select(text=sentences(pl.col("answer"))).with_row_index("pos").explode("text").with_row_index("claim")
    )


def _content_words(claims: pl.DataFrame, language: Language) -> pl.DataFrame:
    """One row per content word of each claim: ``token`` as written, ``needle`` folded, with its ``claim``
    and ``pos``. The words of claims in ASCII are measured in bytes, the same as characters there."""
    token = pl.col("token")
    ascii_text = claims.get_column("text").str.len_bytes() == claims.get_column("text").str.len_chars()
    groups = (
        [(True, claims)] if ascii_text.all() else [(flag, claims.filter(ascii_text == flag)) for flag in (True, False)]
    )
    parts = []
    for ascii_only, group in groups:
        length = token.str.len_bytes() if ascii_only else token.str.len_chars()
        words = group.select("claim", "pos", token=words_of(pl.col("text"), ascii_only=ascii_only)).explode("token")
        parts.append(
            words.filter(is_content_word(token, language.stopwords, length)).select(
                "claim", "pos", "token", needle=fold_plural(token, language.plural_suffixes, length)
            )
        )
    return pl.concat(parts)


def _numbers(claims: pl.DataFrame) -> pl.DataFrame:
    """One row per number of each claim (``token`` and ``needle``, as written), with its ``claim`` and
    ``pos``."""
    numbers = claims.select("claim", "pos", token=pl.col("text").str.extract_all(NUMBER_PATTERN)).explode("token")
    return numbers.drop_nulls("token").with_columns(needle=pl.col("token"))


def _numbers_missing(numbers: pl.DataFrame, haystacks: pl.Series, language: Language) -> pl.Series:
    """The ``claim`` of each number whose value its context does not hold: the number is there neither
    as written nor in another of its writings in ``language`` (its value read in ``language`` once the
    quick search as written has failed: most numbers are found as written)."""
    kind = _numbers_kind(language)
    unfound = numbers.filter(~_found(numbers, haystacks, kind)).with_row_index("number")
    if unfound.height == 0:
        return unfound.get_column("claim")
    separator = language.decimal_separator
    writings = (
        unfound.with_columns(needle=number_writings(canonical_number(pl.col("token"), separator), separator))
        .explode("needle")
        .filter(pl.col("needle") != pl.col("token"))
        .with_columns(token=pl.col("needle"))
    )
    found = writings.filter(_found(writings, haystacks, kind)).get_column("number")
    return unfound.filter(~pl.col("number").is_in(found.implode())).get_column("claim")


def _found(pairs: pl.DataFrame, haystacks: pl.Series, kind: _Kind) -> pl.Series:
    """Whether each pair's ``needle`` is one of the tokens of its context (``haystacks[pos]``).

    Quick tests settle most pairs: the ``token`` as written with a space on each side is there, a needle
    nowhere in the text is not. The rest are searched occurrence by occurrence, ``kind.whole`` judging
    each from the bytes around it; a rejected occurrence sends the search on past it. The pairs those
    bytes cannot settle (a character past ASCII next to a word, a space and a digit next to a number),
    and after a few rounds those still undecided, are settled by splitting their contexts into tokens.
    """
    hay = pl.col("hay").cast(pl.Binary)
    work = pairs.with_row_index("pair").with_columns(hay=haystacks.gather(pairs.get_column("pos")))
    work = work.with_columns(spaced=hay.bin.contains(pl.format(" {} ", "token").cast(pl.Binary)))
    found = _flags(pairs.height, work.filter("spaced").get_column("pair"))
    columns = ("pair", "needle", "hay", "length")
    work = work.filter(~pl.col("spaced"), hay.bin.contains(pl.col("needle").cast(pl.Binary))).select(
        "pair",
        "needle",
        "hay",
        start=pl.lit(0, pl.Int64),
        length=pl.col("needle").str.len_bytes().cast(pl.Int64),
    )
    unsure = []
    rest = pl.col("hay")
    for _ in range(_ROUNDS):
        if work.height == 0:
            break
        located = work.with_columns(at=pl.col("start") + _byte_offset(rest, pl.col("needle")))
        located = located.drop_nulls("at")
        whole = kind.whole(located)
        found = found.scatter(located.filter(whole).get_column("pair"), True)
        unsure.append(located.filter(whole.is_null()).select(columns))
        work = located.filter(~whole).select(*columns, start=pl.col("at") + pl.col("length"))
        rest = pl.col("hay").cast(pl.Binary).bin.slice(pl.col("start")).cast(pl.String)
    undecided = pl.concat([work.select(columns), *unsure])
    if undecided.height == 0:
        return found
    return found.scatter(undecided.filter(kind.among_tokens).get_column("pair"), True)


def _byte_offset(text: pl.Expr, needle: pl.Expr) -> pl.Expr:
    """The offset in bytes of ``needle``'s first occurrence in ``text``, null where it has none: the length in
    bytes of what comes before it (``str.find`` counts bytes in some Polars releases, characters in others)."""
    parts = text.str.split_exact(needle, 1)
    before, after = parts.struct.field("field_0"), parts.struct.field("field_1")
    return pl.when(after.is_not_null()).then(before.str.len_bytes().cast(pl.Int64))


def _byte(offset: int) -> pl.Expr:
    """The byte of ``hay`` ``offset`` bytes away from the occurrence at ``at``: before it when negative,
    else after it (0 is the first byte after it); null outside the text."""
    at = pl.col("at")
    index = pl.when(at + offset >= 0).then(at + offset) if offset < 0 else at + pl.col("length") + offset
    return pl.col("hay").cast(pl.Binary).bin.get(index, null_on_oob=True)


def _is_digit(byte: pl.Expr) -> pl.Expr:
    return byte.is_between(ord("0"), ord("9")).fill_null(False)


def _is_word(byte: pl.Expr) -> pl.Expr:
    """Whether a byte is an ASCII letter or digit (false outside the text)."""
    return (byte.is_between(ord("a"), ord("z")) | _is_digit(byte)).fill_null(False)


def _past_ascii(byte: pl.Expr) -> pl.Expr:
    """Whether a byte belongs to a character past ASCII, which the bytes alone do not tell a letter or not."""
    return (byte >= 0x80).fill_null(False)


def _whole_word(suffixes: tuple[str, ...]) -> Callable[[pl.DataFrame], pl.Series]:
    """Whether each occurrence is a whole word, or the word and one of ``suffixes`` (the plural fold);
    null (cannot tell) next to a character past ASCII."""
    written = [suffix.encode() for suffix in suffixes]
    longest = max(map(len, written), default=0)

    def whole(located: pl.DataFrame) -> pl.Series:
        after = [pl.col(f"after{offset}") for offset in range(longest + 1)]
        plural, unsure = pl.lit(False), _past_ascii(pl.col("before")) | _past_ascii(after[0])
        for suffix in written:
            there = pl.all_horizontal(after[offset] == byte for offset, byte in enumerate(suffix))
            plural = plural | (there & ~_is_word(after[len(suffix)]))
            unsure = unsure | (there & _past_ascii(after[len(suffix)]))
        plural = plural & (pl.col("needle").str.len_chars() >= 3) if suffixes else plural
        verdict = ~_is_word(pl.col("before")) & (~_is_word(after[0]) | plural)
        around = located.select(
            "needle", before=_byte(-1), **{f"after{offset}": _byte(offset) for offset in range(longest + 1)}
        )
        return around.select(pl.when(unsure).then(None).otherwise(verdict)).to_series()

    return whole


def _whole_number(located: pl.DataFrame) -> pl.Series:
    """Whether each occurrence is a whole number: false next to a digit, or to a ``,`` or ``.`` and a
    digit; null (cannot tell: a group of a spaced number, or another number) next to a space and a digit."""

    def beside(separators: tuple[int, ...], byte: int, beyond: int) -> pl.Expr:
        return _byte(byte).is_in(separators).fill_null(False) & _is_digit(_byte(beyond))

    joined = _is_digit(_byte(-1)) | _is_digit(_byte(0)) | beside((_DOT, _COMMA), -1, -2) | beside((_DOT, _COMMA), 0, 1)
    spaced = beside((_SPACE,), -1, -2) | beside((_SPACE,), 0, 1)
    return located.select(pl.when(joined).then(False).when(spaced).then(None).otherwise(True)).to_series()


class _Kind(NamedTuple):
    """How a kind of token is told in a context: from the bytes around an occurrence, or among the
    context's tokens (the same rule, for the pairs the occurrence search leaves)."""

    whole: Callable[[pl.DataFrame], pl.Series]
    among_tokens: pl.Expr


def _words_kind(language: Language) -> _Kind:
    words = words_of(pl.col("hay"))
    plural = pl.lit(False)
    for suffix in language.plural_suffixes:
        plural = plural | words.list.contains(pl.col("needle") + suffix)
    return _Kind(
        _whole_word(language.plural_suffixes),
        words.list.contains(pl.col("needle")) | ((pl.col("needle").str.len_chars() >= 3) & plural),
    )


def _numbers_kind(language: Language) -> _Kind:
    separator = language.decimal_separator
    values = pl.col("hay").str.extract_all(NUMBER_PATTERN).list.eval(canonical_number(pl.element(), separator))
    return _Kind(_whole_number, values.list.contains(canonical_number(pl.col("needle"), separator)))
