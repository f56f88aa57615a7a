"""Frozen runs: run records joined with their corpus labels and config, fingerprinted, in one file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import polars as pl

from rag_compare._version import __version__
from rag_compare.core.clock import creation_time
from rag_compare.core.contract import CORPUS_COLUMNS, LANGUAGE, RECORD_COLUMNS, REPEAT, STATUSES
from rag_compare.core.errors import ConfigError, RunFileError
from rag_compare.core.protocols import K_EXPECTED, is_k
from rag_compare.core.result import Report
from rag_compare.core.rows import count_by
from rag_compare.io.config import RESERVED_KEYS, check_config
from rag_compare.io.corpus import Corpus, load_corpus, refuse_unreviewed
from rag_compare.io.records import join_labels
from rag_compare.io.runfile import FrozenFile, ensure_absent, freeze_frame, open_frozen

__all__ = [
    "PAIRS_FORMAT",
    "SCORES_FORMAT",
    "OpenedRun",
    "Run",
    "freeze_run",
    "frozen_format",
    "json_ready",
    "load_run",
    "open_run",
    "write_run",
]

CONFIG_KEY = "rag_compare.config"
FORMAT_KEY = "rag_compare.format"
FORMAT_VERSION = "1"
SCORES_FORMAT = "scores-1"
"""The format of a scores file (see ``scores``), made like a run file."""
PAIRS_FORMAT = "pairs-1"
"""The format of a pairs file (see ``pairs``), made like a run file."""
_CONTRACT_DTYPES = {spec.name: spec.dtype for spec in (*RECORD_COLUMNS, *CORPUS_COLUMNS)}
_OPTIONAL = (REPEAT, LANGUAGE)
"""Contract columns a run holds only when its records (``repeat``) or its corpus (``language``) had them."""


@dataclass(frozen=True)
class Run(Report):
    """A frozen run: one row per sample of a case attempted (records and labels; one sample per case
    unless the records have a ``repeat`` column), its config and fingerprint."""

    records: pl.DataFrame = field(repr=False)
    config: Mapping[str, Any]
    fingerprint: str
    path: Path | None = None

    @property
    def name(self) -> str:
        return str(self.config.get("name", ""))

    @property
    def created_at(self) -> str:
        return str(self.config.get("created_at", ""))

    @property
    def repeats(self) -> int:
        """The most samples any one case has: 1 without a ``repeat`` column."""
        if REPEAT not in self.records.columns or self.records.is_empty():
            return 1
        return int(self.records.select(pl.len().over("case_id").max()).item())

    def to_dict(self) -> dict[str, Any]:
        """Its summary; ``cases`` counts distinct cases, and with repeats ``samples`` the records and
        ``repeats`` the most samples of one case."""
        corpus = self.config.get("corpus", {})
        repeats = self.repeats
        counts = (
            {"cases": self.records.get_column("case_id").n_unique(), "samples": self.records.height, "repeats": repeats}
            if repeats > 1
            else {"cases": self.records.height}
        )
        return {
            "name": self.name,
            "path": None if self.path is None else str(self.path),
            "fingerprint": self.fingerprint,
            "created_at": self.created_at,
            **counts,
            "corpus_cases": corpus.get("cases"),
            "status_counts": count_by(self.records, "status", STATUSES),
            "config": json_ready(self.config),
        }


def freeze_run(
    records: str | Path | pl.DataFrame,
    corpus: str | Path | pl.DataFrame | Corpus,
    config: Mapping[str, Any] | None = None,
    *,
    output: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    include_unreviewed: bool = False,
) -> Run:
    """Validate ``records`` against ``corpus``, join the labels, attach ``config``, fingerprint it.

    With ``output`` the run is written there atomically; an existing file is never replaced.
    ``config`` may not hold credentials (by key name or by the values of credential-like variables
    in ``environ``, default ``os.environ``) nor the keys rag-compare sets itself. The run's name is
    ``config["name"]``, else the output file's stem, else ``"run"``.
    """
    environ = os.environ if environ is None else environ
    user_config = dict(config or {})
    reserved = [key for key in RESERVED_KEYS if key in user_config]
    if reserved:
        raise ConfigError(
            f"the config sets {', '.join(reserved)}, which rag-compare records itself when freezing. Remove them."
        )
    top_k = user_config.get("top_k")
    if top_k is not None and not is_k(top_k):
        raise ConfigError(
            f"the config's top_k is {top_k!r}, not {K_EXPECTED}: a comparison could not cut the ranked lists "
            "at it. Set top_k to the number of passages retrieved per case, or leave it out."
        )
    check_config(user_config, environ)
    if output is not None:
        ensure_absent(Path(output))
    loaded = corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
    frame = join_labels(records, loaded, environ)
    if not include_unreviewed:
        refuse_unreviewed(loaded, frame.get_column("case_id"))
    full_config = {
        "name": user_config.pop("name", None) or (Path(output).stem if output is not None else "run"),
        **user_config,
        "created_at": creation_time(environ),
        "rag_compare_version": __version__,
        "corpus": {"path": loaded.source, "fingerprint": loaded.fingerprint, "cases": loaded.frame.height},
        "records": {"path": "<frame>" if isinstance(records, pl.DataFrame) else str(records)},
    }
    return write_run(frame, full_config, output)


def write_run(frame: pl.DataFrame, config: Mapping[str, Any], output: str | Path | None) -> Run:
    """The run of ``frame`` (valid records joined with their labels) and its full ``config``, written to
    ``output`` when given (atomically, never replacing a file)."""
    metadata = {FORMAT_KEY: FORMAT_VERSION, CONFIG_KEY: json.dumps(config, ensure_ascii=False, sort_keys=True)}
    fingerprint, path = freeze_frame(frame, metadata, output)
    return Run(records=frame, config=MappingProxyType(dict(config)), fingerprint=fingerprint, path=path)


@dataclass(frozen=True)
class OpenedRun:
    """A run file opened and checked against its fingerprint, its records not read yet: a large run is
    read a record batch at a time (``batches``), or the rows of a few cases (``rows``)."""

    config: Mapping[str, Any]
    fingerprint: str
    path: Path
    frozen: FrozenFile = field(repr=False)

    @property
    def name(self) -> str:
        return str(self.config.get("name", ""))

    @property
    def created_at(self) -> str:
        return str(self.config.get("created_at", ""))

    @property
    def columns(self) -> list[str]:
        return list(self.frozen.schema)

    def batches(self, columns: Sequence[str] | None = None) -> Iterator[pl.DataFrame]:
        """Its records a record batch at a time (``columns``: only those)."""
        return self.frozen.batches(columns)

    def rows(self, case_ids: pl.Series, columns: Sequence[str]) -> pl.DataFrame:
        """``columns`` of the records of ``case_ids``, in file order."""
        wanted = case_ids.implode()
        parts = [batch.filter(pl.col("case_id").is_in(wanted)) for batch in self.batches(columns)]
        return pl.concat(parts) if parts else pl.DataFrame(schema={name: self.frozen.schema[name] for name in columns})

    def load(self) -> Run:
        """The whole run in memory."""
        return Run(records=self.frozen.read(), config=self.config, fingerprint=self.fingerprint, path=self.path)


def load_run(path: str | Path) -> Run:
    """Read a frozen run, refusing a file whose bytes no longer match its fingerprint."""
    return open_run(path).load()


def open_run(path: str | Path) -> OpenedRun:
    """Open a frozen run without reading its records, refusing a file whose bytes no longer match its
    fingerprint, or that is not a run of this format."""
    path = Path(path)
    frozen = open_frozen(path)
    metadata = frozen.metadata
    if metadata.get(FORMAT_KEY) == SCORES_FORMAT:
        raise RunFileError(
            f"{path}: is a scores file, not a run. Pass it with `baseline_scores` or `candidate_scores` "
            "beside its run; `load_scores` shows it."
        )
    if metadata.get(FORMAT_KEY) == PAIRS_FORMAT:
        raise RunFileError(
            f"{path}: is a pairs file, not a run. Pass it with `pairs` beside the two runs it judged; "
            "`load_pairs` shows it."
        )
    if metadata.get(FORMAT_KEY) != FORMAT_VERSION or CONFIG_KEY not in metadata:
        raise RunFileError(
            f"{path}: is run format {metadata.get(FORMAT_KEY)!r}; this rag-compare reads format {FORMAT_VERSION}. "
            "Freeze the run again with this version."
        )
    schema = frozen.schema
    wrong = [
        name
        for name, dtype in _CONTRACT_DTYPES.items()
        if (name not in schema and name not in _OPTIONAL) or schema.get(name, dtype) != dtype
    ]
    if wrong:
        raise RunFileError(f"{path}: lacks or mistypes the columns {', '.join(wrong)}. Freeze the run again.")
    config = json.loads(metadata[CONFIG_KEY])
    return OpenedRun(config=MappingProxyType(config), fingerprint=frozen.fingerprint, path=path, frozen=frozen)


def frozen_format(path: str | Path) -> str | None:
    """The format a readable Arrow file says it holds (``FORMAT_VERSION`` for a run, ``SCORES_FORMAT``,
    ``PAIRS_FORMAT``), read from its schema only; ``None`` for any other file."""
    import pyarrow as pa

    try:
        with pa.OSFile(str(path)) as source:
            metadata = pa.ipc.open_file(source).schema.metadata or {}
    except (pa.ArrowException, OSError):
        return None
    found = metadata.get(FORMAT_KEY.encode())
    return None if found is None else found.decode(errors="replace")


def json_ready(value: Any) -> Any:
    """A JSON-ready copy of a config (read-only mappings become dicts)."""
    if isinstance(value, Mapping):
        return {key: json_ready(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(item) for item in value]
    return value
