"""The parts of a pipeline that ``capture`` runs, as small protocols over plain data.

A pipeline is three callables, each sync or async, so wrapping an existing one takes a few lines:

- a **retriever** ``(case, top_k)`` gives the passages found, best first: ``Passage`` objects, or
  mappings with ``passage_id`` and optionally ``score``, ``text`` and any metadata, or bare ids;
- a **context builder** ``(case, passages)`` gives the ``Context`` sent to the model (its text and
  the ids of the passages that made it in), or just the text;
- a **generator** ``(case, context)`` gives the ``Generation`` (answer, tokens, the messages sent), a
  mapping with those keys, or just the answer text.

A ``Case`` carries what a pipeline may see of a corpus case: its id, question, source version, user
metadata and the sample number ``repeat`` (0, 1, ... when each case is captured several times, so a
part may seed or vary per sample), never the labels (answerability, required passages, acceptance
note). A part may have a ``config`` property (a mapping of plain values); capture records it in the
run's config. A part raises ``CaseFailure`` to fail a case at once; any other exception is retried.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeGuard, runtime_checkable

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "K_EXPECTED",
    "MAX_K",
    "Case",
    "CaseFailure",
    "ClaimJudge",
    "Context",
    "ContextBuilder",
    "Evaluator",
    "Generation",
    "Generator",
    "Judge",
    "PairJudge",
    "Passage",
    "Retriever",
    "RunSignals",
    "callable_name",
    "is_k",
]

MAX_K = 1_000_000
"""The largest ``top_k`` a retriever is asked for and ``k`` a comparison cuts ranked lists at: far beyond
any list worth reading, well within what the frame engine can index."""
K_EXPECTED = f"a whole number from 1 to {MAX_K:,}"


def is_k(value: object) -> TypeGuard[int]:
    """Whether ``value`` is a usable ``top_k`` or ``k``: ``K_EXPECTED``."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_K


@dataclass(frozen=True)
class Case:
    """What a pipeline sees of one corpus case: no labels. ``repeat`` is the sample number (0 unless a
    capture takes each case several times); a part may use it to seed or vary each sample."""

    case_id: str
    question: str
    source_version: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    repeat: int = 0


@dataclass(frozen=True)
class Passage:
    """A passage a retriever found: its id, score, text and any metadata (section, url, ...)."""

    passage_id: str
    score: float | None = None
    text: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Context:
    """The context exactly as sent to the model, and the passages that made it in (in order; ``None``
    when the builder cannot tell)."""

    text: str
    passage_ids: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Generation:
    """An answer, with its token counts and the exact messages sent, when the generator knows them."""

    answer: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    messages: Sequence[Mapping[str, str]] | None = None


class CaseFailure(Exception):
    """Raised by a pipeline part to fail the current case at once, without retries."""


RetrievedItem: TypeAlias = Passage | Mapping[str, Any] | str


class Retriever(Protocol):
    """``(case, top_k) -> passages``, best first (sync or async)."""

    def __call__(self, case: Case, top_k: int) -> Sequence[RetrievedItem] | Awaitable[Sequence[RetrievedItem]]: ...


class ContextBuilder(Protocol):
    """``(case, passages) -> Context`` or the context text (sync or async)."""

    def __call__(self, case: Case, passages: Sequence[Passage]) -> Context | str | Awaitable[Context | str]: ...


class Generator(Protocol):
    """``(case, context) -> Generation``, a mapping of its fields, or the answer text (sync or async)."""

    def __call__(
        self, case: Case, context: Context
    ) -> Generation | Mapping[str, Any] | str | Awaitable[Generation | Mapping[str, Any] | str]: ...


def callable_name(function: object) -> str:
    """``module.qualname`` naming a callable in a run config: a function's own, else its class's."""
    named = function if hasattr(function, "__qualname__") else type(function)
    return f"{getattr(named, '__module__', '?')}.{getattr(named, '__qualname__', '?')}"


class Evaluator(Protocol):
    """What every evaluator is: a name, and the settings and fingerprint behind its verdicts."""

    @property
    def name(self) -> str: ...

    @property
    def fingerprint(self) -> str:
        """A hash of everything that decides the verdicts: equal fingerprints, comparable verdicts."""
        ...

    @property
    def config(self) -> Mapping[str, Any]:
        """The settings behind the fingerprint, as plain JSON-ready data (no credentials)."""
        ...


class Judge(Evaluator, Protocol):
    """What a comparison and ``score_run`` need from an evaluator (``LexicalJudge``, ``OpenAIJudge``)."""

    def judge(self, cases: pl.DataFrame) -> pl.DataFrame:
        """Verdicts for each row of ``cases`` (run records), in order: ``abstained``, ``grounded``,
        ``abstention_correct`` and any other signal it decides; ``judge_status``/``judge_error`` when
        judging a case can fail."""
        ...


@runtime_checkable
class ClaimJudge(Judge, Protocol):
    """A judge that also gives its verdict on each claim of an answer (``LexicalJudge``)."""

    def claims(self, cases: pl.DataFrame) -> pl.Series:
        """For each row of ``cases`` (as ``judge`` reads them), in order, its claim verdicts: a list of
        ``contract.CLAIM_TYPE``, empty for an answer without claims or an abstention, null where the case is not
        judged."""
        ...


class RunSignals(Protocol):
    """What freezing needs to store each record's signals with a run (``compute.stored_signals``)."""

    def settings(self, top_k: int | None) -> dict[str, Any]:
        """What decides the signals of a run frozen with ``top_k`` (plain values, for its config)."""
        ...

    def columns(self, records: pl.DataFrame, top_k: int | None) -> list[pl.Series]:
        """Per row of ``records`` (run records joined with their labels): one struct of its signals, and its
        claim verdicts (``contract.STORED_SIGNALS``, ``contract.STORED_CLAIMS``)."""
        ...


class PairJudge(Evaluator, Protocol):
    """What ``judge_pairs`` needs from a pairwise judge (``PairwiseJudge``): which of two answers is better."""

    def judge_pairs(self, pairs: pl.DataFrame) -> pl.DataFrame:
        """For each row of ``pairs`` (``case_id``, ``question``, ``answerability``, ``acceptance_note`` and
        each side's ``<side>_answer`` and ``<side>_context``), in order, the choice (``first``, ``second``
        or ``tie``) and reason of the judge when shown the baseline's answer first (``baseline_first``,
        ``baseline_first_reason``) and the candidate's first (``candidate_first``,
        ``candidate_first_reason``); ``prompt_tokens``, ``completion_tokens``, ``requests``;
        ``judge_status`` (``ok`` or ``judge_failed``) and ``judge_error``."""
        ...
