"""Auditing how a corpus changed between two versions.

The corpus rule: labels come from the source documents, old cases are kept, and a policy change
makes a new case (new id, new source version). So between an old and a new corpus file a removed
case or a case relabelled under the same id is a violation; added cases, new versions of a question
and synthetic cases awaiting review are reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare.core.contract import LABEL_COLUMNS
from rag_compare.core.listing import counted, counts_line
from rag_compare.core.result import Report
from rag_compare.io.corpus import Corpus, load_corpus

__all__ = ["CorpusAudit", "audit_corpora", "question_key"]


def question_key(case_id: pl.Expr) -> pl.Expr:
    """The question key of a case id: everything before its last ``@`` (the whole id if none)."""
    return case_id.str.replace(r"@[^@]*$", "")


@dataclass(frozen=True)
class CorpusAudit(Report):
    """What changed from ``old`` to ``new``, each frame in ``case_id`` order; ``violations`` counts removed
    and relabelled cases."""

    old: Corpus = field(repr=False)
    new: Corpus = field(repr=False)
    added: pl.DataFrame = field(repr=False)
    removed: pl.DataFrame = field(repr=False)
    relabeled: pl.DataFrame = field(repr=False)
    new_versions: pl.DataFrame = field(repr=False)
    unreviewed: pl.DataFrame = field(repr=False)

    def __repr__(self) -> str:
        verdict = counted(self.violations, "violation") if self.violations else "no violations"
        changes = {
            "added": self.added.height,
            "new versions": self.new_versions.height,
            "removed": self.removed.height,
            "relabeled": self.relabeled.get_column("case_id").n_unique(),
            "unreviewed synthetic": self.unreviewed.height,
        }
        return f"<CorpusAudit {self.old.source} → {self.new.source}: {verdict}: {counts_line(changes, ', ')}>"

    @property
    def violations(self) -> int:
        return self.removed.height + self.relabeled.get_column("case_id").n_unique()

    def to_dict(self) -> dict[str, Any]:
        return {
            "old": {"source": self.old.source, "cases": self.old.frame.height, "fingerprint": self.old.fingerprint},
            "new": {"source": self.new.source, "cases": self.new.frame.height, "fingerprint": self.new.fingerprint},
            "violations": self.violations,
            "added": self.added.to_dicts(),
            "removed": self.removed.to_dicts(),
            "relabeled": self.relabeled.to_dicts(),
            "new_versions": self.new_versions.to_dicts(),
            "unreviewed_synthetic": self.unreviewed.to_dicts(),
        }


def audit_corpora(old: str | Path | pl.DataFrame | Corpus, new: str | Path | pl.DataFrame | Corpus) -> CorpusAudit:
    """Compare two versions of a corpus (paths, frames or loaded corpora) under the corpus rule."""
    old_corpus = old if isinstance(old, Corpus) else load_corpus(old)
    new_corpus = new if isinstance(new, Corpus) else load_corpus(new)
    before, after = old_corpus.frame, new_corpus.frame
    added = after.join(before, on="case_id", how="anti")
    new_versions = _new_versions(before, added)
    kinds = added.join(new_versions.select("case_id", "previous_case_ids"), on="case_id", how="left").select(
        "case_id",
        "source_version",
        "question",
        pl.when(pl.col("previous_case_ids").is_null())
        .then(pl.lit("new question"))
        .otherwise(pl.lit("new version"))
        .alias("kind"),
    )
    return CorpusAudit(
        old=old_corpus,
        new=new_corpus,
        added=kinds.sort("case_id"),
        removed=before.join(after, on="case_id", how="anti")
        .select("case_id", "source_version", "question")
        .sort("case_id"),
        relabeled=_relabeled(before, after),
        new_versions=new_versions,
        unreviewed=after.filter(~pl.col("reviewed"))
        .select("case_id", "source_version", "question", "origin")
        .sort("case_id"),
    )


def _as_text(column: str) -> pl.Expr:
    """Label values as comparable text; passage-id lists compare as sets."""
    if column == "required_passage_ids":
        return pl.col(column).list.sort().list.join("; ")
    return pl.col(column).cast(pl.String)


def _relabeled(before: pl.DataFrame, after: pl.DataFrame) -> pl.DataFrame:
    """One row per label field that differs for a case id present in both versions."""
    pairs = before.select("case_id", *(_as_text(c).alias(f"{c}:old") for c in LABEL_COLUMNS)).join(
        after.select("case_id", *(_as_text(c).alias(f"{c}:new") for c in LABEL_COLUMNS)), on="case_id"
    )
    changes = [
        pairs.filter(pl.col(f"{column}:old").ne_missing(pl.col(f"{column}:new"))).select(
            "case_id",
            pl.lit(column).alias("field"),
            pl.col(f"{column}:old").alias("old"),
            pl.col(f"{column}:new").alias("new"),
        )
        for column in LABEL_COLUMNS
    ]
    return pl.concat(changes).sort("case_id", "field")


def _new_versions(before: pl.DataFrame, added: pl.DataFrame) -> pl.DataFrame:
    """Added cases whose question key exists in the old corpus under another source version."""
    previous = (
        before.with_columns(question_key(pl.col("case_id")).alias("question_key"))
        .group_by("question_key")
        .agg(
            pl.col("case_id").sort().str.join(", ").alias("previous_case_ids"),
            pl.col("source_version").unique().sort().alias("previous_versions"),
        )
    )
    return (
        added.with_columns(question_key(pl.col("case_id")).alias("question_key"))
        .join(previous, on="question_key")
        .filter(~pl.col("source_version").is_in(pl.col("previous_versions")))
        .select(
            "question_key",
            "previous_case_ids",
            pl.col("previous_versions").list.join(", "),
            "case_id",
            "source_version",
        )
        .sort("question_key", "case_id")
    )
