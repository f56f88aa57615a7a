"""Claims: what a judge said of each claim of an answer, and how the claims of two answers to one case pair up.

A judge's verdict on a claim (``CLAIM_TYPE``) holds the claim's ``text``, whether the context
``supported`` it (null: not judged), and its evidence: the ``passage_id`` and the character span
``start``-``end`` in the context where it was found (null when not found or not known), and for an LLM
judge what it ``cited``. The offline judge's claims are the answer's sentences; an LLM judge's, the claims
it extracted.

Two answers' claims pair up (``pair_claims``) one to one, per case: a claim of the baseline and one of the
candidate pair when each is the other's best match, with an ``overlap`` of ``PAIRING_OVERLAP`` or more.
The overlap is 1 for two claims equal once ``words.normalized`` (spaces squeezed, a final full stop
dropped), else the Jaccard share of their words: the words both hold over the words either holds, so
"Annual leave is 30 days." and "Annual leave is 45 days." (4 of 6 words) pair, and the change of number
shows as a claim that became unsupported. Ties go to the earlier claim. A paired claim *became
unsupported* when the baseline's was supported and the candidate's is not, *became supported* the
reverse; a baseline claim left without a pair was *dropped*, a candidate one *added*.
"""

from __future__ import annotations

import polars as pl

from rag_compare.compute.words import WORD_PATTERN, normalized
from rag_compare.core.contract import CLAIM_TYPE

__all__ = ["CHANGES", "CHANGE_TYPE", "CLAIM_TYPE", "PAIRING_OVERLAP", "pair_claims"]

PAIRING_OVERLAP = 0.5
"""The least word overlap (Jaccard) at which two claims that are not equal pair (see the module)."""
CHANGES = ("became_unsupported", "became_supported", "dropped", "added")
CHANGE_TYPE = pl.Struct(
    {"change": pl.Enum(CHANGES), "baseline": CLAIM_TYPE, "candidate": CLAIM_TYPE, "overlap": pl.Float64}
)
"""One change of a case's claims: what changed, the claim on each side (null on the side without it) and
their overlap (null for a claim dropped or added)."""


def pair_claims(cases: pl.DataFrame) -> pl.Series:
    """Per row of ``cases`` (``case_id``, ``baseline_claims`` and ``candidate_claims``, lists of
    ``CLAIM_TYPE``), the changes of its claims (a list of ``CHANGE_TYPE``, in the baseline's claim order
    then the added ones; empty when nothing changed), or null where a side's claims are null (not
    available: that side has no claim verdicts)."""
    rows = cases.select(
        pl.int_range(pl.len(), dtype=pl.UInt32).alias("row"), pl.col("baseline_claims"), pl.col("candidate_claims")
    )
    same = pl.col("baseline_claims").eq_missing(pl.col("candidate_claims"))  # the same claims: nothing to pair
    differing = rows.filter(~same.fill_null(False))
    sides = {side: _exploded(differing, side) for side in ("baseline", "candidate")}
    paired = _mutual_best(sides["baseline"], sides["candidate"])
    changes = pl.concat(
        [
            _paired_changes(paired),
            _unpaired(sides["baseline"], paired, "baseline", "dropped"),
            _unpaired(sides["candidate"], paired, "candidate", "added"),
        ]
    ).sort("row", "order", "index")
    gathered = changes.group_by("row").agg(pl.col("change_struct").alias("changes"))
    both = rows.select(
        "row", (pl.col("baseline_claims").is_not_null() & pl.col("candidate_claims").is_not_null()).alias("known")
    )
    result = both.join(gathered, on="row", how="left", maintain_order="left").select(
        pl.when(pl.col("known")).then(pl.col("changes").fill_null(pl.lit([], dtype=pl.List(CHANGE_TYPE))))
    )
    return result.to_series().cast(pl.List(CHANGE_TYPE)).alias("claim_changes")


def _exploded(rows: pl.DataFrame, side: str) -> pl.DataFrame:
    """One row per claim of ``side``: its case's ``row``, its ``index`` in the answer, the claim, its
    normalized text and its words."""
    claims = (
        rows.select("row", pl.col(f"{side}_claims").alias("claim"))
        .filter(pl.col("claim").list.len() > 0)
        .explode("claim")
        .with_columns(pl.int_range(pl.len(), dtype=pl.UInt32).over("row").alias("index"))
    )
    text = normalized(claims.get_column("claim").struct.field("text"))
    key = text.str.replace_all(r"\s+", " ").str.strip_chars(" ").str.strip_suffix(".").str.strip_chars(" ")
    words = key.str.extract_all(WORD_PATTERN).list.eval(pl.element().hash()).list.unique()  # words as numbers
    return claims.with_columns(key.hash().alias("key"), words.alias("words"))


def _mutual_best(baseline: pl.DataFrame, candidate: pl.DataFrame) -> pl.DataFrame:
    """The pairs of claims of a case that are each other's best match at ``PAIRING_OVERLAP`` or more."""
    pairs = baseline.join(candidate, on="row", suffix="_c")
    both = pl.col("words").list.set_intersection("words_c").list.len()
    either = pl.col("words").list.set_union("words_c").list.len()
    overlap = pl.when(pl.col("key") == pl.col("key_c")).then(1.0).otherwise(both / pl.max_horizontal(either, 1))
    pairs = pairs.with_columns(overlap.alias("overlap")).filter(pl.col("overlap") >= PAIRING_OVERLAP)
    ordered = pairs.sort("row", pl.col("overlap"), "index", "index_c", descending=[False, True, False, False])
    for_baseline = ordered.unique(["row", "index"], keep="first", maintain_order=True)
    for_candidate = ordered.unique(["row", "index_c"], keep="first", maintain_order=True)
    return for_baseline.join(for_candidate.select("row", "index", "index_c"), on=["row", "index", "index_c"])


def _paired_changes(paired: pl.DataFrame) -> pl.DataFrame:
    """The paired claims whose support changed, as changes."""
    before, after = (pl.col(name).struct.field("supported") for name in ("claim", "claim_c"))
    change = (
        pl.when(before & ~after)
        .then(pl.lit("became_unsupported"))
        .when(~before & after)
        .then(pl.lit("became_supported"))
    )
    changed = paired.with_columns(change.alias("change")).filter(pl.col("change").is_not_null())
    return changed.select(
        "row",
        pl.lit(0, dtype=pl.UInt8).alias("order"),
        "index",
        _change("change", pl.col("claim"), pl.col("claim_c"), pl.col("overlap")),
    )


def _unpaired(claims: pl.DataFrame, paired: pl.DataFrame, side: str, change: str) -> pl.DataFrame:
    """The claims of ``side`` no pair holds, as changes of kind ``change``."""
    index = "index" if side == "baseline" else "index_c"
    left = claims.join(paired.select("row", pl.col(index).alias("index")), on=["row", "index"], how="anti")
    none = pl.lit(None, dtype=CLAIM_TYPE)
    baseline, candidate = (pl.col("claim"), none) if side == "baseline" else (none, pl.col("claim"))
    return left.select(
        "row",
        pl.lit(0 if side == "baseline" else 1, dtype=pl.UInt8).alias("order"),
        "index",
        _change(pl.lit(change), baseline, candidate, pl.lit(None, dtype=pl.Float64)),
    )


def _change(change: str | pl.Expr, baseline: pl.Expr, candidate: pl.Expr, overlap: pl.Expr) -> pl.Expr:
    kind = pl.col(change) if isinstance(change, str) else change
    return pl.struct(
        kind.cast(pl.Enum(CHANGES)).alias("change"),
        baseline.cast(CLAIM_TYPE).alias("baseline"),
        candidate.cast(CLAIM_TYPE).alias("candidate"),
        overlap.alias("overlap"),
    ).alias("change_struct")
