"""The history of a series of runs: ``history(runs)``, each run's aggregates in creation order and what changed
from the run before it.

The runs are listed from their metadata alone (``io.run_listing``), in creation order (ties by path). Each is
measured by ``compare``-ing it with the run before it (the first with the second; a lone run with itself):

- its aggregates: each signal's mean over its cases with a value (with repeats, each case's mean over its
  samples), with a 95% bootstrap interval that resamples cases as a comparison's intervals do
  (``stats.bootstrap_ci``, seeded: the same runs give the same numbers);
- the change from the run before: the comparison's paired delta of each signal with its 95% interval and its
  p-value, Holm-adjusted across the signals; *significant* when the interval leaves out 0 and the adjusted p
  is below ``ALPHA``, ``better`` or ``worse`` by the signal's good direction;
- the config keys that changed (``configdiff.setting_changes``: not the bookkeeping keys, such as the name
  and creation time).

A paired delta takes the cases both runs answered, so runs of different corpora (another corpus
fingerprint, or cases of other source versions) are compared only on the cases they share; each step says
how many cases both runs hold, and a changed corpus fingerprint starts a new ``segment``: a trend is never
drawn across it.

``corpus_version`` keeps the runs holding cases of that source version (a case id names it: ``q12@v3`` is of
``v3``; a run's ``source_version`` column says it, read alone from its records) and measures each run on
those cases alone.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare.compute.aggregates import aggregate_signals
from rag_compare.compute.compare_runs import compare
from rag_compare.compute.comparison import Comparison
from rag_compare.compute.configdiff import setting_changes
from rag_compare.compute.stats import bootstrap_ci
from rag_compare.core.digest import case_hash
from rag_compare.core.errors import CompareError
from rag_compare.core.listing import counted
from rag_compare.core.result import FORMATS, Report
from rag_compare.core.signals import ALL_SIGNALS, SIGNALS_BY_NAME, Signal
from rag_compare.io.run_listing import ListedRun, Skipped, list_runs
from rag_compare.io.runs import open_run

__all__ = ["ALPHA", "CONFIDENCE", "SCHEMA_VERSION", "History", "HistoryStep", "history"]

SCHEMA_VERSION = 1
"""The version of ``History.to_json``'s layout."""
ALPHA = 0.05
"""A change is significant when its Holm-adjusted p is below this (and its interval leaves out 0)."""
CONFIDENCE = 0.95
"""The confidence of every interval."""
_FORMATS = (*FORMATS, "html")
_BETTER_UP = {signal.name: signal.higher_is_better for signal in ALL_SIGNALS}
_AGGREGATES = pl.Schema(
    {
        "position": pl.Int64,
        "signal": pl.String,
        "mean": pl.Float64,
        "ci_low": pl.Float64,
        "ci_high": pl.Float64,
        "n": pl.Int64,
    }
)
_RUNS = pl.Schema(
    {
        "position": pl.Int64(),
        "name": pl.String(),
        "path": pl.String(),
        "fingerprint": pl.String(),
        "created_at": pl.String(),
        "corpus_fingerprint": pl.String(),
        "corpus_path": pl.String(),
        "corpus_versions": pl.List(pl.String()),
        "cases": pl.Int64(),
    }
)
_CHANGES = pl.Schema(
    {
        "position": pl.Int64,
        "signal": pl.String,
        **dict.fromkeys(("previous", "current", "delta", "ci_low", "ci_high", "p_value", "p_adjusted"), pl.Float64),
        "n": pl.Int64,
        "significant": pl.Boolean,
        "direction": pl.String,
    }
)
_CASES = {"case_id": pl.String, "source_version": pl.String}


@dataclass(frozen=True)
class HistoryStep:
    """What changed from the run before the run at ``position``: its config keys (``key``, ``previous``,
    ``current``), whether the corpus fingerprint changed (the trend breaks there) and whether the runs' cases
    are of other source versions, and how many cases both runs hold (those they are compared on)."""

    position: int
    config_changes: tuple[Mapping[str, Any], ...]
    corpus_changed: bool
    versions_changed: bool
    shared_cases: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "config_changes": [dict(change) for change in self.config_changes],
            "corpus_changed": self.corpus_changed,
            "versions_changed": self.versions_changed,
            "shared_cases": self.shared_cases,
        }


@dataclass(frozen=True, repr=False)
class History(Report):
    """Runs in creation order with their aggregates and the changes between each and the one before.

    ``runs``: one row per run (``position`` from 1, ``name``, ``path``, ``fingerprint``, ``created_at``,
    ``corpus_fingerprint``, ``corpus_path``, ``corpus_versions``: the source versions of its cases, ``cases``:
    those it holds, of ``corpus_version`` when given, and ``segment``, from 1, a new one where the corpus
    fingerprint changes). ``aggregates``: per run and signal, ``mean``, ``ci_low``, ``ci_high``, ``n``.
    ``changes``: per run after the first and signal, the paired change from the run before (``previous``,
    ``current``, ``delta``, ``ci_low``, ``ci_high``, ``p_value``, ``p_adjusted``, ``n``, ``significant``,
    ``direction``: ``better``, ``worse`` or null for no move). ``steps``: per run after the first, its
    ``HistoryStep``. ``skipped``: the files of other kinds the folders and patterns held."""

    runs: pl.DataFrame
    aggregates: pl.DataFrame
    changes: pl.DataFrame
    steps: tuple[HistoryStep, ...]
    signals: tuple[str, ...]
    corpus_version: str | None
    skipped: tuple[Skipped, ...]

    def __repr__(self) -> str:
        version = "" if self.corpus_version is None else f" of corpus version {self.corpus_version}"
        significant = int(self.changes.get_column("significant").sum())
        return f"<History of {counted(self.runs.height, 'run')}{version}: {counted(significant, 'significant change')}>"

    def render(self, format: str = "text") -> str:
        """The history as ``text`` (for a terminal), ``json`` or ``html`` (a page with a trend chart per signal)."""
        if format not in _FORMATS:
            raise ValueError(f"unknown format {format!r}; use one of {', '.join(_FORMATS)}")
        return self.to_json() if format == "json" else self._rendered(format)

    def to_dict(self) -> dict[str, Any]:
        """Plain data: the settings, then each run with its aggregates and its change from the run before."""
        aggregates = _by_position(self.aggregates)
        changes = _by_position(self.changes)
        steps = {step.position: step for step in self.steps}
        runs = [
            {
                **{name: run[name] for name in ("position", "name", "path", "fingerprint", "created_at")},
                "corpus": {name: run[f"corpus_{name}"] for name in ("fingerprint", "path", "versions")},
                "cases": run["cases"],
                "segment": run["segment"],
                "aggregates": aggregates.get(run["position"], []),
                "change": None
                if run["position"] not in steps
                else steps[run["position"]].to_dict() | {"signals": changes.get(run["position"], [])},
            }
            for run in self.runs.iter_rows(named=True)
        ]
        return {
            "schema_version": SCHEMA_VERSION,
            "corpus_version": self.corpus_version,
            "signals": list(self.signals),
            "confidence": CONFIDENCE,
            "alpha": ALPHA,
            "runs": runs,
            "skipped": [{"path": str(item.path), "kind": item.kind} for item in self.skipped],
        }


def _by_position(frame: pl.DataFrame) -> dict[int, list[dict[str, Any]]]:
    """A frame's rows as plain data by their ``position`` (left out of each row)."""
    return {
        int(key[0]): part.to_dicts()
        for key, part in frame.partition_by("position", as_dict=True, include_key=False).items()
    }


@dataclass(frozen=True)
class _Kept:
    """A run of the history and the case ids it is measured on."""

    run: ListedRun
    case_ids: pl.Series
    versions: tuple[str, ...]


def history(
    runs: str | Path | Sequence[str | Path],
    *,
    corpus_version: str | None = None,
    signals: Sequence[str] | None = None,
) -> History:
    """The history of ``runs`` (run files, run directories, folders holding them or glob patterns, see
    ``io.run_listing``), as the module says: runs in creation order, each with its aggregates and its
    change from the run before. ``corpus_version`` keeps only the runs holding cases of that source version,
    measured on those cases alone; ``signals`` limits the signals shown (default: each with a value in a run).

    Raises ``RunFileError`` when a path is no run, a pattern matches nothing or no run is found,
    ``CompareError`` for an unknown signal, or a corpus version no run holds cases of."""
    shown = _checked_signals(signals)
    if corpus_version is not None and (not isinstance(corpus_version, str) or not corpus_version.strip()):
        raise CompareError(
            f"`corpus_version` is a source version as case ids name it (`q12@v3`: v3), not {corpus_version!r}."
        )
    listing = list_runs(runs)
    kept = _of_version([_kept(run, corpus_version) for run in listing.runs], corpus_version)
    aggregates, changes, steps = _measured(kept, corpus_version)
    if shown is None:
        held = aggregates.filter(pl.col("n") > 0).get_column("signal")
        shown = tuple(signal.name for signal in ALL_SIGNALS if signal.name in held)
    return History(
        runs=_runs_frame(kept),
        aggregates=_shown(aggregates, shown),
        changes=_shown(changes, shown),
        steps=tuple(steps),
        signals=shown,
        corpus_version=corpus_version,
        skipped=listing.skipped,
    )


def _checked_signals(signals: Sequence[str] | None) -> tuple[str, ...] | None:
    if signals is None:
        return None
    names = [signals] if isinstance(signals, str) else list(signals)
    unknown = [name for name in names if name not in SIGNALS_BY_NAME]
    if unknown:
        raise CompareError(f"`signals`: unknown signal {unknown[0]!r}; use any of {', '.join(SIGNALS_BY_NAME)}.")
    if not names:
        raise CompareError("`signals` names no signal: give one or more, or leave it out for every signal.")
    return tuple(dict.fromkeys(names))


def _kept(run: ListedRun, corpus_version: str | None) -> _Kept:
    """``run`` with the ids of its cases (of ``corpus_version`` when given) and the source versions of all."""
    batches = list(open_run(run.path).batches(list(_CASES)))
    cases = (pl.concat(batches) if batches else pl.DataFrame(schema=_CASES)).unique()
    versions = tuple(cases.get_column("source_version").drop_nulls().unique().sort().to_list())
    if corpus_version is not None:
        cases = cases.filter(pl.col("source_version") == corpus_version)
    return _Kept(run, cases.get_column("case_id").unique().sort(), versions)


def _of_version(kept: list[_Kept], corpus_version: str | None) -> list[_Kept]:
    """The runs holding cases of ``corpus_version`` (every run without one)."""
    if corpus_version is None:
        return kept
    found = [item for item in kept if item.case_ids.len()]
    if not found:
        versions = sorted({version for item in kept for version in item.versions})
        raise CompareError(
            f"no run holds cases of corpus version {corpus_version!r}: the runs' cases are of "
            f"{', '.join(versions) or 'no version'}. Give `corpus_version` one of those (a case id names its "
            "version: `q12@v3` is of v3)."
        )
    return found


def _measured(kept: list[_Kept], corpus_version: str | None) -> tuple[pl.DataFrame, pl.DataFrame, list[HistoryStep]]:
    """Each run's aggregates, each step's changes and the steps, a comparison of two runs at a time (a lone
    run compared with itself)."""
    pairs = list(itertools.pairwise(kept)) or [(kept[0], kept[0])]
    aggregates, changes, steps = [], [], []
    for position, (previous, current) in enumerate(pairs, 2):
        comparison = compare(previous.run.path, current.run.path)
        cases = _cases(comparison, previous, current, corpus_version)
        signals = comparison.signals
        if position == 2:
            aggregates.append(_run_aggregates(cases, "baseline", signals, 1))
        if len(kept) == 1:
            break
        aggregates.append(_run_aggregates(cases, "candidate", signals, position))
        paired = comparison.aggregates
        if corpus_version is not None:  # the paired statistics of the cases of that version alone
            reduced = any(name.endswith("_all_cases") for name in cases.columns)
            paired = aggregate_signals(cases, signals, reduced=reduced)
        changes.append(_changes(paired, position))
        steps.append(_step(comparison, cases, (previous, current), position, corpus_version))
    return pl.concat(aggregates), pl.concat(changes) if changes else pl.DataFrame(schema=_CHANGES), steps


def _cases(comparison: Comparison, previous: _Kept, current: _Kept, corpus_version: str | None) -> pl.DataFrame:
    """The comparison's cases: those of ``corpus_version`` when given, else all."""
    cases = comparison.scan_cases()
    if corpus_version is not None:
        wanted = pl.concat([previous.case_ids, current.case_ids]).unique().implode()
        cases = cases.filter(pl.col("case_id").is_in(wanted))
    return cases.collect()


def _run_aggregates(cases: pl.DataFrame, side: str, signals: Sequence[Signal], position: int) -> pl.DataFrame:
    """Each signal's mean over the side's cases with a value, its 95% bootstrap interval and n."""
    rows = []
    for signal in signals:
        values = cases.select("case_id", pl.col(f"{side}_{signal.name}").cast(pl.Float64).alias("value")).drop_nulls()
        interval = bootstrap_ci(
            values.get_column("value").to_numpy(),
            confidence=CONFIDENCE,
            case_hashes=case_hash(values.get_column("case_id")).to_numpy(),
        )
        low, high = (None, None) if interval is None else interval
        mean = values.get_column("value").mean()
        rows.append((position, signal.name, mean, low, high, values.height))
    return pl.DataFrame(rows, schema=_AGGREGATES, orient="row")


def _changes(aggregates: pl.DataFrame, position: int) -> pl.DataFrame:
    """The paired rows of a comparison's ``aggregates`` as the changes from the run before ``position``."""
    delta = pl.col("delta")
    better_up = pl.col("signal").replace_strict(_BETTER_UP, return_dtype=pl.Boolean)
    apart = (pl.col("ci_low") > 0) | (pl.col("ci_high") < 0)
    return aggregates.filter(pl.col("scope") == "paired").select(
        pl.lit(position, pl.Int64).alias("position"),
        "signal",
        pl.col("baseline").alias("previous"),
        pl.col("candidate").alias("current"),
        "delta",
        "ci_low",
        "ci_high",
        "p_value",
        "p_adjusted",
        "n",
        (apart & (pl.col("p_adjusted") < ALPHA)).fill_null(False).alias("significant"),
        pl.when(delta.is_null() | (delta == 0))
        .then(pl.lit(None, pl.String))
        .when((delta > 0) == better_up)
        .then(pl.lit("better"))
        .otherwise(pl.lit("worse"))
        .alias("direction"),
    )


def _step(
    comparison: Comparison, cases: pl.DataFrame, pair: tuple[_Kept, _Kept], position: int, corpus_version: str | None
) -> HistoryStep:
    """What changed between two runs: their settings, their corpus, the source versions of their cases (with
    ``corpus_version``, the one their cases are measured of: none changes), and the cases both hold."""
    previous, current = pair
    changes = tuple(
        {"key": change["key"], "previous": change["baseline"], "current": change["candidate"]}
        for change in setting_changes(comparison.config_diff)
    )
    both = cases.select((pl.col("baseline_status").is_not_null() & pl.col("candidate_status").is_not_null()).sum())
    return HistoryStep(
        position=position,
        config_changes=changes,
        corpus_changed=previous.run.corpus.get("fingerprint") != current.run.corpus.get("fingerprint"),
        versions_changed=corpus_version is None and previous.versions != current.versions,
        shared_cases=int(both.item()),
    )


def _runs_frame(kept: list[_Kept]) -> pl.DataFrame:
    """One row per run, in order, with its corpus segment."""
    rows = [
        (
            position,
            item.run.name,
            str(item.run.path),
            item.run.fingerprint,
            item.run.created_at,
            item.run.corpus.get("fingerprint"),
            item.run.corpus.get("path"),
            list(item.versions),
            item.case_ids.len(),
        )
        for position, item in enumerate(kept, 1)
    ]
    runs = pl.DataFrame(rows, schema=_RUNS, orient="row")
    changed = pl.col("corpus_fingerprint").ne_missing(pl.col("corpus_fingerprint").shift(1))
    return runs.with_columns(((pl.int_range(pl.len()) == 0) | changed).cum_sum().cast(pl.Int64).alias("segment"))


def _shown(frame: pl.DataFrame, signals: Sequence[str]) -> pl.DataFrame:
    """The rows of ``signals``, by position, then in the order of ``signals``."""
    order = pl.col("signal").replace_strict({name: index for index, name in enumerate(signals)}, default=None)
    return frame.filter(pl.col("signal").is_in(list(signals))).sort(pl.col("position"), order)
