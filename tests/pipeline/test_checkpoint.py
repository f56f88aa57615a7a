"""The capture checkpoint file: records kept across a reopen, the last line of a case winning, a cut-off
line dropped, a file of other settings or a damaged one refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_compare.core.errors import CaptureError
from rag_compare.pipeline.checkpoint import Checkpoint, checkpoint_path


def test_the_checkpoint_lives_beside_its_run(tmp_path: Path) -> None:
    assert checkpoint_path(tmp_path / "run.arrow") == tmp_path / "run.arrow.checkpoint.jsonl"


def test_records_survive_a_reopen_and_a_case_counts_by_its_last_line(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "run.arrow.checkpoint.jsonl"
    checkpoint = Checkpoint.open(path, "s1")
    checkpoint.append({"case_id": "a@v1", "status": "failed"})
    checkpoint.append({"case_id": "b@v1", "status": "ok"})
    checkpoint.append({"case_id": "a@v1", "status": "ok"})
    checkpoint.close()
    with path.open("a", encoding="utf-8") as stream:
        stream.write('{"case_id": "c@v1", "sta')  # a write a kill cut short
    reopened = Checkpoint.open(path, "s1")
    assert reopened.records == {
        "a@v1": {"case_id": "a@v1", "status": "ok"},
        "b@v1": {"case_id": "b@v1", "status": "ok"},
    }
    reopened.append({"case_id": "c@v1", "status": "ok"})
    reopened.close()
    assert path.read_text(encoding="utf-8").splitlines()[-1] == '{"case_id": "c@v1", "status": "ok"}'
    last = Checkpoint.open(path, "s1")
    assert set(last.records) == {"a@v1", "b@v1", "c@v1"}
    last.remove()
    assert not path.exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"format": "rag-compare-checkpoint-1", "settings": "s2"}\n', "other settings or another corpus"),
        ("not a checkpoint\n", "is not a capture checkpoint"),
        (
            '{"format": "rag-compare-checkpoint-1", "settings": "s1"}\n{"case_id": \n{"case_id": "a@v1"}\n',
            "line 2 is damaged",
        ),
    ],
    ids=["other-settings", "not-a-checkpoint", "damaged-line"],
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
