"""Merging runs of one config into one run with repeats: ``merge_repeats``.

Input ``i``'s repeat ``r`` (a run without a ``repeat`` column is repeat 0 of each case) becomes
``offset_i + r``, where ``offset_i`` is the sum of the previous inputs' (largest repeat + 1): the first
run's samples keep their numbers and each later run's follow them. The records are ordered by where
their case first appears, then by repeat.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare._version import __version__
from rag_compare.compute.configdiff import config_diff, setting_changes
from rag_compare.compute.stored_signals import StoredSignals
from rag_compare.core.clock import creation_time
from rag_compare.core.contract import LABEL_COLUMNS, REPEAT, STORED_CLAIMS, STORED_SIGNALS
from rag_compare.core.errors import ConfigError, RunFileError
from rag_compare.core.listing import counted, truncated
from rag_compare.io.config import check_config, refuse_credential_paths
from rag_compare.io.outputs import check_output
from rag_compare.io.runs import Run, load_run, write_run

__all__ = ["merge_repeats"]

_ORDER = "__merge_order__"


def merge_repeats(
    runs: Sequence[Run | str | Path],
    output: str | Path,
    *,
    name: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Run:
    """Merge ``runs`` (two or more runs of one config, or their paths) into one run with repeats, written to
    ``output`` (atomically; never over an input or any existing file).

    Refused: fewer than two runs, one run given twice (the same fingerprint), configs that differ in a
    setting (anything but the bookkeeping keys ``io.config.BOOKKEEPING_KEYS``: every differing key is
    listed with both values), a case whose labels differ between runs, a metadata column of two types.
    The merged config is the first run's, named ``name`` when given, created now (``SOURCE_DATE_EPOCH``
    of ``environ``, default ``os.environ``, is honoured), with ``merged_from``: each input's ``name``,
    ``fingerprint``, ``path`` and ``repeats``. Each record's signals are stored again (``stored_signals``).
    So none of those paths, nor ``output`` or ``name``, may hold a credential.
    """
    paths = [run.path if isinstance(run, Run) else run for run in runs]
    refuse_credential_paths({"runs": paths, "output": output}, environ)
    check_config({} if name is None else {"name": name}, environ)
    loaded = _loaded(runs, Path(output))
    output = check_output(output, "frozen run")
    _refuse_setting_changes(loaded)
    frames = _renumbered(loaded)
    _refuse_mixed_types(loaded, frames)
    merged = pl.concat(frames, how="diagonal")
    _refuse_relabelled(merged)
    first = loaded[0]
    columns = ["case_id", REPEAT, *(column for column in merged.columns if column not in ("case_id", REPEAT))]
    records = (
        merged.with_row_index(_ORDER)
        .with_columns(pl.col(_ORDER).min().over("case_id"))
        .sort(_ORDER, REPEAT, maintain_order=True)
        .select(columns)
    )
    signals, top_k = StoredSignals(), first.config.get("top_k")
    config: dict[str, Any] = {
        **first.config,
        STORED_SIGNALS: signals.settings(top_k),
        "name": name or first.name,
        "created_at": creation_time(os.environ if environ is None else environ),
        "rag_compare_version": __version__,
        "merged_from": [
            {
                "name": run.name,
                "fingerprint": run.fingerprint,
                "path": None if run.path is None else str(run.path),
                "repeats": run.repeats,
            }
            for run in loaded
        ],
    }
    return write_run(records.with_columns(*signals.columns(records, top_k)), config, output)


def _loaded(runs: Sequence[Run | str | Path], output: Path) -> list[Run]:
    """The runs, loaded; refused when fewer than two, when one is given twice, or when ``output`` is one."""
    if len(runs) < 2:
        raise RunFileError(f"merging repeats needs two runs of one config or more; got {len(runs)}.")
    loaded = [run if isinstance(run, Run) else load_run(run) for run in runs]
    inputs = {run.path.resolve() for run in loaded if run.path is not None}
    if output.resolve() in inputs:
        raise RunFileError(f"{output}: is one of the runs being merged; give `output` the path of a new file.")
    seen: dict[str, int] = {}
    for position, run in enumerate(loaded, start=1):
        if run.fingerprint in seen:
            raise RunFileError(
                f"runs {seen[run.fingerprint]} and {position} are the same run ('{run.name}', fingerprint "
                f"{run.fingerprint[:12]}): its samples would count twice. Give each run once."
            )
        seen[run.fingerprint] = position
    return loaded


def _refuse_setting_changes(runs: Sequence[Run]) -> None:
    """Refuse runs whose configs differ from the first's in a setting, listing every key with both values."""
    first = runs[0]
    lines = [
        f"  - {change['key']}: {change['baseline']!r} in '{first.name}', {change['candidate']!r} in run {position} "
        f"'{run.name}'"
        for position, run in enumerate(runs[1:], start=2)
        for change in setting_changes(config_diff(first.config, run.config))
    ]
    if lines:
        raise ConfigError(
            "the runs differ in settings, so they are not repeats of one config:\n"
            + "\n".join(lines)
            + "\nMerge only runs made with the same settings (the name, creation time, paths and version may differ)."
        )


def _renumbered(runs: Sequence[Run]) -> list[pl.DataFrame]:
    """Each run's records with ``repeat`` renumbered after the previous runs' (see the module's rule)."""
    frames, offset = [], 0
    for run in runs:
        records = run.records.drop(STORED_SIGNALS, STORED_CLAIMS, strict=False)  # stored again for the merged run
        repeat = pl.col(REPEAT) if REPEAT in records.columns else pl.lit(0, dtype=pl.Int64)
        frames.append(records.with_columns((repeat + offset).alias(REPEAT)))
        offset += int(records.select(repeat.max()).item() or 0) + 1
    return frames


def _refuse_mixed_types(runs: Sequence[Run], frames: Sequence[pl.DataFrame]) -> None:
    """Refuse a column that holds values of different types in two runs (a metadata column)."""
    types: dict[str, set[pl.DataType]] = {}
    for frame in frames:
        for column, dtype in frame.schema.items():
            types.setdefault(column, set()).add(dtype)
    mixed = sorted(column for column, found in types.items() if len(found) > 1)
    if mixed:
        raise RunFileError(
            f"{', '.join(mixed)}: a column holding values of different types in the runs "
            f"{', '.join(repr(run.name) for run in runs)}. Give it one type in every run's records and freeze "
            "them again."
        )


def _refuse_relabelled(merged: pl.DataFrame) -> None:
    """Refuse cases whose labels (``LABEL_COLUMNS``) differ between the runs that have them."""
    relabelled = (
        merged.select("case_id", *LABEL_COLUMNS)
        .unique(maintain_order=True)
        .filter(pl.col("case_id").is_duplicated())
        .get_column("case_id")
        .unique(maintain_order=True)
    )
    if relabelled.len():
        raise RunFileError(
            f"{counted(relabelled.len(), 'case')} with different labels ({', '.join(LABEL_COLUMNS)}) in the runs: "
            f"{truncated(relabelled)}. The runs were made against different corpus labels; merge only runs of the "
            "same labels."
        )
