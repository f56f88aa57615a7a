"""A gate file's ``[gate]`` table read as written: its conditions unparsed, its alpha or None (the checks of a
whole gate file, through ``load_gate``, are in tests/compute/test_gating.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_compare.core.errors import GateError
from rag_compare.io.gate_file import read_gate_file


def test_the_conditions_come_as_written_and_alpha_may_be_left_out(tmp_path: Path) -> None:
    path = tmp_path / "ci.toml"
    path.write_text('title = "ci"\n[gate]\nfail_on = ["regressed, recall:worse", "nonsense"]\n', encoding="utf-8")
    assert read_gate_file(path) == (["regressed, recall:worse", "nonsense"], None)
    path.write_text('[gate]\nfail_on = ["regressed"]\nalpha = 0.01\n', encoding="utf-8")
    assert read_gate_file(str(path)) == (["regressed"], 0.01)


@pytest.mark.parametrize("alpha", ["true", "0", "1", "-0.5", "inf", "nan", '"0.05"', "[0.05]"])
def test_alpha_is_a_number_between_zero_and_one(tmp_path: Path, alpha: str) -> None:
    path = tmp_path / "gate.toml"
    path.write_text(f'[gate]\nfail_on = ["regressed"]\nalpha = {alpha}\n', encoding="utf-8")
    with pytest.raises(GateError, match=r"gate.toml: \[gate\] alpha must be a number between 0 and 1"):
        read_gate_file(path)


@pytest.mark.parametrize("table", ["[gate]\nfail_on = []\n", "[gate]\nfail_on = []\nalpha = 0.01\n"])
def test_fail_on_may_not_be_empty(tmp_path: Path, table: str) -> None:
    path = tmp_path / "gate.toml"
    path.write_text(table, encoding="utf-8")
    with pytest.raises(GateError, match=r"gate.toml: \[gate\] fail_on is empty: a gate without a condition passes"):
        read_gate_file(path)


def test_a_folder_is_no_gate_file(tmp_path: Path) -> None:
    with pytest.raises(GateError, match="is a folder, not a gate file"):
        read_gate_file(tmp_path)
