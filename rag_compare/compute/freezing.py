"""Freezing a run with its signals stored: ``freeze_run`` and ``import_run``, the ways every run is frozen.

Each is ``io``'s freezing (``runs.freeze_records``, ``run_import.import_and_freeze``) with the signals of
``stored_signals`` stored beside each record, so that comparing the run later reads them instead of
computing them again.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare.compute.stored_signals import StoredSignals
from rag_compare.io.corpus import Corpus
from rag_compare.io.run_import import ImportedRun, Keep, import_and_freeze
from rag_compare.io.runs import Run, freeze_records

__all__ = ["freeze_run", "import_run"]


def freeze_run(
    records: str | Path | pl.DataFrame,
    corpus: str | Path | pl.DataFrame | Corpus,
    config: Mapping[str, Any] | None = None,
    *,
    output: str | Path | None = None,
    buckets: int | None = None,
    environ: Mapping[str, str] | None = None,
    include_unreviewed: bool = False,
) -> Run:
    """Validate ``records`` against ``corpus``, join the labels, store each record's signals (see
    ``stored_signals``), attach ``config``, fingerprint it.

    With ``output`` the run is written there atomically; an existing file is never replaced. An output
    ending in ``/``, or ``buckets`` given, makes a run directory of ``buckets`` parts (default
    ``DEFAULT_BUCKETS``; see ``run_directory``), frozen bucket by bucket: then ``records``, and
    ``corpus``, may be a folder or a glob of parts (CSV, Parquet, JSONL), and the run is never held
    whole in memory (its ``records`` are read when first used).
    ``config`` may not hold credentials (by key name or by the values of credential-like variables
    in ``environ``, default ``os.environ``) nor the keys rag-compare sets itself. The run's name is
    ``config["name"]``, else the output file's stem, else ``"run"``.
    """
    return freeze_records(
        records,
        corpus,
        config,
        signals=StoredSignals(),
        output=output,
        buckets=buckets,
        environ=environ,
        include_unreviewed=include_unreviewed,
    )


def import_run(
    source: str | Path,
    format: str,
    corpus: str | Path | pl.DataFrame | Corpus,
    config: Mapping[str, Any] | None = None,
    *,
    case_id_key: str = "case_id",
    match_question: bool = False,
    keep: Keep | None = None,
    passages: str | Path | pl.DataFrame | None = None,
    output: str | Path | None = None,
    buckets: int | None = None,
    include_unreviewed: bool = False,
) -> ImportedRun:
    """Import ``source`` (see ``io.run_import.import_records``) and freeze it against ``corpus`` with
    ``config``, as ``freeze_run`` does (validated, fingerprinted, signals stored, written to ``output`` and
    never over a file; a run directory for an ``output`` ending in ``/`` or with ``buckets``). The config
    records the import under ``"imported"``."""
    return import_and_freeze(
        source,
        format,
        corpus,
        config,
        signals=StoredSignals(),
        case_id_key=case_id_key,
        match_question=match_question,
        keep=keep,
        passages=passages,
        output=output,
        buckets=buckets,
        include_unreviewed=include_unreviewed,
    )
