"""What a scores, pairs or reviews file says of itself (its evaluator, the runs it judged, when it was made),
read back from its schema metadata and refused, as a whole, unless it has the shape freezing writes: a file forged
with its fingerprint made again to match is refused with a message, never a ``KeyError`` later.

The shapes are JSON Schemas, checked with ``jsonschema``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag_compare.core.errors import RagCompareError
from rag_compare.core.nesting import load_json

if TYPE_CHECKING:
    from rag_compare.io.runs import OpenedRun, Run

__all__ = ["PAIRS_SHAPE", "REVIEWS_SHAPE", "SCORES_SHAPE", "described_run", "read_described"]

_EVALUATOR = {
    "type": "object",
    "required": ["name", "fingerprint", "config"],
    "properties": {"name": {"type": "string"}, "fingerprint": {"type": "string"}, "config": {"type": "object"}},
}
_RUN = {
    "type": "object",
    "required": ["name", "fingerprint", "path"],
    "properties": {
        "fingerprint": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "path": {"type": ["string", "null"]},
    },
}


def _shape(runs: tuple[str, ...]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["evaluator", *runs, "created_at"],
        "properties": {"evaluator": _EVALUATOR, **dict.fromkeys(runs, _RUN), "created_at": {"type": "string"}},
    }


SCORES_SHAPE = _shape(("run",))
"""What a scores file says of itself: its ``evaluator``, the ``run`` it scored, ``created_at``."""
PAIRS_SHAPE = _shape(("baseline", "candidate"))
"""What a pairs file says of itself: its ``evaluator``, the ``baseline`` and ``candidate`` it judged, ``created_at``."""

_HUMAN = {
    "type": "object",
    "required": ["name", "fingerprint", "config"],
    "properties": {
        "name": {"const": "human"},
        "fingerprint": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "config": {
            "type": "object",
            "required": ["reviewers", "labels"],
            "properties": {
                "reviewers": {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": True},
                "labels": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
            },
        },
    },
}
REVIEWS_SHAPE = {
    "type": "object",
    "required": ["evaluator", "baseline", "candidate", "created_at", "database"],
    "properties": {
        "evaluator": _HUMAN,
        "baseline": _RUN,
        "candidate": _RUN,
        "created_at": {"type": "string"},
        "database": {"type": ["string", "null"]},
    },
}
"""What a reviews file says of itself: its ``evaluator`` (``human``, its config the ``reviewers`` and ``labels``),
the ``baseline`` and ``candidate`` reviewed, ``created_at``, and the review ``database`` it was exported from."""


def described_run(run: Run | OpenedRun) -> dict[str, Any]:
    """What a scores, pairs or reviews file records of a run it is about: its name, fingerprint and path."""
    return {"name": run.name, "fingerprint": run.fingerprint, "path": None if run.path is None else str(run.path)}


def read_described(path: Path, text: str, shape: dict[str, Any], error: type[RagCompareError]) -> dict[str, Any]:
    """The description ``text`` of the file at ``path``, refused with ``error`` unless it has ``shape``."""
    import jsonschema

    described = load_json(text, f"{path}: its evaluator", line=None)
    problem = next(iter(sorted(jsonschema.Draft202012Validator(shape).iter_errors(described), key=str)), None)
    if problem is None:
        return dict(described)
    where = "/".join(str(part) for part in problem.absolute_path) or "the description"
    raise error(
        f"{path}: says of itself what freezing never writes ({where}: {problem.message}). It was changed after it "
        "was made: make it again."
    )
