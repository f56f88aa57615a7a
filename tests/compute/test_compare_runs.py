"""compare(): statuses and reasons on a fixture with every status, labels, aggregates and properties."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rag_compare import CompareError, Run, compare, freeze_run, load_corpus
from rag_compare.compute.comparison import CASE_STATUSES, SCHEMA_VERSION
from rag_compare.core.protocols import MAX_K
from rag_compare.core.signals import SIGNALS
from tests.helpers.data import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "compare"
CONFIG = {"top_k": 2}


@pytest.fixture(scope="module")
def runs() -> tuple[Run, Run]:
    """The fixture's two runs, made at one fixed time (so ``created_at`` never differs between them)."""
    corpus = load_corpus(FIXTURE / "corpus.csv")
    environ = {"SOURCE_DATE_EPOCH": "1795000000"}
    return tuple(  # type: ignore[return-value]
        freeze_run(FIXTURE / f"{side}.jsonl", corpus, CONFIG | {"name": side}, environ=environ)
        for side in ("baseline", "candidate")
    )


def expected_cases() -> pl.DataFrame:
    return pl.read_ndjson(FIXTURE / "expected.jsonl")


def test_every_status_stage_and_reason_as_worked_out_by_hand(runs: tuple[Run, Run]) -> None:
    comparison = compare(*runs, corpus=FIXTURE / "corpus.csv")
    strings = [pl.col(name).cast(pl.String) for name in ("status", "stage")]
    got = comparison.cases.select("case_id", *strings, "reasons", pl.col("reason_stages").cast(pl.List(pl.String)))
    assert got.to_dicts() == expected_cases().to_dicts()
    assert set(comparison.counts) == set(CASE_STATUSES)
    assert comparison.counts["regressed"] == 3
    assert comparison.counts["missing_in_both"] == 1
    assert comparison.stage_counts == {
        "regressed": {"answer": 2, "context": 1},
        "improved": {"answer": 1, "context": 1},
        "mixed": {"answer": 1},
    }
    assert comparison.stages_text() == [
        "regressed 3: 2 at the answer, 1 at the context",
        "improved 2: 1 at the answer, 1 at the context",
        "mixed 1: 1 at the answer",
    ]


def test_without_a_corpus_only_cases_of_the_runs_are_joined(runs: tuple[Run, Run]) -> None:
    comparison = compare(*runs, passages=FIXTURE / "passages.csv")
    assert comparison.cases.height == 12
    assert "c-missing-both@v1" not in comparison.cases.get_column("case_id").to_list()
    assert comparison.warnings == ()


def test_paths_work_like_runs_and_passages_find_context_text(tmp_path: Path) -> None:
    corpus = load_corpus(FIXTURE / "corpus.csv")
    records = pl.read_ndjson(FIXTURE / "candidate.jsonl").drop("context_passage_ids")
    for side in ("baseline", "candidate"):
        freeze_run(records, corpus, CONFIG, output=tmp_path / f"{side}.arrow")
    comparison = compare(tmp_path / "baseline.arrow", tmp_path / "candidate.arrow", passages=FIXTURE / "passages.csv")
    cut = comparison.cases.filter(pl.col("case_id") == "c-cut@v1").row(0, named=True)
    assert cut["candidate_context_coverage"] == 0.5
    assert cut["candidate_context_construction_failure"] is True
    without = compare(tmp_path / "baseline.arrow", tmp_path / "candidate.arrow")
    assert without.cases.get_column("candidate_context_coverage").null_count() == without.cases.height


def test_aggregates_worked_out_by_hand(runs: tuple[Run, Run]) -> None:
    # recall, paired: improved .5->1, mixed .5->1, four cases 1->1: baseline 5/6, candidate 1, n 6.
    # all_cases adds failed-base 0/1, failed-cand 1/0, failed-both 0/0, missing-base 0/1, missing-cand 1/0,
    # missing-both 0/0: baseline 7/12, candidate 8/12, n 12.
    aggregates = compare(*runs, corpus=FIXTURE / "corpus.csv").aggregates
    recall = {row["scope"]: row for row in aggregates.filter(signal="recall").iter_rows(named=True)}
    assert (recall["paired"]["baseline"], recall["paired"]["candidate"], recall["paired"]["n"]) == (
        pytest.approx(5 / 6),
        1.0,
        6,
    )
    assert (recall["all_cases"]["baseline"], recall["all_cases"]["candidate"], recall["all_cases"]["n"]) == (
        pytest.approx(7 / 12),
        pytest.approx(8 / 12),
        12,
    )
    assert recall["paired"]["delta"] == pytest.approx(1 / 6)
    assert recall["paired"]["ci_low"] <= recall["paired"]["delta"] <= recall["paired"]["ci_high"]
    assert aggregates.height == 2 * len(SIGNALS)
    assert ((aggregates["p_adjusted"] >= aggregates["p_value"]) | aggregates["p_value"].is_null()).all()


def test_breakdowns_by_category_and_answerability(runs: tuple[Run, Run]) -> None:
    breakdowns = compare(*runs).breakdowns
    assert set(breakdowns.get_column("by")) == {"category", "answerability"}
    unanswerable = breakdowns.filter(by="answerability", group="unanswerable", signal="abstention_correct").row(
        0, named=True
    )
    assert (unanswerable["baseline"], unanswerable["candidate"], unanswerable["n"]) == (0.0, 1.0, 1)
    assert breakdowns.filter(by="answerability", group="unanswerable", signal="recall").is_empty()


def test_json_has_exactly_the_documented_keys_and_round_trips(runs: tuple[Run, Run]) -> None:
    comparison = compare(*runs, corpus=FIXTURE / "corpus.csv")
    payload = json.loads(comparison.to_json())
    assert list(payload) == [
        "schema_version",
        "warnings",
        "baseline",
        "candidate",
        "evaluator",
        "config_diff",
        "counts",
        "stage_counts",
        "unreviewed_left_out",
        "aggregates",
        "breakdowns",
        "noise_floor",
        "flaky",
        "preference",
        "claims",
        "cases",
    ]
    assert payload == comparison.to_dict()
    assert payload["schema_version"] == SCHEMA_VERSION
    assert list(payload["baseline"]) == ["name", "path", "fingerprint", "config", "repeats"]
    assert (payload["noise_floor"], payload["flaky"]) == (None, [])
    assert list(payload["evaluator"]) == ["name", "fingerprint", "scores"]
    assert payload["evaluator"]["scores"] == {"baseline": None, "candidate": None}
    assert list(payload["aggregates"][0]) == [
        "signal", "scope", "baseline", "candidate", "delta", "ci_low", "ci_high", "p_value", "p_adjusted", "n",
        "baseline_within_variance", "candidate_within_variance",
    ]  # fmt: skip
    assert list(payload["breakdowns"][0]) == ["by", "group", "signal", "baseline", "candidate", "delta", "n"]
    cases = {case["case_id"]: case for case in payload["cases"]}
    assert list(cases["c-cut@v1"]) == [
        "case_id",
        "status",
        "stage",
        "reasons",
        "reason_stages",
        "category",
        "answerability",
        "baseline",
        "candidate",
        "claim_changes",
    ]
    assert cases["c-missing-base@v1"]["baseline"] is None
    failed = cases["c-failed-cand@v1"]["candidate"]
    assert (failed.pop("status"), failed.pop("error")) == ("timeout", "no answer after 30 s")
    assert set(failed.values()) == {None}  # a failed side's signals are null
    assert cases["c-cut@v1"]["candidate"]["context_construction_failure"] is True
    assert {change["key"] for change in payload["config_diff"]} == {"name", "records.path"}


def test_same_input_same_bytes(runs: tuple[Run, Run]) -> None:
    first = compare(*runs, corpus=FIXTURE / "corpus.csv")
    second = compare(*runs, corpus=FIXTURE / "corpus.csv")
    assert first.to_json() == second.to_json()
    assert first.render("text") == second.render("text")


def test_refuses_a_run_with_a_case_twice(runs: tuple[Run, Run]) -> None:
    baseline = runs[0]
    doubled = Run(
        records=pl.concat([baseline.records, baseline.records.head(2)]),
        config=baseline.config,
        fingerprint=baseline.fingerprint,
    )
    repeated = sorted(baseline.records.get_column("case_id").head(2).to_list())
    with pytest.raises(CompareError, match=f"appear more than once: {repeated[0]}, {repeated[1]}"):
        compare(doubled, runs[1])


def test_refuses_an_unusable_k(runs: tuple[Run, Run]) -> None:
    for k in (0, MAX_K + 1):
        with pytest.raises(CompareError, match="k must be a whole number from 1 to 1,000,000"):
            compare(*runs, k=k)
    odd = Run(records=runs[0].records, config={"top_k": "three", "name": "odd"}, fingerprint="f")
    with pytest.raises(CompareError, match=r"top_k is 'three'.*Pass `k`"):
        compare(odd, runs[1])
    forced = compare(odd, runs[1], k=2)
    assert (forced.baseline.k, forced.candidate.k) == (2, 2)
    assert (compare(*runs).baseline.k, compare(*runs, k=1).candidate.k) == (2, 1)


def test_label_drift_is_a_warning_naming_the_cases(runs: tuple[Run, Run]) -> None:
    corpus = load_corpus(FIXTURE / "corpus.csv").frame
    relabeled = corpus.with_columns(
        pl.when(pl.col("case_id") == "c-cut@v1")
        .then(pl.lit("What do interns get to spend on equipment?"))
        .otherwise(pl.col("question"))
        .alias("question")
    )
    candidate = freeze_run(FIXTURE / "candidate.jsonl", relabeled, CONFIG | {"name": "candidate"})
    [corpora, drift] = compare(runs[0], candidate, passages=FIXTURE / "passages.csv").warnings
    assert drift.startswith("the two runs hold different labels for 1 case (c-cut@v1)")
    assert "different corpora" in corpora
    against_corpus = compare(runs[0], candidate, corpus=corpus).warnings
    assert "run 'candidate' was frozen with other labels than `corpus` for 1 case (c-cut@v1)." in against_corpus


@pytest.mark.parametrize(
    ("required", "drifted"),
    [(["p2", "p1"], False), (["p1", "p2", "p3"], True), (["p1"], True), (["p1", "p3"], True)],
)
def test_required_passages_are_a_set_for_label_drift(runs: tuple[Run, Run], required: list[str], drifted: bool) -> None:
    corpus = load_corpus(FIXTURE / "corpus.csv").frame
    relabeled = corpus.with_columns(
        pl.when(pl.col("case_id") == "c-improved@v1")
        .then(pl.lit(required, dtype=pl.List(pl.String)))
        .otherwise(pl.col("required_passage_ids"))
        .alias("required_passage_ids")
    )
    candidate = freeze_run(FIXTURE / "candidate.jsonl", relabeled, CONFIG | {"name": "candidate"})
    warnings = compare(runs[0], candidate).warnings
    drift = [warning for warning in warnings if warning.startswith("the two runs hold different labels")]
    assert len(drift) == int(drifted)
    assert all(warning.startswith("the two runs hold different labels for 1 case (c-improved@v1)") for warning in drift)


SWAPPED = {
    "improved": "regressed",
    "regressed": "improved",
    "missing_in_baseline": "missing_in_candidate",
    "missing_in_candidate": "missing_in_baseline",
    "failed_in_baseline": "failed_in_candidate",
    "failed_in_candidate": "failed_in_baseline",
}

PASSAGES = pl.read_csv(FIXTURE / "passages.csv")
SENTENCES = [*PASSAGES.get_column("text").to_list(), "I don't know.", "It is 999 euros."]
record = st.fixed_dictionaries(
    {
        "status": st.sampled_from(["ok", "ok", "ok", "failed"]),
        "retrieved": st.lists(st.sampled_from(PASSAGES.get_column("passage_id").to_list()), max_size=4),
        "sent": st.integers(0, 4),
        "answer": st.sampled_from(SENTENCES),
    }
)


def records_frame(case_ids: list[str], drawn: list[dict[str, object] | None]) -> pl.DataFrame:
    texts = dict(PASSAGES.select("passage_id", "text").iter_rows())
    rows = []
    for case_id, item in zip(case_ids, drawn, strict=True):
        if item is None:
            continue
        sent = item["retrieved"][: item["sent"]]  # type: ignore[index]
        rows.append(
            {
                "case_id": case_id,
                "status": item["status"],
                "retrieved_passage_ids": item["retrieved"],
                "context_passage_ids": sent,
                "context": "\n\n".join(texts[passage] for passage in sent),
                "answer": item["answer"],
            }
        )
    return pl.DataFrame(rows, schema_overrides={"retrieved_passage_ids": pl.List(pl.String)})


@given(st.data())
@settings(max_examples=16, deadline=None)
def test_swapping_sides_mirrors_every_status_and_a_run_against_itself_is_unchanged(data: st.DataObject) -> None:
    corpus = load_corpus(FIXTURE / "corpus.csv")
    case_ids = corpus.frame.get_column("case_id").to_list()
    drawn = [data.draw(st.lists(st.none() | record, min_size=13, max_size=13)) for _ in range(2)]
    assume(all(any(item is not None for item in side) for side in drawn))
    sides = [records_frame(case_ids, side) for side in drawn]
    first, second = (freeze_run(frame, corpus, CONFIG) for frame in sides)
    forward = compare(first, second).cases.select("case_id", pl.col("status").cast(pl.String))
    backward = compare(second, first).cases.select("case_id", pl.col("status").cast(pl.String))
    assert forward.get_column("case_id").to_list() == backward.get_column("case_id").to_list()
    mirrored = [SWAPPED.get(status, status) for status in forward.get_column("status")]
    assert mirrored == backward.get_column("status").to_list()
    itself = set(compare(first, first).cases.get_column("status").cast(pl.String))
    assert itself <= {"unchanged", "failed_in_both"}


def test_json_written_in_slices_is_the_same_document(runs: tuple[Run, Run], monkeypatch: pytest.MonkeyPatch) -> None:
    comparison = compare(*runs, corpus=FIXTURE / "corpus.csv")
    whole = comparison.to_json()
    monkeypatch.setattr("rag_compare.compute.comparison._JSON_SLICE_ROWS", 5)
    sliced = comparison.to_json()
    assert sliced == whole
    assert len(json.loads(sliced)["cases"]) == 13


@pytest.mark.parametrize("tolerance", [float("nan"), float("inf"), -1.0])
def test_refuses_a_tolerance_that_is_not_a_finite_number_of_zero_or_more(
    runs: tuple[Run, Run], tolerance: float
) -> None:
    with pytest.raises(CompareError, match=rf"tolerance must be a finite number of 0 or more, got {tolerance!r}"):
        compare(*runs, tolerance=tolerance)


def _ranked_runs(baseline_rank: int, candidate_rank: int) -> tuple[Run, Run]:
    """One answerable case whose single gold passage is retrieved at these ranks (each list ends with it)."""
    corpus = load_corpus(
        pl.DataFrame(
            {
                "case_id": ["c@v1"],
                "question": ["Q?"],
                "answerability": ["answerable"],
                "source_version": ["v1"],
                "required_passage_ids": [["gold"]],
            }
        )
    )

    def run(rank: int) -> Run:
        ranked = [f"other-{index}" for index in range(1, rank)] + ["gold"]
        records = pl.DataFrame({"case_id": ["c@v1"], "retrieved_passage_ids": [ranked], "answer": ["gold says so."]})
        return freeze_run(records, corpus, {"name": f"rank {rank}"})

    return run(baseline_rank), run(candidate_rank)


def test_a_reason_shows_digits_enough_to_tell_the_two_values_apart() -> None:
    comparison = compare(*_ranked_runs(100, 101))
    assert comparison.cases.get_column("reasons").to_list() == [
        ["mrr 0.01 -> 0.0099 (worse)", "ndcg 0.1502 -> 0.1499 (worse)"]
    ]


def test_a_reason_keeps_three_decimals_and_whole_numbers_where_they_differ() -> None:
    comparison = compare(*_ranked_runs(1, 3))
    assert comparison.cases.get_column("reasons").to_list() == [["mrr 1 -> 0.333 (worse)", "ndcg 1 -> 0.5 (worse)"]]


# A manual case, an unreviewed synthetic draft and a draft reviewed since (gold, like a manual case).
DRAFTS = pl.DataFrame(
    {
        "case_id": ["a@v1", "draft@v1", "admitted@v1"],
        "question": ["Q a?", "Q draft?", "Q admitted?"],
        "answerability": ["answerable"] * 3,
        "source_version": ["v1"] * 3,
        "required_passage_ids": [["p1"]] * 3,
        "origin": ["manual", "synthetic", "synthetic"],
        "reviewed": [True, False, True],
    }
)


def _drafts_run(case_ids: list[str], repeats: int = 1) -> Run:
    records = pl.DataFrame({"case_id": case_ids, "retrieved_passage_ids": [["p1"]] * len(case_ids)})
    if repeats > 1:
        records = pl.concat([records.with_columns(repeat=pl.lit(number)) for number in range(repeats)])
    return freeze_run(records, DRAFTS, CONFIG, include_unreviewed="draft@v1" in case_ids)


@pytest.mark.parametrize("corpus", [DRAFTS, None])
@pytest.mark.parametrize(
    ("baseline", "candidate", "repeats"),
    [
        (["a@v1"], ["a@v1"], 1),
        (["a@v1", "draft@v1"], ["a@v1"], 1),
        (["a@v1"], ["a@v1", "draft@v1"], 1),
        (["a@v1", "draft@v1"], ["a@v1"], 3),
    ],
)
def test_an_unreviewed_draft_a_run_left_out_is_not_run_not_missing(
    baseline: list[str], candidate: list[str], repeats: int, corpus: pl.DataFrame | None
) -> None:
    comparison = compare(_drafts_run(baseline, repeats), _drafts_run(candidate), corpus)
    assert comparison.cases.get_column("case_id").to_list() == (
        ["a@v1", "admitted@v1"] if corpus is not None else ["a@v1"]
    )
    in_either = "draft@v1" in baseline + candidate
    assert comparison.unreviewed_left_out == (("draft@v1",) if corpus is not None or in_either else ())
    assert comparison.counts["missing_in_both"] == (1 if corpus is not None else 0)  # admitted@v1: gold, not run
    assert comparison.counts["missing_in_baseline"] == comparison.counts["missing_in_candidate"] == 0
    said = json.loads(comparison.to_json())
    assert said["unreviewed_left_out"] == list(comparison.unreviewed_left_out)
    assert ("not run: unreviewed synthetic 1" in comparison.render("text")) == bool(comparison.unreviewed_left_out)


def test_an_unreviewed_draft_both_runs_ran_is_compared() -> None:
    runs = (_drafts_run(["a@v1", "draft@v1"]), _drafts_run(["a@v1", "draft@v1"]))
    for corpus in (DRAFTS, None):
        comparison = compare(*runs, corpus)
        assert comparison.cases.filter(pl.col("case_id") == "draft@v1").item(0, "status") == "unchanged"
        assert comparison.unreviewed_left_out == ()


def test_an_unreviewed_draft_left_out_of_a_run_directory_is_not_run(tmp_path: Path) -> None:
    runs = []
    for side, case_ids in (("baseline", ["a@v1", "draft@v1"]), ("candidate", ["a@v1"])):
        records = pl.DataFrame({"case_id": case_ids, "retrieved_passage_ids": [["p1"]] * len(case_ids)})
        runs.append(tmp_path / f"{side}/")
        freeze_run(records, DRAFTS, CONFIG, output=runs[-1], buckets=2, include_unreviewed=side == "baseline")
    comparison = compare(*runs, engine="streaming")
    assert (comparison.n_cases, comparison.unreviewed_left_out) == (1, ("draft@v1",))
