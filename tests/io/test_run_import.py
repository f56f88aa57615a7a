"""Making run records of another tool's file: case ids, repeats, passage ids, context ids, freezing.

The format readers are tested against their real producers' files in ``tests/io/sources``; here a
reader of hand-written units stands in for one, so each rule of the common part is seen alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from rag_compare.compute.freezing import import_run
from rag_compare.core.errors import (
    ConfigError,
    ContractError,
    InputFileError,
    Problem,
    RunExistsError,
    SecretInConfigError,
)
from rag_compare.io.corpus import load_corpus
from rag_compare.io.run_import import FORMATS, import_records, read_records
from rag_compare.io.runs import load_run
from rag_compare.io.sources.rows import Skipped, SourceRows, source_frame
from tests.helpers.credential_shapes import KEY_SHAPES, copied_as, secret_parts
from tests.helpers.data import SMALL_CORPUS

PASSAGES = pl.DataFrame(
    {
        "passage_id": ["hotel-1", "hotel-exc-1", "meal-1", "mile-1", "mile-2", "old-hotel"],
        "source_version": ["v2", "v2", "v2", "v2", "v2", "v1"],
        "text": [
            "The hotel cap is 150 euros per night.",
            "In Paris the hotel cap is 210 euros per night.",
            "The meal allowance is 45 euros a day.",
            "Mileage is paid at 0.30 per km.",
            "Mileage is paid at 0.35 per km.",
            "The hotel cap is 150 euros per night.",
        ],
    }
)


def units_reader(path: Path, case_id_key: str) -> SourceRows:
    """A stand-in reader: the file is a JSON object of units (rows of the source frame), skipped units
    and problems; ``case_key`` is read from each unit's ``meta`` under ``case_id_key``."""
    data = json.loads(path.read_text())
    rows = [
        {**unit, "position": number, "case_key": unit.get("meta", {}).get(case_id_key)}
        for number, unit in enumerate(data["units"], start=1)
    ]
    return SourceRows(
        frame=source_frame(rows),
        read=len(rows) + len(data.get("skipped", [])),
        unit="trace",
        skipped=tuple(Skipped(position, reason) for position, reason in data.get("skipped", [])),
        problems=tuple(Problem(expected, row=row) for row, expected in data.get("problems", [])),
    )


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.csv"
    path.write_text(SMALL_CORPUS)
    return path


@pytest.fixture(autouse=True)
def stand_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(FORMATS, "units", f"{__name__}:units_reader")


def units(tmp_path: Path, *found: dict[str, Any], **rest: Any) -> Path:
    path = tmp_path / "units.json"
    path.write_text(json.dumps({"units": list(found), **rest}))
    return path


HOTEL = {"meta": {"case_id": "hotel@v2"}, "question": "What is the hotel cap?", "answer": "150 euros."}
MEAL = {"meta": {"case_id": "meal@v2"}, "question": "What is the meal allowance?", "status": "failed"}


def test_case_ids_come_from_the_metadata_key_and_a_failure_is_kept(tmp_path: Path, corpus: Path) -> None:
    failed = {**MEAL, "error": "boom", "failed_stage": "llm", "source_id": "ab12"}
    records = read_records(units(tmp_path, HOTEL, failed), "units", corpus=corpus)
    assert records.get_column("case_id").to_list() == ["hotel@v2", "meal@v2"]
    assert records.get_column("status").to_list() == ["ok", "failed"]
    failure = records.select("error", "failed_stage", "source_id").row(1)
    assert failure == ("boom", "llm", "ab12")
    assert records.columns[-2:] == ["failed_stage", "source_id"]


def test_another_key_names_the_case(tmp_path: Path, corpus: Path) -> None:
    unit = {**HOTEL, "meta": {"test": "hotel@v2"}}
    records = read_records(units(tmp_path, unit), "units", corpus=corpus, case_id_key="test")
    assert records.get_column("case_id").to_list() == ["hotel@v2"]


def test_a_unit_without_a_case_id_or_with_an_unknown_one_is_refused_with_its_position(
    tmp_path: Path, corpus: Path
) -> None:
    source = units(tmp_path, HOTEL, {"question": "q"}, {**HOTEL, "meta": {"case_id": "nope@v9"}})
    with pytest.raises(ContractError) as raised:
        read_records(source, "units", corpus=corpus)
    problems = {(problem.row, problem.value) for problem in raised.value.problems}
    assert problems == {(2, None), (3, "'nope@v9'")}
    assert "match_question=True" in str(raised.value)


def test_questions_match_the_corpus_with_whitespace_and_case_folded(tmp_path: Path, corpus: Path) -> None:
    unit = {"question": "  what is THE\nhotel   cap? ", "answer": "150"}
    records = read_records(units(tmp_path, unit), "units", corpus=corpus, match_question=True)
    assert records.get_column("case_id").to_list() == ["hotel@v2"]


def test_a_question_matching_no_case_or_several_is_refused(tmp_path: Path) -> None:
    corpus = pl.DataFrame(
        {
            "case_id": ["a@v1", "b@v1", "c@v1"],
            "question": ["Same?", "same?", "Other?"],
            "answerability": ["unanswerable"] * 3,
            "source_version": ["v1"] * 3,
            "required_passage_ids": [[], [], []],
        }
    )
    source = units(tmp_path, {"question": "SAME?"}, {"question": "Unknown?"}, {"question": "Other?"})
    with pytest.raises(ContractError) as raised:
        read_records(source, "units", corpus=corpus, match_question=True)
    by_row = {problem.row: problem.expected for problem in raised.value.problems}
    assert set(by_row) == {1, 2}
    assert "a@v1, b@v1" in by_row[1]
    assert "a@v1" not in by_row[2]


def test_matching_questions_needs_a_corpus(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="corpus"):
        read_records(units(tmp_path, HOTEL), "units", match_question=True)


def test_a_case_named_twice_is_refused_unless_keep_chooses_by_start_time(tmp_path: Path, corpus: Path) -> None:
    late = {**HOTEL, "answer": "late", "started_ns": 20}
    early = {**HOTEL, "answer": "early", "started_ns": 10}
    source = units(tmp_path, late, MEAL, early)
    with pytest.raises(ContractError) as raised:
        read_records(source, "units", corpus=corpus)
    assert [problem.row for problem in raised.value.problems] == [3]
    assert "3, 1" in raised.value.problems[0].expected
    first = import_records(source, "units", corpus=corpus, keep="first")
    assert first.records.select("case_id", "answer").rows() == [("meal@v2", None), ("hotel@v2", "early")]
    assert [left["position"] for left in first.left_out] == [1]
    last = read_records(source, "units", corpus=corpus, keep="last")
    assert last.select("case_id", "answer").rows() == [("hotel@v2", "late"), ("meal@v2", None)]


def test_texts_without_ids_get_the_passages_ids_by_the_documented_rules(tmp_path: Path, corpus: Path) -> None:
    texts = [
        "In Paris the hotel cap is 210 euros per night.",  # exact
        "the HOTEL cap is 150 euros — per night",  # same words; two passages, one of the case's version
        "Nothing in the knowledge base says this.",  # unmatched
        "[meal-1] The meal allowance is 45 euros a day.\n",  # a passage with a label around it
    ]
    unit = {**HOTEL, "retrieved_texts": texts, "retrieved_scores": [4.0, 3.0, 2.0, 1.0]}
    imported = import_records(units(tmp_path, unit), "units", corpus=corpus, passages=PASSAGES)
    record = imported.records.row(0, named=True)
    assert record["retrieved_passage_ids"] == ["hotel-exc-1", "hotel-1", "meal-1"]
    assert record["retrieved_scores"] == [4.0, 3.0, 1.0]
    assert record["retrieved_unmatched_ranks"] == [3]
    assert imported.unmatched == ({"case_id": "hotel@v2", "rank": 3, "text": texts[2]},)


def test_a_short_text_is_no_chunk_and_without_passages_the_ids_stay_unrecorded(tmp_path: Path, corpus: Path) -> None:
    unit = {**HOTEL, "retrieved_texts": ["150 euros"]}
    mapped = read_records(units(tmp_path, unit), "units", corpus=corpus, passages=PASSAGES)
    assert mapped.get_column("retrieved_passage_ids").to_list() == [[]]
    unmapped = import_records(units(tmp_path, unit), "units", corpus=corpus)
    assert unmapped.records.get_column("retrieved_passage_ids").to_list() == [None]
    assert unmapped.texts_without_ids == 1
    assert "retrieved_unmatched_ranks" not in unmapped.records.columns


def test_context_ids_are_the_retrieved_passages_whose_text_reached_the_context(tmp_path: Path, corpus: Path) -> None:
    sent = "Answer from these:\nThe hotel cap is  150 euros\nper night.\n"
    with_texts = {
        **HOTEL,
        "retrieved_passage_ids": ["hotel-1", "hotel-exc-1"],
        "retrieved_texts": [PASSAGES["text"][0], PASSAGES["text"][1]],
        "context": sent,
    }
    ids_only = {**MEAL, "retrieved_passage_ids": ["hotel-exc-1", "hotel-1"], "context": sent}
    said = {
        "meta": {"case_id": "ceo@v2"},
        "retrieved_passage_ids": ["meal-1"],
        "context": "x",
        "context_passage_ids": ["meal-1"],
    }
    source = units(tmp_path, with_texts, ids_only, said)
    records = read_records(source, "units", corpus=corpus, passages=PASSAGES)
    assert records.get_column("context_passage_ids").to_list() == [["hotel-1"], ["hotel-1"], ["meal-1"]]
    without_passages = read_records(source, "units", corpus=corpus)
    assert without_passages.get_column("context_passage_ids").to_list() == [["hotel-1"], None, ["meal-1"]]


def test_an_unreadable_unit_refuses_the_file_and_an_all_skipped_file_says_why(tmp_path: Path) -> None:
    broken = units(tmp_path, HOTEL, problems=[[2, "a JSON object on the line"]])
    with pytest.raises(ContractError) as raised:
        read_records(broken, "units")
    assert [problem.row for problem in raised.value.problems] == [2]
    skipped = units(tmp_path, skipped=[[1, "no query (an indexing trace)"], [2, "no query (an indexing trace)"]])
    with pytest.raises(InputFileError, match=r"2 traces read and none holds a case \(2 no query"):
        read_records(skipped, "units")


def test_an_unknown_format_or_keep_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="openinference"):
        read_records(units(tmp_path, HOTEL), "phoenix")
    with pytest.raises(ConfigError, match="`keep`"):
        read_records(units(tmp_path, HOTEL), "units", keep="middle")  # type: ignore[arg-type]


def test_import_run_freezes_the_records_and_records_the_import(tmp_path: Path, corpus: Path) -> None:
    source = units(tmp_path, HOTEL, {**MEAL, "error": "HTTP 500"}, skipped=[[3, "no query"]])
    output = tmp_path / "imported.arrow"
    imported = import_run(source, "units", corpus, {"model": "m"}, output=output)
    run = load_run(output)
    assert run.fingerprint == imported.run.fingerprint
    assert "repeat" not in run.records.columns  # an import holds one sample per case
    assert run.config["model"] == "m"
    assert run.config["imported"] == {
        "format": "units",
        "source": str(source),
        "case_ids": "metadata key 'case_id'",
        "keep": None,
        "read": 3,
        "unit": "trace",
        "skipped": 1,
        "left_out": 0,
        "unmatched_passages": 0,
    }
    summary = imported.to_dict()["import"]
    assert (summary["cases"], summary["failed"], summary["skipped"]) == (
        2,
        1,
        [{"position": 3, "source_id": None, "reason": "no query"}],
    )
    assert run.records.get_column("question").to_list() == load_corpus(corpus).frame["question"][:2].to_list()
    with pytest.raises(RunExistsError):
        import_run(source, "units", corpus, output=output)


def test_the_config_may_not_set_what_the_import_records(tmp_path: Path, corpus: Path) -> None:
    with pytest.raises(ConfigError, match="imported"):
        import_run(units(tmp_path, HOTEL), "units", corpus, {"imported": "x"})


@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_an_import_refuses_a_source_path_holding_a_credential_before_reading_it(
    tmp_path: Path, corpus: Path, secret: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = copied_as(units(tmp_path, HOTEL), secret)
    monkeypatch.setitem(FORMATS, "units", f"{__name__}:no_reader")
    output = tmp_path / "run.arrow"
    with pytest.raises(SecretInConfigError) as raised:
        import_run(source, "units", corpus, output=output)
    assert str(raised.value).startswith("the path of `source` holds a credential")
    assert not any(form in str(raised.value) for form in secret_parts(secret))
    assert not output.exists()


def no_reader(path: Path, case_id_key: str) -> SourceRows:
    raise AssertionError("the source was read")
