"""Two small runs to judge in pairs, a scripted pairwise judge, and the verdicts worked out by hand.

Every answered answer is fully supported by its context and none abstains, so the offline judge finds
no signal that moved: a case changes status only by the pairwise judge's preference.

| case            | baseline answer / candidate answer           | scripted choices (baseline first, candidate first) | verdict      |
|-----------------|----------------------------------------------|----------------------------------------------------|--------------|
| a_better@v1     | short / adds the part-timers' exception      | second, first                                      | candidate    |
| b_worse@v1      | adds the exception / short                   | first, second                                      | baseline     |
| c_tie@v1        | two wordings                                 | tie, tie                                           | tie          |
| d_first@v1      | two wordings                                 | first, first (position bias)                       | inconsistent |
| e_same@v1       | the same text (the candidate's padded)       | not asked                                          | tie          |
| f_failed@v1     | answered / candidate request failed          | not asked                                          | not_judged   |
| g_missing@v1    | answered / no candidate record               | not asked                                          | not_judged   |
| h_judgefail@v1  | two wordings                                 | second, (request failed)                           | judge_failed |
| i_halftie@v1    | two wordings                                 | tie, first                                         | inconsistent |

Outcomes: candidate 1, baseline 1, tie 2, inconsistent 2, judge_failed 1, not_judged 2 (9 cases).
Position bias: pairs answered in both orders (a, b, c, d, i) 5, of which consistent (a, b, c) 3: 0.6.
Replies choosing an answer: a 2, b 2, d 2, h 1, i 1 = 8, of which "first": a 1, b 1, d 2, i 1 = 5: 0.625.
Win rate 1 / (1 + 1) = 0.5; sign test of 1 win against 1 loss: p = 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

IDS = [
    "a_better@v1",
    "b_worse@v1",
    "c_tie@v1",
    "d_first@v1",
    "e_same@v1",
    "f_failed@v1",
    "g_missing@v1",
    "h_judgefail@v1",
    "i_halftie@v1",
]
_CONTEXT = "[p] Leave is 3 days. Part-timers get 5 days."
_SHORT, _FULL = "Leave is 3 days.", "Leave is 3 days; part-timers get 5 days."
CORPUS = pl.DataFrame(
    {
        "case_id": IDS,
        "question": [f"How long is leave ({case_id[0]})?" for case_id in IDS],
        "answerability": ["answerable"] * len(IDS),
        "source_version": ["v1"] * len(IDS),
        "required_passage_ids": [["p"]] * len(IDS),
        "acceptance_note": ["names the part-timers' exception"] * len(IDS),
    }
)
BASELINE = pl.DataFrame(
    {
        "case_id": IDS,
        "status": ["ok"] * len(IDS),
        "error": [None] * len(IDS),
        "context": [_CONTEXT] * len(IDS),
        "answer": [_SHORT, _FULL, _SHORT, _SHORT, _SHORT, _SHORT, _SHORT, _SHORT, _SHORT],
    }
)
_CANDIDATE_ANSWERS = {
    "a_better@v1": _FULL,
    "b_worse@v1": _SHORT,
    "c_tie@v1": "Leave: 3 days.",
    "d_first@v1": "Leave is 3 days, part-timers 5 days.",
    "e_same@v1": f"  {_SHORT}\n",
    "f_failed@v1": None,
    "h_judgefail@v1": _FULL,
    "i_halftie@v1": _FULL,
}
CANDIDATE = pl.DataFrame(
    {
        "case_id": list(_CANDIDATE_ANSWERS),
        "status": ["failed" if answer is None else "ok" for answer in _CANDIDATE_ANSWERS.values()],
        "error": ["HTTP 500" if answer is None else None for answer in _CANDIDATE_ANSWERS.values()],
        "context": [_CONTEXT] * len(_CANDIDATE_ANSWERS),
        "answer": list(_CANDIDATE_ANSWERS.values()),
    }
)
SCRIPT: dict[str, tuple[str | None, str | None]] = {
    "a_better@v1": ("second", "first"),
    "b_worse@v1": ("first", "second"),
    "c_tie@v1": ("tie", "tie"),
    "d_first@v1": ("first", "first"),
    "h_judgefail@v1": ("second", None),
    "i_halftie@v1": ("tie", "first"),
}
"""Each asked pair's (baseline_first, candidate_first) choice; None: that request failed."""
FAILURE = "HTTP 500 (gave up after 3 attempts)"
EXPECTED_COUNTS = {"candidate": 1, "baseline": 1, "tie": 2, "inconsistent": 2, "judge_failed": 1, "not_judged": 2}


class ScriptedPairJudge:
    """A pairwise judge that answers from ``SCRIPT`` (or ``script``) and records what it was asked."""

    def __init__(self, script: Mapping[str, tuple[str | None, str | None]] = SCRIPT, name: str = "scripted") -> None:
        self.script, self._name = dict(script), name
        self.asked: list[pl.DataFrame] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def fingerprint(self) -> str:
        return f"{self._name}-fingerprint"

    @property
    def config(self) -> Mapping[str, Any]:
        return {"name": self._name, "script": {key: list(value) for key, value in sorted(self.script.items())}}

    def judge_pairs(self, pairs: pl.DataFrame) -> pl.DataFrame:
        self.asked.append(pairs)
        rows = [self.script[case_id] for case_id in pairs.get_column("case_id")]
        columns: dict[str, list[Any]] = {}
        for index, order in enumerate(("baseline_first", "candidate_first")):
            columns[order] = [row[index] for row in rows]
            columns[f"{order}_reason"] = [None if row[index] is None else f"{order} reason" for row in rows]
        failed = [None in row for row in rows]
        return pl.DataFrame(
            {
                **columns,
                "prompt_tokens": [20 * (2 - row.count(None)) for row in rows],
                "completion_tokens": [5 * (2 - row.count(None)) for row in rows],
                "requests": [2] * len(rows),
                "judge_status": ["judge_failed" if fail else "ok" for fail in failed],
                "judge_error": [f"candidate_first: {FAILURE}" if fail else None for fail in failed],
            },
            schema={
                "baseline_first": pl.String,
                "baseline_first_reason": pl.String,
                "candidate_first": pl.String,
                "candidate_first_reason": pl.String,
                "prompt_tokens": pl.Int64,
                "completion_tokens": pl.Int64,
                "requests": pl.Int64,
                "judge_status": pl.String,
                "judge_error": pl.String,
            },
        )


def tagged(request: Mapping[str, Any], tag: str) -> str | None:
    """The text between ``<tag>`` and ``</tag>`` (each on its own line) in a request's user message, or None."""
    user = str(request["messages"][-1]["content"])
    if f"<{tag}>\n" not in user:
        return None
    return user.split(f"<{tag}>\n", 1)[1].split(f"\n</{tag}>", 1)[0]


def shown_answers(request: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The first and second answer of a pairwise judge's chat request."""
    return tagged(request, "first_answer"), tagged(request, "second_answer")


def case_letter(request: Mapping[str, Any]) -> str:
    """The letter of the fixture's case a request asks about, from its question ``How long is leave (a)?``."""
    user = str(request["messages"][-1]["content"])
    return user.split("How long is leave (", 1)[1][0]


def candidate_answer(letter: str) -> str | None:
    """The candidate's answer to the fixture's case with that letter."""
    return next((answer for case_id, answer in _CANDIDATE_ANSWERS.items() if case_id.startswith(letter)), None)
