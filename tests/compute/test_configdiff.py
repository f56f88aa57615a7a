"""Config differences between two runs and the warnings they raise."""

from __future__ import annotations

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
