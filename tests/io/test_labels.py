"""People's labels: a labels table checked whole against its contract, and a reviews file read as labels, each
case's preference taken from the status its latest verdict gave it."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from rag_compare.core.errors import ContractError, InputFileError
from rag_compare.io.labels import HUMAN_LABELS, load_labels
from rag_compare.io.reviews import export_reviews
from tests.helpers.reviews import BASELINE, CANDIDATE, VERDICTS, reviewed


def test_a_table_gives_its_labels_and_blank_cells_are_not_given(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("case_id,grounded,answer_correct,comment,category\nq1@v1,yes,,fine,rules\nq2@v1,partly,no,,\n")
    labels = load_labels(path)
    assert labels.given == ("answer_correct", "grounded")
    assert labels.frame.select("case_id", "grounded", "answer_correct", "category").rows() == [
        ("q1@v1", "yes", None, "rules"),
        ("q2@v1", "partly", "no", None),
    ]
    assert labels.frame.columns[: 4 + len(HUMAN_LABELS)] == ["case_id", "side", "repeat", *HUMAN_LABELS, "comment"]
    assert (labels.kind, labels.runs) == ("table", None)


def test_every_broken_rule_of_a_table_is_reported_at_once(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {
            "case_id": ["q1@v1", "q1@v1", "q2@v1"],
            "side": ["candidate", "candidate", "left"],
            "grounded": ["yes", "mostly", "no"],
            "preferred": [None, "candidate", "neither"],
        }
    )
    with pytest.raises(ContractError) as raised:
        load_labels(frame)
    found = {(problem.row, problem.column) for problem in raised.value.problems}
    assert {(2, "grounded"), (3, "side"), (3, "preferred")} <= found
    assert any(problem.column == "case_id" for problem in raised.value.problems)  # q1@v1's side twice


@pytest.mark.parametrize(
    ("text", "message"),
    [("case_id,grounded\n", "no rows"), ("case_id,note\nq1@v1,hi\n", "no label column")],
)
def test_a_table_with_nothing_to_measure_is_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(text)
    with pytest.raises(InputFileError, match=message):
        load_labels(path)


def test_a_reviews_file_is_read_as_labels_of_its_runs(tmp_path: Path) -> None:
    database = reviewed(tmp_path / "reviews.sqlite", VERDICTS)
    reviews = export_reviews(database, BASELINE, CANDIDATE, tmp_path / "reviews.arrow")
    labels = load_labels(tmp_path / "reviews.arrow")
    assert (labels.kind, labels.fingerprint) == ("reviews", reviews.evaluator["fingerprint"])
    assert labels.runs is not None
    assert labels.runs["candidate"]["fingerprint"] == reviews.candidate["fingerprint"]
    # q1: agreed with the status shown (regressed): the baseline preferred; q2: corrected to unchanged: a tie.
    assert labels.frame.select("case_id", "side", "answer_correct", "preferred").rows() == [
        ("q1@v1", "baseline", None, "baseline"),
        ("q1@v1", "candidate", "no", "baseline"),
        ("q2@v1", "candidate", None, "tie"),
    ]
