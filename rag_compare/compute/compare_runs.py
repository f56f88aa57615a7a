"""``compare``: two frozen runs compared case by case into a ``Comparison`` (see ``comparison``), one
status per case with the reasons behind it.

Cases are joined with a full outer join on ``case_id`` (with a corpus, its cases that neither run has
join too). A case's status is decided in this order: missing on a side, failed on a side, then how its
judging failed on a side (its scores say ``judge_failed``), then how its status signals moved beyond
the tolerance (``improved``, ``regressed``, ``mixed``, ``unchanged``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare.compute.aggregates import aggregate_signals, breakdown_signals
from rag_compare.compute.case_signals import case_signals
from rag_compare.compute.comparison import CASE_STATUSES, SIDES, ComparedRun, Comparison
from rag_compare.compute.configdiff import config_diff, config_warnings
from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.core.contract import LABEL_COLUMNS, record_ok
from rag_compare.core.errors import CompareError, ScoresError
from rag_compare.core.listing import counted, truncated
from rag_compare.core.protocols import K_EXPECTED, Judge, is_k
from rag_compare.core.rows import row_index, spread_by_row
from rag_compare.core.signals import JUDGE_FAILED, Signal, judge_failed, signals_in
from rag_compare.io.corpus import Corpus, load_corpus
from rag_compare.io.passages import load_passages
from rag_compare.io.runs import Run, load_run
from rag_compare.io.scores import Scores, evaluator_label, evaluator_summary, load_scores

__all__ = ["compare"]

DEFAULT_TOLERANCE = 1e-9
CASE_LABELS = ("question", "answerability", "source_version", "required_passage_ids", "category", "acceptance_note")
SIDE_COLUMNS = ("status", "error", "retrieved_passage_ids", "context_passage_ids", "answer")
_MAX_ERROR_CHARS = 200
_REASON_DECIMALS = range(3, 16)
"""Decimals a reason may round its two numbers to: the fewest of these at which they differ."""


def compare(
    baseline: Run | str | Path,
    candidate: Run | str | Path,
    corpus: Corpus | str | Path | pl.DataFrame | None = None,
    *,
    passages: str | Path | pl.DataFrame | None = None,
    k: int | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    judge: Judge | None = None,
    baseline_scores: Scores | str | Path | None = None,
    candidate_scores: Scores | str | Path | None = None,
) -> Comparison:
    """Compare ``candidate`` with ``baseline`` (runs or run file paths), case by case.

    With ``corpus``, its labels judge both runs and its cases that neither run has are
    ``missing_in_both``; without it, each run is judged by its own frozen labels. ``passages`` (the
    knowledge base) lets records without ``context_passage_ids`` be checked by finding passage text in
    the context. ``k`` cuts both ranked lists (default: each run's ``top_k``, else the list's length).
    A signal counts as changed when it moves by more than ``tolerance``. ``judge`` defaults to the
    offline ``LexicalJudge``. ``baseline_scores``/``candidate_scores`` (scores files of those runs,
    see ``score_run`` and ``import_scores``) replace its verdicts with theirs. Raises ``CompareError``
    when a run lists a case twice or ``k`` is unusable or ``tolerance`` is not a finite number of 0 or
    more, ``ScoresError`` for scores of another run or a verdict that is not a finite number.
    """
    if k is not None and not is_k(k):
        raise CompareError(f"k must be {K_EXPECTED}, got {k!r}.")
    if not math.isfinite(tolerance) or tolerance < 0:
        raise CompareError(f"tolerance must be a finite number of 0 or more, got {tolerance!r}.")
    judge = LexicalJudge() if judge is None else judge
    labels = None
    if corpus is not None:
        labels = (corpus if isinstance(corpus, Corpus) else load_corpus(corpus)).frame
    knowledge_base = None if passages is None else load_passages(passages)
    runs, frames, label_warnings, evaluators = _both_sides(
        (baseline, candidate), (baseline_scores, candidate_scores), judge, labels=labels, passages=knowledge_base, k=k
    )
    diff = config_diff(runs[0].config, runs[1].config)
    warnings = config_warnings(diff) + _evaluator_warnings(evaluators) + label_warnings
    warnings += _side_warnings(frames, labels, knowledge_base)
    sides = [_prefixed(side, frame) for side, frame in zip(SIDES, frames, strict=True)]
    joined = _with_both_sides(_join(sides, labels))
    signals = signals_in(joined.columns, prefix="baseline_")
    cases = _with_reasons(joined.with_columns(_status(signals, tolerance)), signals, tolerance)
    return Comparison(
        baseline=runs[0],
        candidate=runs[1],
        evaluator={"name": judge.name, "fingerprint": judge.fingerprint, "scores": evaluators},
        config_diff=tuple(diff),
        warnings=tuple(warnings),
        cases=cases.select(
            "case_id", "status", "reasons", *CASE_LABELS, pl.exclude("case_id", "status", "reasons", *CASE_LABELS)
        ),
        aggregates=aggregate_signals(cases, signals),
        breakdowns=breakdown_signals(cases, signals),
        tolerance=tolerance,
    )


def _both_sides(
    sources: tuple[Run | str | Path, Run | str | Path],
    scores_sources: tuple[Scores | str | Path | None, Scores | str | Path | None],
    judge: Judge,
    *,
    labels: pl.DataFrame | None,
    passages: pl.DataFrame | None,
    k: int | None,
) -> tuple[list[ComparedRun], list[pl.DataFrame], list[str], dict[str, dict[str, Any] | None]]:
    """Each side's run, case frame and label warnings (baseline first), and the evaluator of its scores."""
    runs, frames, label_warnings, evaluators = [], [], [], {}
    for side, source, scores_source in zip(SIDES, sources, scores_sources, strict=True):
        scores = None if scores_source is None else _loaded_scores(scores_source)
        run, frame, found = _side_frame(source, judge, scores, labels=labels, passages=passages, k=k)
        runs.append(run)
        frames.append(frame)
        label_warnings += found
        evaluators[side] = None if scores is None else evaluator_summary(scores)
    return runs, frames, label_warnings, evaluators


def _side_warnings(
    frames: list[pl.DataFrame], labels: pl.DataFrame | None, knowledge_base: pl.DataFrame | None
) -> list[str]:
    """Labels that differ between the runs (without a corpus), and required passages ``passages`` lacks."""
    warnings = []
    if labels is None:
        drifted = _drifted(*frames)
        if drifted:
            warnings.append(f"the two runs hold different labels for {_n_cases(drifted)}: compare with `corpus`.")
    if knowledge_base is not None:
        warnings += _unknown_passage_warning(frames, knowledge_base)
    return warnings


def _side_frame(
    source: Run | str | Path,
    judge: Judge,
    scores: Scores | None,
    *,
    labels: pl.DataFrame | None,
    passages: pl.DataFrame | None,
    k: int | None,
) -> tuple[ComparedRun, pl.DataFrame, list[str]]:
    """One run's case frame (its records' columns that a comparison shows, its labels and signals).

    A run read from a path is let go on return: the two runs are never both held, texts and all.
    """
    run = source if isinstance(source, Run) else load_run(source)
    _check_unique(run)
    if scores is not None:
        scores.check_scored(run)
    warnings = []
    records = run.records
    if labels is not None:
        warnings = _corpus_label_warnings(run, labels)
        records = _relabel(records, labels)
    run_k = _k_of(run, k)
    signals = case_signals(records, judge, k=run_k, passages=passages, scores=None if scores is None else scores.frame)
    _check_finite(signals, judge, scores)
    frame = pl.concat(
        [signals.select("case_id"), records.select(*SIDE_COLUMNS, *CASE_LABELS), signals.drop("case_id")],
        how="horizontal",
    )
    return ComparedRun.of(run, k=run_k), frame, warnings


def _check_unique(run: Run) -> None:
    repeated = run.records.filter(pl.col("case_id").is_duplicated()).get_column("case_id").unique().sort()
    if repeated.len():
        raise CompareError(
            f"{run.path or run.name}: these case ids appear more than once: {truncated(repeated)}. "
            "A run holds one record per case; freeze it again from records with unique case ids."
        )


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


def _k_of(run: Run, k: int | None) -> int | None:
    """``k`` when given, else the run's ``top_k``, else ``None`` (each list's own length)."""
    if k is not None:
        return k
    top_k: object = run.config.get("top_k")
    if top_k is None:
        return None
    if not is_k(top_k):
        raise CompareError(
            f"run '{run.name}': its config's top_k is {top_k!r}, not {K_EXPECTED}. "
            "Pass `k` to choose the cut-off for both runs."
        )
    return top_k


def _relabel(records: pl.DataFrame, labels: pl.DataFrame) -> pl.DataFrame:
    """The records with the corpus' labels where the corpus has the case (a new frame)."""
    corpus = labels.select("case_id", *(pl.col(name).alias(f"corpus_{name}") for name in CASE_LABELS))
    joined = records.join(corpus, on="case_id", how="left", maintain_order="left")
    return joined.with_columns(pl.coalesce(f"corpus_{name}", name).alias(name) for name in CASE_LABELS).drop(
        f"corpus_{name}" for name in CASE_LABELS
    )


def _corpus_label_warnings(run: Run, labels: pl.DataFrame) -> list[str]:
    """Label drift against the corpus, and cases the corpus lacks."""
    warnings = []
    drifted = _drifted(run.records, labels)
    if drifted:
        warnings.append(f"run '{run.name}' was frozen with other labels than `corpus` for {_n_cases(drifted)}.")
    unknown = run.records.join(labels, on="case_id", how="anti").get_column("case_id").sort().to_list()
    if unknown:
        warnings.append(
            f"run '{run.name}' has cases that `corpus` lacks: {truncated(unknown)}; they keep their frozen labels."
        )
    return warnings


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
    return joined.filter(differs).get_column("case_id").sort().to_list()


def _unknown_passage_warning(frames: list[pl.DataFrame], knowledge_base: pl.DataFrame) -> list[str]:
    required = pl.concat([frame.select("required_passage_ids") for frame in frames]).explode("required_passage_ids")
    unknown = (
        required.drop_nulls()
        .unique()
        .join(knowledge_base, left_on="required_passage_ids", right_on="passage_id", how="anti")
        .get_column("required_passage_ids")
        .sort()
        .to_list()
    )
    if not unknown:
        return []
    return [
        f"`passages` lacks {len(unknown)} required passages ({truncated(unknown)}); where a record has no "
        "context_passage_ids, they count as absent from its context."
    ]


def _prefixed(side: str, frame: pl.DataFrame) -> pl.DataFrame:
    return frame.rename({name: f"{side}_{name}" for name in frame.columns if name != "case_id"})


def _join(sides: list[pl.DataFrame], labels: pl.DataFrame | None) -> pl.DataFrame:
    """Every case id of either run (and of the corpus), in order, with both sides and one set of labels."""
    id_frames = [side.select("case_id") for side in sides]
    if labels is not None:
        id_frames.append(labels.select("case_id"))
    cases = pl.concat(id_frames).unique().sort("case_id")
    if labels is not None:
        cases = cases.join(labels.select("case_id", *CASE_LABELS), on="case_id", how="left", maintain_order="left")
    for side in sides:
        cases = cases.join(side, on="case_id", how="left", maintain_order="left")
    return cases.with_columns(
        pl.coalesce(*([name] if labels is not None else []), f"candidate_{name}", f"baseline_{name}").alias(name)
        for name in CASE_LABELS
    ).drop(f"{side}_{name}" for side in SIDES for name in CASE_LABELS)


def _with_both_sides(cases: pl.DataFrame) -> pl.DataFrame:
    """``cases`` with every score signal that one side has, as nulls on the side without it."""
    names = {signal.name for side in SIDES for signal in signals_in(cases.columns, prefix=f"{side}_")}
    return cases.with_columns(
        pl.lit(None, pl.Float64).alias(f"{side}_{name}")
        for side in SIDES
        for name in sorted(names)
        if f"{side}_{name}" not in cases.columns
    )


def _loaded_scores(source: Scores | str | Path) -> Scores:
    return source if isinstance(source, Scores) else load_scores(source)


def _evaluator_warnings(evaluators: dict[str, dict[str, Any] | None]) -> list[str]:
    """A warning when the two sides' verdicts come from different evaluators."""
    fingerprints = {side: (evaluators[side] or {}).get("fingerprint") for side in SIDES}
    if fingerprints["baseline"] == fingerprints["candidate"]:
        return []
    baseline, candidate = (evaluator_label(evaluators[side]) for side in SIDES)
    return [
        f"the two sides were judged by different evaluators (baseline: {baseline}, candidate: {candidate}): "
        "their verdicts can differ where the answers did not. Score both runs with the same judge."
    ]


def _moved(signal: Signal, tolerance: float) -> tuple[pl.Expr, pl.Expr]:
    """Whether the candidate's value is better, and whether worse, than the baseline's (false if either is null)."""
    baseline, candidate = (pl.col(f"{side}_{signal.name}").cast(pl.Float64) for side in SIDES)
    up, down = (candidate - baseline > tolerance).fill_null(False), (baseline - candidate > tolerance).fill_null(False)
    return (up, down) if signal.higher_is_better else (down, up)


def _status(signals: tuple[Signal, ...], tolerance: float) -> pl.Expr:
    """Each case's status: the first of the module's rules that holds, else ``unchanged``."""
    sided = {
        "missing": {side: pl.col(f"{side}_status").is_null() for side in SIDES},
        "failed": {side: ~record_ok(f"{side}_status") for side in SIDES},
        "judge_failed": {side: judge_failed(side) for side in SIDES},
    }
    moves = [_moved(signal, tolerance) for signal in signals if signal.decides_status]
    better, worse = pl.any_horizontal(up for up, _ in moves), pl.any_horizontal(down for _, down in moves)
    rules = [
        rule
        for outcome, on in sided.items()
        for rule in (
            (on["baseline"] & on["candidate"], f"{outcome}_in_both"),
            (on["baseline"], f"{outcome}_in_baseline"),
            (on["candidate"], f"{outcome}_in_candidate"),
        )
    ]
    rules += [(better & worse, "mixed"), (better, "improved"), (worse, "regressed")]
    status = pl.coalesce(*(pl.when(where).then(pl.lit(name)) for where, name in rules), pl.lit("unchanged"))
    return status.cast(pl.Enum(CASE_STATUSES)).alias("status")


def _with_reasons(cases: pl.DataFrame, signals: tuple[Signal, ...], tolerance: float) -> pl.DataFrame:
    """``cases`` with ``reasons``: a side missing or failed, its judging failed, then each status signal
    that moved.

    Reasons are made only where they apply (a side without an ok record, a signal that moved), as one
    long frame of (row, order, reason), then gathered per case.
    """
    parts = []
    for order, side in enumerate(SIDES):
        status, error = pl.col(f"{side}_status"), pl.col(f"{side}_error")
        reason = (
            pl.when(status.is_null())
            .then(pl.lit(f"no record in the {side} run"))
            .otherwise(
                pl.format(
                    f"{side} {{}}: {{}}", status, error.fill_null("no error recorded").str.slice(0, _MAX_ERROR_CHARS)
                )
            )
        )
        parts.append(_reason_rows(cases, order, ~record_ok(f"{side}_status"), reason))
    for order, side in enumerate(SIDES, start=len(SIDES)):
        error = pl.col(f"{side}_judge_error").fill_null("no error recorded").str.slice(0, _MAX_ERROR_CHARS)
        reason = pl.format(f"{side} {JUDGE_FAILED}: {{}}", error)
        parts.append(_reason_rows(cases, order, record_ok(f"{side}_status") & judge_failed(side), reason))
    status_signals = [signal for signal in signals if signal.decides_status]
    for order, signal in enumerate(status_signals, start=2 * len(SIDES)):
        better, worse = _moved(signal, tolerance)
        direction = pl.when(better).then(pl.lit("better")).otherwise(pl.lit("worse"))
        reason = pl.format(f"{signal.name} {{}} -> {{}} ({{}})", *_shown(signal), direction)
        parts.append(_reason_rows(cases, order, better | worse, reason))
    by_row = pl.concat(parts).sort("row", "order").group_by("row", maintain_order=True).agg("reason")
    reasons = spread_by_row(cases.height, by_row, "reason")
    return cases.with_columns(reasons.fill_null(pl.lit([], dtype=pl.List(pl.String))).alias("reasons"))


def _reason_rows(cases: pl.DataFrame, order: int, where: pl.Expr, reason: pl.Expr) -> pl.DataFrame:
    """``row``, ``order`` and ``reason`` for the rows of ``cases`` where ``where`` holds."""
    return (
        cases.lazy()
        .with_columns(row_index())
        .filter(where)
        .select("row", pl.lit(order, dtype=pl.UInt8).alias("order"), reason.alias("reason"))
        .collect()
    )


def _shown(signal: Signal) -> list[pl.Expr]:
    """The two values of ``signal`` as a reason shows them: ``true``/``false``; or numbers rounded to the
    fewest of ``_REASON_DECIMALS`` (3 at least) at which they differ, else in full, without trailing zeros
    (a whole number has no decimals)."""
    values = [pl.col(f"{side}_{signal.name}") for side in SIDES]
    if signal.flag:
        return [pl.when(value).then(pl.lit("true")).otherwise(pl.lit("false")) for value in values]
    numbers = [value.cast(pl.Float64) for value in values]
    decimals = pl.coalesce(
        pl.when(numbers[0].round(places) != numbers[1].round(places)).then(pl.lit(places))
        for places in _REASON_DECIMALS
    )
    return [_rounded(number, decimals).cast(pl.String).str.strip_suffix(".0") for number in numbers]


def _rounded(number: pl.Expr, decimals: pl.Expr) -> pl.Expr:
    """``number`` rounded to ``decimals`` places where that is set, else as it is."""
    return pl.coalesce(*(pl.when(decimals == places).then(number.round(places)) for places in _REASON_DECIMALS), number)


def _n_cases(ids: list[str]) -> str:
    """``N cases (first ids … and M more)``."""
    return f"{counted(len(ids), 'case')} ({truncated(ids)})"
