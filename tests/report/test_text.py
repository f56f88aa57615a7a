"""Rendering shared by every result: notebooks (escaped HTML), markup-free terminal tables."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from rag_compare.compute.audit import audit_corpora
from rag_compare.compute.compare_runs import compare
from rag_compare.compute.freezing import freeze_run
from rag_compare.io.corpus import load_corpus
from rag_compare.report.text import TEXT_WIDTH, config_diff_rows, text_table

Write = Callable[[str, str | bytes], Path]
HEADER = "case_id,question,answerability,source_version,required_passage_ids\n"


def test_notebook_html_escapes_data(write: Write) -> None:
    old = write("old.csv", HEADER + "a@v1,Q,answerable,v1,p1\n")
    new = write(
        "new.csv",
        HEADER + 'a@v1,Q,answerable,v1,p1\nb@v1,"<script>alert(1)</script> [bold]x[/bold]",answerable,v1,p1\n',
    )
    audit = audit_corpora(old, new)
    html = audit._repr_html_()
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "[bold]x[/bold]" in audit.render("text")  # data is never read as terminal markup


def test_text_table() -> None:
    table = text_table(("key", "value"), [("a", 1), ("[red]b[/red]", None)])
    assert table.splitlines()[0].split() == ["key", "value"]
    assert "[red]b[/red]" in table


@pytest.mark.parametrize("columns", ["40", "200"])
def test_a_table_never_cuts_a_word(monkeypatch: pytest.MonkeyPatch, columns: str) -> None:
    monkeypatch.setenv("COLUMNS", columns)  # whatever the terminal's width
    ids = [f"question-key-{n}-" + "x" * (20 + 7 * n) + f"@2026-0{n}" for n in range(1, 6)]
    prose = "a question in many short words that may well wrap " * 3
    rows = [(case_id, prose, f"{case_id}, {ids[0]}", "new version") for case_id in ids]
    table = text_table(("case_id", "question", "previous_case_ids", "kind"), rows, title="New versions")
    assert "…" not in table
    words = table.split()
    assert all(words.count(case_id) == 1 + (case_id == ids[0]) * len(ids) for case_id in ids)
    assert "new version" in table  # a short column keeps its words on one line


def test_a_table_that_fits_keeps_the_text_width() -> None:
    table = text_table(("id", "text"), [("a@v1", "word " * 40)])
    assert max(len(line) for line in table.splitlines()) <= TEXT_WIDTH
    assert len(table.splitlines()) == 4  # its text wraps


def test_a_config_value_of_null_is_not_shown_as_an_absent_key() -> None:
    corpus = load_corpus(
        pl.DataFrame(
            {
                "case_id": ["a@v1"],
                "question": ["Q?"],
                "answerability": ["unanswerable"],
                "source_version": ["v1"],
                "required_passage_ids": [[]],
            }
        )
    )
    records = pl.DataFrame({"case_id": ["a@v1"], "answer": ["I don't know."]})
    epoch = {"SOURCE_DATE_EPOCH": "1795000000"}  # both frozen at one time, whenever the second ticks
    baseline = freeze_run(records, corpus, {"name": "a", "retriever": {"stopwords": "en"}, "extra": 1}, environ=epoch)
    candidate = freeze_run(records, corpus, {"name": "b", "retriever": {"stopwords": None}}, environ=epoch)
    rows = config_diff_rows(compare(baseline, candidate))
    assert rows == [("extra", "1", "(absent)"), ("name", "a", "b"), ("retriever.stopwords", "en", "null")]
