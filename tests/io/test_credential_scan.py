"""Credential scan of a frame: every kind of column searched, each finding at its row and column."""

from __future__ import annotations

import polars as pl

from rag_compare.io.credential_scan import credential_cells
from rag_compare.io.tables import ROW
from tests.helpers.credential_shapes import KEY_SHAPES, OPENAI_KEY


def test_credential_cells_searches_every_kind_of_column() -> None:
    frame = pl.DataFrame(
        {
            "answer": ["fine", f"use {OPENAI_KEY}", None],
            "ids": [["a", "b"], None, ["c", "hunter2-hunter2"]],
            "meta": [{"k": "v"}, {"k": 'x"hunter2-hunter2'}, None],
            "spans": [[{"headers": {"auth": KEY_SHAPES["bearer"]}}], [], None],
            "n": [1, 2, 3],
        }
    )
    found = credential_cells(frame, {"DB_PASSWORD": 'x"hunter2-hunter2'})
    assert sorted(found) == [
        (1, "spans", "a credential (an API key or an authorization header)"),
        (2, "answer", "a credential (an API key or an authorization header)"),
        (2, "meta", "the value of DB_PASSWORD"),
    ]
    assert (3, "ids", "the value of DB_PASSWORD") in credential_cells(frame, {"DB_PASSWORD": "hunter2-hunter2"})


def test_credential_cells_uses_the_row_column_when_given() -> None:
    frame = pl.DataFrame({ROW: [7, 9], "answer": ["x", KEY_SHAPES["aws"]]})
    assert credential_cells(frame, {}, ROW) == [(9, "answer", "a credential (an API key or an authorization header)")]


def test_credential_cells_names_a_column_named_like_a_secret() -> None:
    frame = pl.DataFrame({OPENAI_KEY: ["x"]})
    ((row, column, _),) = credential_cells(frame, {})
    assert row is None
    assert OPENAI_KEY not in column
