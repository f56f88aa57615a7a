"""Runs found by path, folder and glob pattern, in creation order, read from their metadata alone; and every input
that is no run refused with what to do."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from rag_compare.compute.freezing import freeze_run
from rag_compare.core.errors import RunFileError, RunIntegrityError
from rag_compare.io.run_listing import Skipped, list_runs
from rag_compare.io.runs import open_run
from tests.helpers.data import ROOT

CORPUS = pl.DataFrame(
    {
        "case_id": ["a@v1", "b@v1"],
        "question": ["What is a?", "What is b?"],
        "answerability": ["answerable", "answerable"],
        "source_version": ["v1", "v1"],
        "required_passage_ids": [["pa"], ["pb"]],
    }
)
RECORDS = pl.DataFrame({"case_id": ["a@v1", "b@v1"], "retrieved_passage_ids": [["pa"], ["x"]]})
HOUR = 3600
# Frozen below, by creation time (SOURCE_DATE_EPOCH): "early" at 0 h (file z-early.arrow), "tie-b" and "tie-a" at
# 1 h (files y-tie-b.arrow and x-tie-a.arrow, so the path breaks the tie: x-tie-a first), "late" at 2 h, a run
# directory (late/). Creation order, then: early, tie-a, tie-b, late; file order is the other way round.
ORDER = ["early", "tie-a", "tie-b", "late"]


def _freeze(output: str | Path, name: str, hours: int) -> None:
    environ = {"SOURCE_DATE_EPOCH": str(1_800_000_000 + hours * HOUR)}
    freeze_run(RECORDS, CORPUS, {"name": name}, output=output, environ=environ)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("runs")
    _freeze(folder / "z-early.arrow", "early", 0)
    _freeze(folder / "y-tie-b.arrow", "tie-b", 1)
    _freeze(folder / "x-tie-a.arrow", "tie-a", 1)
    _freeze(f"{folder / 'late'}/", "late", 2)  # a run directory
    return folder


def test_a_folder_lists_its_runs_in_creation_order_ties_by_path(runs: Path) -> None:
    listing = list_runs(runs)
    assert [run.name for run in listing.runs] == ORDER
    assert [run.path.name for run in listing.runs] == ["z-early.arrow", "x-tie-a.arrow", "y-tie-b.arrow", "late"]
    assert listing.runs[0].created_at == "2027-01-15T08:00:00+00:00"  # 1,800,000,000 s after 1970
    assert listing.runs[0].corpus["cases"] == 2
    assert listing.skipped == ()


def test_globs_and_paths_together_list_each_run_once(runs: Path) -> None:
    listing = list_runs([f"{runs}/*.arrow", runs / "x-tie-a.arrow", f"{runs}/lat?"])
    assert [run.name for run in listing.runs] == ORDER  # x-tie-a.arrow is given twice, listed once
    assert list_runs(str(runs / "**" / "*-tie-*.arrow")).runs[0].name == "tie-a"


def test_listing_reads_no_record(runs: Path, tmp_path: Path) -> None:
    # A byte changed among a run file's record batches (between its schema message and its footer), and a part of
    # a run directory damaged: their metadata is intact, so the runs are listed (with the fingerprints they say they
    # have); opening them checks the bytes and refuses them.
    damaged = tmp_path / "damaged.arrow"
    data = bytearray((runs / "z-early.arrow").read_bytes())
    records_start = 16 + int.from_bytes(data[12:16], "little")  # past the magic and the schema message
    records_end = len(data) - 10 - int.from_bytes(data[-10:-6], "little")  # before the footer
    data[(records_start + records_end) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    directory = tmp_path / "late"
    shutil.copytree(runs / "late", directory)
    part = next(directory.glob("part-*.parquet"))
    part.write_bytes(part.read_bytes()[:-1] + b"\x00")
    listing = list_runs([damaged, directory])
    assert [run.name for run in listing.runs] == ["early", "late"]
    assert listing.runs[0].fingerprint == open_run(runs / "z-early.arrow").fingerprint
    with pytest.raises(RunIntegrityError, match="does not match its fingerprint"):
        open_run(damaged)
    with pytest.raises(RunIntegrityError, match="part"):
        open_run(directory)


def test_other_rag_compare_files_in_a_folder_are_skipped_and_refused_when_named(runs: Path, tmp_path: Path) -> None:
    shutil.copy(runs / "z-early.arrow", tmp_path / "run.arrow")
    shutil.copy(ROOT / "runs" / "reviews.arrow", tmp_path / "reviews.arrow")
    (tmp_path / "notes.txt").write_text("not a run", encoding="utf-8")
    listing = list_runs(tmp_path)
    assert [run.name for run in listing.runs] == ["early"]
    assert listing.skipped == (Skipped(tmp_path / "reviews.arrow", "reviews file"),)
    with pytest.raises(RunFileError, match=r"reviews\.arrow: is a reviews file, not a run\. Give a run file"):
        list_runs(tmp_path / "reviews.arrow")
    with pytest.raises(RunFileError, match=r"holds no run, only files of other kinds: .*reviews\.arrow"):
        list_runs(f"{tmp_path}/rev*")


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ([], "give at least one run: a run file, a run directory, a folder holding runs, or a glob pattern"),
        (["{tmp}/*.arrow"], r"\*\.arrow: the pattern matches no file or folder\. Check it"),
        (["{tmp}/missing.arrow"], "missing.arrow: no such run file or run directory. Give a run file"),
        (["{tmp}"], r": holds no run \(no run file `\*\.arrow` or run directory in it\)"),
        (["{tmp}/notes.arrow"], r"notes\.arrow: is not a frozen run \(not an Arrow file"),
    ],
)
def test_what_is_no_run_is_refused_saying_what_to_give(tmp_path: Path, given: list[str], message: str) -> None:
    if "notes" in "".join(given):
        (tmp_path / "notes.arrow").write_text("not Arrow", encoding="utf-8")
    with pytest.raises(RunFileError, match=message):
        list_runs([item.format(tmp=tmp_path) for item in given])


def test_an_arrow_file_among_the_runs_that_is_no_frozen_run_is_refused(runs: Path, tmp_path: Path) -> None:
    shutil.copy(runs / "z-early.arrow", tmp_path / "run.arrow")
    pl.DataFrame({"x": [1]}).write_ipc(tmp_path / "other.arrow")
    with pytest.raises(RunFileError, match=r"other\.arrow: is an Arrow file but not a frozen run \(no fingerprint\)"):
        list_runs(tmp_path)
