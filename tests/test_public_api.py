"""The public API is exactly what ``__all__`` lists, and the README documents each name."""

from __future__ import annotations

import inspect
import re
import tomllib
from pathlib import Path

import pytest

import rag_compare
from rag_compare import (
    Gate,
    ImportedRun,
    JudgePlan,
    LexicalJudge,
    agreement,
    audit_corpora,
    compare,
    compare_many,
    export_reviews,
    freeze_run,
    history,
    judge_pairs,
    load_corpus,
    load_run,
    score_run,
    simulate_fallback,
)
from rag_compare.core.result import Report
from rag_compare.io.run_import import ImportedRecords
from tests.helpers import pairs
from tests.helpers.data import EXAMPLE_CORPUS, EXAMPLE_OLD_CORPUS, HANDMADE_RUNS, ROOT
from tests.helpers.drafting import drafts_of
from tests.helpers.pairs import ScriptedPairJudge
from tests.helpers.reviews import reviewed


def _readme_api_names() -> set[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Python API", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)(?:\(|`)", section))


def test_all_names_exist() -> None:
    for name in rag_compare.__all__:
        assert hasattr(rag_compare, name), name


def test_readme_documents_exactly_the_public_api() -> None:
    documented = {
        name
        for name in _readme_api_names()
        if hasattr(rag_compare, name) and not inspect.ismodule(getattr(rag_compare, name))
    }
    assert documented == set(rag_compare.__all__)


def test_errors_share_one_root_and_every_one_is_public() -> None:
    from rag_compare.core import errors as defined

    errors = {getattr(rag_compare, name) for name in rag_compare.__all__ if name.endswith("Error")}
    assert all(issubclass(error, rag_compare.RagCompareError) for error in errors)
    every = {value for name, value in vars(defined).items() if name.endswith("Error") and not name.startswith("_")}
    assert errors == {error for error in every if issubclass(error, rag_compare.RagCompareError)}
    assert len(errors) == 20


def test_version_is_pyprojects() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert rag_compare.__version__ == pyproject["project"]["version"]


def test_public_names_are_listed_and_an_unknown_one_is_refused() -> None:
    from rag_compare import OpenAIJudge, load_run
    from rag_compare.llm.llm_judge import OpenAIJudge as defined

    assert OpenAIJudge is defined
    assert callable(load_run)
    assert set(rag_compare.__all__) <= set(dir(rag_compare))
    with pytest.raises(AttributeError, match="module 'rag_compare' has no attribute 'nope'"):
        rag_compare.nope  # noqa: B018


def _results(directory: Path) -> dict[str, Report]:
    """One of each public result, made from the shipped and hand-made data."""
    run, candidate = load_run(HANDMADE_RUNS / "baseline.arrow"), load_run(HANDMADE_RUNS / "candidate.arrow")
    comparison = compare(run, candidate)
    scores = score_run(run, LexicalJudge())
    paired = [
        freeze_run(pairs.BASELINE, pairs.CORPUS, {"name": "a"}),
        freeze_run(pairs.CANDIDATE, pairs.CORPUS, {"name": "b"}),
    ]
    imported = ImportedRecords(run.records, "spans.jsonl", "openinference", "span", 40, "case_id", skipped=({},))
    return {
        "Agreement": agreement(ROOT / "runs" / "reviews.arrow", [ROOT / "runs" / "candidate.arrow"]),
        "Comparison": comparison,
        "Corpus": load_corpus(EXAMPLE_CORPUS),
        "CorpusAudit": audit_corpora(EXAMPLE_OLD_CORPUS, EXAMPLE_CORPUS),
        "Drafts": drafts_of(load_corpus(EXAMPLE_CORPUS).frame.head(3)),
        "FallbackSimulation": simulate_fallback(run, scores.frame, "grounded", [0.5, 0.9]),
        "GateResult": Gate.parse(["regressed", "recall:worse"]).evaluate(comparison),
        "History": history([HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow"]),
        "ImportedRun": ImportedRun(run, imported),
        "JudgePlan": JudgePlan(34, 102, 2, 12_345, 1_234),
        "MultiComparison": compare_many(run, [candidate, run]),
        "Pairs": judge_pairs(*paired, ScriptedPairJudge()),
        "Reviews": export_reviews(reviewed(directory / "reviews.sqlite"), run, candidate),
        "Run": run,
        "Scores": scores,
    }


def test_every_public_result_prints_as_one_short_line_saying_what_it_is(tmp_path: Path) -> None:
    results = _results(tmp_path)
    public = [getattr(rag_compare, name) for name in rag_compare.__all__]
    assert {kind.__name__ for kind in public if inspect.isclass(kind) and issubclass(kind, Report)} == set(results)
    for name, result in results.items():
        shown = repr(result)
        assert shown.startswith(f"<{name} ")
        assert shown.endswith(">")
        assert "\n" not in shown
        assert len(shown) <= 200, shown
        assert not any(dump in shown for dump in ("mappingproxy", "DataFrame", "shape:", "{", "="))
        assert str(result) == shown  # print() shows the same line outside a notebook
    assert repr(results["Run"]) == "<Run baseline (5f080d2f03f7): 34 cases: ok 33, failed 1>"
    assert (
        repr(results["MultiComparison"]) == "<MultiComparison baseline (5f080d2f03f7) → 2 candidates: no clear winner>"
    )
    assert repr(results["Corpus"]) == f"<Corpus {EXAMPLE_CORPUS} (42250babd46c): 36 cases, 1 warning>"


def test_a_gate_prints_as_the_call_that_makes_it() -> None:
    gate = Gate.parse(["regressed>2%, recall:worse", "error_rate>5%"], alpha=0.01)
    assert repr(gate) == "Gate.parse(['regressed>2%', 'recall:worse', 'error_rate>5%'], alpha=0.01)"
    assert eval(repr(gate), {"Gate": Gate}) == gate


def test_the_offline_judge_and_its_languages_print_short() -> None:
    judge = LexicalJudge()
    assert (
        repr(judge)
        == "LexicalJudge(min_overlap=0.6, language=None, languages=('en', 'de', 'es', 'fr', 'it', 'nl', 'pt'))"
    )
    assert (
        repr(judge.languages[0]) == "Language(code='en', name='English', decimal_separator='.', plural_suffixes=('s',))"
    )
