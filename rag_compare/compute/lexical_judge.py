"""The offline judge: abstention and grounding decided lexically, with no network and no key.

``LexicalJudge`` reads each answer against the context exactly as it was sent to the model. ``abstained``:
the answer is blank or matches one of ``ABSTENTION_PATTERNS``. ``grounded``: the share of the answer's
claims (its sentences that hold a content word or a number) that the context supports: every number is
there as a whole number (``3,000`` and ``3000`` alike, ``80`` is not in ``180``) and at least
``min_overlap`` of the content words are there as whole words, case aside. Words are runs of ASCII letters,
digits and ``_``; content words start with a letter, have two characters or more, are not in
``STOPWORDS``, and lose a trailing ``s`` beyond three letters on both sides. ``abstention_correct``:
abstained exactly when the case is labelled ``unanswerable``.

Limits: lexical, not semantic. A paraphrase counts as unsupported; a negation flip ("may" / "may not"),
swapped roles or words gathered from several passages can pass; an abstention worded outside the
patterns counts as an answer; text outside ASCII is split at every non-ASCII character.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, NamedTuple

import polars as pl

from rag_compare.compute.words import (
    NUMBER_PATTERN,
    STOPWORDS,
    WORD_PATTERN,
    fold_plural,
    is_content_word,
    other_writing,
)
from rag_compare.core.digest import json_digest
from rag_compare.core.errors import ConfigError, ContractError, Problem

__all__ = [
    "ABSTENTION_PATTERNS",
    "LexicalJudge",
]

METHOD_VERSION = "lexical-1"

_APOSTROPHE = r"['\x{2018}\x{2019}]"
_SOURCE = r"(?:context|passages?|handbook|documents?|sources?)"

ABSTENTION_PATTERNS: tuple[str, ...] = (
    rf"\bi (?:really )?(?:do not|don{_APOSTROPHE}?t) know\b",
    rf"\bi(?:{_APOSTROPHE}m| am) not (?:sure|certain)\b",
    rf"\b(?:cannot|can not|can{_APOSTROPHE}?t) answer\b",
    r"\bunable to (?:answer|find|determine)\b",
    r"\bno (?:relevant |specific )?information (?:about|on|regarding)\b",
    rf"\bthe (?:provided |given )?{_SOURCE} (?:does|do|did)(?: not|n{_APOSTROPHE}t) "
    r"(?:contain|say|mention|cover|specify|state|include|provide)\b",
    r"\bnot mentioned\b",
    rf"\bi (?:could not|couldn{_APOSTROPHE}?t|cannot|can{_APOSTROPHE}?t|did not|didn{_APOSTROPHE}?t) find\b",
    rf"\bi do(?: not|n{_APOSTROPHE}?t) have (?:enough |any |the )?information\b",
)
"""Abstention phrasings, searched case-insensitively anywhere in an answer (Rust regex syntax)."""


_REQUIRED = {"answer": pl.String, "context": pl.String, "answerability": pl.String}
_OUTPUT = {"abstained": pl.Boolean, "grounded": pl.Float64, "abstention_correct": pl.Boolean}
_SLICE_ROWS = 100_000
_ABSTENTION_CORRECT = pl.col("abstained") == (pl.col("answerability") == "unanswerable")
_SENTENCE_END = r"([.!?])\s+"
_ROUNDS = 4
_S, _UNDERSCORE, _COMMA, _DOT = ord("s"), ord("_"), ord(","), ord(".")


@dataclass(frozen=True)
class LexicalJudge:
    """The default evaluator: deterministic lexical checks of abstention and grounding (see the module)."""

    min_overlap: float = 0.6
    abstention_patterns: tuple[str, ...] = ABSTENTION_PATTERNS
    stopwords: tuple[str, ...] = STOPWORDS

    def __post_init__(self) -> None:
        if not 0.0 < self.min_overlap <= 1.0:
            raise ConfigError(f"min_overlap must be above 0 and at most 1, got {self.min_overlap!r}.")
        if not self.abstention_patterns:
            raise ConfigError("abstention_patterns is empty: give at least one regex.")
        try:
            pl.Series([""]).str.contains(self._abstention_regex)
        except pl.exceptions.ComputeError as error:
            raise ConfigError(f"An abstention pattern is not a valid regex: {error}") from None

    @property
    def name(self) -> str:
        return "lexical"

    @property
    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "method": METHOD_VERSION,
            "min_overlap": float(self.min_overlap),
            "abstention_patterns": list(self.abstention_patterns),
            "stopwords": sorted(set(self.stopwords)),
        }

    @property
    def fingerprint(self) -> str:
        """SHA-256 of everything that decides the verdicts; any change of method or setting changes it.

        The library version is left out: the method version changes whenever the verdicts would.
        """
        return json_digest(self.config)

    @property
    def _abstention_regex(self) -> str:
        return "(?i)" + "|".join(f"(?:{pattern})" for pattern in self.abstention_patterns)

    def judge(self, cases: pl.DataFrame) -> pl.DataFrame:
        """A new frame, one row per row of ``cases`` in the same order: ``abstained``, ``grounded``,
        ``abstention_correct``. ``cases`` needs ``answer``, ``context`` and ``answerability`` (text).

        Slices of rows are judged concurrently (Polars releases the GIL): memory stays bounded by the
        slice size and every core works.
        """
        _check_columns(cases)
        typed = cases.select(pl.col(name).cast(dtype) for name, dtype in _REQUIRED.items())
        slices = [typed.slice(start, _SLICE_ROWS) for start in range(0, typed.height, _SLICE_ROWS)]
        with ThreadPoolExecutor(max_workers=max(1, min(len(slices), pl.thread_pool_size()))) as pool:
            parts = list(pool.map(self._judge_slice, slices))
        return pl.concat(parts) if parts else pl.DataFrame(schema=_OUTPUT)

    def abstentions(self, cases: pl.DataFrame) -> pl.DataFrame:
        """``abstained`` and ``abstention_correct`` alone for each row of ``cases`` (``answer`` and
        ``answerability``): the verdicts that need no context, without the cost of grounding."""
        typed = cases.select(pl.col("answer").cast(pl.String), pl.col("answerability").cast(pl.String))
        return typed.select(abstained=self._abstained, answerability="answerability").select(
            "abstained", abstention_correct=_ABSTENTION_CORRECT
        )

    @property
    def _abstained(self) -> pl.Expr:
        answer = pl.col("answer")
        return (answer.str.strip_chars() == "") | answer.str.contains(self._abstention_regex)

    def _judge_slice(self, cases: pl.DataFrame) -> pl.DataFrame:
        verdicts = cases.with_row_index("row").with_columns(abstained=self._abstained)
        answered = verdicts.filter(~pl.col("abstained"), pl.col("context").is_not_null())
        grounded = _grounded(answered, self.min_overlap, self.stopwords)
        return verdicts.join(grounded, on="row", how="left", maintain_order="left").select(
            pl.col("abstained"), pl.col("grounded").cast(pl.Float64), abstention_correct=_ABSTENTION_CORRECT
        )


def _check_columns(cases: pl.DataFrame) -> None:
    problems = [
        Problem(f"a column '{name}' of text", column=name)
        for name, dtype in _REQUIRED.items()
        if cases.schema.get(name) not in (dtype, pl.Null, pl.Categorical, pl.Enum)
    ]
    if problems:
        raise ContractError("cases", "input of the lexical judge", problems)


def _grounded(answered: pl.DataFrame, min_overlap: float, stopwords: tuple[str, ...]) -> pl.DataFrame:
    """``row`` and ``grounded`` for each answered row with at least one claim."""
    haystacks = answered.get_column("context").str.to_lowercase()
    claims = _claims(answered)
    numbers = _numbers(claims)
    missing = _flags(claims.height, _numbers_missing(numbers, haystacks))
    words = _content_words(claims.filter(~pl.lit(missing).gather(pl.col("claim"))), stopwords)
    words = words.with_columns(found=_found(words, haystacks, _WORDS))
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


def _flags(height: int, indices: pl.Series) -> pl.Series:
    """``height`` booleans, true at ``indices``."""
    return pl.repeat(False, height, dtype=pl.Boolean, eager=True).scatter(indices, True)


def _claims(answered: pl.DataFrame) -> pl.DataFrame:
    """One row per sentence of each answer: ``claim`` (0, 1, ...), ``pos`` (the answer's position) and
    ``text`` (lowercased)."""
    sentences = pl.col("answer").str.to_lowercase().str.replace_all(_SENTENCE_END, "$1\n").str.split("\n")
    return answered.select(text=sentences).with_row_index("pos").explode("text").with_row_index("claim")


def _content_words(claims: pl.DataFrame, stopwords: tuple[str, ...]) -> pl.DataFrame:
    """One row per content word of each claim: ``token`` as written, ``needle`` folded, with its ``claim``
    and ``pos``."""
    token = pl.col("token")
    return (
        claims.select("claim", "pos", token=pl.col("text").str.extract_all(WORD_PATTERN))
        .explode("token")
        .filter(is_content_word(token, stopwords))
        .with_columns(needle=fold_plural(token))
    )


def _numbers(claims: pl.DataFrame) -> pl.DataFrame:
    """One row per number of each claim (``token`` and ``needle``, as written), with its ``claim`` and
    ``pos``."""
    numbers = claims.select("claim", "pos", token=pl.col("text").str.extract_all(NUMBER_PATTERN)).explode("token")
    return numbers.drop_nulls("token").with_columns(needle=pl.col("token"))


def _numbers_missing(numbers: pl.DataFrame, haystacks: pl.Series) -> pl.Series:
    """The ``claim`` of each number that is in its context neither as written nor in its other writing."""
    unfound = numbers.filter(~_found(numbers, haystacks, _NUMBERS))
    other = unfound.with_columns(needle=other_writing(pl.col("token"))).with_columns(token=pl.col("needle"))
    rewritten = other.drop_nulls("needle")
    found = _found(rewritten, haystacks, _NUMBERS)
    return pl.concat([other.filter(pl.col("needle").is_null()), rewritten.filter(~found)]).get_column("claim")


def _found(pairs: pl.DataFrame, haystacks: pl.Series, kind: _Kind) -> pl.Series:
    """Whether each pair's ``needle`` is one of the tokens of its context (``haystacks[pos]``).

    Quick tests settle most pairs: the ``token`` as written with a space on each side is there, a needle
    nowhere in the text is not. The rest are searched occurrence by occurrence, ``kind.whole`` judging
    each; a rejected occurrence sends the search on past it. After a few rounds, the contexts of the pairs
    still undecided are split into their tokens.
    """
    hay = pl.col("hay").cast(pl.Binary)
    work = pairs.with_row_index("pair").with_columns(hay=haystacks.gather(pairs.get_column("pos")))
    work = work.with_columns(spaced=hay.bin.contains(pl.format(" {} ", "token").cast(pl.Binary)))
    found = _flags(pairs.height, work.filter("spaced").get_column("pair"))
    work = work.filter(~pl.col("spaced"), hay.bin.contains(pl.col("needle").cast(pl.Binary))).select(
        "pair",
        "needle",
        "hay",
        start=pl.lit(0, pl.Int64),
        length=pl.col("needle").str.len_bytes().cast(pl.Int64),
    )
    rest = pl.col("hay")
    for _ in range(_ROUNDS):
        located = work.with_columns(at=pl.col("start") + rest.str.find(pl.col("needle"), literal=True).cast(pl.Int64))
        located = located.drop_nulls("at")
        whole = kind.whole(located)
        found = found.scatter(located.filter(whole).get_column("pair"), True)
        work = located.filter(~whole).select("pair", "needle", "hay", "length", start=pl.col("at") + pl.col("length"))
        rest = pl.col("hay").cast(pl.Binary).bin.slice(pl.col("start")).cast(pl.String)
    return found.scatter(work.filter(kind.among_tokens).get_column("pair"), True)


def _byte(offset: int) -> pl.Expr:
    """The byte of ``hay`` ``offset`` bytes away from the occurrence at ``at``: before it when negative,
    else after it (0 is the first byte after it); null outside the text."""
    at = pl.col("at")
    index = pl.when(at + offset >= 0).then(at + offset) if offset < 0 else at + pl.col("length") + offset
    return pl.col("hay").cast(pl.Binary).bin.get(index, null_on_oob=True)


def _is_digit(byte: str) -> pl.Expr:
    return pl.col(byte).is_between(ord("0"), ord("9")).fill_null(False)


def _is_word(byte: str) -> pl.Expr:
    letter = pl.col(byte).is_between(ord("a"), ord("z")) | (pl.col(byte) == _UNDERSCORE)
    return letter.fill_null(False) | _is_digit(byte)


def _whole_word(located: pl.DataFrame) -> pl.Series:
    """Whether each occurrence is a whole word, or the word and an ``s`` (the plural fold)."""
    plural = (pl.col("after") == _S).fill_null(False) & (pl.col("length") >= 3) & ~_is_word("after2")
    verdict = ~_is_word("before") & (~_is_word("after") | plural)
    return (
        located.select(before=_byte(-1), after=_byte(0), after2=_byte(1), length="length").select(verdict).to_series()
    )


def _whole_number(located: pl.DataFrame) -> pl.Series:
    """Whether each occurrence is a whole number: no digit next to it, nor a ``,`` or ``.`` and a digit."""

    def joined(byte: str, beyond: str) -> pl.Expr:
        return _is_digit(byte) | (pl.col(byte).is_in([_COMMA, _DOT]).fill_null(False) & _is_digit(beyond))

    around = located.select(before=_byte(-1), before2=_byte(-2), after=_byte(0), after2=_byte(1))
    return around.select(~joined("before", "before2") & ~joined("after", "after2")).to_series()


class _Kind(NamedTuple):
    """How a kind of token is told in a context: from the bytes around an occurrence, or among the
    context's tokens (the same rule, for the few pairs the occurrence search leaves)."""

    whole: Callable[[pl.DataFrame], pl.Series]
    among_tokens: pl.Expr


def _tokens(pattern: str) -> pl.Expr:
    return pl.col("hay").str.extract_all(pattern)


_WORDS = _Kind(
    _whole_word,
    _tokens(WORD_PATTERN).list.contains(pl.col("needle"))
    | ((pl.col("length") >= 3) & _tokens(WORD_PATTERN).list.contains(pl.col("needle") + "s")),
)
_NUMBERS = _Kind(_whole_number, _tokens(NUMBER_PATTERN).list.contains(pl.col("needle")))
