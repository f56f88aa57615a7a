"""The offline judge: abstention and grounding decided lexically, with no network and no key.

``LexicalJudge`` reads each answer against the context exactly as it was sent to the model:

- ``abstained``: the answer is blank or matches one of ``ABSTENTION_PATTERNS`` (case-insensitive regexes
  searched anywhere in the answer, straight or curly apostrophes);
- ``grounded``: the share of the answer's claims that the context supports. Claims are the answer's
  sentences (split after ``.``, ``!`` or ``?`` followed by whitespace, and at line breaks) that hold a
  content word or a number. A claim is supported when every number in it occurs in the context as a
  whole number (``3,000`` and ``3000`` alike; ``80`` is not in ``180`` nor ``1.5`` in ``1.50``) and at
  least ``min_overlap`` of its content words occur there as whole words, case aside. Words are runs of
  ASCII letters, digits and ``_``; content words start with a letter or ``_``, have two characters or
  more and are not in ``STOPWORDS``; a trailing ``s`` is dropped from words longer than three letters, on
  both sides (``euros`` matches ``euro``);
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

_REQUIRED = {"answer": pl.String, "context": pl.String, "answerability": pl.String}
_OUTPUT = {"abstained": pl.Boolean, "grounded": pl.Float64, "abstention_correct": pl.Boolean}
_SLICE_ROWS = 100_000
_SENTENCE_END = r"([.!?])\s+"
_NOT_A_WORD = r"(?:[^a-z0-9_ ]+|(?-u:\b)[0-9][a-z0-9_]*) ?"
_WORD_BYTES = "abcdefghijklmnopqrstuvwxyz0123456789_"


def _spaced(text: pl.Expr) -> pl.Expr:
    """Whether ``hay`` holds ``text`` with a space on each side."""
    return pl.col("hay").bin.contains(pl.format(" {} ", text).cast(pl.Binary))


_NEEDLE, _TOKEN = pl.col("needle"), pl.col("token")
_ABSENT = ~pl.col("hay").bin.contains(_NEEDLE.cast(pl.Binary))
_WORD_TESTS = ((_spaced(_TOKEN), True), (_ABSENT, False))
"""Quick verdicts: a word as written with a space on each side is there; one nowhere in the text is not."""
_NUMBER_TESTS = ((_spaced(_NEEDLE), True), (_ABSENT, False))
_NUMBER = r"[0-9]+(?:[.,][0-9]+)*"
_S, _UNDERSCORE = ord("s"), ord("_")


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
    words = words.with_columns(found=_found(words, haystacks, _WORD_TESTS, _search_words))
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
    excluded = sorted({"", *stopwords, *_WORD_BYTES})
    token = pl.col("token")
    folded = pl.when(token.str.len_bytes() > 3).then(token.str.strip_suffix("s"))
    return (
        claims.select("claim", "pos", token=pl.col("text").str.replace_all(_NOT_A_WORD, " ").str.split(" "))
        .explode("token")
        .filter(~token.is_in(excluded))
        .with_columns(needle=folded.otherwise(token))
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
    unfound = numbers.filter(~_found(numbers, haystacks, _NUMBER_TESTS, _search_numbers))
    other = unfound.with_columns(needle=_other_writing(pl.col("needle")))
    rewritten = other.drop_nulls("needle")
    found = _found(rewritten, haystacks, _NUMBER_TESTS, _search_numbers)
    return pl.concat([other.filter(pl.col("needle").is_null()), rewritten.filter(~found)]).get_column("claim")


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
    quick_tests: tuple[tuple[pl.Expr, bool], ...],
    search: Callable[[pl.DataFrame], pl.Series],
) -> pl.Series:
    """Whether each pair's ``needle`` occurs in ``haystacks[pos]`` as a whole token.

    ``quick_tests`` settle most pairs cheaply, in order: where a test holds, the pair gets its verdict.
    ``search`` takes the rest (``pair``, ``needle``, ``hay``) and returns the ``pair`` of those found.
    """
    found = pl.repeat(False, pairs.height, dtype=pl.Boolean, eager=True)
    work = pairs.with_row_index("pair").with_columns(hay=haystacks.gather(pairs.get_column("pos")).cast(pl.Binary))
    for test, verdict in quick_tests:
        work = work.with_columns(settled=test.fill_null(False))
        if verdict:
            found = found.scatter(work.filter("settled").get_column("pair"), True)
        work = work.filter(~pl.col("settled"))
    return found.scatter(search(work.select("pair", "needle", hay=pl.col("hay").cast(pl.String))), True)


def _search_words(work: pl.DataFrame) -> pl.Series:
    """The ``pair`` of each ``needle`` found in its ``hay`` as a whole word, or that word and an ``s``.

    Occurrence by occurrence: a rejected one sends the search on past it, each round handling only the
    pairs still undecided.
    """
    found: list[pl.Series] = []
    work = work.with_columns(start=pl.lit(0, pl.Int64), length=pl.col("needle").str.len_bytes().cast(pl.Int64))
    rest = pl.col("hay")
    while work.height:
        at = pl.col("start") + rest.str.find(pl.col("needle"), literal=True).cast(pl.Int64)
        located = work.with_columns(at=at).drop_nulls("at")
        located = located.with_columns(whole=_whole_word(located))
        found.append(located.filter("whole").get_column("pair"))
        work = located.filter(~pl.col("whole")).with_columns(start=pl.col("at") + pl.col("length")).drop("at", "whole")
        rest = pl.col("hay").cast(pl.Binary).bin.slice(pl.col("start")).cast(pl.String)
    return pl.concat(found) if found else pl.Series(dtype=pl.UInt32)


def _search_numbers(work: pl.DataFrame) -> pl.Series:
    """The ``pair`` of each ``needle`` found in its ``hay`` as a whole number: no digit next to it, nor a
    separator (``,`` or ``.``) then a digit."""
    number = pl.format(
        r"(?:^|[^0-9.,]|(?:^|[^0-9])[.,]){}(?:$|[^0-9.,]|[.,](?:$|[^0-9]))", pl.col("needle").str.escape_regex()
    )
    return work.sort("needle").filter(pl.col("hay").str.contains(number)).get_column("pair")


def _byte(offset: int) -> pl.Expr:
    """The byte of ``hay`` ``offset`` bytes away from the occurrence at ``at``: before it when negative,
    else after it (0 is the first byte after it); null outside the text."""
    at = pl.col("at")
    index = pl.when(at + offset >= 0).then(at + offset) if offset < 0 else at + pl.col("length") + offset
    return pl.col("hay").cast(pl.Binary).bin.get(index, null_on_oob=True)


def _is_word(byte: str) -> pl.Expr:
    column = pl.col(byte)
    letter_or_digit = column.is_between(ord("a"), ord("z")) | column.is_between(ord("0"), ord("9"))
    return (letter_or_digit | (column == _UNDERSCORE)).fill_null(False)


def _whole_word(located: pl.DataFrame) -> pl.Series:
    """Whether each occurrence is a whole word, or the word and an ``s`` (the plural fold)."""
    plural = (pl.col("after") == _S).fill_null(False) & (pl.col("length") >= 3) & ~_is_word("after2")
    verdict = ~_is_word("before") & (~_is_word("after") | plural)
    return (
        located.select(before=_byte(-1), after=_byte(0), after2=_byte(1), length="length").select(verdict).to_series()
    )
