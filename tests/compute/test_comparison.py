"""The comparison's JSON document (``Comparison.to_json``) of the hand-made runs, against its golden file, and
its cases against the records and labels they came from: each side's record status and error always, the
texts with ``with_texts``, from either engine, as one document or as a folder."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import Result

from rag_compare import CompareError, Comparison, RunExistsError, RunFileError, compare, load_corpus
from rag_compare.compute import comparison as comparison_module
from rag_compare.compute.case_texts import SIDE_TEXTS, TEXT_LABELS
from tests.helpers.claims import handmade_scores
from tests.helpers.data import HANDMADE_RUNS, ROOT
from tests.helpers.golden import HANDMADE_COMPARISON

SIDES = ("baseline", "candidate")
ENGINES = [pytest.param({}, id="memory"), pytest.param({"engine": "streaming", "buckets": 3}, id="streaming")]


def handmade_records(side: str) -> dict[str, dict[str, Any]]:
    """The hand-made records of ``side`` as written by hand, by case id."""
    path = HANDMADE_RUNS / "records" / f"{side}.jsonl"
    return {record["case_id"]: record for record in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def handmade_comparison(monkeypatch: pytest.MonkeyPatch, options: dict[str, Any]) -> Comparison:
    """The hand-made comparison with ``options``, its cases cut into several slices and parts."""
    monkeypatch.setattr(comparison_module, "_JSON_SLICE_ROWS", 7)
    monkeypatch.setattr(comparison_module, "PART_ROWS", 10)
    baseline, candidate, _, passages = (ROOT / argument for argument in HANDMADE_COMPARISON)
    return compare(baseline, candidate, passages=passages, **options)


def without_texts(case: dict[str, Any]) -> dict[str, Any]:
    """A JSON case with the keys of ``with_texts`` taken out."""
    sides = {side: None if case[side] is None else without(case[side], SIDE_TEXTS) for side in SIDES}
    return without(case, TEXT_LABELS) | sides


def without(mapping: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {key: value for key, value in mapping.items() if key not in names}


def test_json_of_the_handmade_runs_is_to_json_and_matches_the_golden_file(
    cli: Callable[..., Result], golden: Callable[[str, str], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the document names the run files by the paths they were opened with
    result = cli(*HANDMADE_COMPARISON, "--format", "json")
    assert (result.exit_code, result.stderr) == (0, "")
    baseline, candidate, _, passages = HANDMADE_COMPARISON
    assert result.stdout == compare(baseline, candidate, passages=passages).to_json()
    # The only version in the document is the one each run was frozen with, read from its file (its config's
    # rag_compare_version): the library's own version is not written, so a release leaves the golden file as it is.
    document = json.loads(result.stdout)
    assert [document[side]["config"]["rag_compare_version"] for side in ("baseline", "candidate")] == ["0.5.0"] * 2
    golden("handmade.json", result.stdout)


def test_a_comparison_written_as_a_folder_holds_the_summary_and_the_cases_of_its_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(comparison_module, "PART_ROWS", 10)
    baseline, candidate, _, passages = (ROOT / argument for argument in HANDMADE_COMPARISON)
    comparison = compare(baseline, candidate, passages=passages)
    written = comparison.write_directory(tmp_path / "out")
    document = json.loads(comparison.to_json())
    cases = document.pop("cases")
    assert json.loads((written / "summary.json").read_text(encoding="utf-8")) == document
    parts = sorted((written / "cases").iterdir())
    assert [part.name for part in parts] == [f"part-0000{index}.parquet" for index in range(4)]  # 35 cases, 10 a part
    assert pl.concat(pl.read_parquet(part) for part in parts).to_dicts() == cases
    with pytest.raises(RunExistsError, match="already exists"):
        comparison.write_directory(written)


def test_a_comparison_folder_that_fails_to_write_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    comparison = compare(*(ROOT / argument for argument in HANDMADE_COMPARISON[:2]))

    def fail(self: pl.DataFrame, path: Path, **options: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", fail)
    with pytest.raises(RunFileError, match=r"out: cannot be written \(No space left on device\)"):
        comparison.write_directory(tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_json_written_to_a_file_in_slices_is_the_json_as_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str
) -> None:
    monkeypatch.setattr(comparison_module, "_JSON_SLICE_ROWS", 7)  # several slices, the last one short
    baseline, candidate, _, passages = HANDMADE_COMPARISON
    comparison = compare(ROOT / baseline, ROOT / candidate, passages=ROOT / passages)
    text = io.StringIO()
    comparison.write(text, "json")
    path = tmp_path / "comparison.json"
    with path.open("w", encoding=encoding) as stream:
        stream.write("before ")
        comparison.write(stream, "json")
        stream.write(" after")
    assert path.read_text(encoding=encoding) == "before " + text.getvalue() + " after"
    assert text.getvalue() == comparison.to_json()
    assert json.loads(text.getvalue())["cases"][-1]["case_id"] == comparison.cases.get_column("case_id")[-1]


@pytest.mark.parametrize("options", ENGINES)
def test_each_side_of_a_json_case_holds_its_records_status_and_error(
    monkeypatch: pytest.MonkeyPatch, options: dict[str, Any]
) -> None:
    cases = json.loads(handmade_comparison(monkeypatch, options).to_json())["cases"]
    for side in SIDES:
        records = handmade_records(side)
        for case in cases:
            record = records.get(case["case_id"])
            if record is None:
                assert case[side] is None
                continue
            assert (case[side]["status"], case[side]["error"]) == (record.get("status", "ok"), record.get("error"))
    statuses = {case[side]["status"] for case in cases for side in SIDES if case[side] is not None}
    assert statuses == {"ok", "failed", "timeout"}  # the fixture has each
    assert not any(set(TEXT_LABELS) & case.keys() for case in cases)  # texts only when asked


@pytest.mark.parametrize("options", ENGINES)
def test_with_texts_each_json_case_holds_its_labels_and_each_side_its_records_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: dict[str, Any]
) -> None:
    comparison = handmade_comparison(monkeypatch, options)
    cases = json.loads(comparison.to_json(with_texts=True))["cases"]
    labels = {row["case_id"]: row for row in load_corpus(ROOT / "corpora" / "handbook.csv").frame.to_dicts()}
    records = {side: handmade_records(side) for side in SIDES}
    for case in cases:
        assert {name: case[name] for name in TEXT_LABELS} == {
            name: labels[case["case_id"]][name] for name in TEXT_LABELS
        }
        for side in SIDES:
            record = records[side].get(case["case_id"])
            if record is None:
                assert case[side] is None
                continue
            assert {name: case[side][name] for name in SIDE_TEXTS} == {name: record.get(name) for name in SIDE_TEXTS}
    # the texts are additions: the rest is the document without them
    assert [without_texts(case) for case in cases] == json.loads(comparison.to_json())["cases"]
    assert comparison.to_dict(with_texts=True)["cases"] == cases
    folder = comparison.write_directory(tmp_path / "out", with_texts=True)
    parts = sorted((folder / "cases").iterdir())
    assert len(parts) == 4  # 35 cases, 10 a part
    assert pl.concat(pl.read_parquet(part) for part in parts).to_dicts() == cases


def test_texts_are_for_the_json_only() -> None:
    comparison = compare(*(ROOT / argument for argument in HANDMADE_COMPARISON[:2]))
    for format in ("text", "markdown", "html", "github", "junit"):
        with pytest.raises(ValueError, match="`with_texts` is for the json format"):
            comparison.render(format, with_texts=True)


def test_the_json_with_texts_of_a_run_changed_since_is_refused_before_a_byte_is_written(tmp_path: Path) -> None:
    for side in SIDES:
        shutil.copy(HANDMADE_RUNS / f"{side}.arrow", tmp_path / f"{side}.arrow")
    comparison = compare(tmp_path / "baseline.arrow", tmp_path / "candidate.arrow")
    shutil.copy(HANDMADE_RUNS / "baseline.arrow", tmp_path / "candidate.arrow")
    stream = io.StringIO()
    with pytest.raises(CompareError, match=r"candidate\.arrow: has changed since it was compared"):
        comparison.write(stream, "json", with_texts=True)
    assert stream.getvalue() == ""
    with pytest.raises(CompareError, match="has changed since"):
        comparison.write_directory(tmp_path / "out", with_texts=True)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["baseline.arrow", "candidate.arrow"]
    with pytest.raises(CompareError, match="has changed since"):  # the offline judge's claims are read off them
        comparison.to_json()
    scored = compare(
        tmp_path / "baseline.arrow",
        tmp_path / "baseline.arrow",
        baseline_scores=handmade_scores("baseline", None),
        candidate_scores=handmade_scores("baseline", None),
    )
    shutil.copy(HANDMADE_RUNS / "candidate.arrow", tmp_path / "baseline.arrow")
    assert json.loads(scored.to_json())["cases"]  # scores without claims: the JSON without texts needs no run
