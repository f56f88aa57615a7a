"""The capture checkpoint file: records kept across a reopen by (case, repeat), the last line of a sample
winning, a line without a repeat read as repeat 0, a cut-off line dropped, a file of other settings or a
damaged one refused, and a special file in its place refused unopened."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_compare.core.errors import CaptureError, NestingError, RunFileError
from rag_compare.core.nesting import MAX_DEPTH
from rag_compare.pipeline.checkpoint import Checkpoint, checkpoint_path, sample_of
from tests.helpers.nesting import DEEP, nested_json
from tests.helpers.special_files import NODES, bad_output, node_kind, not_blocked_by


def test_the_checkpoint_lives_beside_its_run(tmp_path: Path) -> None:
    assert checkpoint_path(tmp_path / "run.arrow") == tmp_path / "run.arrow.checkpoint.jsonl"


def test_records_survive_a_reopen_and_a_case_counts_by_its_last_line(tmp_path: Path) -> None:
    path = tmp_path / "run.arrow.checkpoint.jsonl"
    checkpoint = Checkpoint.open(path, "s1")
    checkpoint.append({"case_id": "a@v1", "status": "failed"})
    checkpoint.append({"case_id": "b@v1", "status": "ok"})
    checkpoint.append({"case_id": "a@v1", "status": "ok"})
    checkpoint.close()
    with path.open("a", encoding="utf-8") as stream:
        stream.write('{"case_id": "c@v1", "sta')  # a write a kill cut short
    reopened = Checkpoint.open(path, "s1")
    assert reopened.records == {  # a record without a repeat is repeat 0
        ("a@v1", 0): {"case_id": "a@v1", "status": "ok", "repeat": 0},
        ("b@v1", 0): {"case_id": "b@v1", "status": "ok", "repeat": 0},
    }
    reopened.append({"case_id": "c@v1", "status": "ok"})
    reopened.close()
    assert path.read_text(encoding="utf-8").splitlines()[-1] == '{"case_id": "c@v1", "status": "ok"}'
    last = Checkpoint.open(path, "s1")
    assert set(last.records) == {("a@v1", 0), ("b@v1", 0), ("c@v1", 0)}
    last.remove()
    assert not path.exists()


def test_each_sample_of_a_case_is_its_own_line_and_an_old_line_is_repeat_0(tmp_path: Path) -> None:
    path = tmp_path / "run.arrow.checkpoint.jsonl"
    path.write_text(
        '{"format": "rag-compare-checkpoint-1", "settings": "s1"}\n'
        '{"case_id": "a@v1", "status": "ok"}\n'  # written before samples had a repeat
        '{"case_id": "a@v1", "repeat": 2, "status": "failed"}\n'
        '{"case_id": "b@v1", "repeat": 0, "status": "ok"}\n'
        '{"case_id": "a@v1", "repeat": 2, "status": "ok"}\n',  # the same sample again: the last line counts
        encoding="utf-8",
    )
    checkpoint = Checkpoint.open(path, "s1")
    checkpoint.append({"case_id": "a@v1", "repeat": 1, "status": "timeout"})
    assert checkpoint.records == {
        ("a@v1", 0): {"case_id": "a@v1", "status": "ok", "repeat": 0},
        ("a@v1", 2): {"case_id": "a@v1", "repeat": 2, "status": "ok"},
        ("b@v1", 0): {"case_id": "b@v1", "repeat": 0, "status": "ok"},
        ("a@v1", 1): {"case_id": "a@v1", "repeat": 1, "status": "timeout"},
    }
    checkpoint.close()
    assert set(Checkpoint.open(path, "s1").records) == {("a@v1", 0), ("a@v1", 1), ("a@v1", 2), ("b@v1", 0)}


def test_the_sample_of_a_record_is_its_case_and_repeat() -> None:
    assert sample_of({"case_id": "a@v1"}) == ("a@v1", 0)
    assert sample_of({"case_id": "a@v1", "repeat": 3}) == ("a@v1", 3)
    for repeat in (-1, 1.0, "1", True, None):
        with pytest.raises(TypeError):
            sample_of({"case_id": "a@v1", "repeat": repeat})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"format": "rag-compare-checkpoint-1", "settings": "s2"}\n', "other settings or another corpus"),
        ("not a checkpoint\n", "is not a capture checkpoint"),
        (
            '{"format": "rag-compare-checkpoint-1", "settings": "s1"}\n{"case_id": \n{"case_id": "a@v1"}\n',
            "line 2 is damaged",
        ),
        (
            '{"format": "rag-compare-checkpoint-1", "settings": "s1"}\n{"case_id": "a@v1", "repeat": -1}\n',
            "line 2 is damaged",
        ),
        ('{"format": "rag-compare-checkpoint-1", "settings": "s1"}\n[1, 2]\n', "line 2 is damaged"),
    ],
    ids=["other-settings", "not-a-checkpoint", "damaged-line", "negative-repeat", "not-a-record"],
)
def test_a_checkpoint_it_cannot_resume_is_refused(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "run.arrow.checkpoint.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CaptureError, match=message):
        Checkpoint.open(path, "s1")
    assert path.read_text(encoding="utf-8") == content


def test_a_header_cut_off_before_its_end_starts_a_new_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "run.arrow.checkpoint.jsonl"
    path.write_text('{"format": "rag-comp', encoding="utf-8")
    checkpoint = Checkpoint.open(path, "s1")
    checkpoint.close()
    assert checkpoint.records == {}
    assert path.read_text(encoding="utf-8") == '{"format": "rag-compare-checkpoint-1", "settings": "s1"}\n'


@pytest.mark.parametrize("kind", NODES)
def test_a_special_file_in_the_checkpoint_s_place_is_refused_unopened(tmp_path: Path, kind: str) -> None:
    node = Path(bad_output(kind, tmp_path / "run.arrow.checkpoint.jsonl"))
    before = node_kind(node)
    with not_blocked_by(node), pytest.raises(RunFileError, match=f"^{node}: is a (character device|FIFO|socket|symb)"):
        Checkpoint.open(node, "s1")
    assert node_kind(node) == before


def test_a_checkpoint_line_nested_too_deep_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "run.arrow.checkpoint.jsonl"
    record = nested_json({"case_id": "a@v1", "answer": DEEP}, 1000)
    path.write_text(f'{{"format": "rag-compare-checkpoint-1", "settings": "s1"}}\n{{"case_id": "b@v1"}}\n{record}\n')
    with pytest.raises(NestingError, match=f"^{path}: line 3: nests lists or objects more than {MAX_DEPTH} levels"):
        Checkpoint.open(path, "s1")
