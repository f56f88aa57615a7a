"""Verdicts read from a request body: every field checked and named when wrong, a blank label null, no credential."""

from __future__ import annotations

from typing import Any

import pytest

from rag_compare.core.errors import ReviewError
from rag_compare.io.verdicts import LABELS, MAX_COMMENT_CHARS, NewVerdict, Verdict, shown_values
from tests.helpers.credential_shapes import KEY_SHAPES, ORDINARY_TEXTS

STATUSES = ("regressed", "improved", "unchanged")


def body(**changes: Any) -> dict[str, Any]:
    given: dict[str, Any] = {
        "reviewer": "ana",
        "side": "candidate",
        "agree": False,
        "status": "unchanged",
        "labels": {"answer_correct": "yes", "grounded": "partly", "abstention_correct": None, "retrieval_ok": "no"},
        "comment": "the new limit is right",
    }
    given.update(changes)
    return {key: value for key, value in given.items() if value is not ...}


def read(given: object) -> NewVerdict:
    return NewVerdict.from_body("q1@v1", given, statuses=STATUSES)


def test_a_verdict_is_read_whole() -> None:
    verdict = read(body())
    assert verdict == NewVerdict(
        reviewer="ana",
        case_id="q1@v1",
        side="candidate",
        agree=False,
        status="unchanged",
        labels={"answer_correct": "yes", "grounded": "partly", "abstention_correct": None, "retrieval_ok": "no"},
        comment="the new limit is right",
    )


def test_a_blank_or_missing_label_is_null_never_no() -> None:
    verdict = read(body(agree=True, status=None, labels={"grounded": "", "answer_correct": None}, comment=...))
    assert verdict.labels == dict.fromkeys(LABELS)
    assert verdict.status is None
    assert verdict.comment == ""
    assert read(body(labels=...)).labels == dict.fromkeys(LABELS)
    assert read(body(agree=True, status="")).status is None


def test_the_reviewer_name_is_trimmed() -> None:
    assert read(body(reviewer="  ana maría ")).reviewer == "ana maría"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ([], "a verdict is a JSON object with reviewer, side, agree, status, labels, comment; got a list []"),
        ("agree", "a verdict is a JSON object"),
        (None, "a verdict is a JSON object with reviewer, side, agree, status, labels, comment; got null"),
        (body(score=1), "unknown field 'score' in the verdict"),
        (body(agree="yes"), "`agree` must be true or false (does the status hold?); got a text 'yes'"),
        (body(agree=1), "`agree` must be true or false"),
        (body(agree=...), "`agree` must be true or false (does the status hold?); got null"),
        (body(reviewer=""), "`reviewer` must be a name (a non-empty text); got a text ''"),
        (body(reviewer="   "), "`reviewer` must be a name"),
        (body(reviewer=7), "`reviewer` must be a name (a non-empty text); got a number 7"),
        (body(reviewer=...), "`reviewer` must be a name (a non-empty text); got null"),
        (body(reviewer="a" * 101), "`reviewer` must be a name of at most 100 characters"),
        (body(reviewer="ana\nbob"), "on one line, without control or format characters"),
        (body(reviewer="ana\u202ebob"), "on one line, without control or format characters"),
        (body(side="both"), "`side` must be one of baseline, candidate (whose answer is labelled); got a text 'both'"),
        (body(side=...), "`side` must be one of baseline, candidate"),
        (body(side=["candidate"]), "`side` must be one of baseline, candidate"),
        (body(status=None), "`status` must be the status the case should have when `agree` is false, one of "),
        (body(status="fine"), "one of regressed, improved, unchanged; got a text 'fine'"),
        (
            body(agree=True),
            "`status` must be null (or blank) when `agree` is true (the status holds); got a text 'unchanged'",
        ),
        (body(labels=["yes"]), "`labels` must be an object of answer_correct, grounded, abstention_correct"),
        (body(labels={"helpful": "yes"}), "unknown label 'helpful' in `labels`; the labels are answer_correct,"),
        (body(labels={"grounded": "maybe"}), "`labels.grounded` must be one of yes, partly, no, or null when not"),
        (body(labels={"answer_correct": "partly"}), "`labels.answer_correct` must be one of yes, no, or null"),
        (
            body(labels={"answer_correct": True}),
            "`labels.answer_correct` must be one of yes, no, or null when not given; got a boolean True",
        ),
        (body(labels={"retrieval_ok": False}), "`labels.retrieval_ok` must be one of yes, no"),
        (body(labels={"retrieval_ok": 0}), "`labels.retrieval_ok` must be one of yes, no"),
        (body(comment=5), "`comment` must be a text or null; got a number 5"),
        (
            body(comment="half \ud83d of an emoji"),
            "`comment` holds a lone surrogate (\\ud800 to \\udfff), which is no text",
        ),
        (body(reviewer="ana\udc00"), "`reviewer` must be a name of at most 100 characters on one line"),
        (body(comment="x" * (MAX_COMMENT_CHARS + 1)), f"`comment` must be at most {MAX_COMMENT_CHARS} characters"),
    ],
)
def test_a_malformed_verdict_is_refused_naming_the_field(given: object, message: str) -> None:
    with pytest.raises(ReviewError) as raised:
        read(given)
    assert message in str(raised.value)


def test_a_long_comment_up_to_the_limit_is_kept() -> None:
    assert len(read(body(comment="é" * MAX_COMMENT_CHARS)).comment) == MAX_COMMENT_CHARS


@pytest.mark.parametrize("key", sorted(KEY_SHAPES))
@pytest.mark.parametrize("field", ["comment", "reviewer"])
def test_a_credential_in_a_text_is_refused_and_not_echoed(field: str, key: str) -> None:
    with pytest.raises(ReviewError, match=f"`{field}` holds a credential") as raised:
        read(body(**{field: f"see {KEY_SHAPES[key]} here"[:100]}))
    assert KEY_SHAPES[key] not in str(raised.value)


def test_the_value_of_a_credential_variable_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACME_API_KEY", "plainwordsecretvalue")
    with pytest.raises(ReviewError, match="`comment` holds the value of ACME_API_KEY"):
        read(body(comment="the key was plainwordsecretvalue"))


@pytest.mark.parametrize("text", ORDINARY_TEXTS)
def test_ordinary_texts_are_comments(text: str) -> None:
    assert read(body(comment=text)).comment == text


def test_a_stored_verdict_is_json_with_every_label() -> None:
    given = read(body(labels={"grounded": "no"}))
    stored = Verdict(
        **vars(given),
        id=3,
        created_at="2026-12-04T18:00:00+00:00",
        baseline_fingerprint="b" * 64,
        candidate_fingerprint="c" * 64,
        shown_status="regressed",
        shown_signals={"candidate_recall": 0.5},
        supersedes=None,
    )
    assert stored.to_dict() == {
        "id": 3,
        "created_at": "2026-12-04T18:00:00+00:00",
        "reviewer": "ana",
        "case_id": "q1@v1",
        "side": "candidate",
        "baseline_fingerprint": "b" * 64,
        "candidate_fingerprint": "c" * 64,
        "shown_status": "regressed",
        "shown_signals": {"candidate_recall": 0.5},
        "agree": False,
        "status": "unchanged",
        "labels": {"answer_correct": None, "grounded": "no", "abstention_correct": None, "retrieval_ok": None},
        "comment": "the new limit is right",
        "supersedes": None,
    }


def test_shown_signals_are_json_values() -> None:
    shown = shown_values({"a": float("nan"), "b": float("inf"), "c": 1, "d": True, "e": None, "f": "x", "g": (1, 2)})
    assert shown == {"a": None, "b": None, "c": 1, "d": True, "e": None, "f": "x", "g": "(1, 2)"}
