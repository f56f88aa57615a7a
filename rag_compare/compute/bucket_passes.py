"""The passes of a comparison over its buckets, in this process: the ``memory`` engine (one bucket, held) and
the ``streaming`` engine (buckets spilled to disk, one held at a time). ``compare_runs`` drives them, and the
``ray`` engine's passes (``ray_passes``) have the same four steps:

1. ``sides``: each run's records made narrow a slice at a time (``side_samples``) and kept by bucket; the
   ``SideFacts`` of every bucket of each side. The baseline is side 0, each candidate one side after it: a
   run compared with several candidates is made narrow once.
2. ``join``: one candidate's every bucket joined with the baseline's under the ``JoinRules`` the facts give
   (``bucket_join``), its cases kept apart from the other candidates'; the candidate's samples are let go, and
   the baseline's with the last candidate.
3. ``resample``: the second pass of a candidate's aggregates over its kept cases (``partials``).
4. ``table``: a candidate's kept cases as one ``CaseTable``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import polars as pl

from rag_compare.compute.bucket_join import BucketResult, JoinRules, SideFacts, join_bucket, side_facts
from rag_compare.compute.bucket_store import BucketStore, split_by_bucket
from rag_compare.compute.case_table import CaseTable
from rag_compare.compute.partials import ResamplingPartial, ResamplingPlan, merge_partials, resampling_partial
from rag_compare.compute.side_samples import read_columns, side_samples
from rag_compare.core.progress import progress_bar
from rag_compare.core.protocols import Judge
from rag_compare.io.runs import OpenedRun, Run
from rag_compare.io.scores import Scores

__all__ = ["SLICE_ROWS", "BucketPasses", "JoinInputs", "LocalPasses", "SideInputs", "Slice", "by_bucket", "slices"]

SLICE_ROWS = 200_000
"""Records made narrow at a time: texts of more are never held at once."""


@dataclass(frozen=True)
class SideInputs:
    """What making one side narrow needs: its run, its scores, the cut-off ``k``, and, shared by both sides,
    the judge, the corpus' labels and the passages; ``stored``: whether its stored signals are read
    (``stored_signals.reads_stored``); ``stored_verdicts``: whether its stored verdicts are
    (``reads_stored_verdicts``), when its signals are not."""

    run: Run | OpenedRun
    scores: Scores | None
    k: int | None
    judge: Judge
    labels: pl.DataFrame | None
    passages: pl.DataFrame | None
    stored: bool = False
    stored_verdicts: bool = False

    @property
    def columns(self) -> list[str] | None:
        """The record columns its slices are read with: every one (``None``), or those its stored
        signals need."""
        if not self.stored:
            return None
        return read_columns(self.run.records.columns if isinstance(self.run, Run) else self.run.columns)

    def samples(self, records: pl.DataFrame) -> pl.DataFrame:
        """A slice of its records made narrow (``side_samples``)."""
        return side_samples(
            records,
            self.judge,
            self.scores,
            labels=self.labels,
            passages=self.passages,
            k=self.k,
            stored=self.stored,
            stored_verdicts=self.stored_verdicts,
        )


class JoinInputs(NamedTuple):
    """What joining one candidate with the baseline needs beside the sides: the ``rules``, and per bucket the
    corpus' ``labels`` and a pairs file's ``preference`` columns; ``last``: no candidate is joined after it."""

    rules: JoinRules
    labels: Sequence[pl.DataFrame | None]
    preference: Sequence[pl.DataFrame | None]
    last: bool


class BucketPasses(Protocol):
    """The four passes of one engine over a comparison's ``buckets`` (see the module's docstring)."""

    buckets: int

    def sides(self, inputs: Sequence[SideInputs]) -> list[list[SideFacts]]: ...

    def join(self, candidate: int, inputs: JoinInputs) -> list[BucketResult]: ...

    def resample(self, candidate: int, plan: ResamplingPlan) -> ResamplingPartial: ...

    def table(self, candidate: int, schema: pl.Schema, counts: dict[str, int]) -> CaseTable: ...


class LocalPasses:
    """The passes in this process, over a ``BucketStore`` of the sides and one of each candidate's cases
    (held in memory, or spilled)."""

    def __init__(self, store: BucketStore) -> None:
        self.store = store
        self.buckets = store.buckets
        self._cases: dict[int, BucketStore] = {}

    def cases_store(self, candidate: int) -> BucketStore:
        """Where ``candidate``'s joined cases are kept (made on first use)."""
        if candidate not in self._cases:
            self._cases[candidate] = BucketStore(self.buckets, spill=self.store.spilled)
        return self._cases[candidate]

    def sides(self, inputs: Sequence[SideInputs]) -> list[list[SideFacts]]:
        facts = []
        for index, side in enumerate(inputs):
            aligned = self.store.spilled and isinstance(side.run, OpenedRun) and side.run.buckets == self.buckets
            with progress_bar(f"{side.run.name}: signals", _batch_count(side.run)) as advance:
                for part in slices(side.run, aligned=aligned, columns=side.columns):
                    self.store.add(index, side.samples(part.records), part.bucket)
                    advance(part.batches)
            columns = SideFacts.columns(list(self.store.side_schema(index)))
            facts.append([side_facts(self.store.side(index, bucket, columns)) for bucket in range(self.buckets)])
        return facts

    def join(self, candidate: int, inputs: JoinInputs) -> list[BucketResult]:
        results = []
        cases = self.cases_store(candidate)
        with progress_bar("joining buckets" if self.buckets > 1 else None, self.buckets) as advance:
            for bucket in range(self.buckets):
                sides = [self.store.side(index, bucket) for index in (0, candidate)]
                result = join_bucket(sides, inputs.labels[bucket], inputs.preference[bucket], inputs.rules)
                del sides
                self.store.drop_side(candidate, bucket)
                if inputs.last:
                    self.store.drop_side(0, bucket)
                cases.keep(bucket, result.cases)
                results.append(dataclasses.replace(result, cases=result.cases.clear()) if cases.spilled else result)
                advance()
        return results

    def resample(self, candidate: int, plan: ResamplingPlan) -> ResamplingPartial:
        if not plan.layouts:  # nothing to resample: no need to read the cases again
            return ResamplingPartial({})
        cases = self.cases_store(candidate)
        return merge_partials(resampling_partial(cases.cases(bucket), plan) for bucket in range(self.buckets))

    def table(self, candidate: int, schema: pl.Schema, counts: dict[str, int]) -> CaseTable:
        return self.cases_store(candidate).table(schema, counts)


class Slice(NamedTuple):
    """Records of a run read together: all of ``bucket`` when given, ``batches`` of its record batches."""

    records: pl.DataFrame
    bucket: int | None
    batches: int


def slices(run: Run | OpenedRun, *, aligned: bool = False, columns: Sequence[str] | None = None) -> Iterator[Slice]:
    """The run's records (``columns``: only those), ``SLICE_ROWS`` or so at a time (a run file's record
    batches put together); with ``aligned``, a run directory's parts one at a time, each with its bucket. A
    slice read is one chunk: the signals' list work and joins are a tenth quicker on one than on its batches."""
    if isinstance(run, Run):
        records = run.records if columns is None else run.records.select(columns)
        for start in range(0, max(records.height, 1), SLICE_ROWS):
            yield Slice(records.slice(start, SLICE_ROWS), None, 1)
        return
    if aligned:
        for bucket, part in enumerate(run.batches(columns)):
            yield Slice(part.rechunk(), bucket, 1)
        return
    held: list[pl.DataFrame] = []
    empty = True
    for batch in run.batches(columns):
        held.append(batch)
        if sum(part.height for part in held) >= SLICE_ROWS:
            yield Slice(pl.concat(held, rechunk=True), None, len(held))
            held, empty = [], False
    if held or empty:
        schema = {name: dtype for name, dtype in run.frozen.schema.items() if columns is None or name in columns}
        records = pl.concat(held, rechunk=True) if held else pl.DataFrame(schema=schema)
        yield Slice(records, None, len(held))


def by_bucket(frame: pl.DataFrame | None, buckets: int) -> list[pl.DataFrame | None]:
    """``frame`` (with ``case_id``) split into ``buckets`` frames by the bucket rule; ``None`` stays ``None``."""
    return [None] * buckets if frame is None else list(split_by_bucket(frame, buckets))


def _batch_count(run: Run | OpenedRun) -> int:
    """How many record batches (a directory: parts) ``slices`` reads, for a progress bar."""
    if isinstance(run, Run):
        return max(1, -(-run.records.height // SLICE_ROWS))
    return run.frozen.batch_count
