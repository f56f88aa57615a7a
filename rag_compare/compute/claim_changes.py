"""How the claims of a comparison's cases changed between the runs, and how many became unsupported.

Each side's claim verdicts come from where its other verdicts came from (``SideClaims``): its scores file's
``claims`` column (a scores file without one has none: its claims are *not available*, which is not
*none*), else the judge's: those its run stored when that judge froze it (``stored_signals.stored_claims``),
else read off the texts of the sample a report shows (``claims`` of a judge that can give them; a judge that
cannot gives none). With repeats, the claims are those of the sample a report shows: the first that
succeeded.

``ClaimChanges.of`` pairs the claims of given cases (``claims.pair_claims``); ``ClaimChanges.summary`` reads
every case, a slice at a time, and sums the changes up: the claims that became unsupported, became
supported, were dropped or added, and an exact two-sided sign test over the cases: a case counts for the
candidate when more of its claims became supported than unsupported, against it for the reverse, and not
at all when as many did (or none). The cases are the independent units, as in every other test of a
comparison: claims of one answer are not.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from rag_compare.compute.case_status import SIDES
from rag_compare.compute.case_texts import TextColumns
from rag_compare.compute.claims import CHANGES, CLAIM_TYPE, pair_claims
from rag_compare.compute.context_marks import context_segments
from rag_compare.compute.stats import sign_test_p
from rag_compare.compute.stored_signals import stored_claims
from rag_compare.core.contract import LANGUAGE, REPEAT, STORED_CLAIMS
from rag_compare.core.protocols import ClaimJudge, Judge

if TYPE_CHECKING:
    from rag_compare.compute.case_table import CaseTable
    from rag_compare.compute.case_texts import CaseTexts
    from rag_compare.io.runs import OpenedRun, Run
    from rag_compare.io.scores import Scores

__all__ = ["CLAIM_TEXTS", "ClaimChanges", "ClaimSummary", "SideClaims", "counted", "named_passages"]

CLAIM_TEXTS = TextColumns(("question", LANGUAGE), ("answer", "context"))
"""What the offline judge reads of a case to give its claims (its answerability decides no claim)."""
_SLICE_ROWS = 50_000


@dataclass(frozen=True)
class SideClaims:
    """Where a side's claim verdicts come from: ``scores`` (``case_id``, ``claims``: the shown sample's), the
    claims its run ``stored``, the ``judge`` (one that gives claims), or none (``unavailable``, with ``why``)."""

    kind: Literal["scores", "stored", "judge", "unavailable"]
    scores: pl.DataFrame | None = None
    judge: ClaimJudge | None = None
    why: str = ""

    @classmethod
    def of(cls, scores: Scores | None, judge: Judge, run: Run | OpenedRun, labels: pl.DataFrame | None) -> SideClaims:
        """The claims of a side (``run``, read with the corpus' ``labels`` when given) judged by ``scores`` when
        given, else by ``judge``."""
        if scores is not None:
            if "claims" not in scores.frame.columns:
                return cls("unavailable", why=f"the scores of {scores.evaluator['name']} hold no claims")
            return cls("scores", scores=_shown_claims(scores.frame))
        if not isinstance(judge, ClaimJudge):
            return cls("unavailable", why=f"the judge {judge.name} gives no claims")
        return cls("stored" if stored_claims(run, judge, labels) else "judge", judge=judge)

    @property
    def columns(self) -> TextColumns:
        """What is read of a case to give this side's claims."""
        if self.kind == "judge":
            return CLAIM_TEXTS
        return TextColumns((), (STORED_CLAIMS,) if self.kind == "stored" else ())

    def claims(self, texts: pl.DataFrame, side: str) -> pl.Series:
        """The side's claims (a list of ``CLAIM_TYPE``) per row of ``texts`` (``case_id`` and the columns of
        ``CLAIM_TEXTS``, the side's prefixed), null where they are not available or the side has no answer."""
        if self.kind == "unavailable":
            return pl.Series("claims", [None] * texts.height, dtype=pl.List(CLAIM_TYPE))
        if self.kind == "scores":
            assert self.scores is not None
            found = texts.select("case_id").join(self.scores, on="case_id", how="left", maintain_order="left")
            return found.get_column("claims")
        if self.kind == "stored":
            return texts.get_column(f"{side}_{STORED_CLAIMS}").alias("claims")
        assert self.judge is not None
        records = texts.select(
            pl.col(f"{side}_answer").alias("answer"),
            pl.col(f"{side}_context").alias("context"),
            *(pl.col(name) for name in CLAIM_TEXTS.labels),
            pl.lit(None, pl.String).alias("answerability"),
        )
        claims = self.judge.claims(records)
        return pl.select(pl.when(records.get_column("answer").is_not_null()).then(claims)).to_series()


def _shown_claims(frame: pl.DataFrame) -> pl.DataFrame:
    """``case_id`` and ``claims`` of each case's first sample whose record succeeded (scores' rows of a failed
    record are ``not_judged``)."""
    judged = frame.filter(pl.col("judge_status") != "not_judged")
    if REPEAT in judged.columns:
        judged = judged.sort(REPEAT, maintain_order=True).unique("case_id", keep="first", maintain_order=True)
    return judged.select("case_id", pl.col("claims").cast(pl.List(CLAIM_TYPE)))


@dataclass(frozen=True)
class ClaimSummary:
    """The claim changes of every case summed up: per change of ``claims.CHANGES`` the claims so changed
    (``counts``), the cases with one at least (``cases``), and the sign test (see the module) over the cases
    whose claims are available on both sides (``compared``): ``worse`` cases (more claims became unsupported
    than supported), ``better`` ones, and its two-sided ``p_value`` (null without such a case)."""

    counts: Mapping[str, int]
    cases: Mapping[str, int]
    compared: int
    worse: int
    better: int
    p_value: float | None
    unavailable: tuple[str, ...]
    """Why a side's claims are not available (empty when both sides' are)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "counts": dict(self.counts),
            "cases": dict(self.cases),
            "compared": self.compared,
            "worse": self.worse,
            "better": self.better,
            "p_value": self.p_value,
            "unavailable": list(self.unavailable),
        }


@dataclass(frozen=True)
class ClaimChanges:
    """Where a comparison's two sides' claim verdicts come from, and their changes case by case."""

    sides: tuple[SideClaims, SideClaims]

    @property
    def columns(self) -> TextColumns:
        """What is read of a case to give both sides' claims."""
        return self.sides[0].columns | self.sides[1].columns

    @property
    def reads_texts(self) -> bool:
        """Whether a side's claims are read off the runs (their texts, or the claims they store), not only ids."""
        return bool(self.columns.labels or self.columns.side)

    @property
    def unavailable(self) -> tuple[str, ...]:
        return tuple(f"{side}: {claims.why}" for side, claims in zip(SIDES, self.sides, strict=True) if claims.why)

    def of(self, texts: pl.DataFrame, passages: Mapping[str, str] | None = None) -> pl.DataFrame:
        """``case_id``, each side's ``<side>_claims`` and the ``claim_changes`` (``claims.pair_claims``) of the
        cases of ``texts`` (``CaseTexts.of`` of ``columns``; ``case_id`` alone will do unless ``reads_texts``),
        in that order. With ``passages`` (id to text) and each side's ``context`` and ``context_passage_ids`` in
        ``texts``, each claim's evidence names the passage it lies in (``named_passages``)."""
        claims = {f"{side}_claims": source.claims(texts, side) for side, source in zip(SIDES, self.sides, strict=True)}
        if passages is not None:
            claims = {
                name: named_passages(found, texts, side, passages)
                for (name, found), side in zip(claims.items(), SIDES, strict=True)
            }
        frame = texts.select("case_id").with_columns(**claims)
        return frame.with_columns(pair_claims(frame))

    def summary(self, table: CaseTable, texts: CaseTexts) -> ClaimSummary:
        """Every case's claim changes summed up (see ``ClaimSummary``), read ``_SLICE_ROWS`` cases at a time."""
        if self.unavailable:
            return self.summed([])
        slices = texts.beside(table, _SLICE_ROWS, self.columns) if self.reads_texts else table.slices(_SLICE_ROWS)
        return self.summed(counted(self.of(part)) for part in slices)

    def summed(self, parts: Iterable[pl.DataFrame]) -> ClaimSummary:
        """The summary of the cases' changes ``counted`` a slice at a time (see ``ClaimSummary``)."""
        return _summed(parts, self.unavailable)


def named_passages(claims: pl.Series, texts: pl.DataFrame, side: str, passages: Mapping[str, str]) -> pl.Series:
    """``claims`` (one list per row of ``texts``) with each evidence's ``passage_id``: the passage of the side's
    ``context_passage_ids`` whose text (``passages``, found in the context as ``context_marks`` finds required
    passages) overlaps the evidence most. A case at a time: for the cases a report shows."""
    contexts, ids = (texts.get_column(f"{side}_{name}").to_list() for name in ("context", "context_passage_ids"))
    rows = zip(claims.to_list(), contexts, ids, strict=True)
    named = []
    for found, context, passage_ids in rows:
        if not found or context is None or not passage_ids:
            named.append(found)
            continue
        segments = context_segments(context, {pid: passages.get(pid) for pid in passage_ids}) or []
        starts = list(itertools.accumulate((len(segment["text"]) for segment in segments), initial=0))
        named.append([claim | {"passage_id": _passage_at(claim, segments, starts)} for claim in found])
    return pl.Series(claims.name, named, dtype=pl.List(CLAIM_TYPE))


def _passage_at(claim: Mapping[str, Any], segments: list[dict[str, Any]], starts: list[int]) -> str | None:
    """The passage whose segment overlaps the claim's evidence most; its own ``passage_id`` without one."""
    own: str | None = claim["passage_id"]
    if claim["start"] is None or claim["end"] is None:
        return own
    overlaps = {
        segment["passage_id"]: min(claim["end"], end) - max(claim["start"], start)
        for segment, start, end in zip(segments, starts, starts[1:], strict=False)
        if segment["passage_id"] is not None
    }
    found = max(overlaps, key=lambda passage: overlaps[passage], default=None)
    return found if found is not None and overlaps[found] > 0 else own


def counted(changes: pl.DataFrame) -> pl.DataFrame:
    """Per case of ``changes`` (a ``claim_changes`` column) whose changes are known, how many claims changed
    each way."""
    known = changes.filter(pl.col("claim_changes").is_not_null())
    kinds = known.get_column("claim_changes").list.eval(pl.element().struct.field("change").cast(pl.String))
    return pl.DataFrame({change: kinds.list.count_matches(change) for change in CHANGES})


def _summed(parts: Iterable[pl.DataFrame], unavailable: tuple[str, ...]) -> ClaimSummary:
    counted = pl.concat([pl.DataFrame(schema=dict.fromkeys(CHANGES, pl.UInt32)), *parts], how="vertical_relaxed")
    net = pl.col("became_unsupported").cast(pl.Int64) - pl.col("became_supported").cast(pl.Int64)
    sums = counted.select(
        *(pl.col(change).sum().alias(change) for change in CHANGES),
        *((pl.col(change) > 0).sum().alias(f"cases_{change}") for change in CHANGES),
        (net > 0).sum().alias("worse"),
        (net < 0).sum().alias("better"),
    ).row(0, named=True)
    worse, better = int(sums["worse"] or 0), int(sums["better"] or 0)
    return ClaimSummary(
        counts={change: int(sums[change] or 0) for change in CHANGES},
        cases={change: int(sums[f"cases_{change}"] or 0) for change in CHANGES},
        compared=counted.height,
        worse=worse,
        better=better,
        p_value=sign_test_p(worse, better),
        unavailable=unavailable,
    )
