"""What a judge said of each record, read for measuring it against people: a frozen run's offline judge, a
scores file, or a pairs file.

A frozen run is judged by the offline judge as a comparison with the defaults judges it: its stored signals
when they are the ones these settings give (``stored_signals.reads_stored``), else computed now. A scores
file holds an evaluator's signals; a pairs file a pairwise judge's debiased verdict per case.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.compute.stored_signals import StoredSignals, reads_stored, run_k
from rag_compare.core.contract import LANGUAGE, REPEAT, STORED_SIGNALS, record_ok
from rag_compare.core.errors import AgreementError
from rag_compare.core.signals import SIGNALS
from rag_compare.io.described import described_run
from rag_compare.io.pairs import Pairs, load_pairs
from rag_compare.io.runs import FORMAT_VERSION, PAIRS_FORMAT, SCORES_FORMAT, OpenedRun, Run, frozen_format, open_run
from rag_compare.io.scores import Scores, load_scores

__all__ = ["JudgeRecords", "JudgeSource", "judge_records"]

JudgeSource = Run | OpenedRun | Scores | Pairs | str | Path
_ATTRIBUTES = ("answerability", "category", LANGUAGE)


@dataclass(frozen=True)
class JudgeRecords:
    """A judge's verdicts, one row per record (``run``, ``scores``: ``case_id``, ``repeat`` when the run has
    repeats, ``judge_status`` (``ok``, ``judge_failed``, ``not_judged``: the record failed) and its signals) or
    per case (``pairs``: ``case_id``, ``verdict``, ``judge_status``), and what it judged.

    ``attributes``: a run's ``case_id``, ``answerability``, ``category`` and ``language`` per record (None for
    scores and pairs)."""

    name: str
    kind: str
    fingerprint: str
    path: str | None
    runs: tuple[Mapping[str, Any], ...]
    """The runs judged (``name``, ``fingerprint``, ``path``): one, or a pairs file's baseline and candidate."""
    frame: pl.DataFrame = field(repr=False)
    attributes: pl.DataFrame | None = field(default=None, repr=False)

    @property
    def signals(self) -> tuple[str, ...]:
        """The signals it holds."""
        return tuple(name for name in self.frame.columns if name not in ("case_id", REPEAT, "judge_status"))

    def describe(self) -> dict[str, Any]:
        """What an agreement report records of this judge."""
        return {
            "name": self.name,
            "kind": self.kind,
            "fingerprint": self.fingerprint,
            "path": self.path,
            "runs": [dict(run) for run in self.runs],
        }


def judge_records(source: JudgeSource) -> JudgeRecords:
    """The verdicts of a judge given as a run, scores or pairs (loaded, or a path to one)."""
    if isinstance(source, str | Path):
        source = _opened(Path(source))
    if isinstance(source, Scores):
        return _of_scores(source)
    if isinstance(source, Pairs):
        return _of_pairs(source)
    return _of_run(source)


def _opened(path: Path) -> OpenedRun | Scores | Pairs:
    kind = frozen_format(path)
    if kind == SCORES_FORMAT:
        return load_scores(path)
    if kind == PAIRS_FORMAT:
        return load_pairs(path)
    if kind == FORMAT_VERSION or path.is_dir():
        return open_run(path)
    raise AgreementError(
        f"{path}: is not a frozen run, a scores file or a pairs file (format {kind!r}); a judge is one of those."
    )


def _of_run(run: Run | OpenedRun) -> JudgeRecords:
    judge, k = LexicalJudge(), run_k(run, None)
    held = run.records.columns if isinstance(run, Run) else run.columns
    key = ["case_id", *([REPEAT] if REPEAT in held else [])]
    read_columns = [*key, "status", *(name for name in _ATTRIBUTES if name in held)]
    if reads_stored(run, judge=judge, k=k, labels=None, passages=None, scores=None):
        read = _read(run, [*read_columns, STORED_SIGNALS])
        signals = read.get_column(STORED_SIGNALS).struct.unnest()
        read = read.drop(STORED_SIGNALS)
    else:
        records = run.records if isinstance(run, Run) else run.load().records
        signals = StoredSignals().signals(records, k).struct.unnest()
        read = records.select(read_columns)
    frame = pl.concat([read, signals.drop(name for name in read.columns if name in signals.columns)], how="horizontal")
    status = pl.when(record_ok()).then(pl.col("judge_status").fill_null("ok")).otherwise(pl.lit("not_judged"))
    return JudgeRecords(
        name=f"offline judge of '{run.name}'",
        kind="run",
        fingerprint=judge.fingerprint,
        path=None if run.path is None else str(run.path),
        runs=(described_run(run),),
        frame=frame.select(*key, status.alias("judge_status"), *(signal.name for signal in SIGNALS)),
        attributes=frame.select(*key, *(name for name in _ATTRIBUTES if name in frame.columns)),
    )


def _read(run: Run | OpenedRun, columns: list[str]) -> pl.DataFrame:
    """``columns`` of every record of ``run``."""
    if isinstance(run, Run):
        return run.records.select(columns)
    return pl.concat(list(run.batches(columns)))


def _of_scores(scores: Scores) -> JudgeRecords:
    kept = [name for name in scores.frame.columns if name in ("case_id", REPEAT, "judge_status", *scores.signals)]
    return JudgeRecords(
        name=f"{scores.evaluator['name']} of '{scores.run['name']}'",
        kind="scores",
        fingerprint=str(scores.evaluator["fingerprint"]),
        path=None if scores.path is None else str(scores.path),
        runs=(dict(scores.run),),
        frame=scores.frame.select(kept),
    )


def _of_pairs(pairs: Pairs) -> JudgeRecords:
    return JudgeRecords(
        name=f"{pairs.evaluator['name']} of '{pairs.baseline['name']}' and '{pairs.candidate['name']}'",
        kind="pairs",
        fingerprint=str(pairs.evaluator["fingerprint"]),
        path=None if pairs.path is None else str(pairs.path),
        runs=(dict(pairs.baseline), dict(pairs.candidate)),
        frame=pairs.frame.select("case_id", "verdict", "judge_status"),
    )
