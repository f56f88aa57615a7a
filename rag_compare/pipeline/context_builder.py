"""A context builder that packs whole passages, in rank order, into a character and/or token budget.

``BudgetContextBuilder`` formats each passage with ``template`` (``str.format`` with ``passage_id``,
``text``, ``score`` and the passage's metadata keys) and joins the blocks with ``separator``. It adds
passages best first and stops at the first one that would take the context over a budget: passages are
never cut, and a lower-ranked passage that would still fit is not added after one that did not. Budgets
are measured on the whole context, separators included; with both budgets, both must hold; with neither,
every passage goes in. ``Context.passage_ids`` names exactly the passages that made it in.

Tokens are counted by ``count_tokens``; the default counts runs of word characters and single
punctuation marks (``\\w+|[^\\w\\s]``), only an approximation of a model's tokenizer. For an exact
budget pass the model's own, e.g. ``count_tokens=lambda text: len(encoding.encode(text))``.

Limits: a first passage too long for the budget leaves the context empty; the context is counted
again for each passage added, so a slow tokenizer is called once per passage per case.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any

from rag_compare.core.errors import ConfigError
from rag_compare.core.protocols import Case, CaseFailure, Context, Passage, callable_name

__all__ = ["BudgetContextBuilder", "count_words_and_punctuation"]

_DEFAULT_TOKENIZER = "words-and-punctuation"

_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_words_and_punctuation(text: str) -> int:
    """An approximate token count: runs of word characters and single punctuation marks."""
    return len(_TOKEN.findall(text))


@dataclass(frozen=True)
class BudgetContextBuilder:
    """Whole passages, best first, up to the budgets (see the module): ``(case, passages) -> Context``."""

    budget_chars: int | None = None
    budget_tokens: int | None = None
    _: KW_ONLY
    template: str = "[{passage_id}] {text}"
    separator: str = "\n\n"
    count_tokens: Callable[[str], int] | None = None

    def __post_init__(self) -> None:
        for name in ("budget_chars", "budget_tokens"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"{name} must be a whole number of 1 or more, or None for no budget; got {value!r}.")
        try:
            fields = [field for _, field, _, _ in string.Formatter().parse(self.template) if field is not None]
        except ValueError as error:
            raise ConfigError(f"template {self.template!r} is not a valid format string: {error}.") from None
        if any(not field or field[0].isdigit() for field in fields):
            raise ConfigError(
                f"template {self.template!r} has a positional field ('{{}}' or '{{0}}'): name each field, "
                f"e.g. '[{{passage_id}}] {{text}}'."
            )

    @property
    def config(self) -> dict[str, Any]:
        """The settings, as plain JSON values for the run config."""
        return {
            "kind": "budget",
            "budget_chars": self.budget_chars,
            "budget_tokens": self.budget_tokens,
            "tokenizer": _DEFAULT_TOKENIZER if self.count_tokens is None else callable_name(self.count_tokens),
            "template": self.template,
            "separator": self.separator,
        }

    def __call__(self, case: Case, passages: Sequence[Passage]) -> Context:
        """The context of the passages that fit, in rank order.

        Raises ``CaseFailure`` for a passage without text or one the template names a missing field of.
        """
        text = ""
        ids: list[str] = []
        for passage in passages:
            candidate = self._block(passage) if not ids else text + self.separator + self._block(passage)
            if not self._fits(candidate):
                break
            text = candidate
            ids.append(passage.passage_id)
        return Context(text=text, passage_ids=tuple(ids))

    def _block(self, passage: Passage) -> str:
        """``passage`` formatted with the template."""
        if not passage.text.strip():
            raise CaseFailure(
                f"Passage {passage.passage_id!r} has no text: the context needs each passage's text, so the "
                f"retriever must return it (a Passage with text, or a mapping with a 'text' key)."
            )
        fields = {**passage.metadata, "passage_id": passage.passage_id, "text": passage.text, "score": passage.score}
        try:
            return self.template.format(**fields)
        except (KeyError, AttributeError, IndexError, TypeError, ValueError) as error:
            raise CaseFailure(
                f"The context template {self.template!r} cannot format passage {passage.passage_id!r} ({error!r}); "
                f"its fields are {', '.join(sorted(fields))}. Name only these in the template."
            ) from None

    def _fits(self, text: str) -> bool:
        """Whether ``text`` holds within both budgets."""
        if self.budget_chars is not None and len(text) > self.budget_chars:
            return False
        count = self.count_tokens or count_words_and_punctuation
        return self.budget_tokens is None or count(text) <= self.budget_tokens
