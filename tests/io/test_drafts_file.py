"""The drafts file: writing drafts, never over a file, and admitting reviewed cases as gold (in place only in a
regular file)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from rag_compare.core.errors import ConfigError, InputFileError, RunExistsError, RunFileError
from rag_compare.io.corpus import load_corpus
from rag_compare.io.drafts_file import Drafts, admit_cases, write_drafts
from tests.helpers.drafting import drafts_of
from tests.helpers.special_files import NODES, bad_output, node_kind, not_blocked_by


@pytest.fixture
def drafts() -> Drafts:
    """Three drafted cases of two passages, as drafting returns them (synthetic, unreviewed)."""
    frame = pl.DataFrame(
        {
            "case_id": ["draft-a@v2", "draft-b@v2", "draft-c@v2"],
            "question": ["What is the hotel cap?", "How much is the hotel cap?", "Who cooks the meals?"],
            "answerability": ["answerable", "answerable", "unanswerable"],
            "source_version": ["v2"] * 3,
            "required_passage_ids": [["hotel-1"], ["hotel-1"], []],
            "acceptance_note": ["150 euros, 210 in Paris", "150 euros, 210 in Paris", "The sources do not say."],
            "category": ["synthetic_wording", "synthetic_wording", "distractor"],
            "origin": ["synthetic"] * 3,
            "reviewed": [False] * 3,
            "drafted_from": [["hotel-1"], ["hotel-1"], ["meal-1"]],
        }
    )
    return drafts_of(load_corpus(frame).frame, source_version="v2")


def test_write_drafts_never_overwrites(tmp_path: Path, drafts: Drafts) -> None:
    output = tmp_path / "drafts.csv"
    write_drafts(drafts, output)
    written = output.read_bytes()
    with pytest.raises(RunExistsError, match="never overwritten by the drafts file"):
        write_drafts(drafts, output)
    assert output.read_bytes() == written
    with pytest.raises(InputFileError, match=r"unknown drafts file type '\.xlsx'"):
        write_drafts(drafts, tmp_path / "drafts.xlsx")


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_admit_marks_exactly_the_given_ids(tmp_path: Path, drafts: Drafts, suffix: str) -> None:
    path = tmp_path / f"drafts{suffix}"
    write_drafts(drafts, path)
    chosen = drafts.frame.get_column("case_id").to_list()[:2]
    returned = admit_cases(path, [chosen[0], f" {chosen[1]} ", chosen[0]])
    reread = load_corpus(path).frame
    assert reread.filter("reviewed").get_column("case_id").to_list() == chosen
    assert reread.height == drafts.frame.height
    assert returned.equals(reread)
    admit_cases(path, [chosen[1]])  # already reviewed: fine
    assert load_corpus(path).frame.filter("reviewed").height == 2


def test_admit_refuses_unknown_ids_and_leaves_the_file_untouched(tmp_path: Path, drafts: Drafts) -> None:
    path = tmp_path / "drafts.csv"
    write_drafts(drafts, path)
    before = path.read_bytes()
    known = drafts.frame.get_column("case_id")[0]
    with pytest.raises(ConfigError) as excinfo:
        admit_cases(path, [known, "nope@v2", "gone@v2"])
    assert "drafts.csv: no case of this file has the ids 'nope@v2', 'gone@v2'" in str(excinfo.value)
    assert "Nothing was admitted" in str(excinfo.value)
    assert path.read_bytes() == before


def test_admit_to_an_output_leaves_the_drafts_and_refuses_an_existing_output(tmp_path: Path, drafts: Drafts) -> None:
    path, output = tmp_path / "drafts.jsonl", tmp_path / "gold.csv"
    write_drafts(drafts, path)
    before = path.read_bytes()
    known = drafts.frame.get_column("case_id")[0]
    admit_cases(path, [known], output=output)
    assert path.read_bytes() == before
    assert load_corpus(output).frame.filter("reviewed").get_column("case_id").to_list() == [known]
    with pytest.raises(RunExistsError, match="never overwritten by the admitted corpus"):
        admit_cases(path, [known], output=output)
    admit_cases(path, [known], output=path)  # the drafts file itself: in place
    assert load_corpus(path).frame.filter("reviewed").get_column("case_id").to_list() == [known]


def test_admit_in_place_replaces_only_a_regular_file(tmp_path: Path, drafts: Drafts) -> None:
    path, link = tmp_path / "drafts.csv", tmp_path / "link.csv"
    write_drafts(drafts, path)
    before = path.read_bytes()
    link.symlink_to(path)
    known = drafts.frame.get_column("case_id")[0]
    for given in ({"drafts_path": link}, {"drafts_path": path, "output": link}):
        with pytest.raises(RunFileError, match=f"^{link}: is a symbolic link, which an output never replaces"):
            admit_cases(ids=[known], **given)
    assert (link.is_symlink(), path.read_bytes()) == (True, before)


@pytest.mark.parametrize("kind", NODES)
def test_admit_in_place_refuses_a_special_file_unopened(tmp_path: Path, kind: str) -> None:
    node = Path(bad_output(kind, tmp_path / "drafts.csv"))
    before = node_kind(node)
    with not_blocked_by(node), pytest.raises(RunFileError, match=f"^{node}: is a (character device|FIFO|socket|symb)"):
        admit_cases(node, ["draft-a@v2"])
    assert node_kind(node) == before
