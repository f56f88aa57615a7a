"""Runs another tool already recorded (traces, Ragas, promptfoo, DeepEval, LangSmith) made run records.

A format's reader (``io/sources``) turns its file into ``SourceRows``; here each unit gets its case id
(from a metadata key, or by its question's text against the corpus), a case named twice is refused unless
``keep`` says which unit counts, passage texts without ids are mapped to ids through the knowledge base
(``io/passage_matching``), and the passages whose text reached the context are found where the source does
not say. ``import_and_freeze`` freezes the records as ``runs.freeze_records`` does.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import polars as pl

from rag_compare.core.contract import RECORD_COLUMNS, REPEAT, question_key, record_ok, whitespace_folded
from rag_compare.core.errors import ConfigError, ContractError, InputFileError, Problem, sorted_problems
from rag_compare.core.listing import counted
from rag_compare.core.protocols import RunSignals
from rag_compare.core.result import Report, labelled
from rag_compare.io.config import refuse_credential_paths
from rag_compare.io.corpus import Corpus, load_corpus
from rag_compare.io.passage_matching import PassageIndex
from rag_compare.io.passages import load_passages
from rag_compare.io.runs import Run, freeze_records
from rag_compare.io.sources.rows import SourceRows, skipped_reasons

__all__ = [
    "FORMATS",
    "IMPORT_KEY",
    "KEEP",
    "ImportedRecords",
    "ImportedRun",
    "import_and_freeze",
    "import_records",
    "read_records",
]

FORMATS: dict[str, str] = {
    "openinference": "rag_compare.io.sources.openinference:read_openinference",
    "ragas": "rag_compare.io.sources.ragas:read_ragas",
    "promptfoo": "rag_compare.io.sources.promptfoo:read_promptfoo",
    "deepeval": "rag_compare.io.sources.deepeval:read_deepeval",
    "langsmith": "rag_compare.io.sources.langsmith:read_langsmith",
}
"""Each format's reader, ``module:function``, imported when that format is read."""
KEEP = ("first", "last")
IMPORT_KEY = "imported"
"""The run config key where an import records what it read and how it chose case ids."""
Keep = Literal["first", "last"]
_ORDER = ("started_ns", "position")
_METADATA = ("failed_stage", "source_id")


@dataclass(frozen=True)
class ImportedRecords(Report):
    """Run records made from another tool's file, and the account of what was read: units read, cases
    imported and failed, units skipped (and why) or left out as a repeat of a case, texts matching no passage."""

    records: pl.DataFrame = field(repr=False)
    source: str
    format: str
    unit: str
    read: int
    case_ids: str
    keep: str | None = None
    skipped: tuple[dict[str, Any], ...] = ()
    left_out: tuple[dict[str, Any], ...] = ()
    unmatched: tuple[dict[str, Any], ...] = ()
    texts_without_ids: int = 0

    def __repr__(self) -> str:
        return f"<ImportedRecords {self.account}>"

    @property
    def account(self) -> str:
        """What the import read and made, in a line: ``of spans.jsonl (openinference): read 40 spans, 34
        cases (2 failed), 6 spans skipped``."""
        skipped = f", {counted(len(self.skipped), self.unit)} skipped" if self.skipped else ""
        return (
            f"of {self.source} ({self.format}): read {counted(self.read, self.unit)}, "
            f"{counted(self.records.height, 'case')} ({self.failed} failed){skipped}"
        )

    @property
    def failed(self) -> int:
        return self.records.height - int(self.records.select(record_ok().sum()).item())

    def settings(self) -> dict[str, Any]:
        """What the run config records of the import."""
        return {
            "format": self.format,
            "source": self.source,
            "case_ids": self.case_ids,
            "keep": self.keep,
            "read": self.read,
            "unit": self.unit,
            "skipped": len(self.skipped),
            "left_out": len(self.left_out),
            "unmatched_passages": len(self.unmatched),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.settings(),
            "cases": self.records.height,
            "failed": self.failed,
            "texts_without_ids": self.texts_without_ids,
            "skipped": list(self.skipped),
            "left_out": list(self.left_out),
            "unmatched_passages": list(self.unmatched),
        }


@dataclass(frozen=True)
class ImportedRun(Report):
    """A run frozen from another tool's file, with the account of the import."""

    run: Run
    imported: ImportedRecords

    def __repr__(self) -> str:
        return f"<ImportedRun {labelled(self.run.name, self.run.fingerprint)} {self.imported.account}>"

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run.to_dict(), "import": self.imported.to_dict()}


def read_records(
    source: str | Path,
    format: str,
    *,
    corpus: str | Path | pl.DataFrame | Corpus | None = None,
    case_id_key: str = "case_id",
    match_question: bool = False,
    keep: Keep | None = None,
    passages: str | Path | pl.DataFrame | None = None,
) -> pl.DataFrame:
    """The run records of ``source``, a file of ``format`` (one of ``FORMATS``), ready for ``freeze_run``.

    See ``import_records`` for the arguments; this returns its records only.
    """
    return import_records(
        source,
        format,
        corpus=corpus,
        case_id_key=case_id_key,
        match_question=match_question,
        keep=keep,
        passages=passages,
    ).records


def import_records(
    source: str | Path,
    format: str,
    *,
    corpus: str | Path | pl.DataFrame | Corpus | None = None,
    case_id_key: str = "case_id",
    match_question: bool = False,
    keep: Keep | None = None,
    passages: str | Path | pl.DataFrame | None = None,
) -> ImportedRecords:
    """Read ``source`` as ``format`` and make its run records, with the account of the import.

    A unit's case id is its metadata value under ``case_id_key``, or, with ``match_question=True``, the
    corpus case whose question is the unit's (whitespace and case folded). With a ``corpus``, every case
    id must be one of its cases. A case named by two units is refused unless ``keep`` is ``"first"`` or
    ``"last"`` (by start time, then position in the file). ``passages`` (a knowledge base) maps passage
    texts without ids to ids. Every unreadable unit or unresolved case id is listed in one ``ContractError``.
    """
    _check_settings(format, keep, match_question=match_question, corpus_given=corpus is not None)
    name = str(source)
    rows = _reader(format)(Path(source), case_id_key)
    what = f"{format} file"
    if rows.problems:
        raise ContractError(name, what, sorted_problems(rows.problems))
    if rows.frame.is_empty():
        raise InputFileError(
            f"{name}: {rows.read} {rows.unit}s read and none holds a case ({_skipped(rows)}). "
            f"Check that this is the {format} file of the run."
        )
    loaded = None if corpus is None else corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
    frame, problems = (
        _by_question(rows.frame, loaded)
        if match_question and loaded is not None
        else _by_key(rows.frame, case_id_key, loaded)
    )
    frame, left_out, repeated = _one_per_case(frame, keep, rows.unit)
    problems += repeated
    if problems:
        raise ContractError(name, what, sorted_problems(problems))
    versions = None if loaded is None else loaded.frame.select("case_id", "source_version")
    index = None if passages is None else PassageIndex.of(load_passages(passages))
    frame, unmatched = _passage_ids(frame, index, versions)
    frame = _context_ids(frame, index)
    return ImportedRecords(
        records=_records(frame),
        source=name,
        format=format,
        unit=rows.unit,
        read=rows.read,
        case_ids="question text" if match_question else f"metadata key {case_id_key!r}",
        keep=keep,
        skipped=tuple(skipped.to_dict() for skipped in rows.skipped),
        left_out=left_out,
        unmatched=unmatched,
        texts_without_ids=0 if index is not None else _texts_without_ids(frame),
    )


def import_and_freeze(
    source: str | Path,
    format: str,
    corpus: str | Path | pl.DataFrame | Corpus,
    config: Mapping[str, Any] | None = None,
    *,
    signals: RunSignals | None,
    case_id_key: str = "case_id",
    match_question: bool = False,
    keep: Keep | None = None,
    passages: str | Path | pl.DataFrame | None = None,
    output: str | Path | None = None,
    buckets: int | None = None,
    include_unreviewed: bool = False,
) -> ImportedRun:
    """Import ``source`` (see ``import_records``) and freeze it against ``corpus`` with ``config``, as
    ``runs.freeze_records`` does (validated, fingerprinted, written to ``output`` and never over a file; a
    run directory for an ``output`` ending in ``/`` or with ``buckets``; ``signals`` stored when given). The
    config records the import under ``"imported"``, ``source`` with it: like the paths ``freeze_records``
    stores, it may hold no credential."""
    corpus_path = corpus.source if isinstance(corpus, Corpus) else corpus
    refuse_credential_paths({"source": source, "corpus": corpus_path, "output": output})
    user_config = dict(config or {})
    if IMPORT_KEY in user_config:
        raise ConfigError(f"the config sets {IMPORT_KEY}, which an import records itself. Remove it.")
    loaded = corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
    imported = import_records(
        source,
        format,
        corpus=loaded,
        case_id_key=case_id_key,
        match_question=match_question,
        keep=keep,
        passages=passages,
    )
    run_config = {**user_config, IMPORT_KEY: imported.settings()}
    run = freeze_records(
        imported.records,
        loaded,
        run_config,
        signals=signals,
        output=output,
        buckets=buckets,
        include_unreviewed=include_unreviewed,
    )
    return ImportedRun(run=run, imported=imported)


def _check_settings(format: str, keep: Keep | None, *, match_question: bool, corpus_given: bool) -> None:
    """Refuse, before the file is read, an unknown ``format`` or ``keep``, or matching questions without a corpus."""
    if format not in FORMATS:
        raise ConfigError(f"unknown format {format!r}; read one of: {', '.join(FORMATS)} (`format`).")
    if keep is not None and keep not in KEEP:
        raise ConfigError(f"`keep` is {keep!r}; use 'first' or 'last', or leave it out.")
    if match_question and not corpus_given:
        raise ConfigError("`match_question=True` matches questions against a corpus: pass `corpus`.")


def _reader(format: str) -> Callable[[Path, str], SourceRows]:
    module, function = FORMATS[format].split(":")
    return cast(Callable[[Path, str], SourceRows], getattr(importlib.import_module(module), function))


def _skipped(rows: SourceRows) -> str:
    """``2 no query; 1 no root span``: the units skipped, by reason."""
    reasons = skipped_reasons(rows.skipped).items()
    return "; ".join(f"{count} {reason}" for reason, count in reasons) or "the file holds no unit"


def _by_key(frame: pl.DataFrame, key: str, corpus: Corpus | None) -> tuple[pl.DataFrame, list[Problem]]:
    """Each unit's case id from its metadata value under ``key``; a unit without one, or with an id the
    corpus lacks, is a problem."""
    frame = frame.with_columns(case_id=pl.col("case_key").str.strip_chars())
    missing = frame.filter(pl.col("case_id").is_null() | (pl.col("case_id") == ""))
    problems = [
        Problem(
            f"a case id under the metadata key {key!r} (set it where the run is recorded, name another key "
            "with `case_id_key`, or match the questions with `match_question=True`)",
            row=position,
            column=key,
        )
        for position in missing.get_column("position")
    ]
    if corpus is not None:
        unknown = frame.filter(~pl.col("case_id").is_in(corpus.frame.get_column("case_id").implode()))
        problems += [
            Problem.at(position, key, case_id, f"a case id of the corpus {corpus.source}")
            for position, case_id in unknown.drop_nulls("case_id").select("position", "case_id").iter_rows()
        ]
    return frame, problems


def _by_question(frame: pl.DataFrame, corpus: Corpus) -> tuple[pl.DataFrame, list[Problem]]:
    """Each unit's case id: the one corpus case whose question is the unit's; no match or several is a problem."""
    cases = corpus.frame.select("case_id", key=question_key("question"))
    matches = (
        frame.select("position", key=question_key("question"))
        .join(cases, on="key", how="left")
        .group_by("position", maintain_order=True)
        .agg(pl.col("case_id").drop_nulls())
    )
    frame = frame.drop("case_key").join(matches, on="position", how="left")
    problems = [
        Problem.at(
            position,
            "question",
            question,
            "the question of one corpus case"
            + (f" (it is the question of {', '.join(ids)}: match by a case id key instead)" if ids else ""),
        )
        for position, question, ids in frame.filter(pl.col("case_id").list.len() != 1)
        .select("position", "question", "case_id")
        .iter_rows()
    ]
    return frame.with_columns(pl.col("case_id").list.first()), problems


def _one_per_case(
    frame: pl.DataFrame, keep: Keep | None, unit: str
) -> tuple[pl.DataFrame, tuple[dict[str, Any], ...], list[Problem]]:
    """One unit per case: ``keep`` chooses among repeats (the others are left out and listed); without
    it each repeat is a problem."""
    ordered = frame.sort(_ORDER, nulls_last=True, maintain_order=True)
    repeated = ordered.filter(pl.col("case_id").is_duplicated() & pl.col("case_id").is_not_null())
    if repeated.is_empty():
        return frame, (), []
    if keep is None:
        positions = repeated.group_by("case_id", maintain_order=True).agg("position")
        return (
            frame,
            (),
            [
                Problem.at(
                    int(found[0]),
                    "case_id",
                    case_id,
                    f"one {unit} per case (this case is at {', '.join(map(str, found))}); say which counts "
                    "with `keep='first'` or `keep='last'`",
                )
                for case_id, found in positions.iter_rows()
            ],
        )
    kept = ordered.unique("case_id", keep=keep, maintain_order=True)
    dropped = ordered.join(kept.select("position"), on="position", how="anti")
    left_out = tuple(
        {
            "position": position,
            "source_id": source_id,
            "case_id": case_id,
            "reason": f"a repeat of the case (kept {keep})",
        }
        for position, source_id, case_id in dropped.select("position", "source_id", "case_id").iter_rows()
    )
    return kept.sort("position"), left_out, []


def _passage_ids(
    frame: pl.DataFrame, index: PassageIndex | None, versions: pl.DataFrame | None
) -> tuple[pl.DataFrame, tuple[dict[str, Any], ...]]:
    """Ids for the units that retrieved texts without ids, through ``index``; each text matching no
    passage is left out of the ids (and its score with it) and listed."""
    frame = frame.with_columns(retrieved_unmatched_ranks=pl.lit(None, dtype=pl.List(pl.Int64)))
    needs = pl.col("retrieved_passage_ids").is_null() & pl.col("retrieved_texts").is_not_null()
    if index is None or frame.filter(needs).is_empty():
        return frame, ()
    if versions is None:
        versions = pl.DataFrame(schema={"case_id": pl.String, "source_version": pl.String})
    ranked = (
        frame.filter(needs)
        .select("position", "case_id", "retrieved_texts")
        .join(versions, on="case_id", how="left")
        .with_columns(rank=pl.int_ranges(1, pl.col("retrieved_texts").list.len() + 1))
        .explode("retrieved_texts", "rank", empty_as_null=False, keep_nulls=False)
        .drop_nulls("rank")
    )
    pairs = ranked.select("retrieved_texts", "source_version").unique(maintain_order=True)
    matched = pairs.with_columns(
        passage_id=pl.Series([index.match(text, version) for text, version in pairs.iter_rows()], dtype=pl.String)
    )
    ranked = ranked.join(matched, on=["retrieved_texts", "source_version"], how="left", nulls_equal=True)
    found = ranked.filter(pl.col("passage_id").is_not_null())
    per_unit = ranked.group_by("position").agg(
        found_ids=pl.col("passage_id").filter(pl.col("passage_id").is_not_null()),
        found_ranks=pl.col("rank").filter(pl.col("passage_id").is_not_null()),
        unmatched=pl.col("rank").filter(pl.col("passage_id").is_null()),
    )
    frame = frame.join(per_unit, on="position", how="left", maintain_order="left").with_columns(
        retrieved_passage_ids=pl.when(needs).then(pl.col("found_ids").fill_null([])).otherwise("retrieved_passage_ids"),
        retrieved_scores=pl.when(needs & pl.col("retrieved_scores").is_not_null())
        .then(pl.col("retrieved_scores").list.gather(pl.col("found_ranks").fill_null([]) - 1))
        .otherwise("retrieved_scores"),
        retrieved_unmatched_ranks=pl.when(needs).then(pl.col("unmatched")),
    )
    unmatched = tuple(
        {"case_id": case_id, "rank": rank, "text": text[:200]}
        for case_id, rank, text in ranked.join(found.select("position", "rank"), on=["position", "rank"], how="anti")
        .select("case_id", "rank", "retrieved_texts")
        .iter_rows()
    )
    return frame.drop("found_ids", "found_ranks", "unmatched"), unmatched


def _context_ids(frame: pl.DataFrame, index: PassageIndex | None) -> pl.DataFrame:
    """``context_passage_ids`` where the source does not say: the retrieved passages (best first) whose
    text, whitespace folded, lies in the context sent (texts from the source, else from ``index``)."""
    derive = (
        pl.col("context_passage_ids").is_null()
        & pl.col("context").is_not_null()
        & pl.col("retrieved_passage_ids").is_not_null()
    )
    pending = frame.filter(derive)
    if pending.is_empty():
        return frame
    with_texts = pending.filter(pl.col("retrieved_texts").list.len() == pl.col("retrieved_passage_ids").list.len())
    pairs = with_texts.select(
        "position", "context", passage_id="retrieved_passage_ids", text="retrieved_texts"
    ).explode("passage_id", "text")
    if index is not None:
        from_index = pending.join(with_texts.select("position"), on="position", how="anti")
        looked_up = (
            from_index.select("position", "context", passage_id="retrieved_passage_ids")
            .explode("passage_id")
            .join(index.frame, on="passage_id", how="left", maintain_order="left")
        )
        pairs = pl.concat([pairs, looked_up.select(pairs.columns)])
    sent = (
        pairs.drop_nulls(["passage_id", "text"])
        .filter(whitespace_folded("context").str.contains(whitespace_folded("text"), literal=True))
        .group_by("position")
        .agg(found=pl.col("passage_id"))
    )
    known = pairs.select("position").unique()
    return (
        frame.join(sent, on="position", how="left")
        .join(known.with_columns(known=pl.lit(True)), on="position", how="left")
        .with_columns(
            context_passage_ids=pl.when(derive & pl.col("known").fill_null(False))
            .then(pl.col("found").fill_null([]))
            .otherwise("context_passage_ids")
        )
        .drop("found", "known")
        .sort("position")
    )


def _texts_without_ids(frame: pl.DataFrame) -> int:
    return int(
        frame.select((pl.col("retrieved_passage_ids").is_null() & pl.col("retrieved_texts").is_not_null()).sum()).item()
    )


def _records(frame: pl.DataFrame) -> pl.DataFrame:
    """The run records: the contract's columns, then the import's own metadata (failed stage, the source's
    id of the unit; the ranks of texts that matched no passage, where passages were mapped)."""
    metadata = list(_METADATA)
    if frame.select(pl.col("retrieved_unmatched_ranks").is_not_null().any()).item():
        metadata.append("retrieved_unmatched_ranks")
    return (
        frame.sort("position")
        .with_columns(pl.col("status").fill_null("ok"))
        .select(*(spec.name for spec in RECORD_COLUMNS if spec.name != REPEAT), *metadata)
    )
