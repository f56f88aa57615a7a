"""One review session: a comparison, the index its cases are queried over, its review queue and the review
database its verdicts go to; what each route of the API answers, as JSON-ready dicts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rag_compare.compute.case_details import case_details, case_summaries
from rag_compare.compute.case_query import CaseIndex, CaseQuery
from rag_compare.compute.case_status import CASE_STATUSES, SIDES
from rag_compare.compute.review_queue import ReviewQueue
from rag_compare.io.verdicts import NewVerdict

if TYPE_CHECKING:
    from rag_compare.compute.comparison import Comparison
    from rag_compare.io.review_db import ReviewDatabase

__all__ = ["ReviewSession", "UnknownCaseError"]


class UnknownCaseError(LookupError):
    """The comparison has no case of this id (the API answers 404)."""

    def __init__(self, case_id: str) -> None:
        super().__init__(f"this comparison has no case {case_id!r}: take a case_id from /api/cases.")


@dataclass(frozen=True)
class ReviewSession:
    """What the review server serves: ``comparison``'s cases, queried through ``index`` and queued by ``queue``,
    and the verdicts on them in ``database``, bound to the two runs' fingerprints. ``reviewer`` signs a verdict
    whose body names none. Safe to call from several threads, as the database is."""

    comparison: Comparison
    database: ReviewDatabase
    reviewer: str
    index: CaseIndex
    queue: ReviewQueue

    @classmethod
    def open(cls, comparison: Comparison, database: ReviewDatabase, *, reviewer: str, seed: int = 0) -> ReviewSession:
        """The session of ``comparison`` (its index built, a slice of cases at a time) writing to ``database``;
        ``seed`` draws the unchanged cases the queue samples."""
        index = CaseIndex.of(comparison)
        return cls(comparison, database, reviewer, index, ReviewQueue.of(index, seed=seed))

    @property
    def runs(self) -> dict[str, str]:
        """The two runs' fingerprints, as the database's keywords take them."""
        return {
            "baseline_fingerprint": self.comparison.baseline.fingerprint,
            "candidate_fingerprint": self.comparison.candidate.fingerprint,
        }

    def about(self) -> dict[str, Any]:
        """The session itself: the default reviewer and the two runs (name, fingerprint)."""
        runs = {side: getattr(self.comparison, side) for side in SIDES}
        return {
            "reviewer": self.reviewer,
            "cases": self.comparison.n_cases,
            **{side: {"name": run.name, "fingerprint": run.fingerprint} for side, run in runs.items()},
        }

    def cases(self, params: Mapping[str, Sequence[str]]) -> dict[str, Any]:
        """A page of the cases that ``params`` (the query string's values by name) filter, sort and page, each
        with its review (whether it has a verdict, the latest), the matching total, their counts per status and
        the values each filter offers."""
        query = CaseQuery.from_params(params, signals=self.index.signals, statuses=CASE_STATUSES)
        result = self.index.query(query)
        summaries = case_summaries(self.comparison, result.cases, result.texts)
        reviews = self._reviews([summary["case_id"] for summary in summaries])
        return {
            "cases": [{**summary, "review": reviews[summary["case_id"]]} for summary in summaries],
            "page": query.page,
            "page_size": query.page_size,
            "total": result.total,
            "counts": dict(result.counts),
            "facets": {name: list(values) for name, values in result.facets.items()},
        }

    def case(self, case_id: str) -> dict[str, Any]:
        """The case's details, with this comparison's verdicts on it (newest first) and other runs' apart."""
        self._check(case_id)
        detail = case_details(self.comparison, [case_id])[0]
        verdicts = self.database.history(case_id, **self.runs)
        others = self.database.others(case_id, **self.runs)
        return {
            **detail,
            "verdicts": [verdict.to_dict() for verdict in verdicts],
            "other_verdicts": [verdict.to_dict() for verdict in others],
        }

    def add_verdict(self, case_id: str, body: object) -> dict[str, Any]:
        """Store the verdict ``body`` (the API's JSON) on the case, with the status and signals it was given on,
        and return it as stored; a body without ``reviewer`` is signed by the session's."""
        self._check(case_id)
        if isinstance(body, dict) and "reviewer" not in body:
            body = {**body, "reviewer": self.reviewer}
        verdict = NewVerdict.from_body(case_id, body, statuses=CASE_STATUSES)
        status, signals = self._shown(case_id)
        stored = self.database.add(verdict, **self.runs, shown_status=status, shown_signals=signals)
        return stored.to_dict()

    def next_case(self, after: str | None) -> dict[str, Any]:
        """The next case to review after ``after`` (``None``: from the queue's start) that has no verdict yet,
        why it is queued, where it is in the queue, and the queue's length."""
        if after is not None:
            self._check(after)
        item = self.queue.next(self._reviewed(), after)
        if item is None:
            return {"case_id": None, "reason": None, "position": None, "queued": self.queue.queued}
        return item.to_dict()

    def progress(self) -> dict[str, Any]:
        """How many queued cases have a verdict, in all and by the reason they are queued for (and how many
        cases that are not queued have one)."""
        return self.queue.progress(self._reviewed()).to_dict()

    def _check(self, case_id: str) -> None:
        if not self.index.has(case_id):
            raise UnknownCaseError(case_id)

    def _reviewed(self) -> set[str]:
        return self.database.reviewed_case_ids(**self.runs)

    def _reviews(self, case_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Per case id: whether this comparison's verdicts include one on it, and the latest."""
        latest = {case_id: self.database.history(case_id, **self.runs)[:1] for case_id in case_ids}
        return {
            case_id: {"reviewed": bool(found), "latest": found[0].to_dict() if found else None}
            for case_id, found in latest.items()
        }

    def _shown(self, case_id: str) -> tuple[str, dict[str, object]]:
        """The case's status and each side's signals, as the page shows them while a verdict is given."""
        row = self.index.rows([case_id])
        names = [f"{side}_{signal.name}" for side in SIDES for signal in self.comparison.signals]
        if "preferred" in row.columns:
            names.append("preferred")
        return str(row.item(0, "status")), row.select(names).row(0, named=True)
