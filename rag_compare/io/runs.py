"""Frozen runs: run records joined with their corpus labels and config, fingerprinted, in one file (see
``runfile``) or in a run directory of Parquet parts by bucket (see ``run_directory``)."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

import polars as pl

from rag_compare._version import __version__
from rag_compare.core.clock import creation_time
from rag_compare.core.contract import CORPUS_COLUMNS, LANGUAGE, RECORD_COLUMNS, REPEAT, STATUSES, STORED_SIGNALS
from rag_compare.core.errors import ConfigError, RunFileError, show_value
from rag_compare.core.input_paths import check_input
from rag_compare.core.listing import counted, counts_line, truncated
from rag_compare.core.nesting import load_json
from rag_compare.core.protocols import K_EXPECTED, RunSignals, is_k
from rag_compare.core.result import Report, labelled
from rag_compare.core.rows import count_by
from rag_compare.io.config import RESERVED_KEYS, check_config, non_finite_path, refuse_credential_paths
from rag_compare.io.corpus import Corpus, load_corpus, refuse_unreviewed
from rag_compare.io.outputs import check_output
from rag_compare.io.records import join_labels
from rag_compare.io.run_directory import (
    DEFAULT_BUCKETS,
    MANIFEST,
    DirectoryRecords,
    RunDirectory,
    is_directory_output,
    iter_buckets,
    read_run_directory,
    verify_parts,
)
from rag_compare.io.runfile import FrozenFile, freeze_frame, open_frozen

__all__ = [
    "PAIRS_FORMAT",
    "REVIEWS_FORMAT",
    "SCORES_FORMAT",
    "Configured",
    "OpenedRun",
    "Run",
    "freeze_records",
    "frozen_format",
    "json_ready",
    "load_run",
    "open_run",
    "repeated_cases",
    "write_run",
]

CONFIG_KEY = "rag_compare.config"
FORMAT_KEY = "rag_compare.format"
FORMAT_VERSION = "1"
SCORES_FORMAT = "scores-1"
"""The format of a scores file (see ``scores``), made like a run file."""
PAIRS_FORMAT = "pairs-1"
"""The format of a pairs file (see ``pairs``), made like a run file."""
REVIEWS_FORMAT = "reviews-1"
"""The format of a reviews file (see ``reviews``), made like a run file."""
_CONTRACT_DTYPES = {spec.name: spec.dtype for spec in (*RECORD_COLUMNS, *CORPUS_COLUMNS)}
_OPTIONAL = (REPEAT, LANGUAGE)
"""Contract columns a run holds only when its records (``repeat``) or its corpus (``language``) had them."""
_RUN_PATH = "run file or run directory"
_RUN_PATH_FIX = "Check the path, or freeze the run first."


class _PartRecords:
    """``Run.records``: a run directory's records are read when first used (every part checked), so a
    run frozen or loaded into a directory is not held whole in memory until they are."""

    def __get__(self, run: Run | None, owner: type[Run]) -> pl.DataFrame:
        if run is None:
            raise AttributeError("records")  # the field has no default
        records = run.__dict__["records"]
        if records is None:
            records = pl.concat([frame for _, frame in iter_buckets(cast(Path, run.path))], how="vertical")
            run.__dict__["records"] = records
        return cast(pl.DataFrame, records)

    def __set__(self, run: Run, records: pl.DataFrame | None) -> None:
        run.__dict__["records"] = records


class Configured:
    """A run's name and creation time, read from its config."""

    config: Mapping[str, Any]

    @property
    def name(self) -> str:
        return str(self.config.get("name", ""))

    @property
    def created_at(self) -> str:
        return str(self.config.get("created_at", ""))


@dataclass(frozen=True)
class Run(Configured, Report):
    """A frozen run: one row per sample of a case attempted (records and labels; one sample per case
    unless the records have a ``repeat`` column), its config and fingerprint.

    A run directory's ``parts`` are its part files by bucket (``buckets`` of them; ``()`` and ``None``
    for a run file): ``run_directory.iter_buckets(run.path)`` reads it a bucket at a time, and its
    ``records`` (all parts, by bucket then case id) are read when first used.
    """

    records: pl.DataFrame = field(repr=False)
    config: Mapping[str, Any]
    fingerprint: str
    path: Path | None = None
    parts: tuple[Path, ...] = ()
    buckets: int | None = None

    def __repr__(self) -> str:
        cases, samples, repeats, statuses = self._counts
        sampled = f" ({samples} samples, up to {repeats} a case)" if repeats > 1 else ""
        shown = counts_line({status: count for status, count in statuses.items() if count}, ", ")
        return f"<Run {labelled(self.name, self.fingerprint)}: {counted(cases, 'case')}{sampled}: {shown}>"

    @property
    def repeats(self) -> int:
        """The most samples any one case has: 1 without a ``repeat`` column."""
        return self._counts[2]

    @property
    def _counts(self) -> tuple[int, int, int, dict[str, int]]:
        """Distinct cases, records, the most samples of a case and the records by status; of a run
        directory whose records were not read, from its parts' few columns, a part at a time."""
        if self.__dict__["records"] is not None:
            return _counts(self.records)
        schema = pl.read_parquet_schema(self.parts[0])
        columns = [name for name in ("case_id", REPEAT, "status") if name in schema]
        counted = [_counts(frame) for _, frame in iter_buckets(cast(Path, self.path), columns)]
        total = Counter[str]()
        for found in counted:
            total.update(found[3])
        statuses = {status: total.pop(status, 0) for status in STATUSES} | dict(sorted(total.items()))
        return (
            sum(found[0] for found in counted),
            sum(found[1] for found in counted),
            max((found[2] for found in counted), default=1),
            statuses,
        )

    def to_dict(self) -> dict[str, Any]:
        """Its summary; ``cases`` counts distinct cases, and with repeats ``samples`` the records and
        ``repeats`` the most samples of one case."""
        corpus = self.config.get("corpus", {})
        cases, samples, repeats, statuses = self._counts
        counts = {"cases": cases, "samples": samples, "repeats": repeats} if repeats > 1 else {"cases": samples}
        return {
            "name": self.name,
            "path": None if self.path is None else str(self.path),
            "fingerprint": self.fingerprint,
            "created_at": self.created_at,
            **counts,
            "corpus_cases": corpus.get("cases"),
            "status_counts": statuses,
            "config": json_ready(self.config),
        }


Run.records = _PartRecords()  # type: ignore[assignment]  # read a run directory's parts when first used


def _counts(records: pl.DataFrame) -> tuple[int, int, int, dict[str, int]]:
    repeats = 1
    if REPEAT in records.columns and not records.is_empty():
        repeats = int(records.select(pl.len().over("case_id").max()).item())
    return records.get_column("case_id").n_unique(), records.height, repeats, count_by(records, "status", STATUSES)


def freeze_records(
    records: str | Path | pl.DataFrame,
    corpus: str | Path | pl.DataFrame | Corpus,
    config: Mapping[str, Any] | None = None,
    *,
    signals: RunSignals | None,
    output: str | Path | None = None,
    buckets: int | None = None,
    environ: Mapping[str, str] | None = None,
    include_unreviewed: bool = False,
) -> Run:
    """``compute.freezing.freeze_run`` (see there), but each record's signals are stored only with
    ``signals``, which computes them (this floor computes no signal)."""
    environ = os.environ if environ is None else environ
    corpus_path = corpus.source if isinstance(corpus, Corpus) else corpus
    refuse_credential_paths({"records": records, "corpus": corpus_path, "output": output}, environ)
    user_config = _user_config(config, environ)
    if buckets is not None and (isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 1):
        raise ConfigError(
            f"`buckets` must be a whole number of 1 or more (the parts of a run directory), got {buckets!r}."
        )
    top_k, created_at = user_config.get("top_k"), creation_time(environ)

    def full_config(corpus_summary: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "name": user_config.get("name") or (Path(output).stem if output is not None else "run"),
            **{key: value for key, value in user_config.items() if key != "name"},
            "created_at": created_at,
            "rag_compare_version": __version__,
            "corpus": dict(corpus_summary),
            "records": {"path": "<frame>" if isinstance(records, pl.DataFrame) else str(records)},
            **({} if signals is None else {STORED_SIGNALS: signals.settings(top_k)}),
        }

    def finished(frame: pl.DataFrame) -> pl.DataFrame:
        """A bucket's (or the run's) records with their signals, when they are stored."""
        return frame if signals is None else frame.with_columns(*signals.columns(frame, top_k))

    if is_directory_output(output, buckets):
        from rag_compare.io.directory_freeze import freeze_directory

        directory = freeze_directory(
            records,
            corpus,
            full_config,
            Path(cast(str | Path, output)),
            buckets or DEFAULT_BUCKETS,
            environ,
            finished,
            include_unreviewed=include_unreviewed,
        )
        return _directory_run(directory)
    if output is not None:
        check_output(output, "frozen run")
    frame, summary = _labelled(records, corpus, environ, include_unreviewed=include_unreviewed)
    return write_run(finished(frame), full_config(summary), output)


def _user_config(config: Mapping[str, Any] | None, environ: Mapping[str, str]) -> dict[str, Any]:
    """A copy of the user's ``config``, refused when it sets a key rag-compare records itself, a ``top_k``
    that cuts no ranked list, or anything a run config cannot store (``check_config``)."""
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
    return user_config


def _labelled(
    records: str | Path | pl.DataFrame,
    corpus: str | Path | pl.DataFrame | Corpus,
    environ: Mapping[str, str],
    *,
    include_unreviewed: bool,
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """The valid ``records`` joined with the labels of ``corpus`` (an unreviewed synthetic case refused
    unless ``include_unreviewed``), and what the run config records of the corpus."""
    loaded = corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
    frame = join_labels(records, loaded, environ)
    if not include_unreviewed:
        refuse_unreviewed(loaded, frame.get_column("case_id"))
    return frame, {"path": loaded.source, "fingerprint": loaded.fingerprint, "cases": loaded.frame.height}


def write_run(frame: pl.DataFrame, config: Mapping[str, Any], output: str | Path | None) -> Run:
    """The run of ``frame`` (valid records joined with their labels) and its full ``config``, written to
    ``output`` when given (atomically, never replacing a file). The config is checked as a user's is
    (``check_config``): what rag-compare adds to it holds no credential either."""
    check_config(config)
    metadata = {FORMAT_KEY: FORMAT_VERSION, CONFIG_KEY: json.dumps(config, ensure_ascii=False, sort_keys=True)}
    fingerprint, path = freeze_frame(frame, metadata, output)
    return Run(records=frame, config=MappingProxyType(dict(config)), fingerprint=fingerprint, path=path)


@dataclass(frozen=True)
class OpenedRun(Configured):
    """A run file (or run directory) opened and checked against its fingerprint, its records not read
    yet: a large run is read a record batch (a directory: a part) at a time (``batches``), or the rows of
    a few cases (``rows``)."""

    config: Mapping[str, Any]
    fingerprint: str
    path: Path
    frozen: FrozenFile | DirectoryRecords = field(repr=False)

    @property
    def columns(self) -> list[str]:
        return list(self.frozen.schema)

    @property
    def buckets(self) -> int | None:
        """A run directory's buckets (``batches`` then gives one part a bucket, in order); ``None`` for a file."""
        return self.frozen.directory.buckets if isinstance(self.frozen, DirectoryRecords) else None

    def batches(self, columns: Sequence[str] | None = None) -> Iterator[pl.DataFrame]:
        """Its records a record batch at a time (``columns``: only those)."""
        return self.frozen.batches(columns)

    def rows(self, case_ids: pl.Series, columns: Sequence[str]) -> pl.DataFrame:
        """``columns`` (``case_id`` among them) of the records of ``case_ids``, in file order. In a run file,
        the ids are read first, then the other columns only of the record batches that hold one of
        ``case_ids``, their rows picked as each batch is read. The rows kept hold copies of their texts, so
        no batch or part read stays in memory behind them."""
        wanted = case_ids.implode()
        if set(columns) == {"case_id"}:
            parts = [batch.filter(pl.col("case_id").is_in(wanted)) for batch in self.batches(columns)]
        elif isinstance(self.frozen, FrozenFile):
            held = [batch.get_column("case_id").is_in(wanted).any() for batch in self.batches(["case_id"])]
            indices = [index for index, holds in enumerate(held) if holds]
            parts = list(self.frozen.batches(columns, indices, case_ids))
        else:
            parts = [_copied(batch.filter(pl.col("case_id").is_in(wanted))) for batch in self.batches(columns)]
        return pl.concat(parts) if parts else pl.DataFrame(schema={name: self.frozen.schema[name] for name in columns})

    def load(self) -> Run:
        """The whole run in memory (a run directory's: read when first used, each part checked then); a run
        file holding a case (with repeats: a case's repeat) twice is refused, as a comparison refuses it."""
        if isinstance(self.frozen, DirectoryRecords):
            return _directory_run(self.frozen.directory)
        records = self.frozen.read()
        key = [name for name in ("case_id", REPEAT) if name in records.columns]
        twice = records.filter(pl.struct(key).is_duplicated()).get_column("case_id").unique().sort()
        if twice.len():
            raise RunFileError(repeated_cases(str(self.path), twice.to_list(), REPEAT in records.columns))
        return Run(records=records, config=self.config, fingerprint=self.fingerprint, path=self.path)


def _copied(rows: pl.DataFrame) -> pl.DataFrame:
    """``rows`` with their texts copied out of the buffers they share with the frame they were filtered from
    (a Polars string is a view into its frame's buffers; Arrow's large strings are copied)."""
    return pl.DataFrame(rows.to_arrow(compat_level=pl.CompatLevel.oldest())).cast(rows.schema)


def repeated_cases(source: str, case_ids: Sequence[str], repeats: bool) -> str:
    """What is said of the run ``source`` holding ``case_ids`` (sorted) more than once (with ``repeats``: a
    case's repeat), by every command."""
    per = "record per case and repeat" if repeats else "record per case"
    return (
        f"{source}: these case ids appear more than once: {truncated(case_ids)}. A run holds one {per}; freeze "
        "it again from records with unique case ids."
    )


def load_run(path: str | Path) -> Run:
    """Read a frozen run, refusing a file whose bytes no longer match its fingerprint; or a run
    directory, refusing one whose manifest or any part was changed, or with a part missing or a file
    it does not list (each part's digest is checked here, a part at a time, and again when read)."""
    return open_run(path).load()


def open_run(path: str | Path) -> OpenedRun:
    """Open a frozen run (a file or a run directory) without reading its records, refusing one that no
    longer matches its fingerprint, or that is not a run of this format: the one opener of a run, so
    every command that reads one refuses the same runs with the same message."""
    path = Path(path)
    if check_input(path, _RUN_PATH, RunFileError, folder=True, fix=_RUN_PATH_FIX) == "folder":
        directory = read_run_directory(path)
        records = DirectoryRecords(directory, verify_parts(directory))
        _refuse_wrong_columns(directory.part_paths[0], records.schema)
        config = _checked_config(directory.path / MANIFEST, directory.config)
        return OpenedRun(config=config, fingerprint=directory.fingerprint, path=path, frozen=records)
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
    if metadata.get(FORMAT_KEY) == REVIEWS_FORMAT:
        raise RunFileError(
            f"{path}: is a reviews file (people's verdicts on two runs), not a run; `load_reviews` shows it."
        )
    if metadata.get(FORMAT_KEY) != FORMAT_VERSION or CONFIG_KEY not in metadata:
        raise RunFileError(
            f"{path}: is run format {metadata.get(FORMAT_KEY)!r}; this rag-compare reads format {FORMAT_VERSION}. "
            "Freeze the run again with this version."
        )
    _refuse_wrong_columns(path, frozen.schema)
    config = load_json(metadata[CONFIG_KEY], f"{path}: its config", line=None)
    return OpenedRun(config=_checked_config(path, config), fingerprint=frozen.fingerprint, path=path, frozen=frozen)


_RESERVED_TYPES: dict[str, tuple[type, str]] = {
    "created_at": (str, "text"),
    "rag_compare_version": (str, "text"),
    "corpus": (dict, "an object"),
    "records": (dict, "an object"),
    "merged_from": (list, "a list"),
    STORED_SIGNALS: (dict, "an object"),
}
"""The type of each key rag-compare writes into a run's config (where the config has it), and its name."""


def _checked_config(source: Path, config: Any) -> Mapping[str, Any]:
    """The run config read from ``source``, read-only, refused unless it is what freezing writes."""
    problem = _config_problem(config)
    if problem is not None:
        raise RunFileError(
            f"{source}: holds a run config that freezing never writes ({problem}). Freeze the run again."
        )
    return MappingProxyType(config)


def _config_problem(config: Any) -> str | None:
    """What freezing would never write in ``config``: not an object, a key of rag-compare's of another type,
    a ``top_k`` that is not a usable k, a number that is not finite; ``None`` when there is nothing."""
    if not isinstance(config, dict):
        return f"{type(config).__name__}, not an object"
    for key, (kind, named) in _RESERVED_TYPES.items():
        if key in config and not isinstance(config[key], kind):
            return f"its '{key}' is {show_value(config[key])}, not {named}"
    top_k = config.get("top_k")
    if top_k is not None and not is_k(top_k):
        return f"its top_k is {show_value(top_k)}, not {K_EXPECTED}"
    infinite = non_finite_path(config)
    return None if infinite is None else f"its '{infinite}' is not a finite number"


def _refuse_wrong_columns(path: Path, schema: Mapping[str, pl.DataType]) -> None:
    wrong = [
        name
        for name, dtype in _CONTRACT_DTYPES.items()
        if (name not in schema and name not in _OPTIONAL) or schema.get(name, dtype) != dtype
    ]
    if wrong:
        raise RunFileError(f"{path}: lacks or mistypes the columns {', '.join(wrong)}. Freeze the run again.")


def _directory_run(directory: RunDirectory) -> Run:
    """The run of a checked run directory, its records not read yet."""
    parts = directory.part_paths
    return Run(
        records=cast(pl.DataFrame, None),
        config=MappingProxyType(dict(directory.config)),
        fingerprint=directory.fingerprint,
        path=directory.path,
        parts=parts,
        buckets=directory.buckets,
    )


def frozen_format(path: str | Path) -> str | None:
    """The format a readable Arrow file says it holds (``FORMAT_VERSION`` for a run, ``SCORES_FORMAT``,
    ``PAIRS_FORMAT``, ``REVIEWS_FORMAT``), read from its schema only; ``None`` for any other file, and for a
    path that is not a regular file (never opened: a FIFO could wait forever)."""
    import pyarrow as pa

    if not Path(path).is_file():
        return None
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
