"""The file contracts of DESIGN.md as column specs: each contract column, its kind and Polars type;
and the two readings of contract columns every floor shares: a record that is ok, ids that look alike.

Reading (``io.columns.coerce_columns``) gives each contract column its type from these specs; the
Pandera models of ``io.schemas`` then check the values.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

import polars as pl

__all__ = [
    "ANSWERABILITY",
    "CLAIMS",
    "CLAIM_TYPE",
    "CORPUS_COLUMNS",
    "DTYPES",
    "KNOWLEDGE_BASE",
    "LABEL_COLUMNS",
    "LANGUAGE",
    "LANGUAGE_TAG",
    "ORIGINS",
    "PASSAGE_COLUMNS",
    "RECORD_COLUMNS",
    "REPEAT",
    "STATUSES",
    "STORED_CLAIMS",
    "STORED_SIGNALS",
    "ColumnSpec",
    "Kind",
    "lookalike_key",
    "question_key",
    "record_ok",
    "sample_key",
    "whitespace_folded",
]

Kind = Literal["text", "id", "text_list", "float_list", "bool", "float", "int"]

DTYPES: dict[Kind, pl.DataType] = {
    "text": pl.String(),
    "id": pl.String(),
    "text_list": pl.List(pl.String()),
    "float_list": pl.List(pl.Float64()),
    "bool": pl.Boolean(),
    "float": pl.Float64(),
    "int": pl.Int64(),
}


@dataclass(frozen=True)
class ColumnSpec:
    """A contract column: its name, the kind of values it holds and whether the file must have it."""

    name: str
    kind: Kind
    required: bool = False

    @property
    def dtype(self) -> pl.DataType:
        return DTYPES[self.kind]


ANSWERABILITY = ("answerable", "unanswerable", "conflict")
ORIGINS = ("manual", "synthetic")
STATUSES = ("ok", "failed", "timeout")

CORPUS_COLUMNS = (
    ColumnSpec("case_id", "id", required=True),
    ColumnSpec("question", "text", required=True),
    ColumnSpec("answerability", "id", required=True),
    ColumnSpec("source_version", "id", required=True),
    ColumnSpec("required_passage_ids", "text_list", required=True),
    ColumnSpec("acceptance_note", "text"),
    ColumnSpec("category", "id"),
    ColumnSpec("origin", "id"),
    ColumnSpec("reviewed", "bool"),
    ColumnSpec("language", "id"),
)
LANGUAGE = "language"
"""The optional corpus column that tags each case with the language the offline judge reads it in; a
corpus without it has no such column (its cases' languages are set or detected by the judge)."""
LANGUAGE_TAG = r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*"
"""A BCP 47 language tag as the ``language`` column holds it: ``en``, ``de``, ``pt-BR``, ``zh-Hant``."""

LABEL_COLUMNS = ("question", "answerability", "source_version", "required_passage_ids")
"""The corpus columns that make a case's label: changing one under the same case id is a relabel."""
KNOWLEDGE_BASE = "knowledge_base"
"""The run config key naming the passages file a run retrieved from (a path, as it was given)."""
STORED_SIGNALS = "stored_signals"
"""The frozen run's column (a struct) of each record's signals, computed when it was frozen
(``compute.stored_signals``), and its config's key of what decided them; no record or config has its own."""

PASSAGE_COLUMNS = (
    ColumnSpec("passage_id", "id", required=True),
    ColumnSpec("source_version", "id", required=True),
    ColumnSpec("text", "text", required=True),
)

STORED_CLAIMS = "stored_claims"
"""The frozen run's column of each record's claim verdicts by the offline judge, stored beside its signals
(``compute.stored_signals``) by the same judge; no record has its own."""
CLAIMS = "claims"
"""The column of a scores file (and the field of a run's stored signals) holding each record's claim verdicts."""
CLAIM_TYPE = pl.Struct(
    {
        "text": pl.String,
        "supported": pl.Boolean,
        "passage_id": pl.String,
        "start": pl.Int64,
        "end": pl.Int64,
        "cited": pl.String,
    }
)
"""One claim verdict: the claim, whether the context supported it, and its evidence (see ``compute.claims``)."""
REPEAT = "repeat"
"""The optional record column that numbers a case's samples (0, 1, ...) when it was run several times;
a run without it holds one sample per case."""

RECORD_COLUMNS = (
    ColumnSpec("case_id", "id", required=True),
    ColumnSpec(REPEAT, "int"),
    ColumnSpec("status", "id"),
    ColumnSpec("error", "text"),
    ColumnSpec("retrieved_passage_ids", "text_list"),
    ColumnSpec("retrieved_scores", "float_list"),
    ColumnSpec("context", "text"),
    ColumnSpec("context_passage_ids", "text_list"),
    ColumnSpec("answer", "text"),
    ColumnSpec("latency_ms", "float"),
    ColumnSpec("prompt_tokens", "int"),
    ColumnSpec("completion_tokens", "int"),
)


def sample_key(columns: Collection[str]) -> tuple[str, ...]:
    """The columns that name one record of a frame with ``columns``: ``case_id``, and ``repeat`` when it has one."""
    return ("case_id", REPEAT) if REPEAT in columns else ("case_id",)


def record_ok(status: str = "status") -> pl.Expr:
    """True where a record's ``status`` is ``ok`` (its request succeeded); false where it failed or timed
    out, and where it is null."""
    return pl.col(status).eq("ok").fill_null(False)


def lookalike_key(column: str) -> pl.Expr:
    """``column``'s text as a reader sees it: NFKC-normalised, invisible format characters (zero-width
    spaces and joiners, soft hyphens, byte-order marks, direction marks) removed. Ids that differ but share
    this key look alike."""
    return pl.col(column).str.normalize("NFKC").str.replace_all(r"\p{Cf}", "")


def whitespace_folded(column: str) -> pl.Expr:
    """``column``'s text with every run of whitespace made one space and its ends trimmed."""
    return pl.col(column).cast(pl.String).str.replace_all(r"\s+", " ").str.strip_chars()


def question_key(column: str) -> pl.Expr:
    """``column``'s question as matched against a corpus' questions: whitespace folded, lower case."""
    return whitespace_folded(column).str.to_lowercase()
