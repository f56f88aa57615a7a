"""The offline judge: abstention and grounding decided lexically, with no network and no key.

``LexicalJudge`` reads each answer against the context exactly as it was sent to the model, both
``words.normalized``, in the case's language: the case's ``language`` (a corpus column), else the judge's
``language`` setting, else the language ``language_detection`` finds in the case's question (its answer
without one), else ``DEFAULT_LANGUAGE``. A case in a language the judge has no rules for (no language
file, or a script written without spaces such as Chinese or Japanese) is not judged: its three verdicts
are null.

``abstained``: the answer is blank, or one of its sentences says it does not answer (an abstention pattern
of any of the judge's languages, or a negation, a noun and a verb of one language's abstention parts) and
goes no further (``compute.abstention``); an answer need not be in its question's language.
``grounded``: the share of the answer's claims (its sentences that hold a content word or a number) that
the context supports: every number is there with the same value (``compute.numbers``: ``1.000,50`` and
``1000,50`` alike in German, ``80`` is not in ``180``), every name (``compute.names``) is there or in the
question, and at least ``min_overlap`` of the content words are there as whole words. Content words
(``compute.words``) are runs of letters, marks and digits that start with a letter, have two characters
or more and are not the language's stopwords; a plural suffix of the language is folded on both sides.
``abstention_correct``: abstained exactly when the case is labelled ``unanswerable``.

Limits: lexical, not semantic. A paraphrase counts as unsupported; a negation flip ("may" / "may not"),
swapped roles, a swapped word in lower case or words gathered from several passages can pass; an
abstention worded with neither a pattern nor the three parts counts as an answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import polars as pl

from rag_compare.compute.abstention import abstains, sentences
from rag_compare.compute.language_detection import detect_languages
from rag_compare.compute.names import names_of, shares_piece
from rag_compare.compute.numbers import NUMBER_PATTERN, canonical_number, number_writings
from rag_compare.compute.words import fold_plural, is_content_word, normalized, words_of
from rag_compare.core.digest import json_digest
from rag_compare.core.errors import ConfigError, ContractError, Problem
from rag_compare.io.language_rules import Language, builtin_languages, language_code

__all__ = [
    "DEFAULT_LANGUAGE",
    "LexicalJudge",
]

METHOD_VERSION = "lexical-3"
DEFAULT_LANGUAGE = "en"
"""The language of a case whose text shows no language of the judge's ("Hotel cap?"), when the judge
knows English (else its first language)."""

_UNSPACED = r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}\p{Tibetan}]"
"""Scripts written without spaces between words: a case in one is not judged."""
_UNDETERMINED = "und"
"""The BCP 47 tag of an undetermined language: the language of a case in a script without spaces."""
_REQUIRED = {"answer": pl.String, "context": pl.String, "answerability": pl.String}
_OPTIONAL = ("question", "language")
_OUTPUT = {"abstained": pl.Boolean, "grounded": pl.Float64, "abstention_correct": pl.Boolean}
_SLICE_ROWS = 100_000
_ABSTENTION_CORRECT = pl.col("abstained") == (pl.col("answerability") == "unanswerable")
_ROUNDS = 4
_DOT, _COMMA, _SPACE = ord("."), ord(","), ord(" ")


@dataclass(frozen=True)
class LexicalJudge:
    """The default evaluator: deterministic lexical checks of abstention and grounding (see the module).

    ``language`` is the language of every case without its own (a code of ``languages``); ``None`` detects
    it. ``languages`` are the rules the judge knows, in order (detection's ties go to the first): the
    shipped ones by default; ``io.language_rules.languages_with`` adds or replaces one from a file.
    """

    min_overlap: float = 0.6
    language: str | None = None
    languages: tuple[Language, ...] = field(default_factory=builtin_languages)

    def __repr__(self) -> str:
        codes = tuple(language.code for language in self.languages)
        return f"LexicalJudge(min_overlap={self.min_overlap!r}, language={self.language!r}, languages={codes!r})"

    def __post_init__(self) -> None:
        if not 0.0 < self.min_overlap <= 1.0:
            raise ConfigError(f"min_overlap must be above 0 and at most 1, got {self.min_overlap!r}.")
        codes = [language.code for language in self.languages]
        if not codes:
            raise ConfigError("languages is empty: give the judge at least one language.")
        twice = sorted({code for code in codes if codes.count(code) > 1})
        if twice:
            raise ConfigError(f"languages holds {', '.join(twice)} more than once: give each language once.")
        if self.language is not None:
            try:
                code = language_code(self.language)
            except ValueError as error:
                raise ConfigError(f"language: {error}.") from None
            if code not in codes:
                raise ConfigError(
                    f"language {self.language!r} has no rules: the judge knows {', '.join(sorted(codes))}. "
                    "Add a language file for it, or leave language unset to detect each case's."
                )
            object.__setattr__(self, "language", code)

    @property
    def name(self) -> str:
        return "lexical"

    @property
    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "method": METHOD_VERSION,
            "min_overlap": float(self.min_overlap),
            "language": self.language,
            "languages": [{"code": language.code, **language.config} for language in self.languages],
        }

    @property
    def fingerprint(self) -> str:
        """SHA-256 of everything that decides the verdicts; any change of method or setting changes it.

        The library version is left out: the method version changes whenever the verdicts would.
        """
        return json_digest(self.config)

    def judge(self, cases: pl.DataFrame) -> pl.DataFrame:
        """A new frame, one row per row of ``cases`` in the same order: ``abstained``, ``grounded``,
        ``abstention_correct``. ``cases`` needs ``answer``, ``context`` and ``answerability`` (text), and
        may hold ``question`` and ``language``.

        Slices of rows are judged concurrently (Polars releases the GIL): memory stays bounded by the
        slice size and every core works.
        """
        typed = _typed(cases)
        threads = pl.thread_pool_size()
        size = _slice_size(typed.height, threads)
        slices = [typed.slice(start, size) for start in range(0, typed.height, size)]
        with ThreadPoolExecutor(max_workers=max(1, min(len(slices), threads))) as pool:
            parts = list(pool.map(self._judge_slice, slices))
        return pl.concat(parts) if parts else pl.DataFrame(schema=_OUTPUT)

    def abstentions(self, cases: pl.DataFrame) -> pl.DataFrame:
        """``abstained`` and ``abstention_correct`` alone for each row of ``cases`` (``answer`` and
        ``answerability``; ``question`` and ``language`` when it has them): the verdicts that need no
        context, without the cost of grounding."""
        typed = _typed(cases.with_columns(context=pl.lit(None, pl.String)))
        return self._abstained(typed).select("abstained", abstention_correct=_ABSTENTION_CORRECT)

    def languages_of(self, cases: pl.DataFrame) -> pl.Series:
        """The language each row of ``cases`` is read in (see the module): a code of the judge's languages,
        else the tag of a language it has no rules for, ``und`` for a script written without spaces (those
        rows are not judged). ``cases`` need not hold more than ``question`` or ``answer``."""
        return self._languages(_typed(_padded(cases)))

    def _given(self, cases: pl.DataFrame) -> pl.Series:
        """Each row's language as its ``language`` column (its primary subtag), else the judge's setting,
        gives it; null where it is to be detected."""
        tags = cases.get_column("language")
        if tags.null_count() < tags.len():  # the primary subtag, as io.language_rules.language_code reads it
            tags = tags.str.to_lowercase().str.replace(r"[-_].*", "")
        return tags if self.language is None else tags.fill_null(self.language)

    def _languages(self, cases: pl.DataFrame) -> pl.Series:
        chosen = self._given(cases)
        open_rows = chosen.is_null().arg_true()
        if open_rows.len() == 0:
            return chosen.alias("language")
        texts = _texts(cases)
        texts = texts if open_rows.len() == texts.len() else texts.gather(open_rows)
        found = detect_languages(texts, self.languages).fill_null(self._fallback)
        unspaced = pl.repeat(_UNDETERMINED, texts.len(), dtype=pl.String, eager=True)
        found = found.zip_with(~texts.str.contains(_UNSPACED).fill_null(False), unspaced)
        return (found if open_rows.len() == chosen.len() else chosen.scatter(open_rows, found)).alias("language")

    @property
    def _fallback(self) -> str:
        """The language of a text without evidence of any: ``DEFAULT_LANGUAGE``, else the first language."""
        codes = [language.code for language in self.languages]
        return DEFAULT_LANGUAGE if DEFAULT_LANGUAGE in codes else codes[0]

    @property
    def _rules(self) -> dict[str, Language]:
        return {language.code: language for language in self.languages}

    def _abstained(self, cases: pl.DataFrame) -> pl.DataFrame:
        """``cases`` with the row number, the normalized ``answer`` (``written``: as written), the
        ``language`` and ``abstained`` (null where the case is not judged)."""
        frame = cases.with_columns(
            written=pl.col("answer"), answer=normalized(cases.get_column("answer")), language=self._languages(cases)
        )
        return frame.with_columns(abstained=abstains(frame, self.languages)).with_row_index("row")

    def _judge_slice(self, cases: pl.DataFrame) -> pl.DataFrame:
        verdicts = self._abstained(cases)
        answered = verdicts.filter(~pl.col("abstained"), pl.col("context").is_not_null())  # judged rows only
        rules = self._rules
        parts = [
            _grounded(group, self.min_overlap, rules[str(code)])
            for (code,), group in answered.partition_by("language", as_dict=True).items()
        ]
        grounded = pl.concat(parts) if parts else pl.DataFrame(schema={"row": pl.UInt32, "grounded": pl.Float64})
        return verdicts.join(grounded, on="row", how="left", maintain_order="left").select(
            pl.col("abstained"), pl.col("grounded").cast(pl.Float64), abstention_correct=_ABSTENTION_CORRECT
        )


def _slice_size(rows: int, threads: int) -> int:
    """Rows per slice: at most ``_SLICE_ROWS``, in a number of slices that is a multiple of ``threads``, all
    of about one size, so no thread is left alone with the last slice."""
    count = threads * math.ceil(rows / (threads * _SLICE_ROWS))
    return max(1, math.ceil(rows / max(count, 1)))


def _padded(cases: pl.DataFrame) -> pl.DataFrame:
    """``cases`` with a null column for each column the judge needs that it lacks."""
    return cases.with_columns(pl.lit(None, pl.String).alias(name) for name in _REQUIRED if name not in cases.columns)


def _texts(cases: pl.DataFrame) -> pl.Series:
    """The text each case's language is detected from: its question, else its answer."""
    question = cases.get_column("question")
    if question.null_count() == 0:
        return question
    return pl.select(pl.coalesce(question, cases.get_column("answer"))).to_series()


def _typed(cases: pl.DataFrame) -> pl.DataFrame:
    """The columns the judge reads, as text (``question`` and ``language`` null when ``cases`` lack them)."""
    problems = [
        Problem(f"a column '{name}' of text", column=name)
        for name, dtype in _REQUIRED.items()
        if cases.schema.get(name) not in (dtype, pl.Null, pl.Categorical, pl.Enum)
    ]
    if problems:
        raise ContractError("cases", "input of the lexical judge", problems)
    return cases.select(
        *(pl.col(name).cast(dtype) for name, dtype in _REQUIRED.items()),
        *((pl.col(name) if name in cases.columns else pl.lit(None)).cast(pl.String).alias(name) for name in _OPTIONAL),
    )


def _grounded(answered: pl.DataFrame, min_overlap: float, language: Language) -> pl.DataFrame:
    """``row`` and ``grounded`` for each answered row (all in ``language``) with at least one claim."""
    haystacks = normalized(answered.get_column("context"))
    claims = _claims(answered)
    numbers = _numbers(claims)
    missing = _flags(claims.height, _numbers_missing(numbers, haystacks, language))
    words = _content_words(claims.filter(~pl.lit(missing).gather(pl.col("claim"))), language)
    words = words.with_columns(found=_found(words, haystacks, _words_kind(language)))
    missing = missing.scatter(_names_missing(words, answered, haystacks, language), True)
    counts = words.group_by("claim").agg(n_words=pl.len(), n_found=pl.col("found").sum())
    judged = (
        claims.select("claim", "pos", number=_flags(claims.height, numbers.get_column("claim")), missing=missing)
        .join(counts, on="claim", how="left")
        .filter(pl.col("number") | pl.col("n_words").is_not_null())
    )
    overlap = (pl.col("n_found") / pl.col("n_words")).fill_null(1.0)
    return (
        judged.group_by("pos")
        .agg(grounded=(~pl.col("missing") & (overlap >= min_overlap)).mean())
        .join(answered.select("row").with_row_index("pos"), on="pos")
        .select("row", "grounded")
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
