"""Drafting: passages to draft cases from, a chat server responder that drafts distinct texts, and ``Drafts``
made without drafting."""

from __future__ import annotations

import json
import re
from typing import Any

import polars as pl

from rag_compare.io.drafts_file import Drafts
from tests.helpers.chat_server import Reply

PASSAGES = pl.DataFrame(
    {
        "passage_id": ["hotel-1", "meal-1", "mile-1", "old-hotel-1", "old-meal-1"],
        "source_version": ["v2", "v2", "v2", "v1", "v1"],
        "text": [
            "The hotel cap is 150 euros a night, 210 in Paris.",
            "The meal allowance is 45 euros a day.",
            "Mileage is paid at 0.30 euros per kilometre.",
            "The hotel cap is 120 euros a night.",
            "The meal allowance is 40 euros a day.",
        ],
    }
)


def passage_of(request: dict[str, Any]) -> str:
    """The id of the passage a drafting request is about."""
    match = re.search(r'<passage id="([^"]+)">', request["messages"][-1]["content"])
    assert match is not None
    return match.group(1)


def distinct(request: dict[str, Any], attempt: int) -> Reply:
    """A reply whose texts name the passage: every text distinct, as many wordings as the schema asks."""
    passage = passage_of(request)
    count = request["response_format"]["json_schema"]["schema"]["properties"]["wordings"]["minItems"]
    content = {
        "question": f"What does {passage} say?",
        "wordings": [f"Wording {index} of {passage}?" for index in range(count)],
        "acceptance_note": f"The figure of {passage}.",
        "distractor": f"Who wrote {passage}?",
    }
    return Reply(content=json.dumps(content))


def drafts_of(frame: pl.DataFrame, **fields: Any) -> Drafts:
    """``Drafts`` holding ``frame``, as if model ``m`` drafted them from the 2 passages asked for; ``fields``
    (``failures``, ``requested``, ``source_version``...) say otherwise."""
    drafted: dict[str, Any] = {
        "failures": (),
        "requested": 2,
        "available": 2,
        "passages": 2,
        "model": "m",
        "endpoint": "http://127.0.0.1:9/v1",
        "source_version": None,
        "seed": 1,
        "wordings": 1,
    }
    return Drafts(frame=frame, **(drafted | fields))
