"""The passes of a comparison on Ray Data (the ``ray`` engine): the steps of ``bucket_passes`` as Ray tasks,
with the same kernels.

1. ``sides``: each side's record slices become a dataset; ``map_batches`` makes each block narrow
   (``side_samples``) and emits one row per bucket it touches: the bucket, the side, and those samples as
   Arrow IPC bytes (narrow frames only: texts never travel). ``groupby(["side", "bucket"]).map_groups``
   gives each bucket's ``SideFacts``.
2. ``join``, per candidate: ``groupby("bucket").map_groups`` over the baseline's samples and the
   candidate's gathers both sides of a bucket and runs ``join_bucket``; each bucket's cases come back to this
   process as Arrow IPC bytes, beside its partial statistics.
3. and 4. run here, over the cases kept in a spilled ``BucketStore``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
import pickle
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any

import polars as pl

from rag_compare.compute.bucket_join import BucketResult, JoinRules, SideFacts, join_bucket, side_facts
from rag_compare.compute.bucket_passes import JoinInputs, LocalPasses, SideInputs, slices
from rag_compare.compute.bucket_store import BucketStore, split_by_bucket
from rag_compare.compute.case_table import CaseTable
from rag_compare.compute.partials import ResamplingPartial, ResamplingPlan
from rag_compare.core.ray_runtime import ray_session
from rag_compare.io.runs import Run

__all__ = ["RayPasses", "ray_passes"]

_SIDE, _BUCKET, _DATA = "side", "bucket", "data"


@contextlib.contextmanager
def ray_passes(buckets: int, address: str | None) -> Iterator[RayPasses]:
    """The passes on the Ray cluster at ``address`` (``None``: a Ray started here for them)."""
    with ray_session(address) as ray:
        yield RayPasses(ray, buckets)


class RayPasses:
    """The passes of one comparison on Ray (see the module's docstring)."""

    def __init__(self, ray: ModuleType, buckets: int) -> None:
        import ray.data

        logger = logging.getLogger("ray.data")
        logger.setLevel(logging.ERROR)  # not the warning that the bars are off
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        logger.setLevel(logging.WARNING)  # not a line per dataset run
        context.print_on_execution_start = False
        self.ray = ray
        self.buckets = buckets
        self._samples: Any = None
        self._local = LocalPasses(BucketStore(buckets, spill=True))
        self._schemas: list[pl.Schema] = []

    def sides(self, inputs: Sequence[SideInputs]) -> list[list[SideFacts]]:
        import ray.data

        self._schemas = [_samples_schema(side) for side in inputs]
        datasets = []
        for index, side in enumerate(inputs):
            refs = [self.ray.put(part.records.to_arrow()) for part in slices(side.run, columns=side.columns)]
            kernel = _side_kernel(index, side, self.buckets)
            datasets.append(ray.data.from_arrow_refs(refs).map_batches(kernel, batch_format="pyarrow", batch_size=None))
        self._samples = datasets[0].union(*datasets[1:]).materialize()
        found = self._samples.groupby([_SIDE, _BUCKET], num_partitions=self.buckets).map_groups(
            _facts_kernel, batch_format="pyarrow"
        )
        facts: list[list[SideFacts | None]] = [[None] * self.buckets for _ in inputs]
        for row in found.take_all():
            facts[row[_SIDE]][row[_BUCKET]] = pickle.loads(row[_DATA])
        return [
            [fact or side_facts(pl.DataFrame(schema=schema)) for fact in found_facts]
            for found_facts, schema in zip(facts, self._schemas, strict=True)
        ]

    def join(self, candidate: int, inputs: JoinInputs) -> list[BucketResult]:
        labels, preference = self.ray.put(list(inputs.labels)), self.ray.put(list(inputs.preference))
        schemas = (self._schemas[0], self._schemas[candidate])
        kernel = _join_kernel(inputs.rules, schemas, labels, preference)
        from ray.data.expressions import col

        pair = self._samples.filter(expr=(col(_SIDE) == 0) | (col(_SIDE) == candidate))
        joined = pair.groupby(_BUCKET, num_partitions=self.buckets).map_groups(kernel, batch_format="pyarrow")
        store = self._local.cases_store(candidate)
        results: list[BucketResult | None] = [None] * self.buckets
        for row in joined.iter_rows():
            result: BucketResult = pickle.loads(row[_DATA])
            store.keep(row[_BUCKET], pl.read_ipc(io.BytesIO(row["cases"])))
            results[row[_BUCKET]] = result
        if inputs.last:
            self._samples = None
        missing = [bucket for bucket, result in enumerate(results) if result is None]
        if missing:  # a bucket neither side has a case in (nor the corpus): joined here, empty
            empty = [pl.DataFrame(schema=schema) for schema in schemas]
            for bucket in missing:
                result = join_bucket(empty, inputs.labels[bucket], inputs.preference[bucket], inputs.rules)
                store.keep(bucket, result.cases)
                results[bucket] = result
        return [result for result in results if result is not None]

    def resample(self, candidate: int, plan: ResamplingPlan) -> ResamplingPartial:
        return self._local.resample(candidate, plan)

    def table(self, candidate: int, schema: pl.Schema, counts: dict[str, int]) -> CaseTable:
        return self._local.table(candidate, schema, counts)


def _side_kernel(side: int, inputs: SideInputs, buckets: int) -> Callable[[Any], Any]:
    """A block of ``side``'s records made narrow, as one row per bucket of its samples' Arrow IPC bytes."""

    def kernel(block: Any) -> Any:
        samples = inputs.samples(pl.DataFrame(block))
        rows = [
            {_SIDE: side, _BUCKET: number, _DATA: _ipc(part)}
            for number, part in enumerate(split_by_bucket(samples, buckets))
            if part.height
        ]
        return pl.DataFrame(rows, schema={_SIDE: pl.Int64, _BUCKET: pl.Int64, _DATA: pl.Binary}).to_arrow()

    return kernel


def _facts_kernel(group: Any) -> Any:
    """The ``SideFacts`` of one side's bucket (its rows' samples put together), pickled."""
    rows = pl.DataFrame(group)
    samples = _samples_of(rows)
    facts = side_facts(samples)
    frame = {_SIDE: [rows[_SIDE][0]], _BUCKET: [rows[_BUCKET][0]], _DATA: [pickle.dumps(facts)]}
    return pl.DataFrame(frame, schema={_SIDE: pl.Int64, _BUCKET: pl.Int64, _DATA: pl.Binary}).to_arrow()


def _join_kernel(
    rules: JoinRules, schemas: Sequence[pl.Schema], labels_ref: Any, preference_ref: Any
) -> Callable[[Any], Any]:
    """One bucket joined: its cases as Arrow IPC bytes, and its ``BucketResult`` (cases cleared) pickled."""

    def kernel(group: Any) -> Any:
        import ray

        rows = pl.DataFrame(group)
        bucket = int(rows[_BUCKET][0])
        candidate = rows.filter(pl.col(_SIDE) != 0)
        sides = [_samples_of(rows.filter(pl.col(_SIDE) == 0), schemas[0]), _samples_of(candidate, schemas[1])]
        labels, preference = ray.get(labels_ref)[bucket], ray.get(preference_ref)[bucket]
        result = join_bucket(sides, labels, preference, rules)
        cleared = dataclasses.replace(result, cases=result.cases.clear())
        frame = {_BUCKET: [bucket], "cases": [_ipc(result.cases)], _DATA: [pickle.dumps(cleared)]}
        return pl.DataFrame(frame, schema={_BUCKET: pl.Int64, "cases": pl.Binary, _DATA: pl.Binary}).to_arrow()

    return kernel


def _samples_of(rows: pl.DataFrame, schema: pl.Schema | None = None) -> pl.DataFrame:
    """The samples of ``rows`` (of one side and bucket) put together; none: an empty frame of ``schema``."""
    frames = [pl.read_ipc(io.BytesIO(data)) for data in rows.get_column(_DATA)]
    return pl.concat(frames, rechunk=True) if frames else pl.DataFrame(schema=schema)


def _ipc(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.write_ipc(buffer, compression="lz4")
    return buffer.getvalue()


def _samples_schema(inputs: SideInputs) -> pl.Schema:
    """The schema of a side's narrow samples, from none of its records."""
    run = inputs.run
    records = run.records.clear() if isinstance(run, Run) else pl.DataFrame(schema=dict(run.frozen.schema))
    return inputs.samples(records).schema
