"""Per-case retrieval and context signals, as whole-column Polars operations.

Retrieval metrics follow trec_eval on the ranked list as captured, with binary relevance (the case's
``required_passage_ids`` are the gold passages): a passage id listed twice counts once (later repeats
are dropped and the ranks close up), the list is cut at ``k`` (else its own length), and a case
without gold passages gets nulls, as does a record that did not capture its retrieved list.

- ``recall`` = hits / |gold|; ``precision`` = hits / k (trec_eval's P@k: a shorter list still divides
  by k); ``mrr`` = 1 / rank of the first hit, 0 without one; ``ndcg`` = binary-gain DCG with a
  log2(rank + 1) discount over the ideal DCG of min(|gold|, k) hits; ``hit_rate`` = any hit;
  ``full_coverage`` = every gold passage within the top k.
- ``context_coverage`` = share of gold passages present in the context sent to the model;
  ``context_construction_failure`` = a gold passage was retrieved (anywhere in the captured list) but
  is not in that context. Presence comes from ``context_passage_ids`` when the record has them, else
  from finding the passage text verbatim in ``context`` when a passages frame is given, else null.
"""

from __future__ import annotations

import math

import polars as pl

from rag_compare.core.rows import row_index

__all__ = ["CONTEXT_SIGNALS", "RETRIEVAL_SIGNALS", "context_signals", "retrieval_signals"]

RETRIEVAL_SIGNALS = ("recall", "precision", "mrr", "ndcg", "hit_rate", "full_coverage")
CONTEXT_SIGNALS = ("context_coverage", "context_construction_failure")

GOLD, RETRIEVED = "required_passage_ids", "retrieved_passage_ids"
_CASE = "__case__"
_SLICE_ROWS = 250_000
"""Rows scored at a time: the exploded ranked lists of a million cases never sit in memory at once."""


def retrieval_signals(frame: pl.DataFrame, k: int | None = None) -> pl.DataFrame:
    """The six retrieval metrics of each row of ``frame`` (needs the gold and retrieved id lists).

    Returns a new frame of the same height and order with one column per metric of
    ``RETRIEVAL_SIGNALS``; ``k`` cuts every list (``None``: each list's own length).
    """
    if k is not None and k < 1:
        raise ValueError(f"k must be 1 or more, got {k}")
    starts = range(0, max(frame.height, 1), _SLICE_ROWS)
    return pl.concat([_retrieval_slice(frame.slice(start, _SLICE_ROWS), k) for start in starts])


def _retrieval_slice(frame: pl.DataFrame, k: int | None) -> pl.DataFrame:
    ranked = pl.col(RETRIEVED).list.unique(maintain_order=True)
    cases = frame.select(
        row_index(_CASE),
        pl.col(GOLD),
        (ranked if k is None else ranked.list.head(k)).alias("top"),
    ).with_columns(
        pl.col(GOLD).list.len().alias("n_gold"),
        (pl.col("top").list.len() if k is None else pl.lit(k, dtype=pl.UInt32)).alias("k"),
    )
    hits = (
        _hit_ranks(cases)
        .group_by(_CASE)
        .agg(
            pl.len().alias("hits"),
            pl.col("rank").min().alias("first_rank"),
            (1.0 / (pl.col("rank") + 1).cast(pl.Float64).log(2)).sum().alias("dcg"),
        )
    )
    scored = cases.join(hits, on=_CASE, how="left", maintain_order="left").with_columns(
        pl.col("hits").fill_null(0), pl.col("dcg").fill_null(0.0)
    )
    measurable = (pl.col("n_gold") > 0) & pl.col("top").is_not_null()
    ideal = _ideal_dcg(int(scored.select(pl.min_horizontal("n_gold", "k").max()).item() or 0))
    n_ideal = pl.min_horizontal("n_gold", "k")
    metrics = {
        "recall": pl.col("hits") / pl.col("n_gold"),
        "precision": pl.when(pl.col("k") > 0).then(pl.col("hits") / pl.col("k")).otherwise(0.0),
        "mrr": (1.0 / pl.col("first_rank")).fill_null(0.0),
        "ndcg": pl.when(n_ideal > 0).then(pl.col("dcg") / ideal.gather(n_ideal)).otherwise(0.0),
        "hit_rate": pl.col("hits") > 0,
        "full_coverage": pl.col("hits") == pl.col("n_gold"),
    }
    return scored.select(pl.when(measurable).then(expr).alias(name) for name, expr in metrics.items())


def context_signals(frame: pl.DataFrame, passages: pl.DataFrame | None = None) -> pl.DataFrame:
    """``context_coverage``, ``context_construction_failure`` and ``missing_from_context`` (the gold
    ids absent from the context sent, null when that cannot be known) of each row of ``frame``.

    ``frame`` needs the gold and retrieved id lists and, when present, ``context_passage_ids`` and
    ``context``; ``passages`` (``passage_id``, ``text``) lets rows without ``context_passage_ids`` be
    judged by finding each gold passage's text in ``context``.
    """
    present = _present_gold(frame, passages)
    gold = pl.col(GOLD)
    in_context = pl.col("present")
    retrieved_gold = gold.list.set_intersection(pl.col(RETRIEVED))
    measurable = (gold.list.len() > 0) & in_context.is_not_null()
    return present.select(
        pl.when(measurable).then(in_context.list.len() / gold.list.len()).alias("context_coverage"),
        pl.when(measurable & pl.col(RETRIEVED).is_not_null())
        .then(retrieved_gold.list.set_difference(in_context).list.len() > 0)
        .alias("context_construction_failure"),
        gold.list.set_difference(in_context).alias("missing_from_context"),
    )


def _hit_ranks(cases: pl.DataFrame) -> pl.DataFrame:
    """One row per gold passage found in a case's top list, with its 1-based rank."""
    ranked = cases.select(
        _CASE, pl.col("top").alias("passage_id"), pl.int_ranges(1, pl.col("top").list.len() + 1).alias("rank")
    ).explode(["passage_id", "rank"])
    gold = cases.select(_CASE, pl.col(GOLD).alias("passage_id")).explode("passage_id")
    return ranked.join(gold.drop_nulls(), on=[_CASE, "passage_id"], how="semi")


def _ideal_dcg(largest: int) -> pl.Expr:
    """A literal series whose item ``n`` is the DCG of ``n`` hits at ranks 1..n."""
    totals = [0.0]
    for rank in range(1, largest + 1):
        totals.append(totals[-1] + 1.0 / math.log2(rank + 1))
    return pl.lit(pl.Series(totals, dtype=pl.Float64))


def _present_gold(frame: pl.DataFrame, passages: pl.DataFrame | None) -> pl.DataFrame:
    """The frame's gold and retrieved lists with ``present``: the gold ids found in the context sent."""
    has_ids = "context_passage_ids" in frame.columns
    from_ids = pl.col(GOLD).list.set_intersection(pl.col("context_passage_ids")) if has_ids else pl.lit(None)
    cases = frame.select(
        row_index(_CASE),
        pl.col(GOLD),
        pl.col(RETRIEVED),
        from_ids.cast(pl.List(pl.String)).alias("present"),
        (pl.col("context") if "context" in frame.columns else pl.lit(None, dtype=pl.String)).alias("context"),
    )
    if passages is None:
        return cases
    searchable = pl.col("present").is_null() & pl.col("context").is_not_null()
    found = (
        cases.filter(searchable)
        .select(_CASE, "context", pl.col(GOLD).alias("passage_id"))
        .explode("passage_id")
        .join(passages.select("passage_id", "text"), on="passage_id", how="inner", maintain_order="left")
        .filter(pl.col("context").str.contains(pl.col("text"), literal=True))
        .group_by(_CASE, maintain_order=True)
        .agg(pl.col("passage_id").alias("found"))
    )
    return (
        cases.join(found, on=_CASE, how="left", maintain_order="left")
        .with_columns(
            pl.when(searchable)
            .then(pl.col("found").fill_null(pl.lit([], dtype=pl.List(pl.String))))
            .otherwise(pl.col("present"))
            .alias("present")
        )
        .drop("found")
    )
