"""The text summaries of the small results: a corpus, a run, scores, a corpus audit, a fallback
simulation, drafted cases, a judging plan and a release gate's verdict (a comparison's is in ``comparison_text``).

Each returns the text before control characters are escaped; ``rendering`` escapes it for a terminal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import polars as pl

from rag_compare.core.errors import problem_lines
from rag_compare.core.listing import counted, counts_line, truncated
from rag_compare.io.config import flatten
from rag_compare.io.sources.rows import skipped_reasons
from rag_compare.report.text import config_text, text_table

if TYPE_CHECKING:
    from rag_compare.compute.audit import CorpusAudit
    from rag_compare.compute.fallback import FallbackSimulation
    from rag_compare.compute.gate_result import ConditionResult, GateResult
    from rag_compare.io.corpus import Corpus
    from rag_compare.io.drafts_file import Drafts
    from rag_compare.io.run_import import ImportedRun
    from rag_compare.io.runs import Run
    from rag_compare.io.scores import Scores
    from rag_compare.llm.plan import JudgePlan

__all__ = [
    "audit_text",
    "condition_outcome",
    "corpus_text",
    "drafts_text",
    "gate_text",
    "gate_verdict",
    "imported_text",
    "plan_text",
    "run_text",
    "scores_text",
    "simulation_text",
]

_THRESHOLD_HEADERS = (
    "threshold",
    "replaced",
    "bad caught",
    "good hidden",
    "bad shown",
    "unscored",
    "catch rate",
    "hide rate",
)


def corpus_text(corpus: Corpus) -> str:
    summary = corpus.to_dict()
    counts = summary["counts"]
    rows = [
        ("cases", summary["cases"]),
        ("fingerprint", corpus.fingerprint[:16]),
        ("answerability", counts_line(counts["answerability"])),
        ("source versions", counts_line(counts["source_version"])),
        ("categories", counts_line(counts["category"])),
        ("origin", f"{counts_line(counts['origin'])} ({counts['unreviewed']} not reviewed)"),
        ("metadata columns", ", ".join(corpus.metadata_columns) or "none"),
    ]
    text = f"{corpus.source}: valid corpus\n" + text_table(("", ""), rows)
    if corpus.warnings:
        text += f"warnings ({len(corpus.warnings)}):\n" + problem_lines(corpus.warnings)
    return text


def run_text(run: Run) -> str:
    summary = run.to_dict()
    head = [
        ("run", run.name),
        ("path", summary["path"] or "(not written)"),
        ("fingerprint", run.fingerprint),
        ("created", run.created_at),
        ("cases", f"{summary['cases']} of {summary['corpus_cases']} in the corpus"),
        ("status", counts_line(summary["status_counts"])),
    ]
    if "repeats" in summary:
        head.insert(5, ("samples", f"{summary['samples']} (up to {summary['repeats']} per case)"))
    config_rows = sorted(
        (key, json.dumps(value, ensure_ascii=False)) for key, value in flatten(summary["config"]).items()
    )
    return text_table(("", ""), head) + "\n" + text_table(("config key", "value"), config_rows)


def imported_text(imported: ImportedRun) -> str:
    """What an import read and made: units read, cases imported and failed, what was skipped or left
    out and why, the texts that matched no passage; then the run it froze."""
    account = imported.imported.to_dict()
    unit = account["unit"]
    lines = [
        f"read {counted(account['read'], unit)} of {account['source']} ({account['format']}; case ids from the "
        f"{account['case_ids']})",
        f"imported {counted(account['cases'], 'case')} ({account['failed']} failed)",
    ]
    if account["skipped"]:
        reasons = counts_line(skipped_reasons(account["skipped"]), "; ")
        lines.append(f"skipped {counted(len(account['skipped']), unit)}: {reasons}")
    if account["left_out"]:
        left_out = counted(len(account["left_out"]), unit)
        lines.append(f"left out {left_out} repeating a case (kept {account['keep']})")
    if account["unmatched_passages"]:
        texts = counted(len(account["unmatched_passages"]), "retrieved text")
        lines.append(f"{texts} matched no passage of the knowledge base (left out of the ids)")
    if account["texts_without_ids"]:
        lines.append(
            f"{counted(account['texts_without_ids'], 'case')} retrieved texts without passage ids: no knowledge "
            "base was given to map them, so their retrieval is not recorded"
        )
    run = imported.run
    written = "" if run.path is None else f" to {run.path}"
    lines.append(f"froze {run.records.height} cases of '{run.name}'{written} (fingerprint {run.fingerprint[:12]})")
    return "\n".join(lines) + "\n"


def scores_text(scores: Scores) -> str:
    summary = scores.to_dict()
    head = [
        ("scores", summary["path"] or "(not written)"),
        ("fingerprint", scores.fingerprint),
        ("run", f"{scores.run['name']} ({str(scores.run['fingerprint'])[:12]})"),
        ("evaluator", f"{scores.evaluator['name']} ({str(scores.evaluator['fingerprint'])[:12]})"),
        ("cases", str(summary["cases"])),
        *([("samples", str(summary["samples"]))] if "samples" in summary else []),
        ("judging", counts_line({status: count for status, count in scores.counts.items() if count})),
    ]
    head += [(name, f"{count:,}") for name, count in summary["usage"].items()]
    means = [(name, "n/a" if mean is None else f"{mean:.3f}") for name, mean in summary["means"].items()]
    return text_table(("", ""), head) + "\n" + text_table(("signal", "mean"), means)


def audit_text(audit: CorpusAudit) -> str:
    old, new = audit.old, audit.new
    verdict = "no violations" if not audit.violations else counted(audit.violations, "violation")
    text = (
        f"audit {old.source} ({counted(old.frame.height, 'case')}) -> {new.source} "
        f"({counted(new.frame.height, 'case')}): {verdict}\n"
        f"added {audit.added.height} · new versions {audit.new_versions.height} · "
        f"removed {audit.removed.height} · relabeled {audit.relabeled.get_column('case_id').n_unique()} · "
        f"unreviewed synthetic {audit.unreviewed.height}\n"
    )
    sections = [
        ("Removed cases (violation: keep old cases; retire them by adding new ones)", audit.removed),
        ("Relabeled cases (violation: a relabel needs a new case id and source version)", audit.relabeled),
        ("New versions of a question", audit.new_versions),
        ("Added cases", audit.added),
        ("Synthetic cases not yet reviewed (candidates, not gold)", audit.unreviewed),
    ]
    for title, frame in sections:
        if frame.height:
            rows = frame.select(pl.all().cast(pl.String)).rows()
            text += "\n" + text_table(frame.columns, rows, title=title)
    return text


def simulation_text(simulation: FallbackSimulation) -> str:
    signal, column, people = simulation.signal, simulation.truth, simulation.people
    truth = "corpus labels (abstention, context coverage)" if column is None else f"column '{column}'"
    if people is not None:
        truth = f"people's {people['label']} in {people['labels']}"
    head = [
        ("run", f"{simulation.run_name} ({simulation.run_fingerprint[:12]})"),
        ("signal", signal),
        ("evaluator", _evaluator_text(simulation.evaluator)),
        ("truth", truth),
        ("fallback text", simulation.fallback_text),
        ("rule", f"replace the answer when {signal} < T"),
    ]
    rows = [_threshold_cells(row) for row in simulation.thresholds.iter_rows(named=True)]
    first = simulation.thresholds.item(0, "threshold")
    replaced = simulation.cases.filter(pl.col("replaced")).get_column("case_id")
    shown = truncated(replaced) or "none"
    return (
        text_table(("", ""), head)
        + "\n"
        + text_table(_THRESHOLD_HEADERS, rows)
        + f"\nreplaced at {signal} < {_threshold_text(first)}: {shown}\n"
    )


def _threshold_cells(row: Mapping[str, Any]) -> tuple[str, ...]:
    counts = (f"{row[name]:,}" for name in ("replaced", "bad_caught", "good_hidden", "bad_shown", "unscored"))
    return (_threshold_text(row["threshold"]), *counts, _percent(row["catch_rate"]), _percent(row["hide_rate"]))


def _threshold_text(threshold: float) -> str:
    """Two decimals (``0.05``, ``1.00``), more only when the threshold has them."""
    return f"{threshold:.2f}" if round(threshold, 2) == threshold else f"{threshold:g}"


def _percent(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate * 100:.1f}%"


def _evaluator_text(evaluator: Mapping[str, Any] | None) -> str:
    if evaluator is None:
        return "not given"
    return " · ".join(f"{key} {config_text(value, 40)}" for key, value in evaluator.items()) or "not given"


def drafts_text(drafts: Drafts) -> str:
    summary = drafts.to_dict()
    version = f" of source version {drafts.source_version}" if drafts.source_version else ""
    rows = [
        ("cases", f"{drafts.frame.height} (all synthetic, reviewed=false: drafts, not gold)"),
        ("answerability", counts_line(summary["counts"]["answerability"])),
        ("categories", counts_line(summary["counts"]["category"])),
        ("passages", f"{drafts.drafted} drafted of {drafts.passages} sent ({drafts.available} available{version})"),
        ("model", f"{drafts.model} at {drafts.endpoint}"),
        ("requests", f"{drafts.sent} sent, {drafts.cached} from the cache"),
    ]
    text = f"drafted {drafts.frame.height} cases from {drafts.drafted} passages\n" + text_table(("", ""), rows)
    if drafts.requested > drafts.available:
        text += f"asked for {drafts.requested} passages; only {drafts.available} exist{version}, so all were used\n"
    if drafts.dropped:
        text += f"left out {drafts.dropped} blank or repeated texts\n"
    if drafts.failures:
        noun = "passage" if len(drafts.failures) == 1 else "passages"
        text += f"failed ({len(drafts.failures)} {noun}, no cases drafted from them):\n"
        text += "".join(f"  - {failure.passage_id}: {failure.error}\n" for failure in drafts.failures)
    return text


def plan_text(plan: JudgePlan) -> str:
    rows = [(key.replace("_", " "), f"{value:,}") for key, value in plan.to_dict().items()]
    return text_table(("dry run: nothing was sent", ""), rows) + (
        "Token estimates count only the requests to send, at four characters a token.\n"
    )


def gate_text(result: GateResult) -> str:
    """Whether the gate passed, then each condition with its outcome and numbers, in the order given."""
    rows = [(condition.condition, condition_outcome(condition), condition.numbers) for condition in result.conditions]
    table = text_table(("condition", "outcome", "numbers"), rows) if rows else ""
    return f"{gate_verdict(result)} (alpha {result.alpha:g})\n{table}"


def gate_verdict(result: GateResult) -> str:
    """``gate passed: 3 conditions, none held`` or ``gate failed: 2 of 3 conditions held``."""
    count = len(result.conditions)
    noun = "condition" if count == 1 else "conditions"
    if result.passed:
        return f"gate passed: {count} {noun}, none held"
    return f"gate failed: {len(result.held)} of {count} {noun} held"


def condition_outcome(condition: ConditionResult) -> str:
    """``held``, ``not held`` or ``not evaluated``."""
    if not condition.evaluated:
        return "not evaluated"
    return "held" if condition.held else "not held"
