"""Corpus audit: the examples, and each kind of change on a hand-made pair of corpora."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rag_compare.compute.audit import audit_corpora
from tests.helpers.data import EXAMPLE_CORPUS, EXAMPLE_OLD_CORPUS

Write = Callable[[str, str | bytes], Path]
HEADER = "case_id,question,answerability,source_version,required_passage_ids,origin\n"
OLD = HEADER + (
    "meal@v1,Meal allowance?,answerable,v1,meal-1,manual\n"
    "hotel@v1,Hotel cap?,answerable,v1,hotel-1;hotel-2,manual\n"
    "ceo@v1,CEO salary?,unanswerable,v1,,manual\n"
)


def test_examples_add_cases_and_versions_without_violations() -> None:
    audit = audit_corpora(EXAMPLE_OLD_CORPUS, EXAMPLE_CORPUS)
    assert audit.violations == 0
    assert audit.added.height == 36 - 13
    assert audit.removed.height == 0
    assert audit.relabeled.height == 0
    assert audit.new_versions.height == 12
    assert "meal-allowance-daily" in audit.new_versions["question_key"].to_list()
    assert audit.unreviewed["case_id"].to_list() == ["meal-allowance-per-day-alt@2026-01"]
    kinds = dict(zip(audit.added["case_id"], audit.added["kind"], strict=True))
    assert kinds["meal-allowance-daily@2026-01"] == "new version"
    assert kinds["ceo-salary@2026-01"] == "new question"


def test_new_version_and_new_synthetic_case(write: Write) -> None:
    new = (
        OLD
        + "meal@v2,Meal allowance?,answerable,v2,meal-2,manual\nmeal-alt@v2,Food per day?,answerable,v2,meal-2,synthetic\n"
    )
    audit = audit_corpora(write("old.csv", OLD), write("new.csv", new))
    assert audit.violations == 0
    assert audit.new_versions.rows() == [("meal", "meal@v1", "v1", "meal@v2", "v2")]
    assert audit.added.select("case_id", "kind").rows() == [("meal-alt@v2", "new question"), ("meal@v2", "new version")]
    assert audit.unreviewed["case_id"].to_list() == ["meal-alt@v2"]


def test_removed_and_relabeled_cases_are_violations(write: Write) -> None:
    new = HEADER + (
        "meal@v1,Meal allowance per day?,unanswerable,v1,,manual\n"  # question, answerability, passages changed
        "hotel@v1,Hotel cap?,answerable,v1,hotel-2;hotel-1,manual\n"  # same passages, other order: unchanged
    )  # ceo@v1 removed
    audit = audit_corpora(write("old.csv", OLD), write("new.csv", new))
    assert audit.removed["case_id"].to_list() == ["ceo@v1"]
    assert audit.relabeled.rows() == [
        ("meal@v1", "answerability", "answerable", "unanswerable"),
        ("meal@v1", "question", "Meal allowance?", "Meal allowance per day?"),
        ("meal@v1", "required_passage_ids", "meal-1", ""),
    ]
    assert audit.violations == 2


def test_every_list_is_in_case_id_order(write: Write) -> None:
    old = HEADER + "".join(f"{key}@v1,Q {key}?,answerable,v1,p-{key},manual\n" for key in ("zeta", "alpha", "mid"))
    new = HEADER + "".join(
        f"{case_id},Q?,answerable,{case_id[-2:]},p,{origin}\n"
        for case_id, origin in [
            ("zz@v2", "synthetic"),
            ("mid@v2", "synthetic"),
            ("zeta@v2", "manual"),
            ("alpha@v2", "synthetic"),
            ("bb@v2", "manual"),
        ]
    )
    audit = audit_corpora(write("old.csv", old), write("new.csv", new))
    for frame in (audit.added, audit.removed, audit.new_versions, audit.unreviewed):
        ids = frame.get_column("case_id").to_list()
        assert len(ids) > 1
        assert ids == sorted(ids)
    assert audit.added.get_column("case_id").to_list() == ["alpha@v2", "bb@v2", "mid@v2", "zeta@v2", "zz@v2"]
