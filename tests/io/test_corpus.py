"""Corpus loading: every contract rule, every format, warnings and --strict."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from rag_compare.core.errors import ContractError, Problem
from rag_compare.io.corpus import load_corpus, refuse_unreviewed
from rag_compare.io.runs import load_run
from rag_compare.io.tables import write_table
from tests.helpers.data import EXAMPLE_CORPUS, ROOT, SMALL_CORPUS

Write = Callable[[str, str | bytes], Path]
HEADER = "case_id,question,answerability,source_version,required_passage_ids\n"


def _problems(path: Path) -> list[Problem]:
    with pytest.raises(ContractError) as excinfo:
        load_corpus(path)
    return list(excinfo.value.problems)


def test_small_corpus_loads_with_types_and_defaults(small_corpus: Path) -> None:
    corpus = load_corpus(small_corpus)
    frame = corpus.frame
    assert frame.columns[:9] == [
        "case_id",
        "question",
        "answerability",
        "source_version",
        "required_passage_ids",
        "acceptance_note",
        "category",
        "origin",
        "reviewed",
    ]
    assert frame.schema["required_passage_ids"] == pl.List(pl.String)
    ids = dict(zip(frame["case_id"], frame["required_passage_ids"].to_list(), strict=True))
    assert ids == {
        "hotel@v2": ["hotel-1", "hotel-exc-1"],
        "meal@v2": ["meal-1"],
        "ceo@v2": [],
        "mileage@v2": ["mile-1", "mile-2"],
    }
    assert frame["origin"].to_list() == ["manual"] * 4
    assert frame["reviewed"].to_list() == [True] * 4
    assert corpus.warnings == ()
    assert len(corpus.fingerprint) == 64


def test_every_problem_is_reported_at_once(write: Write) -> None:
    path = write(
        "bad.csv",
        HEADER
        + "a@v1,Q1,answerable,v1,\n"  # answerable without passages
        + "a@v1,,maybe,v1,p1\n"  # duplicate id, empty question, unknown answerability
        + "c@v1,Q3,unanswerable,v1,p9\n"  # unanswerable with a passage
        + ' ,Q4,answerable,v1,"[""p1"", "\n',  # blank id, broken JSON list
    )
    found = {(p.row, p.column, p.expected.split(" (")[0].split(":")[0]) for p in _problems(path)}
    assert found == {
        (1, "case_id", "a value that appears only once in the column"),
        (2, "case_id", "a value that appears only once in the column"),
        (1, "required_passage_ids", "at least one passage id for an answerable or conflict case"),
        (2, "question", "a value"),
        (2, "answerability", "one of"),
        (3, "required_passage_ids", "no passage ids for an unanswerable case"),
        (4, "case_id", "a non-blank value"),
        (4, "required_passage_ids", "a list of ids"),
    }


def test_problem_names_row_column_value_and_expectation(write: Write) -> None:
    path = write("bad.csv", HEADER + "a@v1,Q,perhaps,v1,p1\n")
    (problem,) = _problems(path)
    assert (problem.row, problem.column, problem.value) == (1, "answerability", "'perhaps'")
    assert "answerable, unanswerable, conflict" in problem.expected
    assert "row 1, column 'answerability': got 'perhaps'" in str(problem)


def test_missing_columns_are_all_named(write: Write) -> None:
    path = write("bad.csv", "case_id,question\na@v1,Q\n")
    problems = _problems(path)
    assert sorted(p.column or "" for p in problems) == ["answerability", "required_passage_ids", "source_version"]
    assert all(p.row is None and "columns found: case_id, question" in p.expected for p in problems)


def test_repeated_or_blank_passage_id_is_refused(write: Write) -> None:
    path = write("bad.csv", HEADER + 'a@v1,Q,answerable,v1,"[""p1"", ""p1""]"\nb@v1,Q,answerable,v1,"[""p1"", """"]"\n')
    assert [(p.row, p.column) for p in _problems(path)] == [(1, "required_passage_ids"), (2, "required_passage_ids")]


def test_synthetic_default_is_unreviewed_and_warned(write: Write) -> None:
    path = write("c.csv", HEADER.strip() + ",origin\na@v1,Q,answerable,v1,p1,synthetic\n")
    corpus = load_corpus(path)
    assert corpus.frame["reviewed"].to_list() == [False]
    assert [(w.row, w.column) for w in corpus.warnings] == [(1, "reviewed")]


def test_case_id_without_source_version_is_a_warning_and_strict_refuses(write: Write) -> None:
    path = write("c.csv", HEADER + "meal-allowance,Q,answerable,2026-01,p1\n")
    corpus = load_corpus(path)
    (warning,) = corpus.warnings
    assert (warning.row, warning.column, warning.value) == (1, "case_id", "'meal-allowance'")
    assert "<question-key>@<source_version>" in warning.expected
    with pytest.raises(ContractError, match="`strict=True`") as excinfo:
        load_corpus(path, strict=True)
    assert excinfo.value.problems == (warning,)


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_parquet_and_jsonl_load_like_csv(tmp_path: Path, small_corpus: Path, suffix: str) -> None:
    from_csv = load_corpus(small_corpus)
    path = tmp_path / f"corpus{suffix}"
    if suffix == ".parquet":
        from_csv.frame.write_parquet(path)
    else:
        from_csv.frame.write_ndjson(path)
    loaded = load_corpus(path)
    assert loaded.frame.equals(from_csv.frame)
    assert loaded.fingerprint == from_csv.fingerprint


def test_jsonl_native_types_are_checked(write: Write) -> None:
    path = write(
        "c.jsonl",
        '{"case_id": "a@v1", "question": "Q", "answerability": "answerable", "source_version": "v1",'
        ' "required_passage_ids": ["p1"], "reviewed": "sometimes"}\n',
    )
    (problem,) = _problems(path)
    assert (problem.row, problem.column, problem.expected) == (1, "reviewed", "true or false")


def test_a_frame_is_accepted_and_not_modified() -> None:
    frame = pl.DataFrame(
        {
            "case_id": ["a@v1"],
            "question": ["Q"],
            "answerability": ["answerable"],
            "source_version": ["v1"],
            "required_passage_ids": [["p1"]],
            "owner": ["me"],
        }
    )
    before = frame.clone()
    corpus = load_corpus(frame)
    assert frame.equals(before)
    assert corpus.source == "<frame>"
    assert corpus.metadata_columns == ["owner"]


def test_fingerprint_ignores_row_order_and_sees_label_changes(write: Write) -> None:
    lines = SMALL_CORPUS.splitlines(keepends=True)
    shuffled = write("shuffled.csv", lines[0] + "".join(reversed(lines[1:])))
    relabeled = write("relabeled.csv", SMALL_CORPUS.replace("45 euros", "40 euros"))
    original = load_corpus(write("c.csv", SMALL_CORPUS)).fingerprint
    assert load_corpus(shuffled).fingerprint == original
    assert load_corpus(relabeled).fingerprint != original


def test_example_corpus_summary() -> None:
    summary = load_corpus(EXAMPLE_CORPUS).to_dict()
    assert summary["cases"] == 36
    assert summary["counts"]["answerability"] == {"answerable": 28, "unanswerable": 6, "conflict": 2}
    assert summary["counts"]["source_version"] == {"2025-01": 13, "2026-01": 23}
    assert summary["counts"]["unreviewed"] == 1
    assert [w["row"] for w in summary["warnings"]] == [5]


def test_long_problem_lists_are_cut_in_text_but_complete_in_data(write: Write) -> None:
    rows = "".join(f"c{n}@v1,Q,perhaps,v1,p1\n" for n in range(60))
    with pytest.raises(ContractError) as excinfo:
        load_corpus(write("many.csv", HEADER + rows))
    assert len(excinfo.value.problems) == 60
    assert "… and 10 more (all are in the error's `problems`)" in str(excinfo.value)
    assert str(excinfo.value).count("  - row ") == 50


# -- refuse_unreviewed ------------------------------------------------------------------------------------------------

MIXED = pl.DataFrame(
    {
        "case_id": ["manual@v1", "gold-draft@v1", "draft-a@v1", "draft-b@v1"],
        "question": ["Q1?", "Q2?", "Q3?", "Q4?"],
        "answerability": ["answerable", "answerable", "answerable", "unanswerable"],
        "source_version": ["v1"] * 4,
        "required_passage_ids": [["p1"], ["p1"], ["p1"], []],
        "origin": ["manual", "synthetic", "synthetic", "synthetic"],
        "reviewed": [None, True, False, False],
    }
)


def test_refuse_unreviewed_lists_every_unreviewed_synthetic_case(tmp_path: Path) -> None:
    path = tmp_path / "corpus.csv"
    write_table(MIXED, path, replace=False)
    with pytest.raises(ContractError) as excinfo:
        refuse_unreviewed(load_corpus(path))
    error = excinfo.value
    assert error.what == "set of cases to run (unreviewed synthetic cases are not gold)"
    assert [(problem.row, problem.value) for problem in error.problems] == [(3, "'draft-a@v1'"), (4, "'draft-b@v1'")]
    assert f"`admit_cases({str(path)!r}, ids=['draft-a@v1'])`" in error.problems[0].expected
    assert "`include_unreviewed=True`" in str(error)


def test_refuse_unreviewed_looks_only_at_the_cases_used() -> None:
    corpus = load_corpus(MIXED)
    with pytest.raises(ContractError) as excinfo:
        refuse_unreviewed(corpus, pl.Series(["manual@v1", "draft-b@v1", "elsewhere@v1"]))
    assert [problem.value for problem in excinfo.value.problems] == ["'draft-b@v1'"]
    refuse_unreviewed(corpus, pl.Series(["manual@v1", "gold-draft@v1"]))
    refuse_unreviewed(corpus, pl.Series([], dtype=pl.String))


def test_refuse_unreviewed_is_silent_for_reviewed_and_manual_cases() -> None:
    refuse_unreviewed(load_corpus(MIXED.filter(pl.col("reviewed").is_null() | pl.col("reviewed"))))


def test_a_language_column_is_checked_kept_and_fingerprinted(write: Write) -> None:
    # a corpus without the column has none, and the fingerprint the runs frozen before it recorded
    assert "language" not in load_corpus(EXAMPLE_CORPUS).frame.columns
    assert (
        load_corpus(EXAMPLE_CORPUS).fingerprint
        == load_run(ROOT / "runs" / "baseline.arrow").config["corpus"]["fingerprint"]
    )
    lines = SMALL_CORPUS.splitlines()
    tags = ["de", "pt-BR", "", "fr"]
    tagged = "\n".join([lines[0] + ",language", *(f"{line},{tag}" for line, tag in zip(lines[1:], tags, strict=True))])
    corpus = load_corpus(write("tagged.csv", tagged + "\n"))
    assert corpus.frame["language"].to_list() == ["de", "pt-BR", None, "fr"]
    assert corpus.metadata_columns == []
    retagged = load_corpus(write("retagged.csv", tagged.replace(",fr", ",nl") + "\n"))
    assert retagged.fingerprint != corpus.fingerprint != load_corpus(write("c.csv", SMALL_CORPUS)).fingerprint
    problems = _problems(write("bad.csv", tagged.replace(",de", ",Deutsch!").replace(",fr", ",f") + "\n"))
    assert [(problem.row, problem.column, problem.value) for problem in problems] == [
        (1, "language", "'Deutsch!'"),
        (4, "language", "'f'"),
    ]
    assert "BCP 47 language tag" in problems[0].expected
