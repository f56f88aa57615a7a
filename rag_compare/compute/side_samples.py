"""A slice of one run's records made narrow: per record (sample), its key, status and error, the labels a
comparison carries, a digest of its labels, its signals (retrieval, context, the judge's verdicts), and
notes for the warnings (``SIDE_NOTES``); never its texts. Every engine computes a side this way, a slice at
a time, wherever the slice is (a record batch, a run directory's part, a Ray Data block). The signals are
the ones stored with the run when they are what would be computed (``stored_signals``)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from rag_compare.compute.case_signals import case_signals
from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.core.contract import LABEL_COLUMNS, LANGUAGE, STORED_SIGNALS, record_ok, sample_key
from rag_compare.core.errors import ScoresError
from rag_compare.core.protocols import Judge
from rag_compare.core.signals import JUDGE_COLUMNS, JUDGE_VERDICTS, signals_in
from rag_compare.io.corpus import unreviewed_where
from rag_compare.io.scores import Scores

__all__ = [
    "CASE_LABELS",
    "DRIFTED",
    "LABEL_DIGEST",
    "NARROW_LABELS",
    "REQUIRED",
    "SIDE_COLUMNS",
    "SIDE_NOTES",
    "UNKNOWN",
    "UNREAD",
    "UNREVIEWED",
    "read_columns",
    "side_samples",
]

NARROW_LABELS = ("answerability", "category")
"""The labels a comparison's cases carry: the ones statuses, aggregates and breakdowns need (the others are
``case_texts.TEXT_LABELS``)."""
UNREVIEWED = "unreviewed"
"""Whether a record's case is an unreviewed synthetic draft (``io.corpus.unreviewed_where``): a run leaves such
cases out by design, so a side without one is not missing it (see ``bucket_join``)."""
LABEL_DIGEST = "label_digest"
"""A hash of a record's labels, to find labels that differ between the runs."""
CASE_LABELS = ("question", "answerability", "source_version", "required_passage_ids", "category", "acceptance_note")
REVIEW_LABELS = ("origin", "reviewed")
"""The labels that say whether a case is gold yet (see ``UNREVIEWED``)."""
SIDE_COLUMNS = ("status", "error")
"""A side's record columns a comparison's cases carry (the others are ``case_texts.SIDE_TEXTS``)."""
DRIFTED = "_drifted"
"""Note: the record's labels differ from the corpus' (with a corpus)."""
UNKNOWN = "_unknown"
"""Note: the corpus lacks the record's case (with a corpus)."""
UNREAD = "_unread"
"""Note: the language tag of an ok record the offline judge has no rules for, else null (when it judges)."""
REQUIRED = "_required"
"""Note: the record's required passages (when checked against the passages)."""
SIDE_NOTES = (DRIFTED, UNKNOWN, UNREAD, REQUIRED)
"""The note columns a side's samples may have, read for the warnings and dropped before the join."""


def side_samples(
    records: pl.DataFrame,
    judge: Judge,
    scores: Scores | None,
    *,
    labels: pl.DataFrame | None,
    passages: pl.DataFrame | None,
    k: int | None,
    stored: bool = False,
    stored_verdicts: bool = False,
) -> pl.DataFrame:
    """``records`` (a slice of a run's) made narrow: judged by ``judge`` (its verdicts replaced by those of
    ``scores`` where it has them), relabelled by the corpus' ``labels``, context checked against
    ``passages``, ranked lists cut at ``k``; with ``stored``, its signals are the ones stored with it (which
    ``stored_signals.reads_stored`` found to be these), and it need hold only ``read_columns``; with
    ``stored_verdicts``, the judge's verdicts and languages are the stored ones (``reads_stored_verdicts``), the
    other signals computed. Raises ``ScoresError`` for a verdict that is not a finite number."""
    notes: list[pl.Expr] = []
    if labels is not None:
        drifted = _drifted(records, labels)
        notes += [
            pl.col("case_id").is_in(pl.Series(drifted, dtype=pl.String).implode()).alias(DRIFTED),
            ~pl.col("case_id").is_in(labels.get_column("case_id").implode()).alias(UNKNOWN),
        ]
        records = _relabel(records, labels)
    frozen = records.get_column(STORED_SIGNALS).struct.unnest() if stored or stored_verdicts else None
    languages = None if frozen is None else frozen.get_column(LANGUAGE)
    if isinstance(judge, LexicalJudge):
        if languages is None:
            languages = judge.languages_of(records)
        if scores is None or not set(JUDGE_VERDICTS) <= set(scores.frame.columns):
            known = pl.Series([language.code for language in judge.languages], dtype=pl.String).implode()
            tag = pl.lit(languages)
            notes.append(pl.when(record_ok() & ~tag.is_in(known)).then(tag).alias(UNREAD))
    scored = None if scores is None else scores.frame
    if stored and frozen is not None:
        signals = pl.concat([records.select("case_id"), frozen.drop(LANGUAGE)], how="horizontal")
    else:
        verdicts = None if frozen is None else frozen.select(*JUDGE_VERDICTS, *JUDGE_COLUMNS)
        signals = case_signals(
            records, judge, k=k, passages=passages, scores=scored, languages=languages, verdicts=verdicts
        )
    _check_finite(signals, judge, scores)
    if passages is not None:
        copied = pl.element().cast(pl.Categorical).cast(pl.String)  # see _detached
        notes.append(pl.col("required_passage_ids").list.eval(copied).alias(REQUIRED))
    narrow = records.select(
        *sample_key(records.columns), *SIDE_COLUMNS, *NARROW_LABELS, _unreviewed(records), _label_digest(), *notes
    )
    return pl.concat([_detached(narrow), signals.drop("case_id")], how="horizontal")


def read_columns(columns: Sequence[str]) -> list[str]:
    """Of a run's record ``columns``, the ones ``side_samples`` reads when its signals are stored."""
    wanted = {*sample_key(columns), *SIDE_COLUMNS, *CASE_LABELS, *REVIEW_LABELS, LANGUAGE, STORED_SIGNALS}
    return [name for name in columns if name in wanted]


def _detached(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its text columns but ``case_id`` copied: a text column taken from a run file's records
    may hold on to the buffers of every text of its record batch (hundreds of MB a slice), which the copy lets
    go (the ids, unique, would cost the most to copy, and held nothing in the measurements)."""
    return frame.with_columns(pl.col(pl.String).exclude("case_id").cast(pl.Categorical).cast(pl.String))


def _unreviewed(records: pl.DataFrame) -> pl.Expr:
    """``UNREVIEWED`` of each of ``records``, by its own labels (false for a run frozen without them)."""
    if not set(REVIEW_LABELS) <= set(records.columns):
        return pl.lit(False).alias(UNREVIEWED)
    return unreviewed_where().alias(UNREVIEWED)


def _label_digest() -> pl.Expr:
    """A hash of a record's labels that two runs may hold differently: equal digests, equal labels (within
    one version of Polars). A passage list counts as a set, by the sum of its distinct ids' hashes (32 bits
    each: no overflow), ten times quicker than sorting the lists."""
    ids = pl.col("required_passage_ids").list.eval(pl.element().unique().hash() % 2**32).list.sum()
    others = (name for name in LABEL_COLUMNS if name != "required_passage_ids")
    return pl.struct(*others, ids).hash().alias(LABEL_DIGEST)


def _check_finite(signals: pl.DataFrame, judge: Judge, scores: Scores | None) -> None:
    """Refuse a verdict that is not a finite number (NaN, an infinity): a score lies in [0, 1]."""
    for signal in (signal for signal in signals_in(signals.columns) if not signal.flag):
        value = pl.col(signal.name).cast(pl.Float64)
        bad = signals.filter(value.is_not_null() & ~value.is_finite())
        if not bad.height:
            continue
        source = f"judge '{judge.name}'"
        if scores is not None and signal.name in scores.frame.columns:
            source = str(scores.path or "the scores")
        case_id, first = bad.row(0)[0], bad.item(0, signal.name)
        others = f" (and {bad.height - 1} more cases)" if bad.height > 1 else ""
        raise ScoresError(
            f"{source}: the {signal.name} of {case_id} is {first!r}, not a finite number{others}; "
            "a score is a number from 0 to 1. Make the scores again."
        )


def _relabel(records: pl.DataFrame, labels: pl.DataFrame) -> pl.DataFrame:
    """The records with the corpus' labels (and ``language``, when it has one) where the corpus has the
    case (a new frame)."""
    names = [*CASE_LABELS, *([LANGUAGE] if LANGUAGE in labels.columns else [])]
    corpus = labels.select("case_id", *(pl.col(name).alias(f"corpus_{name}") for name in names))
    joined = records.join(corpus, on="case_id", how="left", maintain_order="left")
    return joined.with_columns(
        pl.coalesce(f"corpus_{name}", *([name] if name in records.columns else [])).alias(name) for name in names
    ).drop(f"corpus_{name}" for name in names)


def _drifted(left: pl.DataFrame, right: pl.DataFrame) -> list[str]:
    """Case ids present in both frames whose labels differ (passage lists compare as sets)."""
    ids = "required_passage_ids"
    joined = left.select("case_id", *LABEL_COLUMNS).join(
        right.select("case_id", *LABEL_COLUMNS), on="case_id", how="inner", suffix="_other"
    )
    differs = pl.any_horizontal(
        *(pl.col(name).ne_missing(pl.col(f"{name}_other")) for name in LABEL_COLUMNS if name != ids),
        pl.col(ids).list.set_symmetric_difference(pl.col(f"{ids}_other")).list.len() > 0,
    )
    return joined.filter(differs).get_column("case_id").unique().sort().to_list()
