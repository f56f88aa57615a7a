"""A history of runs for a terminal and as an HTML page: the runs in creation order, what changed from each
run to the next, and per signal each run's mean with its interval and its change from the run before, the
significant ones marked; on the page, one trend chart per signal (``trend_chart``), its line and interval band
broken where the corpus changed.

The page is rendered from ``templates/history.html.j2`` by the reports' environment (``documents.environment``:
autoescape, every expression redacted), and loads nothing and runs no script: its Content-Security-Policy
(``CONTENT_SECURITY_POLICY``) allows inline styles alone.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

import polars as pl

from rag_compare.compute.history import ALPHA, CONFIDENCE, History, HistoryStep
from rag_compare.core.credentials import redact, redactor
from rag_compare.core.listing import counted, truncated
from rag_compare.core.result import terminal_safe
from rag_compare.core.signals import SIGNALS_BY_NAME
from rag_compare.report.text import config_text, p_value_text, text_table

if TYPE_CHECKING:
    from rag_compare.io.run_listing import Skipped

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "HOW_TO_READ",
    "RUN_HEADERS",
    "SIGNAL_HEADERS",
    "TrendChart",
    "TrendPoint",
    "TrendValue",
    "history_context",
    "history_text",
    "trend_chart",
    "write_history",
]

CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
"""The page's policy: nothing loads, no script runs, its inline styles apply."""
HOW_TO_READ = (
    f"How to read it: a run's mean is over its cases with a value of the signal (n), with its "
    f"{CONFIDENCE:.0%} bootstrap interval. A change is the paired delta from the run before, over the cases "
    f"both runs answered, with its {CONFIDENCE:.0%} interval and its p-value Holm-adjusted across the signals; "
    f"it is marked better or worse when the interval leaves out 0 and the adjusted p is below {ALPHA:g}. Where "
    "the corpus changed, two runs are compared on the cases they share, and a trend is not drawn across it."
)
RUN_HEADERS = ("#", "run", "created", "fingerprint", "corpus", "versions", "cases")
SIGNAL_HEADERS = ("#", "run", "mean", f"{CONFIDENCE:.0%} interval", "n", "change from the run before")
_SHOWN_CHANGES = 10
"""Config changes a step shows; the JSON lists every one."""
_MOST_X_LABELS = 12
_PLOT_HEIGHT = 160.0
_MARGIN = {"left": 48.0, "right": 16.0, "top": 12.0, "bottom": 28.0}


def history_text(result: History) -> str:
    """The history for a terminal, before control characters are escaped."""
    parts = [_scope(result)]
    if result.skipped:
        parts.append(_skipped(result.skipped))
    parts.append(text_table(RUN_HEADERS, _run_rows(result), title="Runs, in creation order"))
    if result.steps:
        parts.append("Changes from the run before\n" + "".join(_step_text(view) for view in _step_views(result)))
    for view in _signal_views(result, charts=False):
        parts.append(text_table(SIGNAL_HEADERS, view["rows"], title=view["title"]) if view["rows"] else view["title"])
    parts.append(HOW_TO_READ)
    return "\n\n".join(part.rstrip("\n") for part in parts) + "\n"


def write_history(result: History, stream: TextIO, format: str) -> None:
    """Write ``result`` to ``stream`` as ``text`` (credentials redacted, control characters escaped) or as an
    ``html`` page."""
    if format == "text":
        stream.write(terminal_safe(redact(history_text(result))))
        return
    if format != "html":
        raise ValueError(f"a history renders as text, json or html, not as {format!r}")
    from rag_compare.report.documents import environment

    template = environment("html").get_template("history.html.j2")
    for chunk in template.generate(c=history_context(result), redact=redactor()):
        stream.write(chunk)


def history_context(result: History) -> dict[str, Any]:
    """What the page shows, every number written out as the text summary writes it."""
    from rag_compare._version import __version__

    return {
        "version": __version__,
        "csp": CONTENT_SECURITY_POLICY,
        "title": f"History of {counted(result.runs.height, 'run')}",
        "scope": _scope(result),
        "skipped": _skipped(result.skipped) if result.skipped else "",
        "run_headers": RUN_HEADERS,
        "runs": _run_rows(result),
        "steps": _step_views(result),
        "signal_headers": SIGNAL_HEADERS,
        "signals": _signal_views(result, charts=True),
        "how_to_read": HOW_TO_READ,
    }


def _scope(result: History) -> str:
    runs = counted(result.runs.height, "run")
    if result.corpus_version is None:
        return f"History of {runs} in creation order, on every corpus version."
    return (
        f"History of {runs} in creation order, of corpus version {result.corpus_version}: each run is measured on "
        f"its cases of that version."
    )


def _skipped(skipped: Sequence[Skipped]) -> str:
    listed = truncated([f"{item.path} ({item.kind})" for item in skipped])
    return f"Skipped, not runs: {listed}."


def _run_rows(result: History) -> list[tuple[str, ...]]:
    return [
        (
            str(run["position"]),
            run["name"],
            run["created_at"],
            run["fingerprint"][:12],
            _short(run["corpus_fingerprint"]),
            ", ".join(run["corpus_versions"]) or "none",
            f"{run['cases']:,}",
        )
        for run in result.runs.iter_rows(named=True)
    ]


def _short(fingerprint: str | None) -> str:
    return "none" if fingerprint is None else fingerprint[:12]


def _step_note(step: HistoryStep, previous: Mapping[str, Any], current: Mapping[str, Any]) -> str:
    """What a step says of its corpus when it changed (``previous`` and ``current``: the two rows of
    ``History.runs``); empty when it did not."""
    if not (step.corpus_changed or step.versions_changed):
        return ""
    changed = []
    if step.corpus_changed:
        fingerprints = (_short(previous["corpus_fingerprint"]), _short(current["corpus_fingerprint"]))
        changed.append("the corpus changed (fingerprint {} → {})".format(*fingerprints))
    if step.versions_changed:
        versions = (", ".join(run["corpus_versions"]) or "none" for run in (previous, current))
        changed.append("the cases are of other source versions ({} → {})".format(*versions))
    note = f"{' and '.join(changed)}: compared on the {counted(step.shared_cases, 'case')} both runs hold"
    return note + ("; the trend breaks here" if step.corpus_changed else "")


def _step_views(result: History) -> list[dict[str, Any]]:
    """Per step: its run, config changes (the first ``_SHOWN_CHANGES``), corpus note and significant changes."""
    runs = {run["position"]: run for run in result.runs.iter_rows(named=True)}
    significant = result.changes.filter(pl.col("significant"))
    views = []
    for step in result.steps:
        current, previous = runs[step.position], runs[step.position - 1]
        changes = [
            f"{change['key']} {_config_value(change['previous'])} → {_config_value(change['current'])}"
            for change in step.config_changes
        ]
        marked = significant.filter(pl.col("position") == step.position).iter_rows(named=True)
        views.append(
            {
                "run": f"#{step.position} {current['name']}",
                "config": truncated(changes, _SHOWN_CHANGES, separator="; ", suffix=" (the JSON lists every one)")
                or "unchanged",
                "corpus": _step_note(step, previous, current),
                "significant": [f"{row['signal']} {row['direction']} {_change(row)}" for row in marked],
            }
        )
    return views


def _config_value(value: object) -> str:
    """A config value as JSON on one line (``(absent)`` for a key a run lacks), redacted, cut to 40 characters."""
    return config_text(None if value is None else json.dumps(value, ensure_ascii=False), 40)


def _step_text(view: Mapping[str, Any]) -> str:
    lines = [view["run"], f"  config: {view['config']}"]
    if view["corpus"]:
        lines.append(f"  {view['corpus']}")
    lines.append("  significant: " + ("; ".join(view["significant"]) or "none"))
    return "".join(f"{line}\n" for line in lines)


def _change(row: Mapping[str, Any]) -> str:
    """A change as shown: ``-0.178 [-0.216, -0.133], p (Holm) 0.002``."""
    if row["delta"] is None:
        return "no case with a value in both runs"
    interval = "" if row["ci_low"] is None else f" [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"
    return f"{row['delta']:+.3f}{interval}, p (Holm) {p_value_text(row['p_adjusted']) or '-'}"


def _signal_views(result: History, *, charts: bool) -> list[dict[str, Any]]:
    """Per signal shown: its title, a row per run (mean, interval, n, change) and, with ``charts``, its chart."""
    runs = result.runs.select("position", "name", "segment")
    steps = {step.position: step for step in result.steps}
    changed = ("delta", "ci_low", "ci_high", "p_adjusted", "significant", "direction")
    views = []
    for name in result.signals:
        aggregates = result.aggregates.filter(pl.col("signal") == name).drop("signal")
        changes = result.changes.filter(pl.col("signal") == name).select(
            "position", pl.col(*changed).name.prefix("change_")
        )
        rows = runs.join(aggregates, on="position", how="left").join(changes, on="position", how="left").to_dicts()
        direction = "higher" if SIGNALS_BY_NAME[name].higher_is_better else "lower"
        held = any(row["n"] for row in rows)
        views.append(
            {
                "name": name,
                "title": f"{name} ({direction} is better)" + ("" if held else ": no values"),
                "rows": [_signal_row(row, steps.get(row["position"])) for row in rows] if held else [],
                "chart": trend_chart([_trend_value(row) for row in rows]) if charts and held else None,
            }
        )
    return views


def _signal_row(row: Mapping[str, Any], step: HistoryStep | None) -> tuple[str, ...]:
    """A run's cells in a signal's table: its change from the run before marked when significant, and said to
    be across a corpus change."""
    mean = "" if row["mean"] is None else f"{row['mean']:.3f}"
    interval = "" if row["ci_low"] is None else f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
    change = ""
    if step is not None:
        change = _change({name: row[f"change_{name}"] for name in ("delta", "ci_low", "ci_high", "p_adjusted")})
        change = f"{row['change_direction']}: {change}" if row["change_significant"] else change
        change = f"(corpus changed) {change}" if step.corpus_changed else change
    return (str(row["position"]), row["name"], mean, interval, f"{row['n'] or 0:,}", change)


def _trend_value(row: Mapping[str, Any]) -> TrendValue:
    tone = row["change_direction"] if row["change_significant"] else "same"
    label = f"#{row['position']} {row['name']}"
    if row["mean"] is not None:
        label += f": {row['mean']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}], n {row['n']:,}"
    return TrendValue(row["position"], row["segment"], row["mean"], row["ci_low"], row["ci_high"], tone, label)


@dataclass(frozen=True)
class TrendValue:
    """One run's value of a signal as a trend chart takes it: its position and corpus segment, its mean and
    interval (``None``: no value), the tone of its dot (``better``, ``worse``: a significant change from the
    run before; ``same``) and the label its dot's tooltip shows."""

    position: int
    segment: int
    mean: float | None
    low: float | None
    high: float | None
    tone: str
    label: str


@dataclass(frozen=True)
class TrendPoint:
    """A run's dot (``x``, ``y``) and its interval (``low``, ``high``: y of each end), drawn as a whisker when
    it is ``lone`` (no neighbour to draw a band with)."""

    x: float
    y: float
    low: float
    high: float
    lone: bool
    tone: str
    label: str


@dataclass(frozen=True)
class TrendChart:
    """A signal's mean per run, in creation order from left to right, on a line through a band of their
    intervals: one line and band (SVG ``points``) per stretch of runs with a value on one corpus; a corpus
    change is a dashed rule (``breaks``: its x) that no line crosses. ``left``, ``right``, ``top`` and
    ``bottom`` bound the plot; ``y_ticks`` and ``x_ticks`` are (coordinate, label)."""

    width: float
    height: float
    left: float
    right: float
    top: float
    bottom: float
    y_ticks: tuple[tuple[float, str], ...]
    x_ticks: tuple[tuple[float, str], ...]
    lines: tuple[str, ...]
    bands: tuple[str, ...]
    points: tuple[TrendPoint, ...]
    breaks: tuple[float, ...]


def trend_chart(values: Sequence[TrendValue]) -> TrendChart:
    """The chart of ``values`` (one per run, in order; a value's ``segment`` changes where the corpus does)."""
    count = len(values)
    plot_width = min(720.0, max(360.0, 48.0 * count))
    left, top = _MARGIN["left"], _MARGIN["top"]
    right, bottom = left + plot_width, top + _PLOT_HEIGHT
    low, high = _value_range(values)

    def x(index: int) -> float:
        return left + plot_width * (index + 0.5) / count

    def y(value: float) -> float:
        return top + _PLOT_HEIGHT * (high - value) / (high - low)

    index_of = {value.position: index for index, value in enumerate(values)}
    stretches = [
        [
            TrendPoint(
                x(index_of[value.position]),
                y(value.mean),
                y(value.mean if value.low is None else value.low),
                y(value.mean if value.high is None else value.high),
                len(stretch) == 1,
                value.tone,
                value.label,
            )
            for value in stretch
            if value.mean is not None
        ]
        for stretch in _stretches(values)
    ]
    step = math.ceil(count / _MOST_X_LABELS)
    ticks = [low + (high - low) * k / 4 for k in range(5)]
    return TrendChart(
        width=right + _MARGIN["right"],
        height=bottom + _MARGIN["bottom"],
        left=left,
        right=right,
        top=top,
        bottom=bottom,
        y_ticks=tuple((y(tick), f"{round(tick, 3):g}") for tick in ticks),
        x_ticks=tuple((x(index), f"#{value.position}") for index, value in enumerate(values) if index % step == 0),
        lines=tuple(" ".join(_xy(point.x, point.y) for point in stretch) for stretch in stretches),
        bands=tuple(_band(stretch) for stretch in stretches if len(stretch) > 1),
        points=tuple(point for stretch in stretches for point in stretch),
        breaks=tuple(
            (x(index - 1) + x(index)) / 2
            for index in range(1, count)
            if values[index].segment != values[index - 1].segment
        ),
    )


def _band(stretch: Sequence[TrendPoint]) -> str:
    """A stretch's interval band as SVG ``points``: its highs left to right, then its lows right to left."""
    edge = [*(_xy(point.x, point.high) for point in stretch), *(_xy(point.x, point.low) for point in stretch[::-1])]
    return " ".join(edge)


def _xy(x: float, y: float) -> str:
    """A point of an SVG ``points`` list."""
    return f"{x:.1f},{y:.1f}"


def _value_range(values: Sequence[TrendValue]) -> tuple[float, float]:
    """The y axis: the values and intervals within tenths, at least a tenth wide; 0 to 1 without a value."""
    held = [number for value in values for number in (value.mean, value.low, value.high) if number is not None]
    if not held:
        return 0.0, 1.0
    low, high = math.floor(min(held) * 10) / 10, math.ceil(max(held) * 10) / 10
    if high - low < 0.1:
        low, high = (high - 0.1, high) if high >= 1 else (low, low + 0.1)
    return low, high


def _stretches(values: Sequence[TrendValue]) -> list[list[TrendValue]]:
    """The runs of consecutive values with a mean on one corpus segment, each a stretch of one line."""
    stretches: list[list[TrendValue]] = []
    for index, value in enumerate(values):
        if value.mean is None:
            continue
        before = values[index - 1] if index else None
        joined = before is not None and before.mean is not None and before.segment == value.segment
        if joined:
            stretches[-1].append(value)
        else:
            stretches.append([value])
    return stretches
