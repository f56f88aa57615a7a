"""The LLM judge's checks: what each asks, the JSON its reply must match, and the score it gives.

Every score is a number in [0, 1], higher is better, kept with the judge's explanation. Scores are
evidence from a model, not truth labels.

- ``context_sufficiency`` (question, context): does the context sent hold what the question needs?
  sufficient / partial / insufficient: 1 / 0.5 / 0.
- ``groundedness`` (question, answer, context): the answer's material claims, each supported by the
  context or not, with the span of the context it cited as evidence. Signal ``grounded``: the share
  supported; null for an answer without claims (an abstention is not sent). Every claim is kept
  (``claim_verdicts``).
- ``helpfulness`` (question, answer, label, acceptance note): does the answer help, keeping the note's
  conditions? Declining helps only on an unanswerable case. Rating 1-5: (rating - 1) / 4.
- ``query_ease`` (question): how easy is the question to answer well? Rating 1-5: (rating - 1) / 4.
- ``correctness`` (question, answer, acceptance note as the reference): correct / partially_correct /
  incorrect: 1 / 0.5 / 0.
- ``response`` (question, answer; no context, for pipelines that cannot export it): is the answer
  responsive and trustworthy? Rating 1-5: (rating - 1) / 4.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_compare.core.digest import bytes_digest
from rag_compare.core.templates import template_environment

__all__ = ["CHECKS", "DEFAULT_CHECKS", "PROMPT_VERSION", "Check", "claim_verdicts", "prompt_digest", "render_messages"]

PROMPT_VERSION = "v2"
_PROMPTS = Path(__file__).parent / "prompts" / PROMPT_VERSION
_RATINGS = [1, 2, 3, 4, 5]


def _object(**properties: Mapping[str, Any]) -> dict[str, Any]:
    """A strict JSON schema object: every property required, nothing else allowed."""
    return {
        "type": "object",
        "properties": {"explanation": {"type": "string"}, **properties},
        "required": ["explanation", *properties],
        "additionalProperties": False,
    }


def _levels(*names: str) -> Callable[[Mapping[str, Any]], float | None]:
    """A score from a verdict among ``names`` (best first), spread evenly over [0, 1]."""
    steps = len(names) - 1
    return lambda reply: (steps - names.index(reply["verdict"])) / steps


def _rating(reply: Mapping[str, Any]) -> float | None:
    return (int(reply["rating"]) - 1) / 4


def _supported_share(reply: Mapping[str, Any]) -> float | None:
    verdicts = [claim["verdict"] for claim in reply["claims"]]
    return verdicts.count("supported") / len(verdicts) if verdicts else None


def claim_verdicts(reply: Mapping[str, Any], context: str) -> list[dict[str, Any]]:
    """A groundedness reply's claims as ``claims.CLAIM_TYPE`` values: each claim's text, whether it is
    supported, what it cited, and where that citation starts and ends in ``context`` (its first place,
    null when the context does not hold it as written)."""
    verdicts = []
    for claim in reply["claims"]:
        cited = claim["evidence"] or None
        start = context.find(cited) if cited else -1
        verdicts.append(
            {
                "text": claim["claim"],
                "supported": claim["verdict"] == "supported",
                "passage_id": None,
                "start": start if start >= 0 else None,
                "end": start + len(cited) if cited and start >= 0 else None,
                "cited": cited,
            }
        )
    return verdicts


@dataclass(frozen=True)
class Check:
    """One LLM check: its prompt template, reply schema, the inputs it needs and its score."""

    name: str
    signal: str
    needs: tuple[str, ...]
    """Inputs that must be present (not blank) for the check to run; else its score is null."""
    schema: Mapping[str, Any]
    score: Callable[[Mapping[str, Any]], float | None]
    skip_abstentions: bool = False
    """An abstention makes no claim to judge: no request, a null score."""

    @property
    def response_format(self) -> dict[str, Any]:
        return {"type": "json_schema", "json_schema": {"name": self.name, "schema": self.schema, "strict": True}}


def _verdict_check(name: str, needs: tuple[str, ...], *levels: str) -> Check:
    """A check whose reply is one ``verdict`` among ``levels`` (best first)."""
    return Check(name, name, needs, _object(verdict={"type": "string", "enum": list(levels)}), _levels(*levels))


_RATING = {"rating": {"type": "integer", "enum": _RATINGS}}
CHECKS: dict[str, Check] = {
    check.name: check
    for check in (
        _verdict_check("context_sufficiency", ("question", "context"), "sufficient", "partial", "insufficient"),
        Check(
            "groundedness",
            "grounded",
            ("question", "answer", "context"),
            _object(
                claims={
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "claim": {"type": "string"},
                            "verdict": {"type": "string", "enum": ["supported", "unsupported"]},
                            "evidence": {"type": "string"},
                        },
                        "required": ["claim", "verdict", "evidence"],
                        "additionalProperties": False,
                    },
                }
            ),
            _supported_share,
            skip_abstentions=True,
        ),
        Check("helpfulness", "helpfulness", ("question",), _object(**_RATING), _rating),
        Check("query_ease", "query_ease", ("question",), _object(**_RATING), _rating),
        _verdict_check("correctness", ("question", "acceptance_note"), "correct", "partially_correct", "incorrect"),
        Check("response", "response", ("question",), _object(**_RATING), _rating),
    )
}
"""Every check, by name."""
DEFAULT_CHECKS = ("context_sufficiency", "groundedness", "helpfulness")


@functools.cache
def _environment() -> Any:
    return template_environment(_PROMPTS)


def render_messages(check: Check, inputs: Mapping[str, Any]) -> list[dict[str, str]]:
    """The chat messages of ``check`` for one case (``inputs``: question, answer, context,
    acceptance_note, answerability)."""
    environment = _environment()
    return [
        {"role": "system", "content": environment.get_template("system.j2").render().strip()},
        {"role": "user", "content": environment.get_template(f"{check.name}.j2").render(**inputs).strip()},
    ]


@functools.cache
def prompt_digest(folder: Path = _PROMPTS) -> str:
    """SHA-256 over every prompt template in ``folder`` (default: the checks' of ``PROMPT_VERSION``), by
    name and bytes."""
    files = sorted(folder.glob("*.j2"))
    return bytes_digest(*(path.name.encode() + b"\0" + path.read_bytes() + b"\0" for path in files))
