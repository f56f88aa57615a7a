"""An offline, deterministic generator that answers with the context's sentences closest to the question.

``ExtractiveGenerator`` splits the context into sentences: a ``[passage id]`` label at the start of a
line is dropped (and ends the sentence before it), and sentences end at ``.``, ``!`` or ``?`` followed
by white space, and at blank lines. A sentence's score is the share of the question's content terms it
holds: words (``words.PYTHON_WORD_PATTERN`` of the case-folded text) without ``words.STOPWORDS`` and words of one
character, stemmed with the Snowball English stemmer (PyStemmer), counted once each. Sentences scoring
at least ``min_overlap`` are candidates; the best ``max_sentences`` (ties: earlier first) make the
answer, in context order, joined by a space. With no candidate, or an empty context, or a question
without a content term, the answer is ``abstention``; ``LexicalJudge`` reads the default one as an
abstention (a text of your own should match an abstention phrasing of a language file too).

The default ``min_overlap`` of 0.4 is set on the shipped example (``corpora/``): with BM25's top 3
passages as context it answers every answerable case (the lowest best score is 0.45) and abstains on
every unanswerable one (the highest is 0.33); 0.5 would abstain on "What is the daily meal allowance
when I travel for work?" given its own passage (2 of its 5 terms: meal, allowance).

It stands in for a model to exercise a pipeline end to end with no network, no key and no cost: it
sends no messages and counts no tokens.

Limits: lexical, not semantic. It copies sentences, never rephrases or combines them; a paraphrase
("food" for "meal") scores nothing; abbreviations such as "e.g." end a sentence; it cannot tell a
rule from its exception, nor notice that two passages disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rag_compare.compute.words import PYTHON_WORD_PATTERN, STOPWORDS
from rag_compare.core.errors import ConfigError
from rag_compare.core.protocols import Case, Context, Generation

__all__ = ["DEFAULT_ABSTENTION", "ExtractiveGenerator"]

DEFAULT_ABSTENTION = "I don't know: the handbook passages provided do not answer this question."

_LABEL = re.compile(r"^[ \t]*\[[^\]\n]+\][ \t]*", re.MULTILINE)
_BREAK = re.compile(r"(?<=[.!?])\s+|\n\s*\n")
_WORD = re.compile(PYTHON_WORD_PATTERN)
_STOPWORDS = frozenset(STOPWORDS)


@dataclass(frozen=True)
class ExtractiveGenerator:
    """Answers with the context's sentences that share most of the question's terms (see the module)."""

    max_sentences: int = 2
    min_overlap: float = 0.4
    abstention: str = DEFAULT_ABSTENTION

    def __post_init__(self) -> None:
        if isinstance(self.max_sentences, bool) or not isinstance(self.max_sentences, int) or self.max_sentences < 1:
            raise ConfigError(f"max_sentences must be a whole number of 1 or more, got {self.max_sentences!r}.")
        if isinstance(self.min_overlap, bool) or not isinstance(self.min_overlap, int | float):
            raise ConfigError(f"min_overlap must be a number above 0 and at most 1, got {self.min_overlap!r}.")
        if not 0 < self.min_overlap <= 1:
            raise ConfigError(f"min_overlap must be above 0 and at most 1, got {self.min_overlap!r}.")
        if not isinstance(self.abstention, str) or not self.abstention.strip():
            raise ConfigError("abstention is empty: give the text to answer when the context does not answer.")

    @property
    def config(self) -> dict[str, Any]:
        """The settings, as plain JSON values for the run config."""
        return {
            "kind": "extractive",
            "model": "extractive",
            "max_sentences": self.max_sentences,
            "min_overlap": float(self.min_overlap),
            "abstention": self.abstention,
        }

    def __call__(self, case: Case, context: Context) -> Generation:
        """The best sentences of ``context`` for ``case.question``, or the abstention."""
        question = _terms(case.question)
        sentences = [" ".join(part.split()) for part in _BREAK.split(_LABEL.sub("\n\n", context.text))]
        scored = [
            (len(question & _terms(sentence)) / len(question), position)
            for position, sentence in enumerate(sentences)
            if question and sentence
        ]
        best = sorted((-score, position) for score, position in scored if score >= self.min_overlap)
        chosen = sorted(position for _, position in best[: self.max_sentences])
        return Generation(answer=" ".join(sentences[position] for position in chosen) if chosen else self.abstention)


def _terms(text: str) -> set[str]:
    """The stemmed content terms of ``text``."""
    import Stemmer  # type: ignore[import-not-found]

    words = [word for word in _WORD.findall(text.casefold()) if len(word) > 1 and word not in _STOPWORDS]
    return set(Stemmer.Stemmer("english").stemWords(words))
