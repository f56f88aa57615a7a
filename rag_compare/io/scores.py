"""Scores: one evaluator's verdicts on one frozen run, frozen in a file of their own.

A scores file is an Arrow IPC file made like a run file: fingerprinted, written atomically, never
replaced, refused when changed. It holds one row per record of the run it scored:

- ``case_id``, and ``repeat`` when the run has it (scores of a run with repeats are per sample, keyed by
  ``(case_id, repeat)``);
- ``judge_status``: ``ok``, ``judge_failed`` (judging finally failed; see ``judge_error``) or
  ``not_judged`` (the record itself failed: there is no answer to judge);
- ``judge_error``: why judging failed;
- the signals it holds (any of ``SCORED_SIGNALS``), null where a check did not apply or failed;
- ``claims``, when the evaluator gives them: each record's claim verdicts (``contract.CLAIM_TYPE``);
- whatever else the evaluator keeps: explanations, tokens used.

Its schema metadata names the evaluator (name, fingerprint, config) and the run it scored (name,
fingerprint, path), so scores are never used with another run's records.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import polars as pl

from rag_compare._version import __version__
from rag_compare.core.clock import creation_time
from rag_compare.core.contract import CLAIM_TYPE, CLAIMS, REPEAT, record_ok, sample_key
from rag_compare.core.errors import ScoresError
from rag_compare.core.listing import counted, counts_line
from rag_compare.core.protocols import Judge
from rag_compare.core.result import Report, labelled
from rag_compare.core.rows import count_by
from rag_compare.core.signals import JUDGE_FAILED, SCORED_SIGNALS, SIGNALS_BY_NAME
from rag_compare.io.config import check_config, refuse_credential_paths
from rag_compare.io.credential_scan import refuse_credentials
from rag_compare.io.described import SCORES_SHAPE, described_run, read_described
from rag_compare.io.outputs import check_output
from rag_compare.io.runfile import freeze_frame, read_frozen
from rag_compare.io.runs import FORMAT_KEY, SCORES_FORMAT, OpenedRun, Run

__all__ = [
    "JUDGE_STATUSES",
    "Scores",
    "evaluator_label",
    "evaluator_summary",
    "load_scores",
    "make_scores",
    "score_run",
]

SCORES_KEY = "rag_compare.scores"
JUDGE_STATUSES = ("ok", JUDGE_FAILED, "not_judged")
_NUMERIC = (pl.Float64, pl.Float32, pl.Int64, pl.Int32)


@dataclass(frozen=True)
class Scores(Report):
    """An evaluator's verdicts on one run: ``frame`` (one row per record) and where they come from."""

    frame: pl.DataFrame = field(repr=False)
    evaluator: Mapping[str, Any]
    """``name``, ``fingerprint`` and ``config`` of the evaluator."""
    run: Mapping[str, Any]
    """``name``, ``fingerprint`` and ``path`` of the run scored."""
    created_at: str
    fingerprint: str
    path: Path | None = None

    def __repr__(self) -> str:
        evaluator = labelled(self.evaluator["name"], self.evaluator["fingerprint"])
        run = labelled(self.run["name"], self.run["fingerprint"])
        cases = counted(self.frame.get_column("case_id").n_unique(), "case")
        judged = counts_line({status: count for status, count in self.counts.items() if count}, ", ")
        return f"<Scores by {evaluator} of {run}: {cases}: {judged}>"

    @property
    def signals(self) -> tuple[str, ...]:
        """The signals these scores hold, in ``SCORED_SIGNALS`` order."""
        return tuple(name for name in SCORED_SIGNALS if name in self.frame.columns)

    @property
    def counts(self) -> dict[str, int]:
        """Records (samples, with repeats) per judge status."""
        return count_by(self.frame, "judge_status", JUDGE_STATUSES)

    def check_scored(self, run: Run | OpenedRun) -> None:
        """Refuse to pair these scores with any run but the one they scored."""
        if run.fingerprint != self.run["fingerprint"]:
            raise ScoresError(
                f"{self.path or 'these scores'}: scored run '{self.run['name']}' "
                f"({str(self.run['fingerprint'])[:12]}), not '{run.name}' ({run.fingerprint[:12]}). "
                "Pass the scores made from this run, or score it: `score_run(RUN, ...)`"
            )

    def to_dict(self) -> dict[str, Any]:
        tokens = {
            name: int(self.frame.get_column(name).sum())
            for name in ("prompt_tokens", "completion_tokens", "requests")
            if name in self.frame.columns
        }
        return {
            "path": None if self.path is None else str(self.path),
            "fingerprint": self.fingerprint,
            "created_at": self.created_at,
            "run": dict(self.run),
            "evaluator": {**self.evaluator, "config": dict(self.evaluator.get("config", {}))},
            "cases": self.frame.get_column("case_id").n_unique(),
            **({"samples": self.frame.height} if REPEAT in self.frame.columns else {}),
            "judge_status_counts": self.counts,
            "signals": list(self.signals),
            "means": {name: self.frame.get_column(name).cast(pl.Float64).mean() for name in self.signals},
            "usage": tokens,
        }


def evaluator_summary(scores: Scores) -> dict[str, Any]:
    """What a comparison records of the scores a side was judged by."""
    return {
        "name": scores.evaluator["name"],
        "fingerprint": scores.evaluator["fingerprint"],
        "path": None if scores.path is None else str(scores.path),
    }


def evaluator_label(summary: Mapping[str, Any] | None) -> str:
    """``name (fingerprint's first 12)`` of an ``evaluator_summary``; ``the offline judge`` for none."""
    return "the offline judge" if summary is None else f"{summary['name']} ({str(summary['fingerprint'])[:12]})"


def score_run(run: Run, judge: Judge, *, output: str | Path | None = None) -> Scores:
    """Judge every record of ``run`` with ``judge`` and freeze the verdicts (written to ``output``
    when given, atomically, never replacing a file).

    Records whose status is not ``ok`` are ``not_judged``; a judge that reports ``judge_status`` (the
    LLM judge does) keeps its own, failures included. Neither the run's path nor ``output`` may hold a
    credential: the scores file records the first, and the second is where runs' paths go.
    """
    refuse_credential_paths({"run": run.path, "output": output})
    if output is not None:
        check_output(output, "scores file")
    evaluator = {"name": judge.name, "fingerprint": judge.fingerprint, "config": dict(judge.config)}
    check_config(evaluator)  # before any request: what is stored must be storable
    check_config({"run": described_run(run)})
    verdicts = judge.judge(run.records)
    if "judge_status" not in verdicts.columns:
        verdicts = verdicts.with_columns(judge_status=pl.lit("ok"), judge_error=pl.lit(None, pl.String))
    answered = run.records.select(record_ok()).to_series()
    frame = pl.concat([run.records.select(sample_key(run.records.columns)), verdicts], how="horizontal").with_columns(
        *(
            pl.when(pl.lit(answered)).then(pl.col(name)).alias(name)
            for name in verdicts.columns
            if name in SCORED_SIGNALS
        ),
        judge_status=pl.when(pl.lit(answered)).then(pl.col("judge_status")).otherwise(pl.lit("not_judged")),
    )
    return make_scores(run, frame, evaluator, output=output)


def make_scores(
    run: Run, frame: pl.DataFrame, evaluator: Mapping[str, Any], *, output: str | Path | None = None
) -> Scores:
    """Freeze ``frame`` (``case_id``, with ``repeat`` when ``run`` has it, ``judge_status``, ``judge_error``
    and signals, one row per record of ``run``) as the scores of ``run`` by ``evaluator`` (``name``,
    ``fingerprint``, ``config``).

    Neither may hold a credential (see ``credentials``; also the values of credential-like variables of
    ``os.environ``), nor the config a number that is not finite, nor what is recorded of the run."""
    _check_frame(frame, run)
    check_config(evaluator)
    refuse_credentials(frame, f"scores of run '{run.name}'", "scores file", ScoresError)
    scored = described_run(run)
    check_config({"run": scored})
    created_at = creation_time()
    described = {
        "evaluator": dict(evaluator),
        "run": scored,
        "created_at": created_at,
        "rag_compare_version": __version__,
    }
    metadata = {FORMAT_KEY: SCORES_FORMAT, SCORES_KEY: json.dumps(described, ensure_ascii=False, sort_keys=True)}
    fingerprint, path = freeze_frame(frame, metadata, output, "scores file")
    return Scores(frame, MappingProxyType(dict(evaluator)), MappingProxyType(scored), created_at, fingerprint, path)


def load_scores(path: str | Path) -> Scores:
    """Read a scores file, refusing one whose bytes no longer match its fingerprint."""
    path = Path(path)
    frame, metadata, fingerprint = read_frozen(path, "scores file")
    if metadata.get(FORMAT_KEY) != SCORES_FORMAT or SCORES_KEY not in metadata:
        raise ScoresError(
            f"{path}: is not a scores file (format {metadata.get(FORMAT_KEY)!r}). "
            "Make one with `score_run` or `import_scores`."
        )
    described = read_described(path, metadata[SCORES_KEY], SCORES_SHAPE, ScoresError)
    _check_columns(frame, str(path))
    return Scores(
        frame,
        MappingProxyType(described["evaluator"]),
        MappingProxyType(described["run"]),
        described["created_at"],
        fingerprint,
        path,
    )


def _check_frame(frame: pl.DataFrame, run: Run) -> None:
    """Refuse a frame that does not hold each record of ``run`` once, by its ``sample_key``."""
    _check_columns(frame, f"scores of run '{run.name}'")
    keys = sample_key(run.records.columns)
    if REPEAT in keys and REPEAT not in frame.columns:
        raise ScoresError(
            f"run '{run.name}' holds several samples of a case (a '{REPEAT}' column): its scores need a "
            f"'{REPEAT}' column beside case_id, one row per sample."
        )
    if REPEAT in frame.columns and REPEAT not in keys:
        raise ScoresError(
            f"run '{run.name}' has no '{REPEAT}' column (one sample per case): its scores may not have one."
        )
    distinct = frame.select(pl.struct(keys).n_unique()).item()
    if distinct != frame.height or frame.height != run.records.height:
        raise ScoresError(
            f"scores of run '{run.name}' must hold each of its {run.records.height} records once; "
            f"got {frame.height} rows ({distinct} distinct {' and '.join(keys)})."
        )
    unknown = frame.join(run.records.select(keys), on=list(keys), how="anti").select(_record_name(keys))
    if unknown.height:
        raise ScoresError(
            f"scores name records that run '{run.name}' lacks: {', '.join(unknown.to_series().head(10))}."
        )


def _record_name(keys: tuple[str, ...]) -> pl.Expr:
    """A record's name in a message: its case id, with its repeat when it has one."""
    if REPEAT not in keys:
        return pl.col("case_id")
    return pl.format("{} (repeat {})", pl.col("case_id"), pl.col(REPEAT))


def _check_columns(frame: pl.DataFrame, source: str) -> None:
    problems = [
        f"'{name}' ({dtype})"
        for name, dtype in (("case_id", pl.String), ("judge_status", pl.String), ("judge_error", pl.String))
        if frame.schema.get(name) != dtype
    ]
    if REPEAT in frame.columns and frame.schema[REPEAT] != pl.Int64:
        problems.append(f"'{REPEAT}' ({pl.Int64})")
    if CLAIMS in frame.columns and frame.schema[CLAIMS] not in (pl.List(CLAIM_TYPE), pl.Null):
        problems.append(f"'{CLAIMS}' (a list of {CLAIM_TYPE})")
    problems += [
        f"'{name}' (a number)" if not SIGNALS_BY_NAME[name].flag else f"'{name}' (true/false)"
        for name in SCORED_SIGNALS
        if name in frame.columns
        and frame.schema[name] not in ((pl.Boolean,) if SIGNALS_BY_NAME[name].flag else _NUMERIC)
    ]
    if problems:
        raise ScoresError(f"{source}: lacks or mistypes the columns {', '.join(problems)}. Make the scores again.")
    statuses = frame.get_column("judge_status")
    unknown = statuses.filter(~statuses.is_in(list(JUDGE_STATUSES))).unique().to_list()
    if unknown:
        raise ScoresError(f"{source}: unknown judge_status {unknown}; expected one of {', '.join(JUDGE_STATUSES)}.")
