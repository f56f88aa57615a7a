"""Rendering shared by every result: formats, notebooks (escaped HTML), markup-free terminal tables."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from rag_compare.compute.audit import audit_corpora
from rag_compare.core.result import to_json
from rag_compare.io.corpus import load_corpus
from rag_compare.report.text import text_table
from tests.helpers.data import EXAMPLE_CORPUS

Write = Callable[[str, str | bytes], Path]
HEADER = "case_id,question,answerability,source_version,required_passage_ids\n"


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="use one of text, json"):
        load_corpus(EXAMPLE_CORPUS).render("xml")


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


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def test_to_json_writes_a_number_that_is_not_finite_as_null() -> None:
    payload = {"p": float("nan"), "rows": [{"low": float("-inf"), "high": 0.5}], "nested": ({"x": float("inf")},)}
    text = to_json(payload)
    assert json.loads(text, parse_constant=_refuse_constant) == {
        "p": None,
        "rows": [{"low": None, "high": 0.5}],
        "nested": [{"x": None}],
    }
    assert payload["p"] != payload["p"]  # the caller's payload is left as it was
