"""``compare``: two frozen runs compared case by case into a ``Comparison`` (see ``comparison``), one
status per case with the reasons behind it.

Each side's signals are computed per record first, a slice of records at a time (``side_samples``), or read
from those stored with the run when they are the same (``stored_signals``): what a slice keeps is narrow, its
records' status and error, the labels statuses and breakdowns need, and its signals, never its texts. The
narrow sides are kept by bucket of case id (``case_hash % buckets``) and joined a bucket at a time
(``bucket_join``): a side with repeats reduced to one row per case (``repeats``), a full outer join on
``case_id`` (with a corpus, its cases that neither run has join too), a pairwise judge's verdict on each when
given (``preference``), ``case_status`` for each status and its reasons, and the partial statistics of the
bucket, merged over the buckets into the aggregates (``partials``). The texts (questions, answers, passage
lists) are read back by case id for the cases a report lists (``case_texts``).

An engine decides where the buckets are (``bucket_passes``, ``ray_passes``): ``memory`` holds one bucket of
every case; ``streaming`` spills the buckets to disk and holds one at a time; ``ray`` runs the same steps as
Ray Data tasks. Every engine gives the same comparison.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import operator
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare.compute.bucket_join import BucketResult, JoinRules, SideFacts, reasoned, reasoned_schema
from rag_compare.compute.bucket_passes import BucketPasses, JoinInputs, LocalPasses, SideInputs, by_bucket
from rag_compare.compute.bucket_store import BucketStore
from rag_compare.compute.case_status import SIDES
from rag_compare.compute.case_table import CaseTable
from rag_compare.compute.case_texts import DETAIL_TEXTS, CaseTexts, RunFile
from rag_compare.compute.claim_changes import ClaimChanges, SideClaims
from rag_compare.compute.comparison import ComparedRun, Comparison
from rag_compare.compute.configdiff import config_diff, config_warnings
from rag_compare.compute.engines import DEFAULT_BUCKETS, ENGINES
from rag_compare.compute.knowledge_base import comparison_passages
from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.compute.partials import finish_aggregates, finish_breakdowns, merge_partials, resampling_plan
from rag_compare.compute.preference import preference_columns, preference_of
from rag_compare.compute.repeats import FLAKY_SCHEMA, NoiseFloor, merged_repeat_counts, noise_numbers
from rag_compare.compute.side_samples import NARROW_LABELS, UNREVIEWED
from rag_compare.compute.stored_signals import reads_stored, reads_stored_verdicts, run_k
from rag_compare.core.contract import REPEAT
from rag_compare.core.errors import CompareError
from rag_compare.core.listing import counted, truncated
from rag_compare.core.protocols import K_EXPECTED, Judge, is_k
from rag_compare.io.corpus import Corpus, load_corpus, unreviewed_where
from rag_compare.io.pairs import Pairs, load_pairs
from rag_compare.io.runs import OpenedRun, Run, open_run, repeated_cases
from rag_compare.io.scores import Scores, evaluator_label, evaluator_summary, load_scores

__all__ = ["Scored", "Settings", "compare", "compare_each", "opened_runs"]

DEFAULT_TOLERANCE = 1e-9


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
    engine: str = "memory",
    buckets: int | None = None,
    ray_address: str | None = None,
) -> Comparison:
    """Compare ``candidate`` with ``baseline`` (runs, or paths of run files or run directories), case by case.

    With ``corpus``, its labels judge both runs and its cases that neither run has are
    ``missing_in_both``; without it, each run is judged by its own frozen labels. An unreviewed synthetic
    case a run has no record of was left out by design: not a case, but listed in ``unreviewed_left_out``.
    ``passages`` (the knowledge base; default: the ``knowledge_base`` the runs record, see
    ``knowledge_base``) gives ``answer_completeness`` and lets records without ``context_passage_ids`` be
    checked by finding passage text in the context. ``k`` cuts both ranked lists (default: each run's
    ``top_k``, else the list's length). A signal counts as changed when it moves by more than
    ``tolerance``. ``judge`` defaults to the offline ``LexicalJudge``. ``baseline_scores``/
    ``candidate_scores`` (scores files of those runs, see ``score_run`` and ``import_scores``) replace its
    verdicts with theirs. ``pairs`` (a pairs file of these two runs, see ``judge_pairs``) adds each case's
    ``preferred`` side and the preference aggregate; a case where nothing else moved is improved or
    regressed by a decided preference.

    ``engine`` says where the work is done (the result is the same): ``memory`` (this process, every case
    held), ``streaming`` (this process, the cases spilled to the system's temporary folder, ``$TMPDIR``, in
    ``buckets`` by case id, one held at a time; the cases are read back from there, so memory stays bounded
    at any size) or ``ray`` (Ray Data tasks on the cluster at ``ray_address``, or a Ray started here; needs
    ``rag-compare[ray]``). ``buckets`` defaults to the runs' own when both are run directories of as many,
    else ``DEFAULT_BUCKETS``.

    Raises ``CompareError`` when a run lists a case twice or ``k`` is unusable or ``tolerance`` is not a
    finite number of 0 or more, ``ScoresError`` for scores of another run or a verdict that is not a
    finite number, ``PairsError`` for pairs of other runs, ``EngineError`` when Ray cannot start.

    When a run holds several samples of a case (its ``repeat`` column), each side's signals are the
    case's means over its samples and a status needs the sides' samples apart (see ``case_status``);
    the comparison then also has the noise floor and the flaky cases (see ``repeats``).
    """
    settings = Settings(k, tolerance, engine, buckets, ray_address)
    scores = Scored(baseline_scores, (candidate_scores,))
    return compare_each(
        baseline, (candidate,), corpus, passages=passages, judge=judge, scores=scores, pairs=pairs, settings=settings
    )[0]


@dataclass(frozen=True)
class Settings:
    """How ``compare`` and ``compare_many`` compare (see ``compare``): the cut-off ``k``, the ``tolerance``, and
    where the work is done (``engine``, ``buckets``, ``ray_address``)."""

    k: int | None = None
    tolerance: float = DEFAULT_TOLERANCE
    engine: str = "memory"
    buckets: int | None = None
    ray_address: str | None = None


@dataclass(frozen=True)
class Scored:
    """The scores files of the baseline and of each candidate (``None``: judged by the judge)."""

    baseline: Scores | str | Path | None = None
    candidates: Sequence[Scores | str | Path | None] = ()


def compare_each(
    baseline: Run | OpenedRun | str | Path,
    candidates: Sequence[Run | OpenedRun | str | Path],
    corpus: Corpus | str | Path | pl.DataFrame | None = None,
    *,
    passages: str | Path | pl.DataFrame | None = None,
    judge: Judge | None = None,
    scores: Scored = Scored(),
    pairs: Pairs | str | Path | None = None,
    settings: Settings = Settings(),
) -> list[Comparison]:
    """Each of ``candidates`` compared with ``baseline`` as ``compare`` does (see there), the baseline's records
    made narrow once for all of them; ``pairs`` only with one candidate."""
    _check_settings(settings.k, settings.tolerance, settings.engine, settings.buckets)
    side_scores = [scores.baseline, *(scores.candidates or [None] * len(candidates))]
    sources = _sources((baseline, *candidates), corpus, passages, side_scores, pairs, judge)
    inputs = [
        _side_inputs(run, run_scores, run_k(run, settings.k), sources)
        for run, run_scores in zip(sources.runs, sources.scores, strict=True)
    ]
    bucket_count = _bucket_count(settings.engine, settings.buckets, sources.runs)
    comparisons = []
    held = settings.engine == "memory"  # the cases stay in memory: their reasons are made when first read
    with _passes(settings.engine, bucket_count, settings.ray_address) as passes:
        facts = passes.sides(inputs)
        _refuse_duplicates(sources.runs, facts)
        for candidate in range(1, len(inputs)):
            paired = sources.paired(candidate)
            last = candidate == len(inputs) - 1
            joined = _joined(
                passes, candidate, (facts[0], facts[candidate]), paired, settings.tolerance, last=last, held=held
            )
            comparisons.append(_comparison(paired, (inputs[0], inputs[candidate]), joined, settings.tolerance))
    return comparisons


@dataclass(frozen=True)
class _Sources:
    """What a comparison reads, loaded and checked: the two runs and their scores, the corpus' labels, the
    passages (and the warnings that say where they come from), the pairwise verdicts and the judge."""

    runs: Sequence[Run | OpenedRun]
    scores: Sequence[Scores | None]
    labels: pl.DataFrame | None
    passages: pl.DataFrame | None
    passage_warnings: Sequence[str]
    pairs: Pairs | None
    judge: Judge

    def paired(self, candidate: int) -> _Sources:
        """The sources of comparing the baseline with one candidate (its index in ``runs``)."""
        return dataclasses.replace(
            self, runs=(self.runs[0], self.runs[candidate]), scores=(self.scores[0], self.scores[candidate])
        )


@dataclass(frozen=True)
class _Joined:
    """What the passes gave: each side's facts by bucket, the join rules they decide, each bucket's result,
    the finished aggregates and the cases."""

    facts: Sequence[Sequence[SideFacts]]
    rules: JoinRules
    results: Sequence[BucketResult]
    aggregates: pl.DataFrame
    cases: CaseTable


def _sources(
    runs: Sequence[Run | OpenedRun | str | Path],
    corpus: Corpus | str | Path | pl.DataFrame | None,
    passages: str | Path | pl.DataFrame | None,
    scores: Sequence[Scores | str | Path | None],
    pairs: Pairs | str | Path | None,
    judge: Judge | None,
) -> _Sources:
    """The inputs of ``compare`` loaded (see there), each run's scores checked to be of it."""
    labels = None if corpus is None else (corpus if isinstance(corpus, Corpus) else load_corpus(corpus)).frame
    judged_pairs = pairs if pairs is None or isinstance(pairs, Pairs) else load_pairs(pairs)
    opened = opened_runs(runs)
    loaded = [None if source is None else _loaded_scores(source) for source in scores]
    for run, side_scores in zip(opened, loaded, strict=True):
        if side_scores is not None:
            side_scores.check_scored(run)
    knowledge_base, said = comparison_passages(passages, opened)
    judge = LexicalJudge() if judge is None else judge
    return _Sources(opened, loaded, labels, knowledge_base, said, judged_pairs, judge)


def opened_runs(sources: Sequence[Run | OpenedRun | str | Path]) -> list[Run | OpenedRun]:
    """Each of ``sources`` opened (``open_run``, its fingerprint checked), a run or an opened one as it is."""

    def opened(source: Run | OpenedRun | str | Path) -> Run | OpenedRun:
        return source if isinstance(source, (Run, OpenedRun)) else open_run(source)

    with ThreadPoolExecutor(max_workers=2) as pool:  # each run's bytes hashed while another's are
        return list(pool.map(opened, sources))


def _side_inputs(run: Run | OpenedRun, scores: Scores | None, k: int | None, sources: _Sources) -> SideInputs:
    """One side's inputs, its stored signals read when they are the ones these settings give."""
    judge, labels, passages = sources.judge, sources.labels, sources.passages
    stored = reads_stored(run, judge=judge, k=k, labels=labels, passages=passages, scores=scores)
    verdicts = not stored and reads_stored_verdicts(run, judge=judge, labels=labels, scores=scores)
    return SideInputs(run, scores, k, judge, labels, passages, stored=stored, stored_verdicts=verdicts)


def _joined(
    passes: BucketPasses,
    candidate: int,
    facts: tuple[Sequence[SideFacts], Sequence[SideFacts]],
    sources: _Sources,
    tolerance: float,
    *,
    last: bool,
    held: bool,
) -> _Joined:
    """The rest of the passes for one candidate (its side's index), once the sides' ``facts`` are known: the
    join a bucket at a time and the second pass of the aggregates (``last``: no candidate follows; ``held``:
    the cases stay in memory, their reasons made when first read)."""
    if sources.pairs is not None:
        sources.pairs.check_paired(sources.runs[0].fingerprint, sources.runs[1].fingerprint)
    preferred, labelled = sources.pairs is not None, sources.labels is not None
    rules = _rules(facts, tolerance, preferred=preferred, labels=labelled, reasons=not held)
    labels = None
    if sources.labels is not None:
        labels = sources.labels.select("case_id", *NARROW_LABELS, unreviewed_where().alias(UNREVIEWED))
    preference = None if sources.pairs is None else preference_columns(sources.pairs)
    join = JoinInputs(rules, by_bucket(labels, passes.buckets), by_bucket(preference, passes.buckets), last)
    results = passes.join(candidate, join)
    first = merge_partials(result.aggregates for result in results)
    aggregates = finish_aggregates(first, passes.resample(candidate, resampling_plan(first)))
    counts = {status: sum(result.counts[status] for result in results) for status in results[0].counts}
    cases = passes.table(candidate, results[0].cases.schema, counts)
    if not rules.reasons:
        cases = cases.derived(functools.partial(reasoned, rules=rules), reasoned_schema(cases.schema))
    return _Joined(facts, rules, results, aggregates, cases)


def _comparison(sources: _Sources, inputs: Sequence[SideInputs], joined: _Joined, tolerance: float) -> Comparison:
    """The ``Comparison`` of what the passes gave, with the config diff and every warning."""
    compared = [
        ComparedRun.of(side.run, k=side.k, repeats=merged_repeat_counts(fact.counts for fact in side_facts))
        for side, side_facts in zip(inputs, joined.facts, strict=True)
    ]
    diff = config_diff(compared[0].config, compared[1].config, (compared[0].path, compared[1].path))
    evaluators = _evaluators(sources.scores)
    warnings = [*sources.passage_warnings, *config_warnings(diff, corpus=sources.labels is not None)]
    warnings += _evaluator_warnings(evaluators) + _label_warnings(sources, joined)
    text_labels = None
    if sources.labels is not None:
        held = [name for name in DETAIL_TEXTS.labels if name in sources.labels.columns]
        text_labels = sources.labels.select("case_id", *held)
    claims = [
        SideClaims.of(scores, sources.judge, run, sources.labels)
        for scores, run in zip(sources.scores, sources.runs, strict=True)
    ]
    return Comparison(
        baseline=compared[0],
        candidate=compared[1],
        evaluator={"name": sources.judge.name, "fingerprint": sources.judge.fingerprint, "scores": evaluators},
        config_diff=tuple(diff),
        warnings=tuple(warnings),
        case_table=joined.cases,
        aggregates=joined.aggregates,
        breakdowns=finish_breakdowns(merge_partials(result.breakdowns for result in joined.results)),
        tolerance=tolerance,
        noise_floor=_noise_floor(joined.results, joined.rules),
        flaky=_flaky(joined.results),
        preference=None if sources.pairs is None else preference_of(sources.pairs),
        unreviewed_left_out=tuple(sorted(case_id for result in joined.results for case_id in result.not_run)),
        texts=CaseTexts(sides=(_texts_of(sources.runs[0]), _texts_of(sources.runs[1])), labels=text_labels),
        passages=None if sources.passages is None else sources.passages.select("passage_id", "text"),
        claim_changes=ClaimChanges((claims[0], claims[1])),
    )


def _check_settings(k: int | None, tolerance: float, engine: str, buckets: int | None) -> None:
    if k is not None and not is_k(k):
        raise CompareError(f"k must be {K_EXPECTED}, got {k!r}.")
    if not math.isfinite(tolerance) or tolerance < 0:
        raise CompareError(f"tolerance must be a finite number of 0 or more, got {tolerance!r}.")
    if engine not in ENGINES:
        raise CompareError(f"engine must be one of {', '.join(ENGINES)}; got {engine!r}.")
    if buckets is not None and (isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 1):
        raise CompareError(f"buckets must be a whole number of 1 or more, got {buckets!r}.")
    if buckets is not None and engine == "memory":
        raise CompareError("buckets are for the streaming and ray engines: pass `engine='streaming'`, or no buckets.")


def _bucket_count(engine: str, buckets: int | None, runs: Sequence[Run | OpenedRun]) -> int:
    """``buckets`` when given; 1 in memory; else the runs' own when both are run directories of as many."""
    if buckets is not None:
        return buckets
    if engine == "memory":
        return 1
    own = {run.buckets if isinstance(run, OpenedRun) else None for run in runs}
    aligned = own.pop() if len(own) == 1 else None
    return aligned or DEFAULT_BUCKETS


@contextlib.contextmanager
def _passes(engine: str, buckets: int, ray_address: str | None) -> Iterator[BucketPasses]:
    if engine == "ray":
        from rag_compare.compute.ray_passes import ray_passes

        with ray_passes(buckets, ray_address) as passes:
            yield passes
        return
    yield LocalPasses(BucketStore(buckets, spill=engine == "streaming"))


def _refuse_duplicates(runs: Sequence[Run | OpenedRun], facts: Sequence[Sequence[SideFacts]]) -> None:
    """Refuse a run that lists a case twice (with repeats: a case's repeat twice)."""
    for run, side_facts in zip(runs, facts, strict=True):
        repeated = sorted(case_id for fact in side_facts for case_id in fact.duplicated)
        if repeated:
            columns = run.records.columns if isinstance(run, Run) else run.columns
            raise CompareError(repeated_cases(str(run.path or run.name), repeated, REPEAT in columns))


def _rules(
    facts: Sequence[Sequence[SideFacts]], tolerance: float, *, preferred: bool, labels: bool, reasons: bool
) -> JoinRules:
    """The join rules the sides' facts give."""
    repeated = tuple(any(fact.repeated for fact in side_facts) for side_facts in facts)
    numbers = tuple(
        noise_numbers(number for fact in side_facts for number in fact.numbers) if any(repeated) else ()
        for side_facts in facts
    )
    return JoinRules(
        tolerance=tolerance,
        repeated=(repeated[0], repeated[1]),
        noise_numbers=(numbers[0], numbers[1]),
        preferred=preferred,
        labels=labels,
        reasons=reasons,
    )


def _noise_floor(results: Sequence[BucketResult], rules: JoinRules) -> NoiseFloor | None:
    """The noise floor of each side with repeats, and their average; ``None`` when neither has two."""
    sides = {}
    for index, side in enumerate(SIDES):
        if rules.noise_numbers[index]:
            partials = [partial for result in results if (partial := result.noise[index]) is not None]
            sides[side] = functools.reduce(operator.add, partials).finished()
    if not sides:
        return None
    statuses = next(iter(sides.values())).expected
    expected = {status: sum(noise.expected[status] for noise in sides.values()) / len(sides) for status in statuses}
    return NoiseFloor(sides=sides, expected=expected)


def _flaky(results: Sequence[BucketResult]) -> pl.DataFrame:
    """The flaky cases of the sides with repeats (see ``repeats.flaky_cases``), most disagreeing first."""
    flaky = pl.concat([pl.DataFrame(schema=FLAKY_SCHEMA), *(result.flaky for result in results)])
    return flaky.sort(["disagreements", "spread", "case_id", "side"], descending=[True, True, False, False])


def _texts_of(run: Run | OpenedRun) -> Run | RunFile:
    return run if isinstance(run, Run) else RunFile(run.path, run.fingerprint)


def _evaluators(scores: Sequence[Scores | None]) -> dict[str, dict[str, Any] | None]:
    return {
        side: None if side_scores is None else evaluator_summary(side_scores)
        for side, side_scores in zip(SIDES, scores, strict=True)
    }


def _label_warnings(sources: _Sources, joined: _Joined) -> list[str]:
    """Per run, its label drift from the corpus and the cases it lacks, and the cases the offline judge
    cannot read; then labels that differ between the runs (without a corpus), and required passages
    the passages lack."""
    warnings = []
    for run, side_facts in zip(sources.runs, joined.facts, strict=True):
        if sources.labels is not None:
            drifted = [case_id for fact in side_facts for case_id in fact.drifted]
            unknown = [case_id for fact in side_facts for case_id in fact.unknown]
            warnings += _corpus_label_warnings(run.name, drifted, unknown)
        unread = [fact.unread for fact in side_facts if fact.unread is not None]
        if unread and isinstance(sources.judge, LexicalJudge):
            warnings += _unjudged_warning(run.name, pl.concat(unread), sources.judge)
    if sources.labels is None:
        drifted = sorted(case_id for result in joined.results for case_id in result.drifted)
        if drifted:
            warnings.append(f"the two runs hold different labels for {_n_cases(drifted)}: compare with `corpus`.")
    if sources.passages is not None:
        required = {passage for side_facts in joined.facts for fact in side_facts for passage in fact.required}
        warnings += _unknown_passage_warning(required, sources.passages)
    return warnings


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


def _corpus_label_warnings(name: str, drifted: list[str], unknown: list[str]) -> list[str]:
    """Label drift of run ``name`` against the corpus (``drifted`` case ids), and the cases the corpus lacks
    (``unknown``)."""
    warnings = []
    drifted = sorted(set(drifted))
    if drifted:
        warnings.append(f"run '{name}' was frozen with other labels than `corpus` for {_n_cases(drifted)}.")
    lacked = sorted(set(unknown))
    if lacked:
        warnings.append(
            f"run '{name}' has cases that `corpus` lacks: {truncated(lacked)}; they keep their frozen labels."
        )
    return warnings


def _unknown_passage_warning(required: set[str], knowledge_base: pl.DataFrame) -> list[str]:
    """The ``required`` passages (both sides') that ``knowledge_base`` lacks."""
    named = pl.Series("passage_id", sorted(required), dtype=pl.String).to_frame()
    unknown = named.join(knowledge_base, on="passage_id", how="anti").get_column("passage_id").sort().to_list()
    if not unknown:
        return []
    return [
        f"`passages` lacks {len(unknown)} required passages ({truncated(unknown)}); where a record has no "
        "context_passage_ids, they count as absent from its context."
    ]


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
