"""Scores made elsewhere (a hosted trust score, a provider's evaluator) turned into a scores file.

The file (CSV, Parquet or JSONL) holds one row per case, keyed by a case id column (for a run with
repeats, one row per sample, keyed by case id and repeat); each mapped column becomes a signal. Its ids
must be the run's: an id the run lacks is refused. A run case (sample) the file lacks, or whose mapped
value is empty, is kept as ``judge_failed`` ("no score"), never dropped.
Values of score signals must lie in [0, 1] (rescale them first); flags must be true/false. Another tool's
results table is read with a preset (``score_presets``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare.core.contract import REPEAT, ColumnSpec, record_ok
from rag_compare.core.digest import json_digest
from rag_compare.core.errors import ContractError, Problem, ScoresError
from rag_compare.core.signals import JUDGE_FAILED, SCORED_SIGNALS, SIGNALS_BY_NAME
from rag_compare.io.columns import coerce_columns
from rag_compare.io.config import refuse_credential_paths
from rag_compare.io.outputs import check_output
from rag_compare.io.runs import Run, load_run
from rag_compare.io.score_presets import apply_preset, require_repeat_column
from rag_compare.io.scores import Scores, make_scores
from rag_compare.io.tables import ROW, read_table

__all__ = ["import_scores"]

_MAX_SHOWN = 10
_KEY_TYPES = {"case_id": pl.String, REPEAT: pl.Int64}


def import_scores(
    run: Run | str | Path,
    source: str | Path,
    *,
    evaluator: str | None = None,
    mapping: Mapping[str, str] | None = None,
    id_column: str = "case_id",
    repeat_column: str = REPEAT,
    preset: str | None = None,
    config: Mapping[str, Any] | None = None,
    output: str | Path | None = None,
) -> Scores:
    """The scores of ``run`` read from ``source``: ``mapping`` takes a column to a signal (any of
    ``SCORED_SIGNALS``). ``evaluator`` names where they come from, and ``config`` declares its
    settings (model, version...); both make its fingerprint. Written to ``output`` when given.

    With ``preset`` (see ``score_presets.PRESETS``: ``ragas``, ``deepeval``, ``promptfoo``) ``source`` is
    that tool's results: the preset names the evaluator and maps the metrics it knows (``mapping`` adds or
    overrides), and rows without an ``id_column`` match the run's cases by question. The columns left out
    are recorded in the config as ``not_imported``.

    Scores of a run with repeats are per sample: the table needs ``repeat_column`` (each sample's repeat,
    as in the run) and gives each (case id, repeat) once; a table without it is refused, preset or not.
    The paths of ``run`` and ``source`` are recorded, so neither they nor ``output`` may hold a credential.
    """
    refuse_credential_paths({"run": run.path if isinstance(run, Run) else run, "source": source, "output": output})
    if output is not None:
        check_output(output, "scores file")
    run = run if isinstance(run, Run) else load_run(run)
    noted: dict[str, Any] = {}
    if preset is None:
        _check_mapping(evaluator, mapping or {})
        table = read_table(source, "scores")
        if REPEAT in run.records.columns:
            require_repeat_column(table, repeat_column, run, str(source))
    else:
        prepared = apply_preset(preset, Path(source), mapping or {}, id_column, run, repeat_column)
        table, mapping, evaluator = prepared.table, prepared.mapping, evaluator or preset
        noted = {"preset": preset, "not_imported": prepared.not_imported}
        _check_mapping(evaluator, mapping, f" (preset {preset} maps none of this table's columns)")
    mapping = mapping or {}
    keys = {"case_id": id_column, **({REPEAT: repeat_column} if REPEAT in run.records.columns else {})}
    values = _values(table, str(source), mapping, keys, run)
    frame = _for_run(values, run, mapping, str(source))
    declared = {"name": evaluator, "mapping": dict(sorted(mapping.items())), "settings": dict(config or {})}
    described = {
        "name": evaluator,
        "fingerprint": json_digest(declared),
        "config": {**declared, "source": str(source), **noted},
    }
    return make_scores(run, frame, described, output=output)


def _check_mapping(evaluator: str | None, mapping: Mapping[str, str], why: str = "") -> None:
    """Refuse a missing evaluator name, an empty mapping, an unknown signal or a signal mapped twice."""
    if evaluator is None or not evaluator.strip():
        raise ScoresError("name the evaluator the scores come from: `evaluator=NAME`.")
    if not mapping:
        raise ScoresError(f"map at least one column to a signal{why}: `mapping={{COLUMN: SIGNAL}}`.")
    unknown = sorted({signal for signal in mapping.values() if signal not in SCORED_SIGNALS})
    if unknown:
        raise ScoresError(f"unknown signal {', '.join(unknown)}; map columns to any of: {', '.join(SCORED_SIGNALS)}.")
    if len(set(mapping.values())) != len(mapping):
        raise ScoresError("two columns are mapped to the same signal; map each signal once.")


def _values(
    table: pl.DataFrame, source: str, mapping: Mapping[str, str], keys: Mapping[str, str], run: Run
) -> pl.DataFrame:
    """The record keys (``keys``: ``case_id``, and ``repeat`` for a run with repeats, to the table's columns) and
    one typed column per mapped signal, after checking every row at once."""
    missing = [name for name in (*keys.values(), *mapping) if name not in table.columns]
    if missing:
        raise ContractError(source, "scores file", [Problem("a column of that name", column=name) for name in missing])
    read, problems = coerce_columns(table, [ColumnSpec(keys[REPEAT], "int")]) if REPEAT in keys else (table, [])
    ids = read.select(ROW, *(pl.col(column).cast(_KEY_TYPES[key]).alias(key) for key, column in keys.items()))
    problems += _key_problems(table, ids, keys, run)
    typed = []
    for column, signal in mapping.items():
        rows, expected = _invalid(table, column, signal)
        problems += [Problem.at(row, column, value, expected) for row, value in rows]
        typed.append(_as_signal(pl.col(column), signal).alias(signal))
    if problems:
        raise ContractError(source, "scores file", problems)
    return read.select(*(pl.col(column).cast(_KEY_TYPES[key]).alias(key) for key, column in keys.items()), *typed)


def _key_problems(table: pl.DataFrame, ids: pl.DataFrame, keys: Mapping[str, str], run: Run) -> list[Problem]:
    """Rows whose key is empty, given twice, or names no record of ``run`` (a repeat that is not a whole number
    is ``coerce_columns``' problem)."""
    id_column, repeat = keys["case_id"], REPEAT in keys
    problems = []
    for key, column in keys.items():
        empty = ids.filter(table.get_column(column).is_null()).head(_MAX_SHOWN * 5)
        expected = "a repeat of the run's samples (0, 1, ...)" if key == REPEAT else "a case id, given once"
        problems += [Problem.at(row, column, None, expected) for row in empty.get_column(ROW)]
    named = ids.drop_nulls()
    twice = named.filter(pl.struct(*keys).is_duplicated()).head(_MAX_SHOWN * 5)
    once = "a (case id, repeat) pair given once" if repeat else "a case id, given once"
    problems += [Problem.at(row, id_column, case_id, once) for row, case_id, *_ in twice.iter_rows()]
    unknown = named.join(run.records.select(*keys), on=list(keys), how="anti").head(_MAX_SHOWN * 5)
    problems += [
        Problem.at(
            row, id_column, case_id, f"a case id of run '{run.name}'" + (f" with a repeat {rest[0]}" if repeat else "")
        )
        for row, case_id, *rest in unknown.iter_rows()
    ]
    return problems


def _as_signal(column: pl.Expr, signal: str) -> pl.Expr:
    """``column`` read as a value of ``signal``: true/false (also ``1``/``0``) for a flag, else a number;
    null where it is neither."""
    if SIGNALS_BY_NAME[signal].flag:
        return (
            column.cast(pl.String)
            .str.to_lowercase()
            .replace_strict(
                {"true": True, "false": False, "1": True, "0": False}, default=None, return_dtype=pl.Boolean
            )
        )
    return column.cast(pl.Float64, strict=False)


def _invalid(table: pl.DataFrame, column: str, signal: str) -> tuple[list[tuple[int, Any]], str]:
    """The rows (row number, value) of ``column`` that are not a valid ``signal`` value, and what is expected."""
    raw = pl.col(column)
    value = _as_signal(raw, signal)
    if SIGNALS_BY_NAME[signal].flag:
        bad, expected = raw.is_not_null() & value.is_null(), "true or false"
    else:
        bad = (raw.is_not_null() & value.is_null()) | ~value.is_between(0.0, 1.0).fill_null(True)
        expected = "a number from 0 to 1 (rescale the scores first)"
    rows = table.filter(bad).select(ROW, raw.cast(pl.String)).head(_MAX_SHOWN * 5).rows()
    return rows, expected


def _for_run(values: pl.DataFrame, run: Run, mapping: Mapping[str, str], source: str) -> pl.DataFrame:
    """One row per record of ``run``: its imported values, or ``judge_failed`` where there are none."""
    signals = list(mapping.values())
    keys = [name for name in values.columns if name in ("case_id", REPEAT)]
    joined = run.records.select(*keys, "status").join(values, on=keys, how="left", maintain_order="left")
    empty = pl.any_horizontal(pl.col(signal).is_null() for signal in signals)
    answered = record_ok()
    return joined.select(
        *keys,
        *(pl.when(answered & ~empty).then(pl.col(signal)).alias(signal) for signal in signals),
        judge_status=pl.when(~answered)
        .then(pl.lit("not_judged"))
        .when(empty)
        .then(pl.lit(JUDGE_FAILED))
        .otherwise(pl.lit("ok")),
        judge_error=pl.when(answered & empty).then(pl.lit(f"no score in {source}")),
    )
