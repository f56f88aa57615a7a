"""The contracts as Pandera models: every broken rule of a frame as a problem at its file row and column."""

from __future__ import annotations

import polars as pl

from rag_compare.core.errors import Problem
from rag_compare.io.schemas import CorpusSchema, PassagesSchema, contract_problems
from rag_compare.io.tables import ROW


def _passages(**columns: list[str]) -> pl.DataFrame:
    frame = {"passage_id": ["p1", "p2", "p3"], "source_version": ["v1"] * 3, "text": ["One.", "Two.", "Three."]}
    return pl.DataFrame({ROW: [4, 5, 6], **frame, **columns})


def test_a_frame_that_keeps_the_contract_has_no_problems() -> None:
    assert contract_problems(_passages(), PassagesSchema, ROW) == []


def test_each_broken_rule_is_a_problem_at_its_file_row_and_column() -> None:
    found = contract_problems(_passages(passage_id=["p1", "p1", "p3"], text=["One.", "Two.", " "]), PassagesSchema, ROW)
    assert found == [
        Problem("a value that appears only once in the column", row=4, column="passage_id", value="'p1'"),
        Problem("a value that appears only once in the column", row=5, column="passage_id", value="'p1'"),
        Problem("a non-blank value", row=6, column="text", value="' '"),
    ]


def test_a_cell_already_reported_is_not_reported_again() -> None:
    already = [Problem("text that can be read", row=6, column="text", value="'\\x00'")]
    found = contract_problems(_passages(text=["One.", "Two.", ""]), PassagesSchema, ROW, already=already)
    assert found == already


def test_a_rule_across_columns_names_the_column_it_is_about() -> None:
    corpus = pl.DataFrame(
        {
            ROW: [1],
            "case_id": ["a@v1"],
            "question": ["Q?"],
            "answerability": ["answerable"],
            "source_version": ["v1"],
            "required_passage_ids": [[]],
            "acceptance_note": [None],
            "category": [None],
            "origin": ["manual"],
            "reviewed": [True],
        },
        schema_overrides={
            "required_passage_ids": pl.List(pl.String),
            "acceptance_note": pl.String,
            "category": pl.String,
        },
    )
    (problem,) = contract_problems(corpus, CorpusSchema, ROW)
    assert (problem.row, problem.column) == (1, "required_passage_ids")
    assert problem.expected == "at least one passage id for an answerable or conflict case"
