"""Config differences between two runs and the warnings they raise."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_compare.compute.configdiff import config_diff, config_warnings, setting_changes

BASE = {
    "name": "baseline",
    "created_at": "2026-01-01T00:00:00+00:00",
    "top_k": 3,
    "retriever": {"kind": "bm25", "top_k": 3},
    "prompt": "Answer from the passages.",
    "corpus": {"path": "corpora/a.csv", "fingerprint": "a" * 64, "cases": 10},
}


def changed(**updates: object) -> dict[str, object]:
    return BASE | updates


def test_lists_only_keys_that_differ_flattened_and_sorted() -> None:
    candidate = changed(name="candidate", retriever={"kind": "bm25", "top_k": 5}, temperature=0.2)
    assert config_diff(BASE, candidate) == [
        {"key": "name", "baseline": "baseline", "candidate": "candidate"},
        {"key": "retriever.top_k", "baseline": 3, "candidate": 5},
        {"key": "temperature", "baseline": None, "candidate": 0.2},
    ]


def test_one_setting_recorded_under_two_keys_raises_no_warning() -> None:
    candidate = changed(name="candidate", created_at="later", top_k=5, retriever={"kind": "bm25", "top_k": 5})
    assert config_warnings(config_diff(BASE, candidate)) == []


def test_two_settings_at_once_are_named_in_a_warning() -> None:
    candidate = changed(top_k=5, prompt="Answer briefly.")
    [warning] = config_warnings(config_diff(BASE, candidate))
    assert warning.startswith("2 settings differ (prompt, top_k)")


def test_different_evaluators_and_corpora_warn() -> None:
    candidate = changed(
        evaluator={"name": "llm"},
        corpus={"path": "corpora/a.csv", "fingerprint": "b" * 64, "cases": 10},
    )
    warnings = config_warnings(config_diff(BASE | {"evaluator": {"name": "lexical"}}, candidate))
    assert len(warnings) == 2
    assert "different evaluator settings (evaluator.name)" in warnings[0]
    assert f"fingerprints {'a' * 12} and {'b' * 12}" in warnings[1]


def test_identical_configs_have_no_diff() -> None:
    assert config_diff(BASE, dict(BASE)) == []


def test_setting_changes_leave_out_bookkeeping_and_what_runs_were_merged_from() -> None:
    merged = changed(name="merged", created_at="later", merged_from=[{"name": "a"}], top_k=5)
    assert setting_changes(config_diff(BASE, merged)) == [{"key": "top_k", "baseline": 3, "candidate": 5}]
    assert setting_changes(config_diff(BASE, merged), ignored=()) == config_diff(BASE, merged)


def test_paths_naming_the_same_file_are_no_difference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "passages.csv").write_text("passage_id,source_version,text\n", encoding="utf-8")
    (tmp_path / "link.csv").symlink_to(tmp_path / "kb" / "passages.csv")
    monkeypatch.chdir(tmp_path)
    absolute, relative = str(tmp_path / "kb" / "passages.csv"), "kb/passages.csv"
    for other in (relative, "./kb/../kb/passages.csv", "link.csv"):
        candidate = changed(knowledge_base=other, retriever={"passages": {"path": other}})
        baseline = changed(knowledge_base=absolute, retriever={"passages": {"path": absolute}})
        assert config_diff(baseline, candidate) == [], other


def test_paths_of_missing_files_compare_normalised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert (
        config_diff(changed(knowledge_base="gone/kb.csv"), changed(knowledge_base=str(tmp_path / "gone/kb.csv"))) == []
    )
    assert config_diff(changed(knowledge_base="a/../kb.csv"), changed(knowledge_base="kb.csv")) == []
    assert [change["key"] for change in config_diff(BASE, changed(corpus=BASE["corpus"] | {"path": "b.csv"}))] == [
        "corpus.path"
    ]


def test_a_relative_path_points_into_the_run_files_folder_when_the_current_one_lacks_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "kb.csv").write_text(folder, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    runs = (tmp_path / "one" / "run.arrow", tmp_path / "two" / "run.arrow")
    config = changed(knowledge_base="kb.csv")
    assert [change["key"] for change in config_diff(config, config, runs)] == ["knowledge_base"]
    assert config_diff(config, changed(knowledge_base="one/kb.csv"), (runs[0], None)) == []


def test_only_keys_named_like_paths_compare_as_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert len(config_diff(changed(prompt="a/../b"), changed(prompt="b"))) == 1
    assert len(config_diff(changed(knowledge_base=None), changed(knowledge_base="kb.csv"))) == 1
