"""Reviews: the latest verdict people gave on each case and side of two runs, frozen in a file of their own.

A reviews file is exported from a review database and made like a scores file: an Arrow IPC file,
fingerprinted, written atomically, never replaced, refused when changed. It is the human evaluator
(``HUMAN``), which judges are measured against: its fingerprint is over the reviewers and their labels, so
the same verdicts exported twice are the same evaluator. It holds one row per case and side with a verdict
(``REVIEWS_SCHEMA``); its schema metadata names the two runs (name, fingerprint, path), the reviewers and
the database it came from.
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
from rag_compare.core.digest import json_digest, text_digest
from rag_compare.core.errors import ReviewError
from rag_compare.core.listing import counted
from rag_compare.core.result import Report, labelled
from rag_compare.io.config import check_config, refuse_credential_paths
from rag_compare.io.credential_scan import refuse_credentials
from rag_compare.io.described import REVIEWS_SHAPE, described_run, read_described
from rag_compare.io.outputs import check_output
from rag_compare.io.review_db import ReviewDatabase
from rag_compare.io.runfile import freeze_frame, read_frozen
from rag_compare.io.runs import FORMAT_KEY, REVIEWS_FORMAT, OpenedRun, Run, open_run
from rag_compare.io.verdicts import LABELS, VERDICT_SIDES

__all__ = ["HUMAN", "REVIEWS_SCHEMA", "Reviews", "export_reviews", "load_reviews"]

HUMAN = "human"
"""The evaluator's name of a reviews file."""
REVIEWS_KEY = "rag_compare.reviews"
REVIEWS_SCHEMA: dict[str, pl.DataType] = {
    "case_id": pl.String(),
    "side": pl.String(),
    "reviewer": pl.String(),
    "reviewed_at": pl.String(),
    "agree": pl.Boolean(),
    "status": pl.String(),
    "shown_status": pl.String(),
    **{name: pl.String() for name in LABELS},
    "comment": pl.String(),
    "shown_signals": pl.String(),
    "verdict_id": pl.Int64(),
}
"""The columns of a reviews file, in order: a row per case and side, sorted by both."""
_JUDGED = ("case_id", "side", "reviewer", "agree", "status", *LABELS)
"""The columns the human evaluator's fingerprint is over: who said what of which answer."""
BLANK = "blank"
"""A label left blank, in counts."""


@dataclass(frozen=True)
class Reviews(Report):
    """People's latest verdicts on two runs: ``frame`` (``REVIEWS_SCHEMA``) and where they come from."""

    frame: pl.DataFrame = field(repr=False)
    evaluator: Mapping[str, Any]
    """``name`` (``human``), ``fingerprint`` (over reviewers and labels) and ``config`` (``reviewers``, ``labels``)."""
    baseline: Mapping[str, Any]
    """``name``, ``fingerprint`` and ``path`` of the baseline run."""
    candidate: Mapping[str, Any]
    created_at: str
    fingerprint: str
    database: str | None = None
    """The review database the verdicts were exported from."""
    path: Path | None = None

    def __repr__(self) -> str:
        runs = " → ".join(labelled(run["name"], run["fingerprint"]) for run in (self.baseline, self.candidate))
        agree = self.agreement
        return (
            f"<Reviews by {labelled(HUMAN, self.evaluator['fingerprint'])} of {runs}: "
            f"{counted(self.frame.height, 'verdict')}: agree {agree['agree']}, disagree {agree['disagree']}>"
        )

    @property
    def reviewers(self) -> dict[str, int]:
        """Verdicts kept per reviewer, by name."""
        counts = self.frame.get_column("reviewer").value_counts().sort("reviewer")
        return dict(zip(counts["reviewer"].to_list(), counts["count"].to_list(), strict=True))

    @property
    def agreement(self) -> dict[str, int]:
        """Verdicts agreeing with the status shown, and disagreeing."""
        agreed = int(self.frame.get_column("agree").sum())
        return {"agree": agreed, "disagree": self.frame.height - agreed}

    def label_counts(self) -> dict[str, dict[str, dict[str, int]]]:
        """Per side and label, the verdicts giving each value, and ``blank``."""
        return {
            side: {
                name: {
                    value: int((labels.get_column(name).fill_null(BLANK) == value).sum())
                    for value in (*LABELS[name], BLANK)
                }
                for name in LABELS
            }
            for side in VERDICT_SIDES
            for labels in (self.frame.filter(pl.col("side") == side),)
        }

    def corrections(self) -> list[dict[str, Any]]:
        """The statuses people said cases should have instead of those shown, most frequent first."""
        moved = self.frame.filter(~pl.col("agree")).group_by("shown_status", "status").len("count")
        return moved.sort(["count", "shown_status", "status"], descending=[True, False, False]).to_dicts()

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": None if self.path is None else str(self.path),
            "fingerprint": self.fingerprint,
            "created_at": self.created_at,
            "database": self.database,
            "baseline": dict(self.baseline),
            "candidate": dict(self.candidate),
            "evaluator": {**self.evaluator, "config": dict(self.evaluator["config"])},
            "cases": self.frame.get_column("case_id").n_unique(),
            "verdicts": self.frame.height,
            "reviewers": self.reviewers,
            "agreement": self.agreement,
            "corrections": self.corrections(),
            "labels": self.label_counts(),
        }


def export_reviews(
    db: str | Path | ReviewDatabase,
    baseline: Run | OpenedRun | str | Path,
    candidate: Run | OpenedRun | str | Path,
    output: str | Path | None = None,
) -> Reviews:
    """Freeze the latest verdict on each case and side of ``baseline`` and ``candidate`` (runs, or their paths)
    in the review database ``db`` (a path, or one open) as a reviews file, written to ``output`` when given
    (atomically, never replacing a file). Refused when the database holds no verdict on these runs.

    The file records the runs' and the database's paths, so none of them nor ``output`` may hold a credential."""
    given = {"baseline": baseline, "candidate": candidate}
    paths = {side: run.path if isinstance(run, Run | OpenedRun) else run for side, run in given.items()}
    database_path = db.path if isinstance(db, ReviewDatabase) else Path(db)
    refuse_credential_paths({**paths, "db": database_path, "output": output})
    if output is not None:
        check_output(output, "reviews file")
    runs = [run if isinstance(run, Run | OpenedRun) else open_run(run) for run in (baseline, candidate)]
    frame = _latest(db, *runs)
    refuse_credentials(frame, f"verdicts on '{runs[0].name}' and '{runs[1].name}'", "reviews file", ReviewError)
    reviewed = [described_run(run) for run in runs]
    evaluator = _human(frame)
    check_config({"baseline": reviewed[0], "candidate": reviewed[1], "evaluator": evaluator})
    created_at = creation_time()
    described = {
        "evaluator": evaluator,
        "baseline": reviewed[0],
        "candidate": reviewed[1],
        "database": str(database_path),
        "created_at": created_at,
        "rag_compare_version": __version__,
    }
    metadata = {FORMAT_KEY: REVIEWS_FORMAT, REVIEWS_KEY: json.dumps(described, ensure_ascii=False, sort_keys=True)}
    fingerprint, path = freeze_frame(frame, metadata, output, "reviews file")
    return Reviews(
        frame,
        evaluator=MappingProxyType(evaluator),
        baseline=MappingProxyType(reviewed[0]),
        candidate=MappingProxyType(reviewed[1]),
        created_at=created_at,
        fingerprint=fingerprint,
        database=str(database_path),
        path=path,
    )


def load_reviews(path: str | Path) -> Reviews:
    """Read a reviews file, refusing one whose bytes no longer match its fingerprint, or whose rows are not
    what an export writes."""
    path = Path(path)
    frame, metadata, fingerprint = read_frozen(path, "reviews file")
    if metadata.get(FORMAT_KEY) != REVIEWS_FORMAT or REVIEWS_KEY not in metadata:
        raise ReviewError(
            f"{path}: is not a reviews file (format {metadata.get(FORMAT_KEY)!r}). Make one with `export_reviews`."
        )
    described = read_described(path, metadata[REVIEWS_KEY], REVIEWS_SHAPE, ReviewError)
    _check_frame(frame, str(path))
    if _human(frame) != described["evaluator"]:
        raise ReviewError(
            f"{path}: its evaluator is not what its verdicts make (reviewers, labels or fingerprint differ): it was "
            "changed after it was exported. Export it again."
        )
    return Reviews(
        frame,
        evaluator=MappingProxyType(described["evaluator"]),
        baseline=MappingProxyType(described["baseline"]),
        candidate=MappingProxyType(described["candidate"]),
        created_at=described["created_at"],
        fingerprint=fingerprint,
        database=described["database"],
        path=path,
    )


def _latest(db: str | Path | ReviewDatabase, baseline: Run | OpenedRun, candidate: Run | OpenedRun) -> pl.DataFrame:
    """The latest verdicts of ``db`` on the two runs as the rows of a reviews file; refused when there are none."""
    database = db if isinstance(db, ReviewDatabase) else ReviewDatabase.open(db, create=False)
    try:
        runs = {"baseline_fingerprint": baseline.fingerprint, "candidate_fingerprint": candidate.fingerprint}
        latest = database.latest(**runs)
        if latest.is_empty():
            held = database.comparisons()
            raise ReviewError(_no_verdicts(database.path, baseline, candidate, held))
    finally:
        if database is not db:
            database.close()
    renamed = latest.rename({"created_at": "reviewed_at", "id": "verdict_id"})
    return renamed.select(list(REVIEWS_SCHEMA)).sort("case_id", "side")


def _no_verdicts(
    path: Path, baseline: Run | OpenedRun, candidate: Run | OpenedRun, held: Mapping[tuple[str, str], int]
) -> str:
    """Why there is nothing to export, and how to give verdicts."""
    runs = f"'{baseline.name}' ({baseline.fingerprint[:12]}) → '{candidate.name}' ({candidate.fingerprint[:12]})"
    if (candidate.fingerprint, baseline.fingerprint) in held:
        return f"{path}: no verdict on the runs {runs}, but on these runs the other way round: give the baseline first."
    found = (
        f"{counted(sum(held.values()), 'verdict')} on {counted(len(held), 'other pair')} of runs" if held else "none"
    )
    return (
        f"{path}: no verdict on the runs {runs} (it holds {found}). Give verdicts on their review page first: "
        "`Comparison.review`, with this database as `db`."
    )


def _human(frame: pl.DataFrame) -> dict[str, Any]:
    """The human evaluator of ``frame``'s verdicts: its fingerprint over the reviewers and the labels they gave."""
    reviewers = sorted(set(frame.get_column("reviewer").to_list()))
    judged = text_digest(frame.select(_JUDGED).sort("case_id", "side").write_ndjson())
    labels = {name: list(values) for name, values in LABELS.items()}
    fingerprint = json_digest({"name": HUMAN, "reviewers": reviewers, "labels": labels, "verdicts": judged})
    return {"name": HUMAN, "fingerprint": fingerprint, "config": {"reviewers": reviewers, "labels": labels}}


def _check_frame(frame: pl.DataFrame, source: str) -> None:
    """Refuse rows an export never writes: other columns, a case and side twice, an unknown side or label
    value, a status given with agreement or missing without it."""
    wrong = [f"'{name}' ({dtype})" for name, dtype in REVIEWS_SCHEMA.items() if frame.schema.get(name) != dtype]
    if wrong or list(frame.columns) != list(REVIEWS_SCHEMA):
        raise ReviewError(
            f"{source}: lacks, mistypes or misorders the columns {', '.join(wrong) or '(order)'}. Export it again."
        )
    bad = frame.filter(
        pl.any_horizontal(pl.col("case_id", "reviewer", "agree", "shown_status", "side").is_null())
        | ~pl.col("side").is_in(VERDICT_SIDES)
        | (pl.col("agree") == pl.col("status").is_not_null())
        | pl.struct("case_id", "side").is_duplicated()
        | pl.any_horizontal(pl.col(name).is_not_null() & ~pl.col(name).is_in(values) for name, values in LABELS.items())
    )
    if bad.height:
        raise ReviewError(
            f"{source}: holds what an export never writes in {counted(bad.height, 'row')} (a case and side twice, an "
            f"unknown side or label value, a status that does not fit `agree`; the first of case "
            f"{bad.item(0, 'case_id')!r}). Export it again."
        )
