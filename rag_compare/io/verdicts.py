"""A reviewer's verdict on a case: whether its status is right, and human labels for one side's answer.

A verdict comes as a JSON body (the review page, a script); ``NewVerdict.from_body`` reads it whole or refuses
it naming the field. A label left blank is null, never "no". Stored, it becomes a ``Verdict``: with its id,
time, the two runs' fingerprints, the status and signals the reviewer was shown, and the verdict it supersedes.
"""

from __future__ import annotations

import math
import os
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_compare.core.credentials import credential_in, credential_values
from rag_compare.core.errors import ReviewError, show_value

__all__ = [
    "LABELS",
    "MAX_COMMENT_CHARS",
    "MAX_REVIEWER_CHARS",
    "PREFERENCES",
    "VERDICT_SIDES",
    "NewVerdict",
    "Verdict",
    "shown_values",
]

LABELS: Mapping[str, tuple[str, ...]] = {
    "answer_correct": ("yes", "no"),
    "grounded": ("yes", "partly", "no"),
    "abstention_correct": ("yes", "no"),
    "retrieval_ok": ("yes", "no"),
}
"""The human labels of a side's answer and the values each takes (null: not given)."""
PREFERENCES = ("baseline", "tie", "candidate")
"""Which side's answer people prefer, in order from the baseline's to the candidate's."""
VERDICT_SIDES = ("baseline", "candidate")
"""The side of a case a verdict's labels are about."""
MAX_REVIEWER_CHARS = 100
MAX_COMMENT_CHARS = 5000
_FIELDS = ("reviewer", "side", "agree", "status", "labels", "comment")


@dataclass(frozen=True)
class NewVerdict:
    """A verdict as given: by ``reviewer`` on ``case_id``; ``agree`` with the case's status, else the ``status``
    it should have (None when agreeing); ``labels`` of the ``side``'s answer (every label of ``LABELS``, None
    when blank) and a ``comment`` ("" when none)."""

    reviewer: str
    case_id: str
    side: str
    agree: bool
    status: str | None
    labels: Mapping[str, str | None] = field(hash=False)
    comment: str

    @classmethod
    def from_body(cls, case_id: str, body: object, *, statuses: Sequence[str]) -> NewVerdict:
        """The verdict on ``case_id`` that a JSON ``body`` gives, ``status`` one of ``statuses``; raises
        ``ReviewError`` naming the field at fault (a missing or unknown key, a wrong type, an unknown value, a
        credential in a text)."""
        if not isinstance(body, dict):
            raise ReviewError(f"a verdict is a JSON object with {', '.join(_FIELDS)}; got {_kind(body)}.")
        unknown = sorted(str(key) for key in body if key not in _FIELDS)
        if unknown:
            raise ReviewError(f"unknown field {show_value(unknown[0])} in the verdict; it takes {', '.join(_FIELDS)}.")
        agree = body.get("agree")
        if not isinstance(agree, bool):
            raise ReviewError(f"`agree` must be true or false (does the status hold?); got {_kind(agree)}.")
        return cls(
            reviewer=_reviewer(body.get("reviewer")),
            case_id=case_id,
            side=_side(body.get("side")),
            agree=agree,
            status=_status(body.get("status"), agree, statuses),
            labels=_labels(body.get("labels")),
            comment=_comment(body.get("comment")),
        )


@dataclass(frozen=True)
class Verdict(NewVerdict):
    """A stored verdict: a ``NewVerdict`` with its ``id``, ``created_at`` (UTC, ISO 8601), the runs'
    fingerprints, the ``shown_status`` and ``shown_signals`` the reviewer saw, and the id of the verdict on the
    same case, side and runs it ``supersedes`` (None for the first)."""

    id: int
    created_at: str
    baseline_fingerprint: str
    candidate_fingerprint: str
    shown_status: str
    shown_signals: Mapping[str, object] = field(hash=False)
    supersedes: int | None

    def to_dict(self) -> dict[str, Any]:
        """The verdict as the review API gives it (JSON)."""
        return {
            "id": self.id,
            "created_at": self.created_at,
            "reviewer": self.reviewer,
            "case_id": self.case_id,
            "side": self.side,
            "baseline_fingerprint": self.baseline_fingerprint,
            "candidate_fingerprint": self.candidate_fingerprint,
            "shown_status": self.shown_status,
            "shown_signals": dict(self.shown_signals),
            "agree": self.agree,
            "status": self.status,
            "labels": {name: self.labels.get(name) for name in LABELS},
            "comment": self.comment,
            "supersedes": self.supersedes,
        }


def shown_values(signals: Mapping[str, object]) -> dict[str, object]:
    """``signals`` as stored with a verdict: names as text, numbers, booleans, text and null as they are, a
    value that is not a finite number as null, anything else as its text."""
    return {str(name): _shown(value) for name, value in signals.items()}


def _shown(value: object) -> object:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return str(value)


def _kind(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a text", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else f"{names.get(type(value), type(value).__name__)} {show_value(value)}"


def _reviewer(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ReviewError(f"`reviewer` must be a name (a non-empty text); got {_kind(value)}.")
    name = value.strip()
    if len(name) > MAX_REVIEWER_CHARS or any(unicodedata.category(char)[0] in "CZ" and char != " " for char in name):
        raise ReviewError(
            f"`reviewer` must be a name of at most {MAX_REVIEWER_CHARS} characters on one line, without control "
            f"or format characters; got {show_value(name)}."
        )
    _check_text("reviewer", name)
    return name


def _side(value: object) -> str:
    if value not in VERDICT_SIDES:
        raise ReviewError(
            f"`side` must be one of {', '.join(VERDICT_SIDES)} (whose answer is labelled); got {_kind(value)}."
        )
    return str(value)


def _status(value: object, agree: bool, statuses: Sequence[str]) -> str | None:
    if agree:
        if value not in (None, ""):
            raise ReviewError(
                f"`status` must be null (or blank) when `agree` is true (the status holds); got {_kind(value)}."
            )
        return None
    if not isinstance(value, str) or value not in statuses:
        raise ReviewError(
            f"`status` must be the status the case should have when `agree` is false, one of {', '.join(statuses)}; "
            f"got {_kind(value)}."
        )
    return value


def _labels(value: object) -> dict[str, str | None]:
    if value is None:
        return dict.fromkeys(LABELS)
    if not isinstance(value, dict):
        raise ReviewError(f"`labels` must be an object of {', '.join(LABELS)}; got {_kind(value)}.")
    unknown = sorted(str(name) for name in value if name not in LABELS)
    if unknown:
        raise ReviewError(f"unknown label {show_value(unknown[0])} in `labels`; the labels are {', '.join(LABELS)}.")
    labels: dict[str, str | None] = {}
    for name, allowed in LABELS.items():
        given = value.get(name)
        if given is not None and given != "" and given not in allowed:
            raise ReviewError(
                f"`labels.{name}` must be one of {', '.join(allowed)}, or null when not given; got {_kind(given)}."
            )
        labels[name] = str(given) if given else None
    return labels


def _comment(value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ReviewError(f"`comment` must be a text or null; got {_kind(value)}.")
    if len(value) > MAX_COMMENT_CHARS:
        raise ReviewError(f"`comment` must be at most {MAX_COMMENT_CHARS} characters; got {len(value)}.")
    _check_text("comment", value)
    return value


def _check_text(name: str, text: str) -> None:
    """Refuse a text that cannot be stored (a lone surrogate, which is no UTF-8) or that holds a credential."""
    try:
        text.encode()
    except UnicodeEncodeError:
        raise ReviewError(
            f"`{name}` holds a lone surrogate (\\ud800 to \\udfff), which is no text; remove it."
        ) from None
    found = credential_in(text, credential_values(os.environ))
    if found is not None:
        raise ReviewError(f"`{name}` holds {found}, which is never stored in a review database; remove it.")
