"""One bucket of a comparison: both sides' narrow frames (one row per sample: key, status, error, the labels
statuses need and the signals; see ``compare_runs``) for the cases whose ``case_hash`` falls in it, reduced to
a row per case, joined, given statuses and reasons, with the partial statistics the whole comparison merges.

Every engine runs these two steps: in memory on one bucket holding every case, ``streaming`` bucket by
bucket, ``ray`` in Ray Data tasks. ``side_facts`` comes first, for each side's bucket: what must be known of
a whole side before any bucket is joined (whether it has repeats, and which). ``join_bucket`` then joins one
bucket under the ``JoinRules`` those facts give.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from rag_compare.compute.case_status import CASE_STATUSES, SIDES, STAGE_TYPE, case_stage, case_status, with_reasons
from rag_compare.compute.partials import AggregatePartial, BreakdownPartial, aggregate_partial, breakdown_partial
from rag_compare.compute.repeats import (
    FLAKY_SCHEMA,
    REDUCED_SUFFIXES,
    NoisePartial,
    flaky_cases,
    noise_partial,
    reduced_side,
    repeat_counts,
)
from rag_compare.compute.side_samples import (
    DRIFTED,
    LABEL_DIGEST,
    NARROW_LABELS,
    REQUIRED,
    SIDE_NOTES,
    UNKNOWN,
    UNREAD,
    UNREVIEWED,
)
from rag_compare.core.contract import REPEAT, sample_key
from rag_compare.core.rows import count_by
from rag_compare.core.signals import signals_in

__all__ = ["BucketResult", "JoinRules", "SideFacts", "join_bucket", "reasoned", "reasoned_schema", "side_facts"]


@dataclass(frozen=True)
class SideFacts:
    """What one bucket of a side's samples tells before the join: its ``repeat_counts``, whether a case has
    two samples, the repeat numbers it has, the keys it holds twice (``duplicated`` case ids), and from the
    notes (``side_samples``) the cases whose labels differ from the corpus' (``drifted``) or that it lacks
    (``unknown``), the ``case_id`` and ``tag`` of the records the offline judge cannot read (``unread``),
    and the ``required`` passages named."""

    counts: Mapping[str, int]
    repeated: bool
    numbers: frozenset[int]
    duplicated: tuple[str, ...]
    drifted: tuple[str, ...]
    unknown: tuple[str, ...]
    unread: pl.DataFrame | None
    required: frozenset[str]

    @staticmethod
    def columns(schema: Sequence[str]) -> list[str]:
        """The columns of a side's samples (of these ``schema`` names) that ``side_facts`` reads."""
        return [name for name in ("case_id", REPEAT, "status", *SIDE_NOTES) if name in schema]


def side_facts(samples: pl.DataFrame) -> SideFacts:
    """The facts of one bucket of a side's samples (of ``SideFacts.columns`` at least)."""
    key = sample_key(samples.columns)
    has_repeat = REPEAT in samples.columns
    numbers = frozenset(samples.get_column(REPEAT).unique().to_list()) if has_repeat else frozenset()
    return SideFacts(
        counts=repeat_counts(samples),
        repeated=has_repeat and bool(samples.select(pl.col("case_id").is_duplicated().any()).item()),
        numbers=numbers,
        duplicated=_ids(samples.filter(pl.struct(key).is_duplicated())),
        drifted=_ids(samples.filter(DRIFTED)) if DRIFTED in samples.columns else (),
        unknown=_ids(samples.filter(UNKNOWN)) if UNKNOWN in samples.columns else (),
        unread=(
            samples.filter(pl.col(UNREAD).is_not_null()).select("case_id", pl.col(UNREAD).alias("tag")).unique()
            if UNREAD in samples.columns
            else None
        ),
        required=(
            frozenset(samples.get_column(REQUIRED).explode().drop_nulls().unique().to_list())
            if REQUIRED in samples.columns
            else frozenset()
        ),
    )


def _ids(samples: pl.DataFrame) -> tuple[str, ...]:
    return tuple(samples.get_column("case_id").unique().sort().to_list())


@dataclass(frozen=True)
class JoinRules:
    """How every bucket of one comparison is joined. ``repeated``: per side, whether a case has two
    samples (when one has, each side is reduced to a row per case); ``noise_numbers``: per side, the repeat
    numbers its noise floor compares (empty for none); ``preferred``: with a pairwise judge's verdicts;
    ``labels``: with a corpus, whose labels the cases take (the runs' labels are then not compared);
    ``reasons``: whether the join gives the cases their reasons (else ``reasoned`` does, when they are read)."""

    tolerance: float
    repeated: tuple[bool, bool]
    noise_numbers: tuple[tuple[int, ...], tuple[int, ...]]
    preferred: bool
    labels: bool
    reasons: bool = True

    @property
    def reduced(self) -> bool:
        return any(self.repeated)


@dataclass(frozen=True)
class BucketResult:
    """One bucket joined: its ``cases`` (sorted by ``case_id``, the columns of ``Comparison.cases``), their
    count per status, the aggregate and breakdown partials of the first pass, each side's noise-floor
    partial (``None``: no noise floor), its flaky cases, the cases whose labels differ between the runs, and
    the unreviewed synthetic cases a run left out (``not_run``: see ``join_bucket``)."""

    cases: pl.DataFrame
    counts: Mapping[str, int]
    aggregates: AggregatePartial
    breakdowns: BreakdownPartial
    noise: tuple[NoisePartial | None, NoisePartial | None]
    flaky: pl.DataFrame
    drifted: tuple[str, ...]
    not_run: tuple[str, ...]


def join_bucket(
    sides: Sequence[pl.DataFrame], labels: pl.DataFrame | None, preference: pl.DataFrame | None, rules: JoinRules
) -> BucketResult:
    """Bucket ``sides`` (baseline first) joined, with ``labels`` (the corpus' ``case_id``, ``NARROW_LABELS`` and
    ``UNREVIEWED`` of the bucket's cases) and ``preference`` (a pairs file's verdict columns of them).

    An unreviewed synthetic case (by the corpus' labels, else by those of the run that has it) that a side has
    no record of was left out by design, not lost: it is no case of the comparison but one ``not_run``."""
    sides = [frame.drop(SIDE_NOTES, strict=False) for frame in sides]
    noise = tuple(
        noise_partial(frame, numbers, signals_in(frame.columns), rules.tolerance) if numbers else None
        for frame, numbers in zip(sides, rules.noise_numbers, strict=True)
    )
    flaky = pl.DataFrame(schema=FLAKY_SCHEMA)
    if rules.reduced:
        frames = [reduced_side(frame, signals_in(frame.columns)) for frame in sides]
        found = [
            flaky_cases(frame, side, signals_in(frame.columns), rules.tolerance)
            for side, frame, repeated in zip(SIDES, frames, rules.repeated, strict=True)
            if repeated
        ]
        flaky = pl.concat([flaky, *found])
    else:  # one sample a case on both sides: a run's repeat column (all 0, say) tells nothing
        frames = [frame.drop(REPEAT, strict=False) for frame in sides]
    prefixed = [_prefixed(side, frame) for side, frame in zip(SIDES, frames, strict=True)]
    joined = _join(prefixed, labels)
    absent = pl.any_horizontal(pl.col(f"{side}_status").is_null() for side in SIDES)
    left_out = (pl.col(UNREVIEWED) & absent).fill_null(False)
    not_run = tuple(joined.filter(left_out).get_column("case_id").to_list())
    joined = joined.filter(~left_out).drop(UNREVIEWED)
    drifted = () if rules.labels else _drifted_between(joined)
    joined = _with_both_sides(joined.drop(f"{side}_{LABEL_DIGEST}" for side in SIDES), rules.reduced)
    if preference is not None:
        joined = joined.join(preference, on="case_id", how="left", maintain_order="left")
    signals = signals_in(joined.columns, prefix="baseline_")
    status_rules = {"reduced": rules.reduced, "preferred": rules.preferred}
    statuses = joined.with_columns(case_status(signals, rules.tolerance, **status_rules))
    cases = statuses.with_columns(case_stage(signals, rules.tolerance, **status_rules))
    if rules.reasons:
        cases = reasoned(cases, rules)
    counts = count_by(cases.select(pl.col("status").cast(pl.String)), "status", CASE_STATUSES)
    return BucketResult(
        cases=cases,
        counts=counts,
        aggregates=aggregate_partial(cases, signals, reduced=rules.reduced),
        breakdowns=breakdown_partial(cases, signals),
        noise=(noise[0], noise[1]),
        flaky=flaky,
        drifted=drifted,
        not_run=not_run,
    )


def reasoned(cases: pl.DataFrame, rules: JoinRules) -> pl.DataFrame:
    """Joined ``cases`` (with their statuses and stages) with their reasons, in the columns of
    ``Comparison.cases`` (``reasoned_schema``): a case's reasons are of its own row alone, so any of its slices
    may be given."""
    signals = signals_in(cases.columns, prefix="baseline_")
    cases = with_reasons(cases, signals, rules.tolerance, reduced=rules.reduced, preferred=rules.preferred)
    return cases.select(list(reasoned_schema(cases.schema)))


def reasoned_schema(schema: Mapping[str, pl.DataType]) -> dict[str, pl.DataType]:
    """The columns ``reasoned`` gives joined cases of ``schema``, in order (known without making any)."""
    first = ("case_id", "status", "stage", "reasons", "reason_stages", *NARROW_LABELS)
    types = {**schema, "reasons": pl.List(pl.String), "reason_stages": pl.List(STAGE_TYPE)}
    return {name: types[name] for name in (*first, *(name for name in schema if name not in first))}


def _drifted_between(joined: pl.DataFrame) -> tuple[str, ...]:
    """Case ids of the ``joined`` sides (one row per case, in id order) whose labels differ between them (by
    their ``label_digest``; a case one side lacks has none on that side)."""
    differs = pl.col(f"baseline_{LABEL_DIGEST}") != pl.col(f"candidate_{LABEL_DIGEST}")
    return tuple(joined.filter(differs).get_column("case_id").to_list())


def _prefixed(side: str, frame: pl.DataFrame) -> pl.DataFrame:
    return frame.rename({name: f"{side}_{name}" for name in frame.columns if name != "case_id"})


def _join(sides: list[pl.DataFrame], labels: pl.DataFrame | None) -> pl.DataFrame:
    """Every case id of either side (and of the corpus), in order, with both sides and one set of the labels
    it carries (``NARROW_LABELS`` and ``UNREVIEWED``: the corpus', else the candidate's, else the baseline's)."""
    id_frames = [side.select("case_id") for side in sides]
    if labels is not None:
        id_frames.append(labels.select("case_id"))
    cases = pl.concat(id_frames).unique().sort("case_id")
    carried = (*NARROW_LABELS, UNREVIEWED)
    if labels is not None:
        cases = cases.join(labels.select("case_id", *carried), on="case_id", how="left", maintain_order="left")
    for side in sides:
        cases = cases.join(side, on="case_id", how="left", maintain_order="left")
    return cases.with_columns(
        pl.coalesce(*([name] if labels is not None else []), f"candidate_{name}", f"baseline_{name}").alias(name)
        for name in carried
    ).drop(f"{side}_{name}" for side in SIDES for name in carried)


def _with_both_sides(cases: pl.DataFrame, reduced: bool) -> pl.DataFrame:
    """``cases`` with every score signal that one side has, as nulls on the side without it (with
    repeats, its spread columns too)."""
    names = {signal.name for side in SIDES for signal in signals_in(cases.columns, prefix=f"{side}_")}
    suffixes = ("", *REDUCED_SUFFIXES) if reduced else ("",)
    return cases.with_columns(
        pl.lit(None, pl.Float64).alias(f"{side}_{name}{suffix}")
        for side in SIDES
        for name in sorted(names)
        for suffix in suffixes
        if f"{side}_{name}{suffix}" not in cases.columns
    )
