"""The offline judge's verdict on each claim of an answer, with where in the context its evidence is.

A claim is a sentence of the answer (``grounding``), given as written (the sentence of the answer as it came,
when it splits into as many sentences as its normalized text; else the normalized sentence). Its evidence is
the sentence of the context that holds the claim's *anchor*: its first number (when the claim's numbers and
names are all in the context), else its longest content word found there. The sentence is looked for around
the anchor's first place in the context (lower-cased, ``EVIDENCE_WINDOW`` characters either side at most):
from after the sentence end before it (``.``, ``!`` or ``?`` and a space, or a line break) to the sentence end
after it. Its ``start`` and ``end`` are character offsets in the context as sent; null when the claim has no
anchor, the context does not hold it as written, or lower-casing changes the context's length (offsets would
not be the context's). The offline judge cites nothing (``cited`` is null) and names no passage.
"""

from __future__ import annotations

import polars as pl

from rag_compare.compute.abstention import sentences
from rag_compare.compute.grounding import claim_support
from rag_compare.core.contract import CLAIM_TYPE
from rag_compare.io.language_rules import Language

__all__ = ["EVIDENCE_WINDOW", "claim_verdicts"]

EVIDENCE_WINDOW = 300
"""How far, in characters, the sentence around a claim's anchor is looked for on each side of it."""


def claim_verdicts(answered: pl.DataFrame, min_overlap: float, language: Language) -> pl.DataFrame:
    """``row`` and ``claims`` (a list of ``CLAIM_TYPE``, in the answer's order) for each answered row (``row``,
    ``answer`` normalized, ``written``, ``context``, ``question``; all in ``language``) with a claim."""
    support = claim_support(answered, min_overlap, language, every_word=True)
    positions = answered.select("row", "written", "context", count=sentences(pl.col("answer")).list.len())
    positions = positions.with_row_index("pos").with_columns(first=pl.col("count").cum_sum() - pl.col("count"))
    claims = support.join(positions, on="pos", how="left").with_columns(index=pl.col("claim") - pl.col("first"))
    claims = claims.with_columns(_written_text(), *_evidence(pl.col("context"), pl.col("anchor")))
    verdict = pl.struct(
        pl.col("shown").alias("text"),
        "supported",
        pl.lit(None, pl.String).alias("passage_id"),
        "start",
        "end",
        pl.lit(None, pl.String).alias("cited"),
    ).cast(CLAIM_TYPE)
    return claims.sort("claim").group_by("row", maintain_order=True).agg(verdict.alias("claims"))


def _written_text() -> pl.Expr:
    """The claim's sentence as written, where the written answer splits as its normalized text does."""
    written = sentences(pl.col("written"))
    same = written.list.len() == pl.col("count")
    return pl.when(same).then(written.list.get(pl.col("index"), null_on_oob=True)).otherwise("text").alias("shown")


def _evidence(context: pl.Expr, anchor: pl.Expr) -> list[pl.Expr]:
    """``start`` and ``end`` of the context sentence around ``anchor``'s first place (see the module)."""
    lowered = context.str.to_lowercase()
    parts = lowered.str.split_exact(anchor, 1)
    at = pl.when(parts.struct.field("field_1").is_not_null()).then(
        parts.struct.field("field_0").str.len_chars().cast(pl.Int64)
    )
    at = pl.when(lowered.str.len_chars() == context.str.len_chars()).then(at)
    reach = pl.min_horizontal(at, pl.lit(EVIDENCE_WINDOW, pl.Int64))
    before = lowered.str.slice(at - reach, reach).str.reverse()
    back = before.str.extract(r"^([^\n]*?)(?:\s[.!?]|\n)", 1).str.len_chars().fill_null(before.str.len_chars())
    after = lowered.str.slice(at, EVIDENCE_WINDOW)
    ahead = pl.coalesce(after.str.extract(r"^([^\n]*?[.!?])(?:\s|$)", 1), after.str.extract(r"^([^\n]*)", 1))
    return [(at - back.cast(pl.Int64)).alias("start"), (at + ahead.str.len_chars().cast(pl.Int64)).alias("end")]
