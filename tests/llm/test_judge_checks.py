"""The LLM checks: prompts rendered from the package's templates, strict schemas, documented scales."""

from __future__ import annotations

import jsonschema
import pytest

from rag_compare.llm.judge_checks import CHECKS, DEFAULT_CHECKS, Check, claim_verdicts, prompt_digest, render_messages

CASE = {
    "question": "What is the hotel cap in Paris?",
    "answer": "210 euros a night.",
    "context": "[hotel-1] The cap is 150 euros. [hotel-exc-1] In Paris it is 210 euros.",
    "acceptance_note": "210 in Paris, 150 elsewhere",
    "answerability": "answerable",
}
# (check, a reply, its score): the scales the README documents.
SCALES = [
    ("context_sufficiency", {"explanation": "e", "verdict": "partial"}, 0.5),
    ("context_sufficiency", {"explanation": "e", "verdict": "insufficient"}, 0.0),
    ("groundedness", {"explanation": "e", "claims": [{"claim": "a", "verdict": "supported", "evidence": "a"}] * 3
                      + [{"claim": "b", "verdict": "unsupported", "evidence": ""}]}, 0.75),
    ("groundedness", {"explanation": "e", "claims": []}, None),
    ("helpfulness", {"explanation": "e", "rating": 5}, 1.0),
    ("query_ease", {"explanation": "e", "rating": 2}, 0.25),
    ("correctness", {"explanation": "e", "verdict": "partially_correct"}, 0.5),
    ("response", {"explanation": "e", "rating": 1}, 0.0),
]  # fmt: skip


@pytest.mark.parametrize(("name", "reply", "score"), SCALES)
def test_scores_follow_the_documented_scales(name: str, reply: dict[str, object], score: float | None) -> None:
    check = CHECKS[name]
    jsonschema.validate(reply, check.schema)
    assert check.score(reply) == score


@pytest.mark.parametrize("check", CHECKS.values(), ids=list(CHECKS))
def test_schemas_are_strict_and_ask_for_an_explanation(check: Check) -> None:
    jsonschema.Draft202012Validator.check_schema(check.schema)
    assert check.schema["additionalProperties"] is False
    assert set(check.schema["required"]) == set(check.schema["properties"])
    assert "explanation" in check.schema["required"]
    assert check.response_format["type"] == "json_schema"
    assert check.response_format["json_schema"]["strict"] is True
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"explanation": "e", "extra": 1}, check.schema)


@pytest.mark.parametrize("check", CHECKS.values(), ids=list(CHECKS))
def test_prompts_hold_the_inputs_the_check_needs(check: Check) -> None:
    system, user = render_messages(check, CASE)
    assert system["role"] == "system"
    assert "JSON" in system["content"]
    for need in check.needs:
        assert str(CASE[need]) in user["content"], need
    if "context" not in check.needs:
        assert CASE["context"] not in user["content"]  # context-free checks never see it


def test_helpfulness_tells_when_declining_is_right() -> None:
    answerable = render_messages(CHECKS["helpfulness"], CASE)[1]["content"]
    unanswerable = render_messages(CHECKS["helpfulness"], CASE | {"answerability": "unanswerable"})[1]["content"]
    assert "declines" in answerable
    assert "declines to guess" in " ".join(unanswerable.split())
    assert answerable != unanswerable


def test_defaults_and_digest() -> None:
    assert DEFAULT_CHECKS == ("context_sufficiency", "groundedness", "helpfulness")
    assert set(DEFAULT_CHECKS) <= set(CHECKS)
    assert len(prompt_digest()) == 64
    assert CHECKS["groundedness"].signal == "grounded"


def test_each_claim_keeps_what_it_cited_and_where_the_context_holds_it() -> None:
    # CASE's context: "[hotel-1] The cap is 150 euros. [hotel-exc-1] In Paris it is 210 euros."
    reply = {
        "explanation": "e",
        "claims": [
            {"claim": "Paris: 210 euros.", "verdict": "supported", "evidence": "In Paris it is 210 euros."},
            {"claim": "Rome: 300 euros.", "verdict": "unsupported", "evidence": ""},
            {"claim": "The cap is 150.", "verdict": "supported", "evidence": "the cap is 150"},  # not as written
        ],
    }
    claims = claim_verdicts(reply, str(CASE["context"]))
    assert [(claim["text"], claim["supported"], claim["start"], claim["end"], claim["cited"]) for claim in claims] == [
        ("Paris: 210 euros.", True, 46, 71, "In Paris it is 210 euros."),
        ("Rome: 300 euros.", False, None, None, None),
        ("The cap is 150.", True, None, None, "the cap is 150"),
    ]
    assert str(CASE["context"])[46:71] == "In Paris it is 210 euros."
