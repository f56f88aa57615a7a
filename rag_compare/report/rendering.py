"""Every result rendered for people, by its type: text for a terminal, HTML for a notebook, and a
comparison's Markdown and HTML reports and its CI formats (``github``, ``junit``).

``core.result.Report`` defers here (``write``), so a result holds data and its renderings live on this
floor: a new result type registers its text summary with ``text``.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Mapping
from typing import Any, TextIO

from rag_compare.compute.agreement import Agreement
from rag_compare.compute.audit import CorpusAudit
from rag_compare.compute.comparison import Comparison
from rag_compare.compute.fallback import FallbackSimulation
from rag_compare.compute.gate_result import GateResult
from rag_compare.compute.history import History
from rag_compare.compute.multi_comparison import MultiComparison
from rag_compare.core.credentials import redact
from rag_compare.core.result import Report, terminal_safe
from rag_compare.io.corpus import Corpus
from rag_compare.io.drafts_file import Drafts
from rag_compare.io.pairs import Pairs
from rag_compare.io.reviews import Reviews
from rag_compare.io.run_import import ImportedRun
from rag_compare.io.runs import Run
from rag_compare.io.scores import Scores
from rag_compare.llm.plan import JudgePlan
from rag_compare.report import summaries
from rag_compare.report.agreement import agreement_text, write_agreement
from rag_compare.report.comparison_text import comparison_text
from rag_compare.report.documents import write_report
from rag_compare.report.github import write_github, write_multi_github
from rag_compare.report.history import history_text, write_history
from rag_compare.report.junit import write_agreement_junit, write_junit, write_multi_junit
from rag_compare.report.multi import multi_text, write_multi_report
from rag_compare.report.multi_page import write_multi_page
from rag_compare.report.page import notebook_page, write_page
from rag_compare.report.preference import pairs_text
from rag_compare.report.reviews import reviews_text

__all__ = ["notebook", "text", "write"]


def write(result: Report, stream: TextIO, format: str, **options: Any) -> None:
    """Write ``result`` to ``stream`` as ``text`` (credentials redacted, control characters escaped),
    ``notebook`` (HTML), or, for a comparison, as a ``markdown`` or ``html`` report or a CI format
    (``options``: ``all_cases``, ``max_cases``, ``gate``; see ``_write_comparison``); a history as an ``html``
    page; several candidates as ``markdown``."""
    if format == "text":
        stream.write(terminal_safe(redact(text(result))))
    elif format == "notebook":
        stream.write(notebook(result))
    elif isinstance(result, Comparison):
        _write_comparison(result, stream, format, **options)
    elif isinstance(result, MultiComparison):
        _write_multi(result, stream, format, max_cases=options["max_cases"], gates=options.get("gates"))
    elif isinstance(result, Agreement) and format in ("markdown", "html"):
        write_agreement(result, stream, format, gate=options.get("gate"))
    elif isinstance(result, Agreement) and format == "junit":
        write_agreement_junit(result, stream, gate=options.get("gate"))
    elif isinstance(result, History) and format == "html":
        write_history(result, stream, format)
    else:
        raise ValueError(f"a {type(result).__name__} renders as text or in a notebook, not as {format!r}")


def _write_comparison(
    comparison: Comparison,
    stream: TextIO,
    format: str,
    *,
    all_cases: bool,
    max_cases: int | None,
    gate: GateResult | None,
) -> None:
    """Write ``comparison`` as a ``markdown`` report or an ``html`` page (the verdict of ``gate`` at the top
    of either), or for CI with that verdict: ``github`` (workflow commands, then the Markdown report) or
    ``junit`` (JUnit XML)."""
    if format == "github":
        write_github(comparison, stream, stream, all_cases=all_cases, max_cases=max_cases, gate=gate)
    elif format == "junit":
        write_junit(comparison, stream, max_cases=max_cases, gate=gate)
    elif format == "html":
        write_page(comparison, stream, all_cases=all_cases, max_cases=max_cases, gate=gate)
    elif format == "markdown":
        write_report(comparison, stream, all_cases=all_cases, max_cases=max_cases, gate=gate)
    else:
        raise ValueError(f"unknown report format {format!r}")


def _write_multi(
    multi: MultiComparison,
    stream: TextIO,
    format: str,
    *,
    max_cases: int | None,
    gates: Mapping[str, GateResult] | None,
) -> None:
    """Write several candidates as a ``markdown`` report, an ``html`` page or for CI (``github``, ``junit``), with
    each candidate's gate verdict (``gates``, by name)."""
    if format == "markdown":
        write_multi_report(multi, stream, max_cases=max_cases, gates=gates)
    elif format == "html":
        write_multi_page(multi, stream, max_cases=max_cases, gates=gates)
    elif format == "github":
        write_multi_github(multi, stream, stream, max_cases=max_cases, gates=gates)
    elif format == "junit":
        write_multi_junit(multi, stream, max_cases=max_cases, gates=gates)
    else:
        raise ValueError(f"several candidates render as text, json, markdown, html, github or junit, not {format!r}")


@functools.singledispatch
def text(result: Report) -> str:
    """``result`` for a terminal, before control characters are escaped."""
    raise TypeError(f"no text rendering is registered for {type(result).__name__}")


text.register(Corpus, summaries.corpus_text)
text.register(Run, summaries.run_text)
text.register(Scores, summaries.scores_text)
text.register(CorpusAudit, summaries.audit_text)
text.register(FallbackSimulation, summaries.simulation_text)
text.register(Drafts, summaries.drafts_text)
text.register(ImportedRun, summaries.imported_text)
text.register(JudgePlan, summaries.plan_text)
text.register(GateResult, summaries.gate_text)
text.register(Pairs, pairs_text)
text.register(Reviews, reviews_text)
text.register(Comparison, comparison_text)
text.register(Agreement, agreement_text)
text.register(History, history_text)
text.register(MultiComparison, multi_text)


@functools.singledispatch
def notebook(result: Report) -> str:
    """``result`` as HTML for a notebook: its text, credentials redacted, escaped, in a ``<pre>``."""
    return f"<pre>{html.escape(redact(text(result)))}</pre>"


notebook.register(Comparison, notebook_page)
