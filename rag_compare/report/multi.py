"""Several candidates compared with one baseline (``MultiComparison``), for people: the text summary (the runs,
each candidate's statuses, the verdict of the ranking, a leaderboard per ranked signal, the warnings) and the
Markdown report (the same, then every signal's deltas by candidate and the cases that changed in some
candidate, each with the candidates it changed in). Both stay readable with a hundred candidates: a candidate
is a row, never a column."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

import polars as pl

from rag_compare.compute.case_status import CASE_STATUSES
from rag_compare.compute.comparison import SCOPE_TITLES
from rag_compare.compute.multi_comparison import NAMED_CANDIDATES, MultiComparison
from rag_compare.compute.ranking import RankKey
from rag_compare.core.credentials import redactor
from rag_compare.core.listing import counted, truncated
from rag_compare.report.documents import environment
from rag_compare.report.summaries import gate_verdict
from rag_compare.report.text import k_text, number_text, p_value_text, text_table

if TYPE_CHECKING:
    from rag_compare.compute.gate_result import GateResult

__all__ = ["multi_context", "multi_text", "write_multi_report"]

_LEADER_HEADERS = ("rank", "candidate", "mean", "baseline", "delta vs baseline", "95% CI", "p (Holm)", "n")
_CHANGED_GROUPS = {
    "regressed in": ("regressed",),
    "improved in": ("improved",),
    "mixed or unstable in": ("mixed", "unstable"),
    "failed or missing in": tuple(s for s in CASE_STATUSES if s.startswith(("failed", "judge_failed", "missing"))),
}
"""How a changed case lists its candidates: by what happened to it there."""


def multi_text(multi: MultiComparison) -> str:
    """The summary for a terminal, before control characters are escaped."""
    parts = ["".join(f"warning: {warning}\n" for warning in multi.warnings), _runs_table(multi)]
    parts.append(text_table(*_status_table(multi), title="Cases per status, by candidate"))
    parts.append(verdict_line(multi))
    for key in multi.ranking.rank_by:
        title, rows = leaderboard(multi, key)
        parts.append(text_table(_LEADER_HEADERS, rows, title=title))
    parts.append(family_line(multi))
    return "\n".join(part.rstrip("\n") + "\n" for part in parts if part)


def verdict_line(multi: MultiComparison) -> str:
    """``best candidate: X: ...`` or ``no clear winner: ...``."""
    ranking = multi.ranking
    return f"best candidate: {ranking.best}: {ranking.reason}" if ranking.best else ranking.reason


def family_line(multi: MultiComparison) -> str:
    """What the Holm family of the p-values shown is."""
    signals = multi.aggregates.filter(pl.col("p_value").is_not_null()).get_column("signal").n_unique()
    return (
        f"p (Holm): adjusted over {counted(len(multi.names), 'candidate')} x {counted(signals, 'signal')}, one "
        "family per scope; "
        "the candidates' tests against each other are their own family."
    )


def _gate_cells(name: str, gate: GateResult) -> tuple[str, str, str]:
    """A candidate, its gate's verdict, and the conditions that held with their numbers."""
    held = "; ".join(f"{result.condition}: {result.numbers}" for result in gate.held) or "none"
    return name, gate_verdict(gate), held


def _runs_table(multi: MultiComparison) -> str:
    rows = [(run["side"], run["name"], run["fingerprint"], run["path"], run["k"]) for run in _runs(multi)]
    return text_table(("", "run", "fingerprint", "path", "k"), rows)


def _runs(multi: MultiComparison) -> list[dict[str, str]]:
    """The baseline, then each candidate under its name: fingerprint, creation time, path and ``k``."""
    runs = [("baseline", multi.baseline.name, multi.baseline)]
    runs += [("candidate", name, c.candidate) for name, c in zip(multi.names, multi.comparisons, strict=True)]
    return [
        {
            "side": side,
            "name": name,
            "fingerprint": run.fingerprint[:12],
            "created_at": run.created_at,
            "path": run.path_text,
            "k": k_text(run.k),
        }
        for side, name, run in runs
    ]


def _status_table(multi: MultiComparison) -> tuple[list[str], list[list[str]]]:
    """Headers and rows: each candidate's cases per status, the statuses some candidate has."""
    shown = [status for status in CASE_STATUSES if any(counts[status] for counts in multi.counts.values())]
    rows = [[name, *(f"{counts[status]:,}" for status in shown)] for name, counts in multi.counts.items()]
    return ["candidate", *shown], rows


def leaderboard(multi: MultiComparison, key: RankKey) -> tuple[str, list[list[str]]]:
    """The title and rows of ``key``'s leaderboard."""
    scope = "paired" if key.scope == "paired" else "all cases"
    title = f"Leaderboard of {key.signal.name} ({scope}), best first"
    rows = [_leader_cells(row) for row in multi.leaderboard(key.signal.name, key.scope).iter_rows(named=True)]
    return title, rows


def _leader_cells(row: Mapping[str, Any]) -> list[str]:
    ci = "" if row["ci_low"] is None else f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"
    return [
        "" if row["rank"] is None else str(row["rank"]),
        row["run"],
        number_text(row["candidate"]),
        number_text(row["baseline"]),
        "" if row["delta"] is None else f"{row['delta']:+.3f}",
        ci,
        p_value_text(row["p_adjusted"]),
        f"{row['n']:,}",
    ]


def delta_rows(multi: MultiComparison, scope: str) -> tuple[list[str], list[list[str]]]:
    """Headers (the signals with values) and a row per candidate: each signal's delta against the baseline in
    ``scope``, marked ``*`` where its interval is off 0 and its Holm p below the ranking's alpha."""
    rows = multi.aggregates.filter((pl.col("scope") == scope) & (pl.col("n") > 0))
    signals = rows.get_column("signal").unique(maintain_order=True).to_list()
    found = {(row["run"], row["signal"]): row for row in rows.iter_rows(named=True)}
    cells = [
        [name, *(_delta_cell(found.get((name, signal)), multi.ranking.alpha) for signal in signals)]
        for name in multi.names
    ]
    return ["candidate", *signals], cells


def _delta_cell(row: Mapping[str, Any] | None, alpha: float) -> str:
    if row is None or row["delta"] is None:
        return ""
    moved = row["p_adjusted"] is not None and row["p_adjusted"] < alpha and (row["ci_low"] > 0 or row["ci_high"] < 0)
    return f"{row['delta']:+.3f}{'*' if moved else ''}"


def changed_rows(multi: MultiComparison, max_cases: int | None) -> tuple[list[list[str]], int]:
    """The cases that changed in some candidate (the first ``max_cases``; ``None``: all), each with the
    candidates of each ``_CHANGED_GROUPS``, and how many there are."""
    changed = multi.changed_cases()
    listed = changed if max_cases is None else changed.head(max_cases)
    rows = []
    for row in listed.iter_rows(named=True):
        groups = [_in_group(row, multi.names, statuses) for statuses in _CHANGED_GROUPS.values()]
        rows.append([row["case_id"], *groups])
    return rows, changed.height


def _in_group(row: Mapping[str, Any], names: Sequence[str], statuses: Sequence[str]) -> str:
    """The candidates where the case's status is one of ``statuses`` (each with it, when there are several): the
    first ``NAMED_CANDIDATES`` of them, then how many more."""
    found = [f"{name} ({row[name]})" if len(statuses) > 1 else name for name in names if row[name] in statuses]
    return truncated(found, NAMED_CANDIDATES)


def multi_context(
    multi: MultiComparison, *, max_cases: int | None, gates: Mapping[str, GateResult] | None = None
) -> dict[str, Any]:
    """What the Markdown report and the HTML page show (their templates' ``c``): the changed cases up to
    ``max_cases`` (``None``: all), each candidate's gate verdict (``gates``, by name) first."""
    changed, total = changed_rows(multi, max_cases)
    headers, rows = _status_table(multi)
    return {
        "title": f"{multi.baseline.name} against {len(multi.names)} candidates",
        "warnings": multi.warnings,
        "verdict": verdict_line(multi),
        "gates": [_gate_cells(name, gate) for name, gate in (gates or {}).items()],
        "runs": _runs(multi),
        "status_headers": headers,
        "status_rows": rows,
        "leaderboards": [leaderboard(multi, key) for key in multi.ranking.rank_by],
        "leader_headers": _LEADER_HEADERS,
        "family": family_line(multi),
        "scopes": SCOPE_TITLES,
        "alpha": f"{multi.ranking.alpha:g}",
        "deltas": {scope: delta_rows(multi, scope) for scope in SCOPE_TITLES},
        "changed": changed,
        "changed_total": total,
        "changed_headers": ["case", *_CHANGED_GROUPS],
    }


def write_multi_report(
    multi: MultiComparison, stream: TextIO, *, max_cases: int | None, gates: Mapping[str, GateResult] | None = None
) -> None:
    """The Markdown report (``templates/multi.md.j2``) of ``multi_context``."""
    context = multi_context(multi, max_cases=max_cases, gates=gates)
    for chunk in environment("markdown").get_template("multi.md.j2").generate(c=context, redact=redactor()):
        stream.write(chunk)
