"""Passage texts without ids (a Ragas sample's ``retrieved_contexts``) mapped to the knowledge base's ids.

A text is the passage whose text it is, by the first rule that finds exactly one passage:

1. **exact**: equal after whitespace folding (runs of spaces, tabs and newlines are one space; ends trimmed);
2. **same words**: equal after NFKC normalisation, case folding and dropping everything but letters and
   digits (quotes, punctuation, Markdown marks and spacing do not matter);
3. **chunk**: the text, folded as in 2 and at least ``MIN_CHUNK_CHARS`` long, lies inside exactly one
   passage (a chunker split the passage), or exactly one passage lies inside it (the text is a passage
   with a label or a heading around it).

Where a rule finds several passages, the one of the case's ``source_version`` is taken if it is the only
one; otherwise the text stays unmatched. An unmatched text never gets an id: it is left out of the ranked
ids and its rank is recorded.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import polars as pl

__all__ = ["MIN_CHUNK_CHARS", "PassageIndex", "fold_whitespace"]

MIN_CHUNK_CHARS = 20
"""The shortest folded text the chunk rule matches inside a passage: shorter ones are too common."""
_NOT_WORD = re.compile(r"[^\w]|_")


def fold_whitespace(text: str) -> str:
    """``text`` with every run of whitespace made one space and its ends trimmed."""
    return " ".join(text.split())


def _fold_words(text: str) -> str:
    return _NOT_WORD.sub("", unicodedata.normalize("NFKC", text).casefold())


@dataclass(frozen=True)
class PassageIndex:
    """The passages of a knowledge base, indexed for matching texts to their ids."""

    frame: pl.DataFrame
    """The passages' ``passage_id`` and ``text``, for looking texts up by id with a join."""
    ids: tuple[str, ...]
    versions: tuple[str, ...]
    exact: Mapping[str, tuple[int, ...]]
    words: Mapping[str, tuple[int, ...]]
    folded: tuple[str, ...]

    @classmethod
    def of(cls, passages: pl.DataFrame) -> PassageIndex:
        """The index of a passages frame (``passage_id``, ``source_version``, ``text``)."""
        ids, versions, texts = (
            tuple(passages.get_column(name).to_list()) for name in ("passage_id", "source_version", "text")
        )
        folded = tuple(_fold_words(text) for text in texts)
        exact = _positions(map(fold_whitespace, texts))
        return cls(passages.select("passage_id", "text"), ids, versions, exact, _positions(folded), folded)

    def match(self, text: str, source_version: str | None) -> str | None:
        """The id of the one passage ``text`` is (see the module's rules), or None."""
        words = _fold_words(text)
        for found in (self.exact.get(fold_whitespace(text), ()), self.words.get(words, ()), self._chunk(words)):
            chosen = self._one(found, source_version)
            if chosen is not None:
                return chosen
        return None

    def _chunk(self, words: str) -> tuple[int, ...]:
        if len(words) < MIN_CHUNK_CHARS:
            return ()
        return tuple(
            position
            for position, passage in enumerate(self.folded)
            if words in passage or (len(passage) >= MIN_CHUNK_CHARS and passage in words)
        )

    def _one(self, found: tuple[int, ...], source_version: str | None) -> str | None:
        if len(found) == 1:
            return self.ids[found[0]]
        same_version = [position for position in found if self.versions[position] == source_version]
        return self.ids[same_version[0]] if len(same_version) == 1 else None


def _positions(keys: Iterable[str]) -> dict[str, tuple[int, ...]]:
    positions: dict[str, tuple[int, ...]] = {}
    for position, key in enumerate(keys):
        positions[key] = (*positions.get(key, ()), position)
    return positions
