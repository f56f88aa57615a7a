"""Every result renders through the report floor: ``Report.render``/``_repr_html_`` dispatch by type, and no
rendering shows a credential."""

from __future__ import annotations

import html
import io
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from rag_compare.compute.audit import audit_corpora
from rag_compare.compute.compare_runs import compare
from rag_compare.compute.comparison import Comparison
from rag_compare.compute.fallback import simulate_fallback
from rag_compare.compute.freezing import freeze_run
from rag_compare.compute.gate_result import ConditionResult, GateResult
from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.core.result import Report, terminal_safe
from rag_compare.io.corpus import load_corpus
from rag_compare.io.drafts_file import DraftFailure
from rag_compare.io.pairs import judge_pairs
from rag_compare.io.runs import Run, load_run
from rag_compare.io.scores import score_run
from rag_compare.llm.plan import JudgePlan
from rag_compare.report import rendering, summaries
from rag_compare.report.comparison_text import comparison_text
from rag_compare.report.page import notebook_page
from rag_compare.report.preference import pairs_text
from tests.helpers.credential_shapes import KEY_SHAPES, copied_as, legacy_run, secret_parts
from tests.helpers.data import EXAMPLE_CORPUS, EXAMPLE_OLD_CORPUS, HANDMADE_RUNS, PAYLOAD, ROOT
from tests.helpers.drafting import drafts_of
from tests.helpers.pairs import BASELINE, CANDIDATE, CORPUS, ScriptedPairJudge

Rendered = dict[str, tuple[Report, Callable[[Any], str]]]
TYPES = ["Corpus", "Run", "Scores", "CorpusAudit", "FallbackSimulation", "Drafts", "JudgePlan", "Pairs", "Comparison"]


@pytest.fixture(scope="module")
def results() -> Rendered:
    """One result of each type, with the report floor's text renderer for it, by type name."""
    corpus = load_corpus(EXAMPLE_CORPUS)
    run = load_run(HANDMADE_RUNS / "baseline.arrow")
    scores = score_run(run, LexicalJudge())
    trust = scores.frame.select("case_id", "judge_status", pl.col("grounded").cast(pl.Float64).alias("trust"))
    judged = [freeze_run(records, CORPUS, {"name": name}) for name, records in (("b", BASELINE), ("c", CANDIDATE))]
    drafts = drafts_of(corpus.frame.head(2), failures=(DraftFailure("p-1", f"HTTP 500 {PAYLOAD}\x1b[31m"),))
    pairs: list[tuple[Report, Callable[[Any], str]]] = [
        (corpus, summaries.corpus_text),
        (run, summaries.run_text),
        (scores, summaries.scores_text),
        (audit_corpora(EXAMPLE_OLD_CORPUS, EXAMPLE_CORPUS), summaries.audit_text),
        (simulate_fallback(run, trust, "trust", [0.5]), summaries.simulation_text),
        (drafts, summaries.drafts_text),
        (JudgePlan(cases=1, requests=3, cached=1, prompt_tokens=900, completion_tokens=80), summaries.plan_text),
        (judge_pairs(*judged, ScriptedPairJudge()), pairs_text),
        (compare(run, HANDMADE_RUNS / "candidate.arrow"), comparison_text),
    ]
    return {type(result).__name__: (result, renderer) for result, renderer in pairs}


def test_every_type_is_rendered(results: Rendered) -> None:
    assert sorted(results) == sorted(TYPES)


@pytest.mark.parametrize("kind", TYPES)
def test_each_result_renders_its_text_through_the_report_floor(results: Rendered, kind: str) -> None:
    result, renderer = results[kind]
    assert rendering.text.dispatch(type(result)) is renderer
    text = renderer(result)
    assert text.strip()
    assert result.render("text") == result.render() == terminal_safe(text)
    assert "\x1b" not in result.render("text")


@pytest.mark.parametrize("kind", TYPES)
def test_each_result_shows_in_a_notebook(results: Rendered, kind: str) -> None:
    result, renderer = results[kind]
    expected = (
        notebook_page(result) if isinstance(result, Comparison) else f"<pre>{html.escape(renderer(result))}</pre>"
    )
    assert result._repr_html_() == expected


def test_a_result_type_without_a_renderer_is_refused() -> None:
    @dataclass(frozen=True)
    class Unknown(Report):
        def to_dict(self) -> dict[str, Any]:
            return {"x": 1}

    assert Unknown().render("json") == '{\n  "x": 1\n}\n'
    with pytest.raises(TypeError, match="no text rendering is registered for Unknown"):
        Unknown().render("text")


def test_only_a_comparison_renders_as_a_report(results: Rendered) -> None:
    corpus, _ = results["Corpus"]
    stream = io.StringIO()
    with pytest.raises(ValueError, match="a Corpus renders as text or in a notebook, not as 'markdown'"):
        rendering.write(corpus, stream, "markdown")
    assert stream.getvalue() == ""


REPORT_GATE = GateResult((ConditionResult("regressed>2%", True, True, "4 of 34 cases regressed"),), alpha=0.05)


@pytest.fixture(scope="module", params=KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def leaky(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Run, Comparison]:
    """A run an older rag-compare froze with ``secret`` in its name, paths and config, compared with a run
    file at a path holding it: their names, paths and config diff show it wherever they are shown."""
    secret, folder = request.param, tmp_path_factory.mktemp("leaky")
    baseline = load_run(legacy_run(HANDMADE_RUNS / "baseline.arrow", secret, folder / "baseline.arrow"))
    candidate = copied_as(shutil.copy(HANDMADE_RUNS / "candidate.arrow", folder / "candidate.arrow"), secret)
    return secret, baseline, compare(baseline, candidate, passages=ROOT / "corpora" / "handbook_passages.csv")


@pytest.mark.parametrize("format", ["text", "json", "markdown", "html", "github", "junit", "notebook", "repr"])
def test_no_rendering_of_a_comparison_shows_a_credential_of_a_run(
    leaky: tuple[str, Run, Comparison], format: str
) -> None:
    secret, _, comparison = leaky
    shown = {
        "notebook": comparison._repr_html_,
        "repr": lambda: repr(comparison),
    }.get(format, lambda: comparison.render(format, gate=REPORT_GATE))()
    assert "(redacted)" in shown
    assert not any(form in shown for form in secret_parts(secret))


def test_a_comparison_written_as_a_folder_shows_no_credential_of_a_run(
    leaky: tuple[str, Run, Comparison], tmp_path: Path
) -> None:
    secret, _, comparison = leaky
    summary = (comparison.write_directory(tmp_path / "compared") / "summary.json").read_text(encoding="utf-8")
    assert "(redacted)" in summary
    assert not any(form in summary for form in secret_parts(secret))


@pytest.mark.parametrize("format", ["text", "json", "notebook"])
def test_no_rendering_of_a_run_shows_a_credential_of_its_name_path_or_config(
    leaky: tuple[str, Run, Comparison], format: str
) -> None:
    secret, run, _ = leaky
    shown = run._repr_html_() if format == "notebook" else run.render(format)
    assert not any(form in shown for form in secret_parts(secret))
