"""What a reader sees of a comparison's cases: a summary per case for a list, and one case's details.

``case_summaries`` gives, for rows of ``Comparison.cases``, each case's status, reasons, labels, question
and the delta of every signal (``candidate - baseline``, flags as 0/1, null where either side has none;
with a pairs file, ``preferred`` as +1 for the candidate, -1 for the baseline, 0 for a tie). ``case_details``
adds the case's acceptance note and required passages, and per side what the run did: each retrieved
passage with its rank, score and text, whether it is required and whether it reached the context; the
context as sent, cut where the required passages are (``context_marks``); the answer, the latency and the
tokens; a failure's error and stage; its claim verdicts (``claims``, null where not available). The answers
are compared word by word (``word_diff``), and their claims paired (``claim_changes``). Every key is
always there, null when unknown; the values are plain JSON (non-finite numbers are null). The objects are
those of the review page and its API; the README's section on ``rag-compare review`` shows them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from rag_compare.compute.case_status import SIDES
from rag_compare.compute.case_texts import DETAIL_TEXTS, TextColumns, passage_texts
from rag_compare.compute.context_marks import context_segments
from rag_compare.compute.word_diff import MAX_DIFF_WORDS, word_diff
from rag_compare.core.contract import LANGUAGE
from rag_compare.core.errors import CompareError

if TYPE_CHECKING:
    from rag_compare.compute.comparison import Comparison

__all__ = ["MAX_DIFF_WORDS", "PREFERENCE_DELTAS", "SUMMARY_TEXTS", "case_details", "case_summaries"]

SUMMARY_TEXTS = TextColumns(("question", LANGUAGE), ())
"""The texts a summary shows: the question and the language."""
PREFERENCE_DELTAS = {"candidate": 1.0, "baseline": -1.0, "tie": 0.0}
"""A pairwise verdict as a delta; an inconsistent, failed or missing one is null."""
_SIDE_RECORD = ("latency_ms", "prompt_tokens", "completion_tokens")


def case_summaries(comparison: Comparison, cases: pl.DataFrame, texts: pl.DataFrame | None) -> list[dict[str, Any]]:
    """One summary per row of ``cases`` (rows of ``comparison.cases``, in their order; see the module).
    ``texts`` has the cases' ``question`` and ``language`` by ``case_id`` (a frame of
    ``comparison.texts.of``, say); ``None``: those of ``cases`` when it has both columns, else read from
    the runs."""
    ids = cases.get_column("case_id")
    if texts is None:
        has_texts = set(SUMMARY_TEXTS.labels) <= set(cases.columns)
        texts = cases if has_texts else comparison.texts.of(ids, SUMMARY_TEXTS)
    held = [name for name in SUMMARY_TEXTS.labels if name in texts.columns]
    shown = cases.select("case_id").join(
        texts.select("case_id", *held).unique("case_id", keep="first"), on="case_id", how="left", maintain_order="left"
    )
    summaries = pl.concat(
        [
            cases.select(
                "case_id",
                pl.col("status").cast(pl.String),
                pl.col("stage").cast(pl.String),
                "reasons",
                pl.col("reason_stages").cast(pl.List(pl.String)),
                "category",
                "answerability",
                _deltas(comparison, cases.columns).alias("deltas"),
            ),
            shown.select(
                pl.col(name) if name in held else pl.lit(None, pl.String).alias(name) for name in SUMMARY_TEXTS.labels
            ),
        ],
        how="horizontal",
    )
    order = (
        "case_id",
        "status",
        "stage",
        "reasons",
        "reason_stages",
        "category",
        "answerability",
        LANGUAGE,
        "question",
        "deltas",
    )
    return [{name: _plain(row[name]) for name in order} for row in summaries.iter_rows(named=True)]


def _deltas(comparison: Comparison, columns: Sequence[str]) -> pl.Expr:
    """A struct of each signal's delta (see the module), and ``preferred``'s when ``columns`` have it."""
    deltas = [
        (
            pl.col(f"candidate_{signal.name}").cast(pl.Float64) - pl.col(f"baseline_{signal.name}").cast(pl.Float64)
        ).alias(signal.name)
        for signal in comparison.signals
    ]
    if "preferred" in columns:
        deltas.append(
            pl.col("preferred").cast(pl.String).replace_strict(PREFERENCE_DELTAS, default=None, return_dtype=pl.Float64)
        )
    return pl.struct(deltas)


def case_details(comparison: Comparison, case_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The details of each case of ``case_ids``, in that order (see the module); the texts are read from the
    runs once for them all. Raises ``CompareError`` for an id the comparison has no case of, and when a run
    file has changed since it was compared."""
    wanted = pl.Series("case_id", list(case_ids), dtype=pl.String)
    found = comparison.scan_cases().filter(pl.col("case_id").is_in(wanted.unique().implode())).collect()
    unknown = wanted.filter(~wanted.is_in(found.get_column("case_id").implode())).unique(maintain_order=True)
    if unknown.len():
        shown = ", ".join(repr(case_id) for case_id in unknown.head(5).to_list())
        raise CompareError(
            f"`case_ids`: this comparison has no case {shown}{' and more' if unknown.len() > 5 else ''}; "
            "pass ids of `comparison.cases`."
        )
    cases = wanted.to_frame().join(found, on="case_id", how="left", maintain_order="left")
    texts = comparison.texts.of(wanted, DETAIL_TEXTS | comparison.claim_changes.columns)
    retrieved = ["required_passage_ids", *(f"{side}_retrieved_passage_ids" for side in SIDES)]
    passages = passage_texts(comparison.passages, texts, retrieved)
    in_context = passage_texts(comparison.passages, texts, [f"{side}_context_passage_ids" for side in SIDES])
    claimed_rows = comparison.claim_changes.of(texts, None if comparison.passages is None else in_context)
    claims = claimed_rows.iter_rows(named=True)
    details = []
    for summary, case, text, claimed in zip(
        case_summaries(comparison, cases, texts),
        cases.iter_rows(named=True),
        texts.iter_rows(named=True),
        claims,
        strict=True,
    ):
        sides = {side: _side(side, case, text, comparison, passages) for side in SIDES}
        for side in SIDES:
            sides[side]["claims"] = claimed[f"{side}_claims"]
        answers = [sides[side]["answer"] for side in SIDES]
        details.append(
            summary
            | {
                "acceptance_note": text["acceptance_note"],
                "source_version": text["source_version"],
                "required_passage_ids": text["required_passage_ids"],
                "sides": sides,
                "answer_diff": _diff(answers[0], answers[1]),
                "claim_changes": claimed["claim_changes"],
            }
        )
    return [_plain(detail) for detail in details]


def _side(
    side: str, case: Mapping[str, Any], text: Mapping[str, Any], comparison: Comparison, passages: Mapping[str, str]
) -> dict[str, Any]:
    """One side of a case's details (see the module); ``present`` false, every other value null or empty,
    where the side has no record."""
    present = case[f"{side}_status"] is not None
    value = (lambda name: text[f"{side}_{name}"]) if present else (lambda name: None)
    required = text["required_passage_ids"] or []
    context = value("context")
    return {
        "present": present,
        "status": case[f"{side}_status"],
        "error": case[f"{side}_error"],
        "failed_stage": value("failed_stage"),
        "signals": {signal.name: case[f"{side}_{signal.name}"] for signal in comparison.signals},
        "passages": _passages(value, required, context, passages) if present else [],
        "context": context,
        "context_segments": context_segments(
            context, {passage_id: passages.get(passage_id) for passage_id in required}
        ),
        "missing_from_context": case[f"{side}_missing_from_context"],
        "answer": value("answer"),
        **{name: value(name) for name in _SIDE_RECORD},
    }


def _passages(
    value: Any, required: Sequence[str], context: str | None, passages: Mapping[str, str]
) -> list[dict[str, Any]]:
    """The side's retrieved passages as ranked, each with its score, text, and whether it is required and
    reached the context (its id among the context's passage ids when the record lists them, else its text
    found in the context, else unknown)."""
    retrieved = value("retrieved_passage_ids") or []
    scores = value("retrieved_scores") or []
    in_context_ids = value("context_passage_ids")
    listed = []
    for rank, passage_id in enumerate(retrieved, start=1):
        text = passages.get(passage_id)
        if in_context_ids is not None:
            in_context: bool | None = passage_id in in_context_ids
        else:
            in_context = None if context is None or text is None else text in context
        listed.append(
            {
                "rank": rank,
                "passage_id": passage_id,
                "score": scores[rank - 1] if rank <= len(scores) else None,
                "text": text,
                "gold": passage_id in required,
                "in_context": in_context,
            }
        )
    return listed


def _diff(before: str | None, after: str | None) -> list[list[str]] | None:
    pieces = word_diff(before, after)
    return None if pieces is None else [[operation, text] for operation, text in pieces]


def _plain(value: Any) -> Any:
    """``value`` as plain JSON: non-finite numbers null, tuples lists, mappings dicts."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value
