"""An offline BM25 retriever over a passages file, built on ``bm25s`` with a PyStemmer stemmer.

``BM25Retriever`` indexes the passages once, in its constructor; a call ranks them for a case's
question and gives the best ``top_k``, best first, each with its BM25 score (rounded to 4 decimals),
its text and its other columns as metadata. By default there is one index per source version, so a
case only ever gets passages of its own ``source_version``, and ``top_k`` is the best k of that
version (the statistics, document frequencies and average length, are those of that version too).

Text is lower-cased and split into words of two characters or more (``bm25s.tokenize``), stopwords
are dropped and the rest is stemmed. With the default ``lucene`` method a score is the sum, over the
question's terms (a repeated term counts each time), of ln(1 + (N - df + 0.5) / (df + 0.5)) * tf /
(tf + k1 * (1 - b + b * dl / avgdl)): Lucene's form since Lucene 8, without the textbook's constant
factor (k1 + 1), which changes no ranking. A passage that shares no term with the question (score 0)
is left out, so fewer than ``top_k`` passages can come back. Ties keep the order of the passages
file. A call keeps no shared state (the indexes are only read, each call has its own stemmer), so
several threads may call one retriever at once.

Limits: lexical, not semantic. A paraphrase with no word in common finds nothing ("food" does not
find "meal"); only the ``lucene``, ``robertson`` and ``atire`` variants are offered (``bm25l`` and
``bm25+`` give every passage a score, matched or not); the whole knowledge base is held in memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import polars as pl

from rag_compare.core.errors import ConfigError
from rag_compare.core.protocols import Case, CaseFailure, Passage
from rag_compare.io.config import refuse_credential_paths
from rag_compare.io.passages import load_passages

__all__ = ["BM25_METHODS", "BM25Retriever"]

BM25_METHODS = ("lucene", "robertson", "atire")
"""The ``bm25s`` scoring variants offered: those where a passage matching no query term scores 0."""

_DECIMALS = 4
_ALL_VERSIONS = None
"""The key of the single index when ``by_source_version`` is off."""


@dataclass(frozen=True)
class _Index:
    """One ``bm25s`` index (``None`` when its passages hold no indexable word) and its passages, in file order."""

    bm25: Any
    passage_ids: tuple[str, ...]
    texts: tuple[str, ...]
    metadata: tuple[Mapping[str, Any], ...]


class BM25Retriever:
    """Ranks a passages file for a case's question with BM25 (see the module): ``(case, top_k) -> passages``."""

    def __init__(
        self,
        passages: str | Path | pl.DataFrame,
        *,
        by_source_version: bool = True,
        k1: float = 1.5,
        b: float = 0.75,
        method: str = "lucene",
        stemmer: str | None = "english",
        stopwords: str | None = "en",
    ) -> None:
        refuse_credential_paths({"passages": passages})  # its path is in the run config
        bm25s = _bm25s()
        _check_settings(k1, b, method, stemmer)
        try:
            bm25s.tokenize([], stopwords=stopwords, show_progress=False)
        except ValueError:
            raise ConfigError(
                f"stopwords {stopwords!r} is not a stopword list bm25s knows: use a language name or code "
                f"such as 'en' or 'english', 'english_plus', 'de', 'fr', or None to keep every word."
            ) from None
        frame = load_passages(passages)
        self._k1, self._b, self._method = float(k1), float(b), method
        self._stemmer, self._stopwords, self._by_source_version = stemmer, stopwords, by_source_version
        self._library = f"bm25s {bm25s.__version__}"
        self._source = "<frame>" if isinstance(passages, pl.DataFrame) else str(passages)
        self._count = frame.height
        self._indexes: dict[str | None, _Index]
        if by_source_version:
            groups = frame.partition_by("source_version", maintain_order=True, as_dict=True)
            self._indexes = {str(key[0]): self._index(group) for key, group in groups.items()}
        else:
            self._indexes = {_ALL_VERSIONS: self._index(frame)}

    @property
    def config(self) -> dict[str, Any]:
        """The settings, as plain JSON values for the run config."""
        return {
            "kind": "bm25",
            "library": self._library,
            "method": self._method,
            "k1": self._k1,
            "b": self._b,
            "stemmer": self._stemmer,
            "stopwords": self._stopwords,
            "by_source_version": self._by_source_version,
            "passages": {"path": self._source, "count": self._count},
        }

    def __call__(self, case: Case, top_k: int) -> list[Passage]:
        """The best ``top_k`` passages for ``case.question`` (of its source version), best first.

        Raises ``CaseFailure`` when the case's source version has no passages.
        """
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ConfigError(f"top_k must be a whole number of 1 or more, got {top_k!r}.")
        index = self._indexes.get(case.source_version if self._by_source_version else _ALL_VERSIONS)
        if index is None:
            known = ", ".join(repr(version) for version in self._indexes)
            raise CaseFailure(
                f"The passages file {self._source} has no passages of source version {case.source_version!r} "
                f"(its versions: {known}). Add that version's passages to the passages file, or fix the "
                f"case's source_version."
            )
        tokens = self._tokenize([case.question])
        if index.bm25 is None or not tokens[0]:
            return []
        scores = index.bm25.get_scores(tokens[0])
        order = np.argsort(-scores, kind="stable")[:top_k]
        return [
            Passage(
                passage_id=index.passage_ids[position],
                score=round(float(scores[position]), _DECIMALS),
                text=index.texts[position],
                metadata=index.metadata[position],
            )
            for position in order.tolist()
            if scores[position] > 0
        ]

    def _tokenize(self, texts: list[str]) -> Any:
        """``bm25s`` tokens of ``texts`` as lists of strings, with a stemmer of this call's own."""
        import Stemmer  # type: ignore[import-not-found]

        stemmer = Stemmer.Stemmer(self._stemmer) if self._stemmer is not None else None
        return _bm25s().tokenize(
            texts, stopwords=self._stopwords, stemmer=stemmer, return_ids=False, show_progress=False
        )

    def _index(self, frame: pl.DataFrame) -> _Index:
        """The index of ``frame``'s passages (in its order), their texts and their metadata."""
        texts: list[str] = frame["text"].to_list()
        tokens = self._tokenize(texts)
        bm25 = None
        if any(tokens):
            bm25 = _bm25s().BM25(k1=self._k1, b=self._b, method=self._method)
            bm25.index(tokens, show_progress=False)
        metadata = frame.drop("passage_id", "text").to_dicts()
        return _Index(
            bm25=bm25,
            passage_ids=tuple(frame["passage_id"].to_list()),
            texts=tuple(texts),
            metadata=tuple(MappingProxyType(row) for row in metadata),
        )


def _bm25s() -> Any:
    """The ``bm25s`` module, imported without the warning its ``tqdm`` import prints in notebooks lacking
    ipywidgets (rag-compare never asks it for a progress bar)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import bm25s  # type: ignore[import-untyped]

    return bm25s


def _check_settings(k1: float, b: float, method: str, stemmer: str | None) -> None:
    """Raise ``ConfigError`` for a BM25 setting out of range or unknown."""
    import Stemmer

    if isinstance(k1, bool) or not isinstance(k1, int | float) or not 0 <= k1 < float("inf"):
        raise ConfigError(f"k1 must be a number of 0 or more (1.2 to 2.0 is usual), got {k1!r}.")
    if isinstance(b, bool) or not isinstance(b, int | float) or not 0 <= b <= 1:
        raise ConfigError(f"b must be a number from 0 to 1 (0.75 is usual), got {b!r}.")
    if method not in BM25_METHODS:
        raise ConfigError(f"method must be one of {', '.join(BM25_METHODS)}, got {method!r}.")
    if stemmer is not None and stemmer not in Stemmer.algorithms():
        raise ConfigError(
            f"stemmer {stemmer!r} is not a PyStemmer algorithm: use one of {', '.join(Stemmer.algorithms())}, "
            f"or None to keep words unstemmed."
        )
