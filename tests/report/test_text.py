"""Rendering shared by every result: notebooks (escaped HTML), markup-free terminal tables."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rag_compare.compute.audit import audit_corpora
from rag_compare.report.text import text_table

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
