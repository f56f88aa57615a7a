"""Pairs: a pairwise judge's verdicts on two frozen runs, frozen in a file of their own.

A pairwise judge is asked which of two answers to a case is better twice, once with the baseline's
answer shown first and once with the candidate's (see ``core.protocols.PairJudge``). A case's
``verdict`` is the side both orders chose (``candidate``, ``baseline``) or ``tie`` when both found
the answers equal; when the orders disagree it is ``inconsistent``: the judge preferred a position,
not an answer, and the case is no win for either side. Answers equal after stripping surrounding
whitespace are a ``tie`` without a request (``identical``).

A pairs file is an Arrow IPC file made like a scores file: fingerprinted, written atomically, never
replaced, refused when changed. It holds one row per case of either run, by ``case_id``:

- ``verdict``: as above; null where the case was not judged or judging failed;
- ``judge_status``: ``ok``, ``judge_failed`` (a request finally failed; see ``judge_error``) or
  ``not_judged`` (the case is missing or failed on a side: there are not two answers to weigh);
- ``identical``; each order's choice (``baseline_first``, ``candidate_first``: ``first``, ``second``
  or ``tie``, null where that request failed) and reason; ``prompt_tokens``, ``completion_tokens`` and
  ``requests`` (HTTP requests sent when the pairs were made).

Its schema metadata names the judge (name, fingerprint, config) and both runs (name, fingerprint,
path), so pairs are never used with other runs. Runs with repeats are refused: a pair is one answer a
side.
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
from rag_compare.core.contract import REPEAT, record_ok
from rag_compare.core.errors import PairsError
from rag_compare.core.listing import counted, counts_line
from rag_compare.core.protocols import PairJudge
from rag_compare.core.result import Report, labelled
from rag_compare.core.rows import count_by
from rag_compare.core.signals import JUDGE_FAILED
from rag_compare.io.config import check_config, refuse_credential_paths
from rag_compare.io.credential_scan import refuse_credentials
from rag_compare.io.described import PAIRS_SHAPE, described_run, read_described
from rag_compare.io.outputs import check_output
from rag_compare.io.runfile import freeze_frame, read_frozen
from rag_compare.io.runs import FORMAT_KEY, PAIRS_FORMAT, Run, load_run

__all__ = [
    "CHOICES",
    "JUDGE_INPUTS",
    "ORDERS",
    "OUTCOMES",
    "PAIRS_SCHEMA",
    "VERDICTS",
    "Pairs",
    "chosen_side",
    "judge_pairs",
    "load_pairs",
    "make_pairs",
    "pairs_to_judge",
]

PAIRS_KEY = "rag_compare.pairs"
SIDES = ("baseline", "candidate")
ORDERS = ("baseline_first", "candidate_first")
CHOICES = ("first", "second", "tie")
VERDICTS = ("candidate", "baseline", "tie", "inconsistent")
OUTCOMES = (*VERDICTS, JUDGE_FAILED, "not_judged")
"""What became of a case: its verdict, else its judge status."""
JUDGE_INPUTS = (
    "case_id",
    "question",
    "answerability",
    "acceptance_note",
    *(f"{side}_{name}" for side in SIDES for name in ("answer", "context")),
)
"""The columns a pairwise judge reads, one row per pair to judge."""
_REPLY_SCHEMA: dict[str, pl.DataType] = {
    **{name: pl.String() for order in ORDERS for name in (order, f"{order}_reason")},
    "prompt_tokens": pl.Int64(),
    "completion_tokens": pl.Int64(),
    "requests": pl.Int64(),
    "judge_status": pl.String(),
    "judge_error": pl.String(),
}
PAIRS_SCHEMA: dict[str, pl.DataType] = {
    "case_id": pl.String(),
    "verdict": pl.String(),
    "judge_status": pl.String(),
    "judge_error": pl.String(),
    "identical": pl.Boolean(),
    **{name: dtype for name, dtype in _REPLY_SCHEMA.items() if name not in ("judge_status", "judge_error")},
}
"""The columns of a pairs file, in order."""
_JUDGE_STATUSES = ("ok", JUDGE_FAILED, "not_judged")
_CHOSEN = {"baseline_first": ("baseline", "candidate"), "candidate_first": ("candidate", "baseline")}
"""The side each order's ``first`` and ``second`` answer belongs to."""


@dataclass(frozen=True)
class Pairs(Report):
    """A pairwise judge's verdicts on two runs: ``frame`` (one row per case) and where they come from."""

    frame: pl.DataFrame = field(repr=False)
    evaluator: Mapping[str, Any]
    """``name``, ``fingerprint`` and ``config`` of the judge."""
    baseline: Mapping[str, Any]
    """``name``, ``fingerprint`` and ``path`` of the baseline run."""
    candidate: Mapping[str, Any]
    created_at: str
    fingerprint: str
    path: Path | None = None

    def __repr__(self) -> str:
        judge = labelled(self.evaluator["name"], self.evaluator["fingerprint"])
        runs = " → ".join(labelled(run["name"], run["fingerprint"]) for run in (self.baseline, self.candidate))
        outcomes = counts_line({outcome: count for outcome, count in self.counts.items() if count}, ", ")
        return f"<Pairs by {judge} of {runs}: {counted(self.frame.height, 'case')}: {outcomes}>"

    @property
    def counts(self) -> dict[str, int]:
        """Cases per outcome (``OUTCOMES``): each verdict, then ``judge_failed`` and ``not_judged``."""
        outcome = pl.coalesce("verdict", "judge_status").alias("outcome")
        return count_by(self.frame.select(outcome), "outcome", OUTCOMES)

    def check_paired(self, baseline: str, candidate: str) -> None:
        """Refuse to use these pairs with any runs but the two they judged (by fingerprint), in that order."""
        made = (str(self.baseline["fingerprint"]), str(self.candidate["fingerprint"]))
        if made == (baseline, candidate):
            return
        source = self.path or "these pairs"
        if made == (candidate, baseline):
            raise PairsError(
                f"{source}: judged '{self.baseline['name']}' as the baseline and '{self.candidate['name']}' as the "
                "candidate; the runs are given the other way round. Pass them in the order they were judged."
            )
        raise PairsError(
            f"{source}: judged runs '{self.baseline['name']}' ({made[0][:12]}) and '{self.candidate['name']}' "
            f"({made[1][:12]}), not ({baseline[:12]}) and ({candidate[:12]}). Pass the pairs made from these "
            "runs, or judge them in pairs: `judge_pairs`."
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": None if self.path is None else str(self.path),
            "fingerprint": self.fingerprint,
            "created_at": self.created_at,
            "baseline": dict(self.baseline),
            "candidate": dict(self.candidate),
            "evaluator": {**self.evaluator, "config": dict(self.evaluator.get("config", {}))},
            "cases": self.frame.height,
            "counts": self.counts,
            "usage": {
                name: int(self.frame.get_column(name).sum())
                for name in ("prompt_tokens", "completion_tokens", "requests")
            },
        }


def pairs_to_judge(baseline: Run, candidate: Run) -> pl.DataFrame:
    """The pairs a judge is asked about (``JUDGE_INPUTS``): cases answered on both sides (record status
    ``ok``) whose answers differ, by case id. Labels are the candidate's."""
    return _asked(_both_sides(baseline, candidate))


def judge_pairs(
    baseline: Run | str | Path, candidate: Run | str | Path, judge: PairJudge, *, output: str | Path | None = None
) -> Pairs:
    """Ask ``judge`` which answer is better for every case both runs answered differently, in both orders,
    and freeze the verdicts (written to ``output`` when given, atomically, never replacing a file).

    Cases missing or failed on a side are ``not_judged``; identical answers are a ``tie`` without a
    request. A case whose judging finally fails is ``judge_failed``, kept with its error: judging again
    with the same reply cache sends only what the cache lacks. The pairs file records the runs' paths,
    so neither they nor ``output`` may hold a credential.
    """
    given = {"baseline": baseline, "candidate": candidate}
    paths = {side: run.path if isinstance(run, Run) else run for side, run in given.items()}
    refuse_credential_paths({**paths, "output": output})
    if output is not None:
        check_output(output, "pairs file")
    runs = [run if isinstance(run, Run) else load_run(run) for run in (baseline, candidate)]
    evaluator = {"name": judge.name, "fingerprint": judge.fingerprint, "config": dict(judge.config)}
    check_config(evaluator)  # before any request: what is stored must be storable
    check_config({"baseline": described_run(runs[0]), "candidate": described_run(runs[1])})
    both = _both_sides(*runs)
    asked = _asked(both)
    replies = judge.judge_pairs(asked) if asked.height else pl.DataFrame(schema=_REPLY_SCHEMA)
    _check_replies(replies, asked.height, judge.name)
    judged = pl.concat([asked.select("case_id"), replies.select(list(_REPLY_SCHEMA))], how="horizontal")
    frame = (
        both.select("case_id", _answered_both().alias("answered"), _identical().alias("identical"))
        .join(judged, on="case_id", how="left", maintain_order="left")
        .with_columns(
            judge_status=pl.when(~pl.col("answered"))
            .then(pl.lit("not_judged"))
            .when(pl.col("identical"))
            .then(pl.lit("ok"))
            .otherwise(pl.col("judge_status")),
            identical=pl.col("identical") & pl.col("answered"),
            **{name: pl.col(name).fill_null(0) for name in ("prompt_tokens", "completion_tokens", "requests")},
        )
    )
    frame = frame.with_columns(_verdict()).select(list(PAIRS_SCHEMA))
    return make_pairs(runs[0], runs[1], frame, evaluator, output=output)


def make_pairs(
    baseline: Run,
    candidate: Run,
    frame: pl.DataFrame,
    evaluator: Mapping[str, Any],
    *,
    output: str | Path | None = None,
) -> Pairs:
    """Freeze ``frame`` (``PAIRS_SCHEMA``, one row per case of either run) as the pairs of ``baseline`` and
    ``candidate`` by ``evaluator`` (``name``, ``fingerprint``, ``config``). Neither may hold a credential."""
    _refuse_repeats(baseline, candidate)
    _check_frame(frame, "pairs")
    ids = pl.concat([run.records.select("case_id") for run in (baseline, candidate)]).unique()
    if frame.height != ids.height or frame.join(ids, on="case_id", how="anti").height:
        raise PairsError(
            f"pairs of '{baseline.name}' and '{candidate.name}' must hold each of their {ids.height} cases once; "
            f"got {frame.height} rows."
        )
    check_config(evaluator)
    refuse_credentials(frame, f"pairs of '{baseline.name}' and '{candidate.name}'", "pairs file", PairsError)
    runs = [described_run(baseline), described_run(candidate)]
    check_config({"baseline": runs[0], "candidate": runs[1]})
    created_at = creation_time()
    described = {
        "evaluator": dict(evaluator),
        "baseline": runs[0],
        "candidate": runs[1],
        "created_at": created_at,
        "rag_compare_version": __version__,
    }
    metadata = {FORMAT_KEY: PAIRS_FORMAT, PAIRS_KEY: json.dumps(described, ensure_ascii=False, sort_keys=True)}
    fingerprint, path = freeze_frame(frame, metadata, output, "pairs file")
    return Pairs(
        frame,
        evaluator=MappingProxyType(dict(evaluator)),
        baseline=MappingProxyType(runs[0]),
        candidate=MappingProxyType(runs[1]),
        created_at=created_at,
        fingerprint=fingerprint,
        path=path,
    )


def load_pairs(path: str | Path) -> Pairs:
    """Read a pairs file, refusing one whose bytes no longer match its fingerprint."""
    path = Path(path)
    frame, metadata, fingerprint = read_frozen(path, "pairs file")
    if metadata.get(FORMAT_KEY) != PAIRS_FORMAT or PAIRS_KEY not in metadata:
        raise PairsError(
            f"{path}: is not a pairs file (format {metadata.get(FORMAT_KEY)!r}). Make one with `judge_pairs`."
        )
    described = read_described(path, metadata[PAIRS_KEY], PAIRS_SHAPE, PairsError)
    _check_frame(frame, str(path))
    return Pairs(
        frame,
        evaluator=MappingProxyType(described["evaluator"]),
        baseline=MappingProxyType(described["baseline"]),
        candidate=MappingProxyType(described["candidate"]),
        created_at=described["created_at"],
        fingerprint=fingerprint,
        path=path,
    )


def _refuse_repeats(*runs: Run) -> None:
    repeated = [run.name for run in runs if run.repeats > 1]
    if repeated:
        raise PairsError(
            f"run {', '.join(repr(name) for name in repeated)} holds several samples of a case (a '{REPEAT}' "
            "column): a pair is one answer a side. Judge pairs of runs with one sample per case."
        )


def _both_sides(baseline: Run, candidate: Run) -> pl.DataFrame:
    """Every case id of either run with each side's status, answer and context, and the candidate's labels
    (the baseline's where the candidate lacks the case)."""
    _refuse_repeats(baseline, candidate)
    labels = ("question", "answerability", "acceptance_note")
    frames = [
        run.records.select(
            "case_id", *labels, *(pl.col(name).alias(f"{side}_{name}") for name in ("status", "answer", "context"))
        ).rename({name: f"{side}_label_{name}" for name in labels})
        for side, run in zip(SIDES, (baseline, candidate), strict=True)
    ]
    joined = frames[0].join(frames[1], on="case_id", how="full", coalesce=True).sort("case_id")
    return joined.with_columns(
        pl.coalesce(f"candidate_label_{name}", f"baseline_label_{name}").alias(name) for name in labels
    )


def _asked(both: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``_both_sides`` a judge is asked about, in ``JUDGE_INPUTS``."""
    return both.filter(_answered_both() & ~_identical()).select(JUDGE_INPUTS)


def _answered_both() -> pl.Expr:
    return record_ok("baseline_status") & record_ok("candidate_status")


def _identical() -> pl.Expr:
    answers = (pl.col(f"{side}_answer").fill_null("").str.strip_chars() for side in SIDES)
    return next(answers) == next(answers)


def chosen_side(order: str) -> pl.Expr:
    """The side ``order``'s choice (a column of ``ORDERS``) names, ``tie`` as it is; null where it made none."""
    first, second = _CHOSEN[order]
    choice = pl.col(order)
    return (
        pl.when(choice == "first")
        .then(pl.lit(first))
        .when(choice == "second")
        .then(pl.lit(second))
        .when(choice == "tie")
        .then(pl.lit("tie"))
    )


def _verdict() -> pl.Expr:
    """The side both orders chose, ``tie``, or ``inconsistent`` (see the module); null unless judged ok."""
    agreed = chosen_side("baseline_first") == chosen_side("candidate_first")
    return (
        pl.when(~record_ok("judge_status"))
        .then(pl.lit(None, pl.String))
        .when(pl.col("identical"))
        .then(pl.lit("tie"))
        .when(agreed)
        .then(chosen_side("baseline_first"))
        .otherwise(pl.lit("inconsistent"))
        .alias("verdict")
    )


def _check_replies(replies: pl.DataFrame, expected: int, name: str) -> None:
    """Refuse a judge's reply frame without one typed row per pair asked, in its columns."""
    wrong = [f"'{column}' ({dtype})" for column, dtype in _REPLY_SCHEMA.items() if replies.schema.get(column) != dtype]
    if wrong or replies.height != expected:
        raise PairsError(
            f"pairwise judge '{name}' returned {replies.height} rows for {expected} pairs"
            + (f", lacking or mistyping {', '.join(wrong)}" if wrong else "")
            + "; a judge returns one row per pair, in order (see `PairJudge`)."
        )
    unknown = replies.filter(
        ~pl.col("judge_status").is_in(["ok", JUDGE_FAILED]) | pl.any_horizontal(_bad_choice(order) for order in ORDERS)
    )
    if unknown.height:
        raise PairsError(
            f"pairwise judge '{name}' returned a judge_status other than ok/judge_failed or a choice other than "
            f"{'/'.join(CHOICES)} for {unknown.height} pairs."
        )


def _bad_choice(order: str) -> pl.Expr:
    return pl.col(order).is_not_null() & ~pl.col(order).is_in(CHOICES)


def _check_frame(frame: pl.DataFrame, source: str) -> None:
    wrong = [f"'{column}' ({dtype})" for column, dtype in PAIRS_SCHEMA.items() if frame.schema.get(column) != dtype]
    if wrong or list(frame.columns) != list(PAIRS_SCHEMA):
        raise PairsError(
            f"{source}: lacks, mistypes or misorders the columns {', '.join(wrong) or '(order)'}. Make the pairs again."
        )
    bad = frame.filter(
        ~pl.col("judge_status").is_in(_JUDGE_STATUSES)
        | (pl.col("verdict").is_not_null() & ~pl.col("verdict").is_in(VERDICTS))
        | (pl.col("verdict").is_null() == record_ok("judge_status"))
        | pl.col("case_id").is_duplicated()
    )
    if bad.height:
        raise PairsError(
            f"{source}: {bad.height} rows hold an unknown judge_status or verdict, a verdict that does not fit "
            f"its status, or a repeated case id (first: {bad.item(0, 'case_id')!r}). Make the pairs again."
        )
