"""``compare``: two frozen runs compared case by case into a ``Comparison`` (see ``comparison``), one
status per case with the reasons behind it.

Each side's signals are computed per record first, a slice of records at a time (a run file is read a
record batch at a time): what a slice keeps is narrow, its records' status and error, the labels statuses
and breakdowns need, and its signals, never its texts. A side with repeats is then reduced to one row per
case (``repeats``). The narrow sides are joined with a full outer join on ``case_id`` (with a corpus, its
cases that neither run has join too), with a pairwise judge's verdict on each when given
(``preference``), and ``case_status`` gives each its status and reasons. The texts (questions, answers,
passage lists) are read back by case id for the cases a report lists (``case_texts``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from rag_compare.compute.aggregates import aggregate_signals, breakdown_signals
from rag_compare.compute.case_signals import case_signals
from rag_compare.compute.case_status import SIDES, case_status, with_reasons
from rag_compare.compute.case_texts import TEXT_LABELS, CaseTexts, RunFile
from rag_compare.compute.comparison import ComparedRun, Comparison
from rag_compare.compute.configdiff import config_diff, config_warnings
from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.compute.preference import preference_columns, preference_of
from rag_compare.compute.repeats import (
    FLAKY_SCHEMA,
    REDUCED_SUFFIXES,
    NoiseFloor,
    SideNoise,
    flaky_cases,
    has_repeats,
    noise_floor,
    reduced_side,
)
from rag_compare.core.contract import LABEL_COLUMNS, LANGUAGE, record_ok, sample_key
from rag_compare.core.errors import CompareError, ScoresError
from rag_compare.core.listing import counted, truncated
from rag_compare.core.protocols import K_EXPECTED, Judge, is_k
from rag_compare.core.signals import JUDGE_VERDICTS, signals_in
from rag_compare.io.corpus import Corpus, load_corpus
from rag_compare.io.pairs import Pairs, load_pairs
from rag_compare.io.passages import load_passages
from rag_compare.io.runs import OpenedRun, Run, open_run
from rag_compare.io.scores import Scores, evaluator_label, evaluator_summary, load_scores

__all__ = ["compare"]

DEFAULT_TOLERANCE = 1e-9
CASE_LABELS = ("question", "answerability", "source_version", "required_passage_ids", "category", "acceptance_note")
NARROW_LABELS = ("answerability", "category")
"""The labels a comparison's cases carry: the ones statuses, aggregates and breakdowns need (the others are
``case_texts.TEXT_LABELS``)."""
SIDE_COLUMNS = ("status", "error")
"""A side's record columns a comparison's cases carry (the others are ``case_texts.SIDE_TEXTS``)."""
_CHUNK_ROWS = 200_000
"""Records whose signals are computed at a time: texts of more are never held at once."""
_LABEL_DIGEST = "label_digest"


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
    pairs: Pairs | str | Path | None = None,
) -> Comparison:
    """Compare ``candidate`` with ``baseline`` (runs or run file paths), case by case.

    With ``corpus``, its labels judge both runs and its cases that neither run has are
    ``missing_in_both``; without it, each run is judged by its own frozen labels. ``passages`` (the
    knowledge base) lets records without ``context_passage_ids`` be checked by finding passage text in
    the context. ``k`` cuts both ranked lists (default: each run's ``top_k``, else the list's length).
    A signal counts as changed when it moves by more than ``tolerance``. ``judge`` defaults to the
    offline ``LexicalJudge``. ``baseline_scores``/``candidate_scores`` (scores files of those runs,
    see ``score_run`` and ``import_scores``) replace its verdicts with theirs. ``pairs`` (a pairs file
    of these two runs, see ``judge_pairs``) adds each case's ``preferred`` side and the preference
    aggregate; a case where nothing else moved is improved or regressed by a decided preference.
    Raises ``CompareError`` when a run lists a case twice or ``k`` is unusable or ``tolerance`` is not a
    finite number of 0 or more, ``ScoresError`` for scores of another run or a verdict that is not a
    finite number, ``PairsError`` for pairs of other runs.

    When a run holds several samples of a case (its ``repeat`` column), each side's signals are the
    case's means over its samples and a status needs the sides' samples apart (see ``case_status``);
    the comparison then also has the noise floor and the flaky cases (see ``repeats``).
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
    judged_pairs = pairs if pairs is None or isinstance(pairs, Pairs) else load_pairs(pairs)
    sides, label_warnings, evaluators = _both_sides(
        (baseline, candidate), (baseline_scores, candidate_scores), judge, labels=labels, passages=knowledge_base, k=k
    )
    runs, samples = [side.run for side in sides], [side.frame for side in sides]
    if judged_pairs is not None:
        judged_pairs.check_paired(runs[0].fingerprint, runs[1].fingerprint)
    repeated = [has_repeats(frame) for frame in samples]
    reduced = any(repeated)
    noise, flaky = None, pl.DataFrame(schema=FLAKY_SCHEMA)
    if reduced:
        noise = _noise_floor(samples, tolerance)
        frames = [reduced_side(frame, signals_in(frame.columns)) for frame in samples]
        flaky = _flaky(frames, repeated, tolerance)
    else:  # one sample a case on both sides: a run's repeat column (all 0, say) tells nothing
        frames = [frame.drop("repeat", strict=False) for frame in samples]
    del samples
    diff = config_diff(runs[0].config, runs[1].config)
    warnings = config_warnings(diff) + _evaluator_warnings(evaluators) + label_warnings
    warnings += _side_warnings(frames, labels, knowledge_base, [side.required for side in sides])
    text_labels = None if labels is None else labels.select("case_id", *TEXT_LABELS)
    texts = CaseTexts(sides=(sides[0].texts, sides[1].texts), labels=text_labels)
    del sides
    prefixed = [_prefixed(side, frame.drop(_LABEL_DIGEST)) for side, frame in zip(SIDES, frames, strict=True)]
    joined = _with_both_sides(_join(prefixed, labels), reduced)
    if judged_pairs is not None:
        joined = joined.join(preference_columns(judged_pairs), on="case_id", how="left", maintain_order="left")
    signals = signals_in(joined.columns, prefix="baseline_")
    rules = {"reduced": reduced, "preferred": judged_pairs is not None}
    cases = with_reasons(joined.with_columns(case_status(signals, tolerance, **rules)), signals, tolerance, **rules)
    return Comparison(
        baseline=runs[0],
        candidate=runs[1],
        evaluator={"name": judge.name, "fingerprint": judge.fingerprint, "scores": evaluators},
        config_diff=tuple(diff),
        warnings=tuple(warnings),
        cases=cases.select(
            "case_id", "status", "reasons", *NARROW_LABELS, pl.exclude("case_id", "status", "reasons", *NARROW_LABELS)
        ),
        aggregates=aggregate_signals(cases, signals, reduced=reduced),
        breakdowns=breakdown_signals(cases, signals),
        tolerance=tolerance,
        noise_floor=noise,
        flaky=flaky,
        preference=None if judged_pairs is None else preference_of(judged_pairs),
        texts=texts,
    )


@dataclass(frozen=True)
class _Side:
    """One side as compared: its run, its narrow record frame (one row per sample), where its texts are, and
    the required passages its records name (when checked against the passages)."""

    run: ComparedRun
    frame: pl.DataFrame = field(repr=False)
    texts: Run | RunFile
    required: pl.Series


def _both_sides(
    sources: tuple[Run | str | Path, Run | str | Path],
    scores_sources: tuple[Scores | str | Path | None, Scores | str | Path | None],
    judge: Judge,
    *,
    labels: pl.DataFrame | None,
    passages: pl.DataFrame | None,
    k: int | None,
) -> tuple[list[_Side], list[str], dict[str, dict[str, Any] | None]]:
    """Each side (baseline first), the label warnings, and the evaluator of each side's scores."""
    sides, label_warnings, evaluators = [], [], {}
    for side, source, scores_source in zip(SIDES, sources, scores_sources, strict=True):
        scores = None if scores_source is None else _loaded_scores(scores_source)
        compared, found = _side_frame(source, judge, scores, labels=labels, passages=passages, k=k)
        sides.append(compared)
        label_warnings += found
        evaluators[side] = None if scores is None else evaluator_summary(scores)
    return sides, label_warnings, evaluators


def _side_warnings(
    frames: list[pl.DataFrame],
    labels: pl.DataFrame | None,
    knowledge_base: pl.DataFrame | None,
    required: list[pl.Series],
) -> list[str]:
    """Labels that differ between the runs (without a corpus), and ``required`` passages ``passages`` lacks."""
    warnings = []
    if labels is None:
        drifted = _drifted_between(*frames)
        if drifted:
            warnings.append(f"the two runs hold different labels for {_n_cases(drifted)}: compare with `corpus`.")
    if knowledge_base is not None:
        warnings += _unknown_passage_warning(required, knowledge_base)
    return warnings


def _side_frame(
    source: Run | str | Path,
    judge: Judge,
    scores: Scores | None,
    *,
    labels: pl.DataFrame | None,
    passages: pl.DataFrame | None,
    k: int | None,
) -> tuple[_Side, list[str]]:
    """One side: per record (sample), its key, its status and error, the labels a comparison carries, and
    its signals; computed a slice of records at a time, so a run file's texts are never all held at once.
    """
    run = source if isinstance(source, Run) else open_run(source)
    if scores is not None:
        scores.check_scored(run)
    run_k = _k_of(run, k)
    chunks = [_chunk(records, judge, scores, labels=labels, passages=passages, k=run_k) for records in _chunks(run)]
    frame = pl.concat([chunk.frame for chunk in chunks], rechunk=True)
    _check_unique(run, frame)
    warnings = []
    if labels is not None:
        drifted = [case_id for chunk in chunks for case_id in chunk.drifted]
        warnings = _corpus_label_warnings(run.name, drifted, pl.concat(chunk.unknown for chunk in chunks))
    unread = [chunk.unread for chunk in chunks if chunk.unread is not None]
    if unread and isinstance(judge, LexicalJudge):
        warnings += _unjudged_warning(run.name, pl.concat(unread), judge)
    texts = run if isinstance(run, Run) else RunFile(run.path, run.fingerprint)
    required = pl.concat(chunk.required for chunk in chunks)
    return _Side(ComparedRun.of(run, k=run_k, records=frame), frame, texts, required), warnings


class _Chunk(NamedTuple):
    """What a slice of a run's records gives: its narrow frame, the case ids whose labels differ from the
    corpus' and those it lacks, the records the offline judge cannot read (``_unread``; ``None`` when
    it does not judge), and the required passages named (empty without passages)."""

    frame: pl.DataFrame
    drifted: list[str]
    unknown: pl.Series
    unread: pl.DataFrame | None
    required: pl.Series


def _chunk(
    records: pl.DataFrame,
    judge: Judge,
    scores: Scores | None,
    *,
    labels: pl.DataFrame | None,
    passages: pl.DataFrame | None,
    k: int | None,
) -> _Chunk:
    drifted, unknown = [], pl.Series("case_id", [], dtype=pl.String)
    if labels is not None:
        drifted = _drifted(records, labels)
        unknown = records.join(labels, on="case_id", how="anti").get_column("case_id")
        records = _relabel(records, labels)
    languages, unread = None, None
    if isinstance(judge, LexicalJudge):
        languages = judge.languages_of(records)
        if scores is None or not set(JUDGE_VERDICTS) <= set(scores.frame.columns):
            unread = _unread(records, languages, judge)
    scored = None if scores is None else scores.frame
    signals = case_signals(records, judge, k=k, passages=passages, scores=scored, languages=languages)
    _check_finite(signals, judge, scores)
    required = pl.Series("passage_id", [], dtype=pl.String)
    if passages is not None:
        required = records.get_column("required_passage_ids").explode().drop_nulls().unique().alias("passage_id")
    narrow = _detached(records.select(*sample_key(records.columns), *SIDE_COLUMNS, *NARROW_LABELS, _label_digest()))
    return _Chunk(pl.concat([narrow, signals.drop("case_id")], how="horizontal"), drifted, unknown, unread, required)


def _chunks(run: Run | OpenedRun) -> Iterator[pl.DataFrame]:
    """The run's records, ``_CHUNK_ROWS`` or so at a time (a run file's record batches put together)."""
    if isinstance(run, Run):
        for start in range(0, max(run.records.height, 1), _CHUNK_ROWS):
            yield run.records.slice(start, _CHUNK_ROWS)
        return
    held: list[pl.DataFrame] = []
    empty = True
    for batch in run.batches():
        held.append(batch)
        if sum(part.height for part in held) >= _CHUNK_ROWS:
            yield pl.concat(held)
            held, empty = [], False
    if held or empty:
        yield pl.concat(held) if held else pl.DataFrame(schema=dict(run.frozen.schema))


def _detached(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its text columns but ``case_id`` copied: a text column taken from a run file's records
    may hold on to the buffers of every text of its record batch (hundreds of MB a slice), which the copy lets
    go (the ids, unique, would cost the most to copy, and held nothing in the measurements)."""
    return frame.with_columns(pl.col(pl.String).exclude("case_id").cast(pl.Categorical).cast(pl.String))


def _label_digest() -> pl.Expr:
    """A hash of a record's labels that two runs may hold differently (passage lists as sets): equal
    digests, equal labels (within one process)."""
    return (
        pl.struct(
            *(name for name in LABEL_COLUMNS if name != "required_passage_ids"),
            pl.col("required_passage_ids").list.unique().list.sort(),
        )
        .hash()
        .alias(_LABEL_DIGEST)
    )


def _unread(records: pl.DataFrame, languages: pl.Series, judge: LexicalJudge) -> pl.DataFrame:
    """``case_id`` and ``tag`` of the records the offline judge cannot read: ok, in a language it has no
    rules for (``languages``, each record's)."""
    known = [language.code for language in judge.languages]
    unread = records.select("case_id", record_ok().alias("ok"), pl.lit(languages).alias("tag"))
    return unread.filter("ok", ~pl.col("tag").is_in(known)).select("case_id", "tag")


def _unjudged_warning(name: str, unread: pl.DataFrame, judge: LexicalJudge) -> list[str]:
    """The cases of run ``name`` the offline judge cannot read (``unread``: see ``_unread``)."""
    unread = unread.unique(["case_id", "tag"])
    unjudged = dict(sorted(Counter(unread.get_column("tag").to_list()).items()))
    if not unjudged:
        return []
    counts = ", ".join(f"{tag} {count}" for tag, count in unjudged.items())
    unspaced = "; und: a script written without spaces" if "und" in unjudged else ""
    cases = counted(sum(unjudged.values()), "case")
    return [
        f"run '{name}' has {cases} in languages the offline judge has no rules for ({counts}{unspaced}): "
        "their abstention and grounding are not judged. Give the judge a language file for them "
        "(`languages`), or judge them with an LLM."
    ]


def _check_unique(run: Run | OpenedRun, frame: pl.DataFrame) -> None:
    """Refuse a run that lists a case twice (with repeats: a case's repeat twice); ``frame``: its records."""
    key = sample_key(frame.columns)
    repeated = frame.filter(pl.struct(key).is_duplicated()).get_column("case_id").unique().sort()
    if repeated.len():
        per = "record per case" if len(key) == 1 else "record per case and repeat"
        raise CompareError(
            f"{run.path or run.name}: these case ids appear more than once: {truncated(repeated)}. "
            f"A run holds one {per}; freeze it again from records with unique case ids."
        )


def _noise_floor(samples: list[pl.DataFrame], tolerance: float) -> NoiseFloor | None:
    """The noise floor of each side with repeats, and their average; ``None`` when neither has two."""
    sides: dict[str, SideNoise] = {}
    for side, frame in zip(SIDES, samples, strict=True):
        noise = noise_floor(frame, signals_in(frame.columns), tolerance)
        if noise is not None:
            sides[side] = noise
    if not sides:
        return None
    statuses = next(iter(sides.values())).expected
    expected = {status: sum(noise.expected[status] for noise in sides.values()) / len(sides) for status in statuses}
    return NoiseFloor(sides=sides, expected=expected)


def _flaky(frames: list[pl.DataFrame], repeated: list[bool], tolerance: float) -> pl.DataFrame:
    """The flaky cases of the sides with repeats (see ``repeats.flaky_cases``), most disagreeing first."""
    found = [
        flaky_cases(frame, side, signals_in(frame.columns), tolerance)
        for side, frame, has in zip(SIDES, frames, repeated, strict=True)
        if has
    ]
    flaky = pl.concat(found) if found else pl.DataFrame(schema=FLAKY_SCHEMA)
    return flaky.sort(["disagreements", "spread", "case_id", "side"], descending=[True, True, False, False])


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


def _k_of(run: Run | OpenedRun, k: int | None) -> int | None:
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
    """The records with the corpus' labels (and ``language``, when it has one) where the corpus has the
    case (a new frame)."""
    names = [*CASE_LABELS, *([LANGUAGE] if LANGUAGE in labels.columns else [])]
    corpus = labels.select("case_id", *(pl.col(name).alias(f"corpus_{name}") for name in names))
    joined = records.join(corpus, on="case_id", how="left", maintain_order="left")
    return joined.with_columns(
        pl.coalesce(f"corpus_{name}", *([name] if name in records.columns else [])).alias(name) for name in names
    ).drop(f"corpus_{name}" for name in names)


def _corpus_label_warnings(name: str, drifted: list[str], unknown: pl.Series) -> list[str]:
    """Label drift of run ``name`` against the corpus (``drifted`` case ids), and the cases the corpus lacks
    (``unknown``)."""
    warnings = []
    drifted = sorted(set(drifted))
    if drifted:
        warnings.append(f"run '{name}' was frozen with other labels than `corpus` for {_n_cases(drifted)}.")
    lacked = unknown.unique().sort().to_list()
    if lacked:
        warnings.append(
            f"run '{name}' has cases that `corpus` lacks: {truncated(lacked)}; they keep their frozen labels."
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
    return joined.filter(differs).get_column("case_id").unique().sort().to_list()


def _drifted_between(baseline: pl.DataFrame, candidate: pl.DataFrame) -> list[str]:
    """Case ids both sides have whose labels differ (by their ``label_digest``)."""
    digests = [frame.select("case_id", _LABEL_DIGEST).unique() for frame in (baseline, candidate)]
    joined = digests[0].join(digests[1], on="case_id", how="inner", suffix="_other")
    differs = pl.col(_LABEL_DIGEST) != pl.col(f"{_LABEL_DIGEST}_other")
    return joined.filter(differs).get_column("case_id").unique().sort().to_list()


def _unknown_passage_warning(required: list[pl.Series], knowledge_base: pl.DataFrame) -> list[str]:
    """The ``required`` passages (each side's) that ``knowledge_base`` lacks."""
    named = pl.concat(required).unique().to_frame("passage_id")
    unknown = named.join(knowledge_base, on="passage_id", how="anti").get_column("passage_id").sort().to_list()
    if not unknown:
        return []
    return [
        f"`passages` lacks {len(unknown)} required passages ({truncated(unknown)}); where a record has no "
        "context_passage_ids, they count as absent from its context."
    ]


def _prefixed(side: str, frame: pl.DataFrame) -> pl.DataFrame:
    return frame.rename({name: f"{side}_{name}" for name in frame.columns if name != "case_id"})


def _join(sides: list[pl.DataFrame], labels: pl.DataFrame | None) -> pl.DataFrame:
    """Every case id of either run (and of the corpus), in order, with both sides and one set of the labels
    it carries."""
    id_frames = [side.select("case_id") for side in sides]
    if labels is not None:
        id_frames.append(labels.select("case_id"))
    cases = pl.concat(id_frames).unique().sort("case_id")
    if labels is not None:
        cases = cases.join(labels.select("case_id", *NARROW_LABELS), on="case_id", how="left", maintain_order="left")
    for side in sides:
        cases = cases.join(side, on="case_id", how="left", maintain_order="left")
    return cases.with_columns(
        pl.coalesce(*([name] if labels is not None else []), f"candidate_{name}", f"baseline_{name}").alias(name)
        for name in NARROW_LABELS
    ).drop(f"{side}_{name}" for side in SIDES for name in NARROW_LABELS)


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


def _n_cases(ids: list[str]) -> str:
    """``N cases (first ids … and M more)``."""
    return f"{counted(len(ids), 'case')} ({truncated(ids)})"
