"""The comparison's JSON document (``Comparison.to_json``) of the hand-made runs, against its golden file."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from click.testing import Result

from rag_compare import RunExistsError, RunFileError, compare
from rag_compare.compute import comparison as comparison_module
from tests.helpers.data import ROOT
from tests.helpers.golden import HANDMADE_COMPARISON


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
