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
from typing import Any, TypeVar

import polars as pl

from rag_compare.compute.abstention import abstains
from rag_compare.compute.grounding import share_supported
from rag_compare.compute.language_detection import detect_languages
from rag_compare.compute.offline_claims import claim_verdicts
from rag_compare.compute.words import normalized
from rag_compare.core.contract import CLAIM_TYPE
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
_T = TypeVar("_T")
_ABSTENTION_CORRECT = pl.col("abstained") == (pl.col("answerability") == "unanswerable")


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
        parts = _by_slice(_typed(cases), self._judge_slice)
        return pl.concat(parts) if parts else pl.DataFrame(schema=_OUTPUT)

    def claims(self, cases: pl.DataFrame) -> pl.Series:
        """Each row's claim verdicts (a list of ``contract.CLAIM_TYPE``, see ``offline_claims``), in order, read as
        ``judge`` reads ``cases``: the claims ``grounded`` is the share of, an empty list for an answer without
        one and for an abstention (it makes no claim), null where the case is not judged or has no context."""
        parts = _by_slice(_typed(cases), self._claims_slice)
        return pl.concat(parts) if parts else pl.Series("claims", [], dtype=pl.List(CLAIM_TYPE))

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

    def _claims_slice(self, cases: pl.DataFrame) -> pl.Series:
        verdicts = self._abstained(cases)
        answered = (~pl.col("abstained") & pl.col("context").is_not_null()).fill_null(False)
        rules = self._rules
        parts = [
            claim_verdicts(group, self.min_overlap, rules[str(code)])
            for (code,), group in verdicts.filter(answered).partition_by("language", as_dict=True).items()
        ]
        found = pl.concat(parts) if parts else pl.DataFrame(schema={"row": pl.UInt32, "claims": pl.List(CLAIM_TYPE)})
        joined = verdicts.join(found, on="row", how="left", maintain_order="left")
        empty = pl.lit([], dtype=pl.List(CLAIM_TYPE))
        claims = pl.when(answered).then(pl.col("claims").fill_null(empty)).when(pl.col("abstained")).then(empty)
        return joined.select(claims.alias("claims")).to_series()

    def _judge_slice(self, cases: pl.DataFrame) -> pl.DataFrame:
        verdicts = self._abstained(cases)
        answered = verdicts.filter(~pl.col("abstained"), pl.col("context").is_not_null())  # judged rows only
        rules = self._rules
        parts = [
            share_supported(group, self.min_overlap, rules[str(code)])
            for (code,), group in answered.partition_by("language", as_dict=True).items()
        ]
        grounded = pl.concat(parts) if parts else pl.DataFrame(schema={"row": pl.UInt32, "grounded": pl.Float64})
        return verdicts.join(grounded, on="row", how="left", maintain_order="left").select(
            pl.col("abstained"), pl.col("grounded").cast(pl.Float64), abstention_correct=_ABSTENTION_CORRECT
        )


def _by_slice(cases: pl.DataFrame, work: Callable[[pl.DataFrame], _T]) -> list[_T]:
    """``work`` done on slices of ``cases`` concurrently (Polars releases the GIL), its results in order."""
    threads = pl.thread_pool_size()
    size = _slice_size(cases.height, threads)
    slices = [cases.slice(start, size) for start in range(0, cases.height, size)]
    with ThreadPoolExecutor(max_workers=max(1, min(len(slices), threads))) as pool:
        return list(pool.map(work, slices))


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
