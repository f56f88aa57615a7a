"""The passages file, and a corpus' required passages checked against it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from click.testing import Result

from rag_compare.core.errors import ContractError
from rag_compare.io.corpus import load_corpus
from rag_compare.io.passages import load_passages
from tests.helpers.data import EXAMPLE_CORPUS, ROOT

Write = Callable[[str, str | bytes], Path]
Cli = Callable[..., Result]
EXAMPLE_PASSAGES = ROOT / "corpora" / "handbook_passages.csv"
PASSAGES = """\
passage_id,source_version,text,section
hotel-1,v2,Hotels are capped at 150 euros.,travel
hotel-exc-1,v2,"In Paris, 210 euros.",travel
meal-1,v1,The meal allowance is 40 euros.,travel
mile-1,v2,0.35 per km.,travel
mile-2,v2,0.30 per km.,finance
"""


def test_example_passages_load_and_cover_the_example_corpus() -> None:
    passages = load_passages(EXAMPLE_PASSAGES)
    assert passages.columns[:3] == ["passage_id", "source_version", "text"]
    assert passages.height == 53
    assert load_corpus(EXAMPLE_CORPUS, passages=passages).warnings == load_corpus(EXAMPLE_CORPUS).warnings


def test_bad_passages_file_lists_every_problem(write: Write) -> None:
    path = write("p.csv", "passage_id,source_version,text\np1,v1,text\np1,v1,\n ,v1,x\n")
    with pytest.raises(ContractError) as excinfo:
        load_passages(path)
    assert {(p.row, p.column) for p in excinfo.value.problems} == {
        (1, "passage_id"),
        (2, "passage_id"),
        (2, "text"),
        (3, "passage_id"),
    }


def test_unknown_required_passage_is_an_error_and_other_version_a_warning(write: Write, small_corpus: Path) -> None:
    passages = write("p.csv", PASSAGES)
    corpus = load_corpus(small_corpus, passages=passages)  # meal-1 is a v1 passage for a v2 case
    assert [(w.row, w.expected) for w in corpus.warnings] == [
        (2, "passages of the case's source_version (other version: meal-1)")
    ]
    without_exception = pl.read_csv(passages).filter(pl.col("passage_id") != "hotel-exc-1")
    with pytest.raises(ContractError) as excinfo:
        load_corpus(small_corpus, passages=without_exception)
    (problem,) = excinfo.value.problems
    assert (problem.row, problem.column) == (1, "required_passage_ids")
    assert "not found: hotel-exc-1" in problem.expected
    with pytest.raises(ContractError, match="`strict=True`"):
        load_corpus(small_corpus, passages=passages, strict=True)


def test_validate_with_passages(cli: Cli, write: Write, small_corpus: Path) -> None:
    passages = write("p.csv", PASSAGES.replace("mile-2,v2,0.30 per km.,finance\n", ""))
    result = cli("validate", small_corpus, "--passages", passages)
    assert result.exit_code == 2
    assert "row 4, column 'required_passage_ids'" in result.stderr
    assert "not found: mile-2" in result.stderr
    assert cli("validate", EXAMPLE_CORPUS, "--passages", EXAMPLE_PASSAGES).exit_code == 0
