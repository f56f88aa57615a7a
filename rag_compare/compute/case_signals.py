"""Computing every case-level signal of one run's records.

``case_signals`` computes every signal of one run's records (retrieval and context metrics, then the
judge's verdicts), nulls where a signal does not apply to the case's label, and nulls everything on a
record whose status is not ``ok``. ``answer_completeness`` (see ``completeness``) needs the passages'
text, so it is null without a passages file. Scores (an LLM judge's or imported ones) replace the
offline judge's verdicts they hold and add the ``SCORE_SIGNALS`` they hold. Each case's language is
chosen once (``LexicalJudge.languages_of``: the judge's own settings, else the offline judge's defaults),
for the judge and answer completeness alike.
"""

from __future__ import annotations

import polars as pl

from rag_compare.compute.completeness import answer_completeness
from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.compute.metrics import context_signals, retrieval_signals
from rag_compare.core.contract import LANGUAGE, record_ok, sample_key
from rag_compare.core.protocols import Judge
from rag_compare.core.signals import JUDGE_COLUMNS, JUDGE_VERDICTS, SCORED_SIGNALS, applies, signals_in

__all__ = [
    "case_signals",
]


def case_signals(
    records: pl.DataFrame,
    judge: Judge,
    *,
    k: int | None = None,
    passages: pl.DataFrame | None = None,
    scores: pl.DataFrame | None = None,
    languages: pl.Series | None = None,
    verdicts: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """``case_id``, every signal of ``SIGNALS`` (and of ``SCORE_SIGNALS`` that ``scores`` hold),
    ``missing_from_context`` (the required passages that did not reach the context sent),
    ``judge_status`` and ``judge_error`` for each record (a new frame, same order).

    ``scores`` (a frame keyed on ``case_id``, and on ``repeat`` too when the records have it) replace
    the judge's verdicts they hold. Without ``passages``, ``answer_completeness`` is null. ``languages``
    (each record's, as ``LexicalJudge.languages_of`` gives them) are chosen here when not given. ``verdicts``:
    the judge's ``JUDGE_VERDICTS`` and ``JUDGE_COLUMNS`` of each record, row for row, when they are known (stored
    with the run): the judge is not asked.
    """
    reader = judge if isinstance(judge, LexicalJudge) else LexicalJudge()
    if languages is None and (isinstance(judge, LexicalJudge) or passages is not None):
        languages = reader.languages_of(records)
    if languages is not None:
        records = records.with_columns(languages.alias(LANGUAGE))
    completeness = (
        pl.repeat(None, records.height, dtype=pl.Float64, eager=True).alias("answer_completeness")
        if passages is None
        else answer_completeness(records, passages, reader.languages)
    )
    verdicts = _verdicts(records, judge, scores, verdicts)
    columns = pl.concat(
        [
            records.select("case_id"),
            retrieval_signals(records, k),
            context_signals(records, passages),
            verdicts,
            completeness.to_frame(),
        ],
        how="horizontal",
    )
    usable = records.select(record_ok()).to_series()
    answerability = records.get_column("answerability")
    signals = signals_in(columns.columns)
    return columns.select(
        "case_id",
        *(
            pl.when(pl.lit(usable) & applies(signal, pl.lit(answerability)))
            .then(pl.col(signal.name))
            .alias(signal.name)
            for signal in signals
        ),
        pl.when(pl.lit(usable)).then(pl.col("missing_from_context")).alias("missing_from_context"),
        *JUDGE_COLUMNS,
    )


def _verdicts(
    records: pl.DataFrame, judge: Judge, scores: pl.DataFrame | None, known: pl.DataFrame | None
) -> pl.DataFrame:
    """The judge's verdicts of each record (``known`` ones, else asked), replaced by those ``scores`` hold, and
    how judging went.

    The judge is not asked at all when ``scores`` hold every one of its verdicts.
    """
    kept = {*SCORED_SIGNALS, *JUDGE_COLUMNS}
    held = [] if scores is None else [name for name in scores.columns if name in kept]
    parts = []
    if not set(JUDGE_VERDICTS) <= set(held):
        judged = judge.judge(records) if known is None else known
        parts.append(judged.select(name for name in judged.columns if name in kept and name not in held))
    if scores is not None:
        key = sample_key(records.columns)
        joined = records.select(key).join(scores.select(*key, *held), on=key, how="left", maintain_order="left")
        parts.append(joined.drop(key))
    verdicts = pl.concat(parts, how="horizontal")
    return verdicts.with_columns(
        pl.lit(None, dtype).alias(name) for name, dtype in JUDGE_COLUMNS.items() if name not in verdicts.columns
    )
