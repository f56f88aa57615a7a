"""The offline judge: abstention and grounding decided lexically, with no network and no key.

``LexicalJudge`` reads each answer against the context exactly as it was sent to the model:

- ``abstained``: the answer is blank or matches one of ``ABSTENTION_PATTERNS`` (case-insensitive regexes
  searched anywhere in the answer, straight or curly apostrophes);
- ``grounded``: the share of the answer's claims that the context supports. Claims are the answer's
  sentences (split after ``.``, ``!`` or ``?`` followed by whitespace, and at line breaks) that hold a
  content word or a number. A claim is supported when every number in it occurs in the context
  (``3,000`` and ``3000`` alike) and at least ``min_overlap`` of its content words occur there as whole
  words. Content words are lowercased runs of ASCII letters, digits and ``_`` of two characters or more,
  without digits, that are not in ``STOPWORDS``; a trailing ``s`` is dropped from words longer than three
  letters, on both sides;
- ``abstention_correct``: abstained exactly when the case is labelled ``unanswerable``.

The method is lexical, not semantic: a paraphrase counts as unsupported, a negation flip ("may" against
"may not") or swapped roles can pass, a claim stitched from words scattered over several passages can
pass, and any abstention wording outside the patterns counts as an answer. Text outside ASCII is split
into words at every non-ASCII character.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

import polars as pl

from rag_compare.errors import ConfigError, ContractError, Problem

__all__ = ["ABSTENTION_PATTERNS", "STOPWORDS", "Judge", "LexicalJudge"]

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

STOPWORDS: tuple[str, ...] = tuple(
    sorted(
        """
        about above after again against all also am an and any are aren as at be because been before being
        below between both but by can cannot could couldn did didn do does doesn doing don down during each
        either else etc few for from further had hadn has hasn have haven having he her here hers herself him
        himself his how however if in into is isn it its itself just ll me might more most must mustn my
        myself neither no nor not now of off on once only or other our ours ourselves out over own please re
        same shall shan she should shouldn so some such than that the their theirs them themselves then there
        these they this those through thus to too under until up ve very was wasn we were weren what when
        where which while who whom why will with won would wouldn yes yet you your yours yourself yourselves
        """.split()
    )
)
"""Words that carry no claim; words of one character are never content words either."""

_REQUIRED = {"answer": pl.String, "context": pl.String, "answerability": pl.String}
_OUTPUT = {"abstained": pl.Boolean, "grounded": pl.Float64, "abstention_correct": pl.Boolean}
_SLICE_ROWS = 50_000
_SENTENCE_END = r"([.!?])\s+"
_NOT_A_WORD = r"(?:[^a-z0-9_ ]+|(?-u:\b)[0-9][a-z0-9_]*) ?"
_WORD_BYTES = "abcdefghijklmnopqrstuvwxyz0123456789_"
_SPACED = pl.format(" {} ", "needle")
_SPACED_PLURAL = pl.when(pl.col("needle").str.len_bytes() >= 3).then(pl.format(" {}s ", "needle"))
_NUMBER = r"[0-9]+(?:[.,][0-9]+)*"
_S, _UNDERSCORE, _COMMA, _DOT = ord("s"), ord("_"), ord(","), ord(".")


class Judge(Protocol):
    """What the comparison needs from an evaluator (a later LLM judge implements it too)."""

    @property
    def name(self) -> str: ...

    @property
    def fingerprint(self) -> str: ...

    def judge(self, cases: pl.DataFrame) -> pl.DataFrame:
        """``abstained``, ``grounded`` and ``abstention_correct`` for each row of ``cases``, in order."""
        ...


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
    def fingerprint(self) -> str:
        """SHA-256 of everything that decides the verdicts; any change of method or setting changes it."""
        settings = {
            "name": self.name,
            "method": METHOD_VERSION,
            "min_overlap": self.min_overlap,
            "abstention_patterns": list(self.abstention_patterns),
            "stopwords": sorted(set(self.stopwords)),
        }
        canonical = json.dumps(settings, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(canonical.encode()).hexdigest()

    @property
    def _abstention_regex(self) -> str:
        return "(?i)" + "|".join(f"(?:{pattern})" for pattern in self.abstention_patterns)

    def judge(self, cases: pl.DataFrame) -> pl.DataFrame:
        """A new frame, one row per row of ``cases`` in the same order: ``abstained``, ``grounded``,
        ``abstention_correct``. ``cases`` needs ``answer``, ``context`` and ``answerability`` (text)."""
        _check_columns(cases)
        typed = cases.select(pl.col(name).cast(dtype) for name, dtype in _REQUIRED.items())
        slices = [typed.slice(start, _SLICE_ROWS) for start in range(0, typed.height, _SLICE_ROWS)]
        with ThreadPoolExecutor(max_workers=max(1, min(len(slices), pl.thread_pool_size()))) as pool:
            parts = list(pool.map(self._judge_slice, slices))
        return pl.concat(parts) if parts else pl.DataFrame(schema=_OUTPUT)

    def _judge_slice(self, cases: pl.DataFrame) -> pl.DataFrame:
        answer = pl.col("answer")
        verdicts = cases.with_row_index("row").with_columns(
            abstained=(answer.str.strip_chars() == "") | answer.str.contains(self._abstention_regex)
        )
        answered = verdicts.filter(~pl.col("abstained"), pl.col("context").is_not_null())
        grounded = _grounded(answered, self.min_overlap, self.stopwords)
        return verdicts.join(grounded, on="row", how="left", maintain_order="left").select(
            pl.col("abstained"),
            pl.col("grounded").cast(pl.Float64),
            abstention_correct=pl.col("abstained") == (pl.col("answerability") == "unanswerable"),
        )


def _check_columns(cases: pl.DataFrame) -> None:
    problems = [
        Problem(f"a column '{name}' of text", column=name)
        for name, dtype in _REQUIRED.items()
        if cases.schema.get(name) not in (dtype, pl.Null)
    ]
    if problems:
        raise ContractError("cases", "input of the lexical judge", problems)


def _grounded(answered: pl.DataFrame, min_overlap: float, stopwords: tuple[str, ...]) -> pl.DataFrame:
    """``row`` and ``grounded`` for each answered row with at least one claim."""
    haystacks = answered.get_column("context").str.to_lowercase()
    claims = _claims(answered)
    numbers = _numbers(claims)
    missing = _flags(claims.height, _numbers_missing(numbers, haystacks))
    words = _content_words(claims, stopwords).filter(~pl.lit(missing).gather(pl.col("claim")))
    words = words.with_columns(found=_found(words, haystacks, _whole_word, (_SPACED, _SPACED_PLURAL)))
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
    """One row per content word of each claim (``needle``, folded), with its ``claim`` and ``pos``."""
    excluded = pl.Series(sorted({"", *stopwords, *_WORD_BYTES}))
    needle = pl.col("needle")
    folded = pl.when(needle.str.ends_with("s") & (needle.str.len_bytes() > 3)).then(needle.str.head(-1))
    return (
        claims.select("claim", "pos", needle=pl.col("text").str.replace_all(_NOT_A_WORD, " ").str.split(" "))
        .explode("needle")
        .filter(~needle.is_in(excluded))
        .with_columns(needle=folded.otherwise(needle))
    )


def _numbers(claims: pl.DataFrame) -> pl.DataFrame:
    """One row per number of each claim (``needle``, as written), with its ``claim`` and ``pos``."""
    return (
        claims.select("claim", "pos", needle=pl.col("text").str.extract_all(_NUMBER))
        .explode("needle")
        .drop_nulls("needle")
    )


def _numbers_missing(numbers: pl.DataFrame, haystacks: pl.Series) -> pl.Series:
    """The ``claim`` of each number found in its context neither as written nor in its other writing."""
    unfound = numbers.filter(~_found(numbers, haystacks, _whole_number, (_SPACED,)))
    retry = unfound.with_columns(needle=_other_writing(pl.col("needle")))
    found = _found(retry.drop_nulls("needle"), haystacks, _whole_number, (_SPACED,))
    return pl.concat([retry.filter(pl.col("needle").is_null()), retry.drop_nulls("needle").filter(~found)]).get_column(
        "claim"
    )


def _other_writing(number: pl.Expr) -> pl.Expr:
    """``3000`` for ``3,000`` and the reverse; null for a number written one way only (``150``, ``1.5``)."""
    plain = number.str.replace_all(",", "", literal=True)
    integer = plain.str.extract(r"^[0-9]+", 0)
    grouped = integer.str.reverse().str.replace_all(r"[0-9]{3}", "$0,").str.strip_chars_end(",").str.reverse()
    return (
        pl.when(number.str.contains(",", literal=True))
        .then(plain)
        .when(integer.str.len_bytes() > 3)
        .then(grouped + plain.str.slice(integer.str.len_bytes()))
    )


def _found(
    pairs: pl.DataFrame,
    haystacks: pl.Series,
    whole: Callable[[pl.DataFrame], pl.Series],
    spaced: tuple[pl.Expr, ...],
) -> pl.Series:
    """Whether each pair's ``needle`` occurs in ``haystacks[pos]`` as a whole token, as ``whole`` judges it.

    Quick tests settle most pairs: the needle in one of its ``spaced`` forms (with a space on each side,
    null for none) is whole, and a needle that is nowhere in the text is absent. The rest are searched occurrence by
    occurrence: a rejected occurrence sends the search on from its next byte, each round handling only the
    pairs still undecided.
    """
    found = pl.repeat(False, pairs.height, dtype=pl.Boolean, eager=True)
    work = pairs.select("pos", "needle").with_row_index("pair")
    work = work.with_columns(hay=haystacks.gather(work.get_column("pos")).cast(pl.Binary))
    for form in spaced:
        hit = pl.col("hay").bin.contains(form.cast(pl.Binary)).fill_null(False)
        work = work.with_columns(hit=hit)
        found = found.scatter(work.filter("hit").get_column("pair"), True)
        work = work.filter(~pl.col("hit"))
    work = work.filter(pl.col("hay").bin.contains(pl.col("needle").cast(pl.Binary)))
    work = work.select("pair", "needle", hay=pl.col("hay").cast(pl.String), start=pl.lit(0, pl.Int64))
    rest = pl.col("hay")
    while work.height:
        located = work.with_columns(
            at=pl.col("start") + rest.str.find(pl.col("needle"), literal=True).cast(pl.Int64),
            length=pl.col("needle").str.len_bytes().cast(pl.Int64),
        ).drop_nulls("at")
        located = located.with_columns(whole=whole(located))
        found = found.scatter(located.filter("whole").get_column("pair"), True)
        work = located.filter(~pl.col("whole")).select("pair", "needle", "hay", start=pl.col("at") + 1)
        rest = pl.col("hay").cast(pl.Binary).bin.slice(pl.col("start")).cast(pl.String)
    return found


def _byte(offset: int) -> pl.Expr:
    """The byte of ``hay`` ``offset`` bytes away from the occurrence: before it when negative, else after
    it (0 is the first byte after it); null outside the text."""
    at = pl.col("at")
    index = pl.when(at + offset >= 0).then(at + offset) if offset < 0 else at + pl.col("length") + offset
    return pl.col("hay").cast(pl.Binary).bin.get(index, null_on_oob=True)


def _is_digit(byte: str) -> pl.Expr:
    return pl.col(byte).is_between(ord("0"), ord("9")).fill_null(False)


def _is_word(byte: str) -> pl.Expr:
    column = pl.col(byte)
    letter_or_digit = column.is_between(ord("a"), ord("z")) | column.is_between(ord("0"), ord("9"))
    return (letter_or_digit | (column == _UNDERSCORE)).fill_null(False)


def _whole_word(located: pl.DataFrame) -> pl.Series:
    """Whether each occurrence is a whole word, or the word and an ``s`` (the plural fold)."""
    plural = (pl.col("after") == _S).fill_null(False) & (pl.col("length") >= 3) & ~_is_word("after2")
    verdict = ~_is_word("before") & (~_is_word("after") | plural)
    return located.select(before=_byte(-1), after=_byte(0), after2=_byte(1), length="length").select(verdict).to_series()


def _whole_number(located: pl.DataFrame) -> pl.Series:
    """Whether each occurrence is a whole number: no digit next to it, nor a separator then a digit."""
    separator = {name: pl.col(name).is_in([_COMMA, _DOT]).fill_null(False) for name in ("before", "after")}
    before = _is_digit("before") | (separator["before"] & _is_digit("before2"))
    after = _is_digit("after") | (separator["after"] & _is_digit("after2"))
    return (
        located.select(before=_byte(-1), before2=_byte(-2), after=_byte(0), after2=_byte(1))
        .select(~before & ~after)
        .to_series()
    )
