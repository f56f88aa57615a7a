"""``Comparison``, the result of comparing two runs (``compare_runs.compare`` makes it): frames a user can
filter, and their JSON (the report floor renders the rest)."""

from __future__ import annotations

import contextlib
import io
import tempfile
from collections import deque
from collections.abc import Generator, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TextIO

import polars as pl

from rag_compare.compute.case_status import CASE_STATUSES, SIDES, STAGED_STATUSES
from rag_compare.compute.case_table import CaseTable
from rag_compare.compute.case_texts import (
    REPORT_TEXTS,
    SIDE_TEXTS,
    TEXT_LABELS,
    CaseTexts,
    TextColumns,
    passage_texts,
)
from rag_compare.compute.claim_changes import ClaimChanges, ClaimSummary, SideClaims, counted
from rag_compare.compute.configdiff import ConfigChange
from rag_compare.compute.preference import PREFERENCE_COLUMNS, Preference
from rag_compare.compute.repeats import NoiseFloor
from rag_compare.core.listing import counts_line
from rag_compare.core.result import CI_FORMATS, DEFAULT_MAX_CASES, REPORT_FORMATS, Report, labelled, to_json
from rag_compare.core.result import FORMATS as SUMMARY_FORMATS  # the text and JSON every result renders
from rag_compare.core.signals import JUDGE_COLUMNS, STAGE_PHRASES, STAGES, Signal, signals_in
from rag_compare.io.outputs import check_output
from rag_compare.io.runfile import atomic_directory
from rag_compare.io.runs import OpenedRun, Run, json_ready
from rag_compare.io.scores import evaluator_label

if TYPE_CHECKING:
    from rag_compare.compute.gate_result import GateResult
    from rag_compare.serve.server import ReviewUrl

__all__ = [
    "CASE_STATUSES",
    "FORMATS",
    "NOT_RUN",
    "REPORTED_STATUSES",
    "SCHEMA_VERSION",
    "SCOPE_TITLES",
    "SIDES",
    "STAGE_ORDER",
    "Comparison",
]

SCHEMA_VERSION = 1
FORMATS = SUMMARY_FORMATS + REPORT_FORMATS + CI_FORMATS
REPORTED_STATUSES = (
    "regressed",
    "failed_in_candidate",
    "failed_in_both",
    "failed_in_baseline",
    "judge_failed_in_candidate",
    "judge_failed_in_both",
    "judge_failed_in_baseline",
    "missing_in_candidate",
    "missing_in_both",
    "missing_in_baseline",
    "mixed",
    "improved",
    "unstable",
)
"""The statuses reports list case by case, in this order (``unchanged`` cases are only counted)."""
_RECORD_COLUMNS = ("status", "error")
"""A side's record status (``ok``, ``failed``, ``timeout``) and error, first in its JSON."""
_REPEAT_COUNTS = ("repeats", "failed_repeats", "judge_failed_repeats")
_JSON_SLICE_ROWS = 50_000
"""Cases serialised at a time: a million cases never sit in memory as one string."""
PART_ROWS = 1_000_000
"""Cases per Parquet part of a comparison written as a folder (``write_directory``)."""
NOT_RUN = "not run: unreviewed synthetic"
"""How the counts name the unreviewed synthetic cases a run left out (``Comparison.unreviewed_left_out``)."""
STAGE_ORDER: tuple[str, ...] = tuple(reversed(STAGES[:-1])) + STAGES[-1:]
"""Stages as reports list them: the latest in the pipeline first, then failures."""
_NO_CLAIMS = SideClaims("unavailable", why="no claim verdicts were given")
SCOPE_TITLES = {
    "paired": "Paired: the cases with a value on both sides",
    "all_cases": "All cases: a missing or failed case counts at the signal's worst value",
}


@dataclass(frozen=True)
class ComparedRun:
    """What a comparison keeps of a run: who it is and how it was set up, not its records."""

    name: str
    path: Path | None
    fingerprint: str
    created_at: str
    config: Mapping[str, Any]
    k: int | None
    """The cut-off its ranked lists were scored at (``None``: each list's own length)."""
    repeats: Mapping[str, int]
    """Its ``cases``, ``samples``, the ``min``/``max`` samples of a case and its ``failed`` samples."""

    @property
    def path_text(self) -> str:
        """The run file's path as shown, or ``(not written)`` for a run kept in memory."""
        return str(self.path or "(not written)")

    @classmethod
    def of(cls, run: Run | OpenedRun, *, k: int | None, repeats: Mapping[str, int]) -> ComparedRun:
        """What is kept of ``run``, whose records have these ``repeat_counts``."""
        config = MappingProxyType(json_ready(run.config))
        return cls(run.name, run.path, run.fingerprint, run.created_at, config, k, MappingProxyType(dict(repeats)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": None if self.path is None else str(self.path),
            "fingerprint": self.fingerprint,
            "config": dict(self.config),
            "repeats": dict(self.repeats),
        }


@dataclass(frozen=True, repr=False)
class Comparison(Report):
    """Two runs compared case by case.

    ``cases`` has one row per case: ``case_id``, ``status``, ``stage`` (where in the pipeline it changed,
    see ``case_status``), ``reasons`` and each one's stage (``reason_stages``), ``answerability`` and
    ``category``, then per side (``baseline_``/``candidate_`` prefixes) its record's status and error,
    every signal, ``missing_from_context`` and how judging went (with repeats: each signal's mean and
    spread, and the sample counts; see ``repeats``). The texts, a case's question, acceptance note,
    source version and required passages and each side's answer and passage lists, stay in the runs:
    ``with_texts`` reads them back for the cases asked (``to_json(with_texts=True)``: for every case).
    ``aggregates`` and ``breakdowns`` summarise the signals; ``flaky`` lists the cases whose own repeats
    disagree, most first (empty without repeats); all four are Polars frames. With a pairs file, ``cases``
    also has ``preferred`` (the pairwise judge's verdict) and ``preference_reason``, and ``preference``
    sums the verdicts up. The unreviewed
    synthetic cases a run left out by design are no cases: ``unreviewed_left_out`` lists them apart.
    """

    baseline: ComparedRun
    candidate: ComparedRun
    evaluator: Mapping[str, Any]
    """``name`` and ``fingerprint`` of the offline judge, and under ``scores`` per side the evaluator
    of the scores that side was judged by (``None``: the offline judge's verdicts)."""
    config_diff: tuple[ConfigChange, ...]
    warnings: tuple[str, ...]
    case_table: CaseTable = field(repr=False)
    """The cases, held or on disk (see ``cases`` and ``scan_cases``)."""
    aggregates: pl.DataFrame
    breakdowns: pl.DataFrame
    tolerance: float
    noise_floor: NoiseFloor | None
    """The A/A counts of a side's repeats compared with each other; ``None`` without repeats."""
    flaky: pl.DataFrame
    preference: Preference | None
    """A pairwise judge's verdicts summed up (see ``preference``); ``None`` without a pairs file."""
    unreviewed_left_out: tuple[str, ...]
    """The unreviewed synthetic cases a run (or both) has no record of, by id: left out by design, so not
    missing (see ``bucket_join.join_bucket``)."""
    texts: CaseTexts = field(compare=False)
    """Where the cases' texts are read back from (see ``with_texts``)."""
    passages: pl.DataFrame | None = field(default=None, compare=False, repr=False)
    """The passages the comparison checked contexts against (``passage_id``, ``text``; see
    ``knowledge_base``), whose texts a case's details show; ``None`` without any."""
    claim_changes: ClaimChanges = field(default=ClaimChanges((_NO_CLAIMS, _NO_CLAIMS)), compare=False, repr=False)
    """Where each side's claim verdicts come from (see ``claim_changes``): ``claims`` and ``claim_summary``."""

    def __repr__(self) -> str:
        runs = " → ".join(labelled(run.name, run.fingerprint) for run in (self.baseline, self.candidate))
        return f"<Comparison {runs}: {self.n_cases} cases: {self.counts_text(', ')}>"

    @property
    def cases(self) -> pl.DataFrame:
        """Every case in one frame (from the ``streaming`` and ``ray`` engines: read from disk; for a
        comparison too large to hold, use ``scan_cases``)."""
        return self.case_table.collect()

    def scan_cases(self) -> pl.LazyFrame:
        """The cases as a lazy frame in ``case_id`` order: filter and select before collecting."""
        return self.case_table.lazy()

    @property
    def n_cases(self) -> int:
        return self.case_table.height

    @property
    def reduced(self) -> bool:
        """Whether a side has a case sampled more than once: each side's signals are then a case's means over
        its samples (see ``repeats``)."""
        return any(run.repeats["max"] > 1 for run in (self.baseline, self.candidate))

    @property
    def counts(self) -> dict[str, int]:
        """Cases per status, every status of ``CASE_STATUSES`` included."""
        return {status: self.case_table.counts.get(status, 0) for status in CASE_STATUSES}

    def counts_text(self, separator: str = " · ") -> str:
        """The statuses that have cases, with their counts, then the cases not run: ``improved 5 · regressed 4 ·
        not run: unreviewed synthetic 1``."""
        counts = {status: count for status, count in self.counts.items() if count}
        if self.unreviewed_left_out:
            counts[NOT_RUN] = len(self.unreviewed_left_out)
        return counts_line(counts, separator)

    @cached_property
    def stage_counts(self) -> dict[str, dict[str, int]]:
        """Per status of ``STAGED_STATUSES`` with cases, its cases per stage (``STAGE_ORDER``, those with
        cases): ``{"regressed": {"answer": 3, "retrieval_rank": 1}}``."""
        staged = (
            self.scan_cases()
            .select(pl.col("status").cast(pl.String), pl.col("stage").cast(pl.String))
            .filter(pl.col("status").is_in(STAGED_STATUSES))
            .group_by("status", "stage")
            .len()
            .collect()
        )
        found = {(status, stage): count for status, stage, count in staged.iter_rows()}
        counts = {
            status: {stage: found[status, stage] for stage in STAGE_ORDER if (status, stage) in found}
            for status in STAGED_STATUSES
        }
        return {status: stages for status, stages in counts.items() if stages}

    def stages_text(self) -> list[str]:
        """A line per status of ``stage_counts``: ``regressed 7: 3 at the answer, 1 at the context, 2 at
        retrieval coverage, 1 rank only``."""
        return [
            f"{status} {sum(stages.values())}: "
            + ", ".join(f"{count} {STAGE_PHRASES[stage]}" for stage, count in stages.items())
            for status, stages in self.stage_counts.items()
        ]

    def claims(self, case_ids: pl.Series | list[str]) -> pl.DataFrame:
        """Per id of ``case_ids``, in that order: ``case_id``, each side's claim verdicts
        (``baseline_claims``, ``candidate_claims``: lists of ``claims.CLAIM_TYPE``, null where not available)
        and how they changed (``claim_changes``: lists of ``claims.CHANGE_TYPE``, null where a side's claims
        are not available; see ``claims.pair_claims``). The texts the offline judge reads are read back from
        the runs for those cases only; with ``passages``, each claim's evidence names its passage too
        (``claim_changes.named_passages``)."""
        ids = pl.Series("case_id", case_ids, dtype=pl.String)
        if self.passages is None:
            return self.claim_changes.of(self.texts.of(ids, self.claim_changes.columns))
        columns = self.claim_changes.columns | TextColumns((), ("context", "context_passage_ids"))
        texts = self.texts.of(ids, columns)
        named = passage_texts(self.passages, texts, [f"{side}_context_passage_ids" for side in SIDES])
        return self.claim_changes.of(texts, named)

    @cached_property
    def claim_summary(self) -> ClaimSummary:
        """Every case's claim changes summed up, with the sign test over cases (see ``claim_changes``): read
        a slice of cases at a time, once."""
        return self.claim_changes.summary(self.case_table, self.texts)

    def scores_text(self) -> str:
        """The evaluators of the sides' scores, ``baseline openai (0123456789ab), candidate ...``; empty
        when neither side has scores."""
        scores = self.evaluator.get("scores") or {}
        if not any(scores.values()):
            return ""
        return ", ".join(f"{side} {evaluator_label(scores.get(side))}" for side in SIDES)

    @property
    def signals(self) -> tuple[Signal, ...]:
        """The signals this comparison holds: every one of ``SIGNALS``, and the score signals its scores had."""
        return signals_in(self.case_table.columns, prefix="baseline_")

    @property
    def signals_without_values(self) -> list[str]:
        """The signals no case has a value of (``answer_completeness`` without passages, say)."""
        return self.aggregates.filter(pl.col("n") == 0).get_column("signal").unique(maintain_order=True).to_list()

    def with_texts(self, cases: pl.DataFrame, columns: TextColumns = REPORT_TEXTS) -> pl.DataFrame:
        """``cases`` (rows of ``cases``, ``case_id`` at least) with their texts beside them: the labels of
        ``TEXT_LABELS`` and each side's ``SIDE_TEXTS`` (see ``case_texts``; or those of ``columns``), read back
        from the runs for those cases only. Raises ``CompareError`` when a run file has changed since it was
        compared."""
        texts = self.texts.of(cases.get_column("case_id"), columns)
        return pl.concat([cases, texts.drop("case_id")], how="horizontal")

    def review(
        self, db: str | Path, *, host: str = "127.0.0.1", port: int = 0, reviewer: str | None = None
    ) -> ReviewUrl:
        """Serve this comparison for review (``rag-compare review``'s page and JSON API) from a thread of this
        process, and return its URL to open. Verdicts go to the review database ``db`` (SQLite, created when
        missing), signed by ``reviewer`` (default: the login name) when a verdict names none. ``port`` 0 takes
        a free one; a ``host`` other than 127.0.0.1, ::1 or localhost needs a token (see the README's Review).

        One server runs at a time: calling ``review`` again with the same ``db``, ``host`` and ``reviewer``
        returns the running server's URL, else stops it and starts another. ``url.stop()`` stops it; so does
        the end of the process (a notebook's kernel). Needs ``rag-compare[review]`` (``ReviewError`` without).
        """
        from rag_compare.serve.server import review_in_background

        return review_in_background(self, db, host=host, port=port, reviewer=reviewer)

    def to_dict(self, *, with_texts: bool = False) -> dict[str, Any]:
        """The summary and every case (see the README's JSON of a comparison); ``with_texts``: each case
        with its question and labels, and each side with its answer and passage lists (see ``with_texts``)."""
        with contextlib.closing(self._slices(_JSON_SLICE_ROWS, with_texts=with_texts)) as slices:
            cases = [case for part in slices for case in self._case_objects(part).to_dicts()]
        return self._summary() | {"cases": cases}

    def to_json(self, *, with_texts: bool = False) -> str:
        """The JSON of ``to_dict``."""
        return self.render("json", with_texts=with_texts)

    def render(
        self,
        format: str = "text",
        *,
        all_cases: bool = False,
        max_cases: int | None = DEFAULT_MAX_CASES,
        gate: GateResult | None = None,
        with_texts: bool = False,
    ) -> str:
        """The comparison as ``text`` (a terminal summary), ``json``, ``markdown``, ``html`` (a
        self-contained page), or for a CI system as ``github`` (workflow commands, then the Markdown
        report) or ``junit`` (JUnit XML).

        Reports list the cases that changed, failed or are missing, up to ``max_cases`` per status
        (``None``: every one); ``all_cases`` lists the unchanged ones too. ``gate``, a release gate's
        verdict on this comparison, is shown first in ``markdown`` and ``html`` (each condition with its
        numbers); ``github`` also annotates each condition that held, ``junit`` makes each condition a test
        case; ``text`` and ``json`` leave it to the caller. ``with_texts``, for ``json`` only: each case
        with its texts too (see ``to_dict``).
        """
        buffer = io.StringIO()
        self.write(buffer, format, all_cases=all_cases, max_cases=max_cases, gate=gate, with_texts=with_texts)
        return buffer.getvalue()

    def write(
        self,
        stream: TextIO,
        format: str = "text",
        *,
        all_cases: bool = False,
        max_cases: int | None = DEFAULT_MAX_CASES,
        gate: GateResult | None = None,
        with_texts: bool = False,
    ) -> None:
        """Write ``render(format, ...)`` to ``stream``, piece by piece for the large formats (``gate``:
        used by every format but ``text`` and ``json``; ``with_texts``: by ``json`` only)."""
        if format not in FORMATS:
            raise ValueError(f"unknown format {format!r}; use one of {', '.join(FORMATS)}")
        if max_cases is not None and max_cases < 1:
            raise ValueError(f"max_cases must be 1 or more, or None for every case; got {max_cases!r}")
        if with_texts and format != "json":
            raise ValueError(f"`with_texts` is for the json format, not {format!r}")
        if format == "json":
            self.write_json(stream, with_texts=with_texts)
        elif format == "text":
            self._write(stream, format)
        else:
            self._write(stream, format, all_cases=all_cases, max_cases=max_cases, gate=gate)

    def write_json(self, stream: TextIO, *, with_texts: bool = False) -> None:
        """Write the JSON of ``to_dict`` to ``stream``, one case per line, serialised by Polars.

        The cases are first read a slice at a time, each with its claim changes (and its texts, with
        ``with_texts``), into Arrow IPC pieces in the system's temporary folder, the claim changes summed up
        on the way: one pass over the runs gives the summary and the cases, and nothing is written before
        the runs were all read. Then slices of cases are encoded on threads, a few ahead of the one being
        written, so memory stays bounded by the slice size.
        """
        with tempfile.TemporaryDirectory(prefix="rag-compare-json-") as folder:
            pieces = self._spilled(_JSON_SLICE_ROWS, with_texts=with_texts, folder=Path(folder))
            self._write_json(stream, (pl.read_ipc(piece) for piece in pieces))

    def _write_json(self, stream: TextIO, slices: Iterator[pl.DataFrame]) -> None:
        head = to_json(self._summary() | {"cases": []})
        if not self.n_cases:
            stream.write(head)
            return

        def encode(cases: pl.DataFrame, first: bool) -> str:
            objects = self._case_objects(cases)
            text: str = objects.select(pl.struct(objects.columns).struct.json_encode().str.join(",\n    ")).item()
            return text if first else ",\n    " + text

        workers = pl.thread_pool_size()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            pending: deque[Future[str]] = deque([pool.submit(encode, next(slices), True)])
            stream.write(head.removesuffix('  "cases": []\n}\n') + '  "cases": [\n    ')
            for cases in slices:
                pending.append(pool.submit(encode, cases, False))
                if len(pending) > workers:
                    stream.write(pending.popleft().result())
            while pending:
                stream.write(pending.popleft().result())
        stream.write("\n  ]\n}\n")

    def write_directory(self, path: str | Path, *, with_texts: bool = False) -> Path:
        """Write the comparison as a new folder ``path``, for sizes where one JSON file is not sensible:
        ``summary.json`` (the JSON of ``to_dict`` without ``cases``) and ``cases/part-00000.parquet``, ...
        (``PART_ROWS`` cases each, in ``case_id`` order, with the fields of the JSON's cases, their texts
        too with ``with_texts``: each side a struct). Written whole or not at all; an existing ``path`` is
        refused (``outputs.check_output``)."""
        path = check_output(path, "comparison folder", folder=True, parameter="path")
        with atomic_directory(path, what="comparison folder") as folder:
            (folder / "cases").mkdir()
            changes = []
            with contextlib.closing(self._slices(PART_ROWS, with_texts=with_texts)) as parts:
                for index, cases in enumerate(parts):
                    part = folder / "cases" / f"part-{index:05d}.parquet"
                    self._case_objects(cases).write_parquet(part, compression="zstd")
                    changes.append(counted(cases))
            self._know_claim_summary(changes)
            (folder / "summary.json").write_text(to_json(self._summary()), encoding="utf-8")
        return path

    def _spilled(self, rows: int, *, with_texts: bool, folder: Path) -> list[Path]:
        """The slices of ``_slices`` written to ``folder`` (Arrow IPC, a piece each), their claim changes
        summed up on the way (``claim_summary``): one pass over the runs gives both."""
        pieces, changes = [], []
        with contextlib.closing(self._slices(rows, with_texts=with_texts)) as slices:
            for index, cases in enumerate(slices):
                pieces.append(folder / f"{index:06d}.arrow")
                cases.write_ipc(pieces[-1], compression="lz4")
                changes.append(counted(cases))
        self._know_claim_summary(changes)
        return pieces

    def _know_claim_summary(self, changes: list[pl.DataFrame]) -> None:
        """Keep the claim summary of every case's ``changes`` (``counted``), unless it is known already."""
        if "claim_summary" not in self.__dict__:  # the cached property's place: it is not computed again
            self.__dict__["claim_summary"] = self.claim_changes.summed(changes)

    def _slices(self, rows: int, *, with_texts: bool) -> Generator[pl.DataFrame, None, None]:
        """The cases ``rows`` at a time in ``case_id`` order (one empty slice when there are none), each with
        its ``claim_changes``, and with their texts beside them when ``with_texts``."""
        columns = (REPORT_TEXTS | self.claim_changes.columns) if with_texts else self.claim_changes.columns
        shown = [*TEXT_LABELS, *(f"{side}_{name}" for side in SIDES for name in SIDE_TEXTS)] if with_texts else []
        if not self.n_cases:
            parts: Iterable[pl.DataFrame] = [self.with_texts(self.case_table.collect(), columns)]
        elif self.claim_changes.reads_texts or with_texts:
            parts = self.texts.beside(self.case_table, rows, columns)
        else:
            parts = self.case_table.slices(rows)
        for part in parts:
            changes = self.claim_changes.of(part).get_column("claim_changes")
            texts = [name for name in part.columns if name not in self.case_table.columns and name not in shown]
            yield part.drop(texts).with_columns(changes)

    def _summary(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "warnings": list(self.warnings),
            "baseline": self.baseline.to_dict(),
            "candidate": self.candidate.to_dict(),
            "evaluator": dict(self.evaluator),
            "config_diff": [dict(change) for change in self.config_diff],
            "counts": self.counts,
            "stage_counts": self.stage_counts,
            "unreviewed_left_out": list(self.unreviewed_left_out),
            "aggregates": self.aggregates.to_dicts(),
            "breakdowns": self.breakdowns.to_dicts(),
            "noise_floor": None if self.noise_floor is None else self.noise_floor.to_dict(),
            "flaky": self.flaky.to_dicts(),
            "preference": None if self.preference is None else self.preference.to_dict(),
            "claims": self.claim_summary.to_dict(),
        }

    def _case_objects(self, cases: pl.DataFrame) -> pl.DataFrame:
        """One row per case of ``cases`` with the JSON fields; a side without a record is null."""
        columns = set(cases.columns)
        sides = [
            pl.when(pl.col(f"{side}_status").is_not_null())
            .then(
                pl.struct(
                    *(pl.col(f"{side}_{name}").alias(name) for name in _RECORD_COLUMNS),
                    *(pl.col(f"{side}_{signal.name}").alias(signal.name) for signal in self.signals),
                    *(pl.col(f"{side}_{name}").alias(name) for name in JUDGE_COLUMNS),
                    *(
                        pl.col(f"{side}_{name}").alias(name)
                        for name in (*_REPEAT_COUNTS, *SIDE_TEXTS)
                        if f"{side}_{name}" in columns
                    ),
                )
            )
            .alias(side)
            for side in SIDES
        ]
        preferred = [name for name in PREFERENCE_COLUMNS if name in columns]
        labels = [name for name in TEXT_LABELS if name in columns]
        return cases.select(
            "case_id",
            pl.col("status").cast(pl.String),
            pl.col("stage").cast(pl.String),
            "reasons",
            pl.col("reason_stages").cast(pl.List(pl.String)),
            "category",
            "answerability",
            *preferred,
            *labels,
            *sides,
            "claim_changes",
        )
