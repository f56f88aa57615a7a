"""A case as the review page and its API show it: the summaries' deltas and labels, and one case's sides
(passages with rank, score, text, gold and in-context flags; the context's marks; answers diffed; latency,
tokens, a failure's stage), for run files and runs in memory, single samples and repeats, a side failed or
missing; the values worked out by hand from tests/fixtures/handmade/records and the examples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from rag_compare import CompareError, compare, freeze_run, load_run
from rag_compare.compute.case_details import MAX_DIFF_WORDS, case_details, case_summaries
from rag_compare.compute.comparison import Comparison
from rag_compare.compute.word_diff import MAX_DIFF_WORDS as WORD_DIFF_LIMIT
from rag_compare.io.pairs import judge_pairs
from tests.helpers import pairs
from tests.helpers.data import HANDMADE_RUNS, ROOT, SMALL_CORPUS, SMALL_RECORDS

EXAMPLES = ROOT / "runs"
PASSAGES = ROOT / "corpora" / "handbook_passages.csv"
REPEATS = ROOT / "tests" / "fixtures" / "repeats"
SUMMARY_KEYS = [
    "case_id",
    "status",
    "stage",
    "reasons",
    "reason_stages",
    "category",
    "answerability",
    "language",
    "question",
    "deltas",
]
DETAIL_KEYS = [
    *SUMMARY_KEYS,
    "acceptance_note",
    "source_version",
    "required_passage_ids",
    "sides",
    "answer_diff",
    "claim_changes",
]
SIDE_KEYS = [
    "present",
    "status",
    "error",
    "failed_stage",
    "signals",
    "passages",
    "context",
    "context_segments",
    "missing_from_context",
    "answer",
    "latency_ms",
    "prompt_tokens",
    "completion_tokens",
    "claims",
]
PASSAGE_KEYS = ["rank", "passage_id", "score", "text", "gold", "in_context"]

# equipment-budget@2026-01 in tests/fixtures/handmade/records: both sides retrieve the 800-euro rule first;
# the candidate (top_k 5) also retrieves the engineers' exception at rank 4, but its 600-character context
# holds only the first three passages: a context-construction failure.
EQUIPMENT = "equipment-budget@2026-01"
RULE, EXCEPTION = "equipment-budget-1@2026-01", "equipment-budget-exception-1@2026-01"
RULE_TEXT = (
    "Each employee has an equipment budget of 800 euros every three years for a monitor, headset and other accessories."
)
EQUIPMENT_PASSAGES = {  # rank: (passage id, score, gold, in context)
    "baseline": [
        (1, RULE, 14.95, True, True),
        (2, "equipment-furniture-1@2026-01", 11.84, False, True),
        (3, "phone-company-1@2026-01", 10.04, False, True),
    ],
    "candidate": [
        (1, RULE, 14.95, True, True),
        (2, "equipment-furniture-1@2026-01", 11.84, False, True),
        (3, "phone-company-1@2026-01", 10.04, False, True),
        (4, EXCEPTION, 8.21, True, False),
        (5, "bike-lease-1@2026-01", 5.61, False, False),
    ],
}
EQUIPMENT_DIFF = [
    ["-", "You have"],
    ["+", "Each employee has"],
    ["=", RULE_TEXT.removeprefix("Each employee has")],
]


@pytest.fixture(scope="module")
def handmade() -> Comparison:
    return compare(HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow", passages=PASSAGES)


@pytest.fixture(scope="module")
def examples() -> Comparison:
    return compare(EXAMPLES / "baseline.arrow", EXAMPLES / "candidate.arrow", passages=PASSAGES)


def test_the_named_case_shows_each_sides_passages_as_ranked_with_their_flags(handmade: Comparison) -> None:
    (detail,) = case_details(handmade, [EQUIPMENT])
    for side, expected in EQUIPMENT_PASSAGES.items():
        passages = detail["sides"][side]["passages"]
        shown = [(p["rank"], p["passage_id"], p["score"], p["gold"], p["in_context"]) for p in passages]
        assert shown == expected
        assert passages[0]["text"] == RULE_TEXT
    assert detail["sides"]["candidate"]["passages"][3]["text"].startswith("Exception: engineers and designers")


def test_the_named_case_marks_the_rule_in_each_context_and_names_the_exception_missing(handmade: Comparison) -> None:
    (detail,) = case_details(handmade, [EQUIPMENT])
    for side in ("baseline", "candidate"):
        shown = detail["sides"][side]
        segments = shown["context_segments"]
        assert [(s["passage_id"], s["cut"]) for s in segments] == [(None, False), (RULE, False), (None, False)]
        assert segments[0]["text"] == f"[{RULE}] "
        assert segments[1]["text"] == RULE_TEXT
        assert segments[2]["text"].startswith("\n\n[equipment-furniture-1@2026-01] ")
        assert "".join(s["text"] for s in segments) == shown["context"]
        assert shown["missing_from_context"] == [EXCEPTION]


def test_the_named_case_has_its_labels_answers_diff_latency_and_tokens(handmade: Comparison) -> None:
    (detail,) = case_details(handmade, [EQUIPMENT])
    assert list(detail) == DETAIL_KEYS
    assert detail["status"] == "mixed"
    assert detail["required_passage_ids"] == [RULE, EXCEPTION]
    assert detail["source_version"] == "2026-01"
    assert detail["acceptance_note"].startswith("Must say 800 euros every three years")
    assert detail["question"] == "How much can I spend on work equipment, such as a monitor or headset?"
    assert detail["answer_diff"] == EQUIPMENT_DIFF
    baseline, candidate = detail["sides"]["baseline"], detail["sides"]["candidate"]
    assert (baseline["latency_ms"], baseline["prompt_tokens"], baseline["completion_tokens"]) == (1249.3, 176, 26)
    assert (candidate["latency_ms"], candidate["prompt_tokens"], candidate["completion_tokens"]) == (1284.7, 176, 28)
    assert candidate["answer"] == RULE_TEXT
    assert candidate["signals"]["context_construction_failure"] is True
    assert baseline["signals"]["recall"] == 0.5
    assert detail["deltas"]["recall"] == 0.5
    assert detail["deltas"]["context_construction_failure"] == 1.0
    assert detail["deltas"]["full_coverage"] == 1.0


def test_a_failed_side_shows_its_status_and_error_and_no_signal_or_answer(handmade: Comparison) -> None:
    (detail,) = case_details(handmade, ["phone-allowance@2026-01"])
    candidate = detail["sides"]["candidate"]
    assert detail["status"] == "failed_in_candidate"
    assert candidate["present"] is True
    assert (candidate["status"], candidate["error"]) == ("timeout", "generator timed out after 30 s")
    assert set(candidate["signals"].values()) == {None}
    assert candidate["answer"] is None
    assert candidate["missing_from_context"] is None
    assert candidate["latency_ms"] == 30012.3
    assert [p["rank"] for p in candidate["passages"]] == [1, 2, 3, 4, 5]  # what it retrieved before it failed
    assert detail["answer_diff"] is None
    assert set(detail["deltas"].values()) == {None}


def test_a_failed_sides_stage_is_shown_when_the_run_records_it(examples: Comparison) -> None:
    (detail,) = case_details(examples, ["sick-leave-certificate@2026-01"])
    candidate = detail["sides"]["candidate"]
    assert (candidate["status"], candidate["failed_stage"]) == ("failed", "generate")
    assert candidate["error"].startswith("HTTP 503")
    assert detail["sides"]["baseline"]["failed_stage"] is None


def test_a_missing_side_is_not_present_and_holds_nothing(handmade: Comparison) -> None:
    (detail,) = case_details(handmade, ["public-transport-pass@2026-01"])
    candidate = detail["sides"]["candidate"]
    assert detail["status"] == "missing_in_candidate"
    assert list(candidate) == SIDE_KEYS
    assert candidate["present"] is False
    assert candidate["passages"] == []
    assert set(candidate["signals"].values()) == {None}
    assert all(candidate[name] is None for name in SIDE_KEYS if name not in ("present", "signals", "passages"))
    assert detail["sides"]["baseline"]["present"] is True
    assert detail["sides"]["baseline"]["answer"]
    assert detail["answer_diff"] is None


def test_deltas_are_candidate_minus_baseline_for_every_signal_flags_as_numbers(handmade: Comparison) -> None:
    cases = handmade.cases
    summaries = case_summaries(handmade, cases, None)
    signals = [signal.name for signal in handmade.signals]
    for row, summary in zip(cases.iter_rows(named=True), summaries, strict=True):
        expected = {}
        for name in signals:
            before, after = row[f"baseline_{name}"], row[f"candidate_{name}"]
            expected[name] = None if before is None or after is None else float(after) - float(before)
        assert summary["deltas"] == pytest.approx(expected)
        assert summary["case_id"] == row["case_id"]
        assert summary["status"] == row["status"]
        assert (summary["stage"], summary["reason_stages"]) == (row["stage"], row["reason_stages"])
        assert [summary[name] for name in ("reasons", "category", "answerability")] == [
            row["reasons"],
            row["category"],
            row["answerability"],
        ]
    moved = {summary["case_id"] for summary in summaries if any(summary["deltas"].values())}
    assert "parental-leave-weeks@2026-01" in moved


def test_a_pairwise_preference_is_a_delta_of_plus_one_minus_one_or_zero() -> None:
    runs = (
        freeze_run(pairs.BASELINE, pairs.CORPUS, {"name": "b"}),
        freeze_run(pairs.CANDIDATE, pairs.CORPUS, {"name": "c"}),
    )
    comparison = compare(*runs, pairs=judge_pairs(*runs, pairs.ScriptedPairJudge()))
    deltas = {
        summary["case_id"]: summary["deltas"]["preferred"]
        for summary in case_summaries(comparison, comparison.cases, None)
    }
    assert deltas == {
        "a_better@v1": 1.0,
        "b_worse@v1": -1.0,
        "c_tie@v1": 0.0,
        "d_first@v1": None,  # inconsistent
        "e_same@v1": 0.0,  # identical answers: a tie
        "f_failed@v1": None,  # not judged
        "g_missing@v1": None,
        "h_judgefail@v1": None,
        "i_halftie@v1": None,
    }


def test_runs_in_memory_give_the_details_of_their_run_files(handmade: Comparison) -> None:
    in_memory = compare(
        load_run(HANDMADE_RUNS / "baseline.arrow"), load_run(HANDMADE_RUNS / "candidate.arrow"), passages=PASSAGES
    )
    ids = handmade.cases.get_column("case_id").to_list()
    assert case_details(in_memory, ids) == case_details(handmade, ids)


def test_details_come_in_the_order_asked_and_a_case_asked_twice_twice(handmade: Comparison) -> None:
    ids = ["sabbatical@2026-01", EQUIPMENT, "bike-lease@2025-01", EQUIPMENT]
    assert [detail["case_id"] for detail in case_details(handmade, ids)] == ids
    assert case_details(handmade, []) == []


def test_an_unknown_case_id_is_refused_by_name(handmade: Comparison) -> None:
    with pytest.raises(CompareError, match=r"`case_ids`: this comparison has no case 'nope@1'"):
        case_details(handmade, [EQUIPMENT, "nope@1"])


def test_with_repeats_the_sample_shown_is_the_first_that_succeeded_and_deltas_are_of_means() -> None:
    corpus = REPEATS / "corpus.csv"
    runs = [
        freeze_run(pl.read_ndjson(REPEATS / f"{side}.jsonl"), corpus, {"name": side})
        for side in ("baseline", "candidate")
    ]
    comparison = compare(*runs)
    c2, c6, c8 = case_details(comparison, ["c2@v1", "c6@v1", "c8@v1"])
    assert c2["deltas"]["recall"] == pytest.approx(2 / 3 - 1)  # G G G against G G B
    assert [p["passage_id"] for p in c2["sides"]["candidate"]["passages"]] == ["p1"]  # repeat 0, G
    assert c6["sides"]["candidate"]["status"] == "ok"  # two of three samples succeeded
    assert c6["sides"]["candidate"]["answer"] == "Hotels are capped at 150 euros per night."
    assert c6["answer_diff"] == [["=", "Hotels are capped at 150 euros per night."]]
    assert (c8["sides"]["candidate"]["status"], c8["sides"]["candidate"]["error"]) == (
        "timeout",
        "read timed out after 30 s",
    )
    assert c8["sides"]["candidate"]["answer"] is None


@pytest.fixture
def small(tmp_path: Path) -> Comparison:
    """SMALL_CORPUS with a language column, and its records as both runs, with no passages file."""
    corpus = tmp_path / "corpus.csv"
    lines = SMALL_CORPUS.splitlines()
    languages = ["language", "en", "de", "en", "fr"]
    corpus.write_text("\n".join(f"{line},{tag}" for line, tag in zip(lines, languages, strict=True)) + "\n")
    records = pl.read_ndjson(SMALL_RECORDS.encode())
    baseline = freeze_run(records, corpus, {"name": "b"})
    candidate = freeze_run(records.with_columns(answer=pl.lit("150 euros per night.")), corpus, {"name": "c"})
    return compare(baseline, candidate, corpus)


def test_the_language_is_the_corpus_label(small: Comparison) -> None:
    summaries = case_summaries(small, small.cases, None)
    assert {s["case_id"]: s["language"] for s in summaries} == {
        "ceo@v2": "en",
        "hotel@v2": "en",
        "meal@v2": "de",
        "mileage@v2": "fr",
    }
    assert [list(summary) for summary in summaries] == [SUMMARY_KEYS] * 4


def test_without_passages_a_passage_has_no_text_and_in_context_comes_from_the_records_ids(small: Comparison) -> None:
    hotel, mileage = case_details(small, ["hotel@v2", "mileage@v2"])
    shown = hotel["sides"]["baseline"]
    assert [(p["passage_id"], p["score"], p["text"], p["gold"], p["in_context"]) for p in shown["passages"]] == [
        ("hotel-1", 2.0, None, True, True),
        ("x", 1.0, None, False, False),
    ]
    assert shown["context_segments"] == [{"text": "[hotel-1] 150", "passage_id": None, "cut": False}]
    assert (shown["latency_ms"], shown["prompt_tokens"], shown["completion_tokens"]) == (812.5, 120, 8)
    assert hotel["answer_diff"] == [["=", "150 "], ["-", "euros."], ["+", "euros per night."]]
    unknown = mileage["sides"]["baseline"]  # no context and no context ids recorded
    assert [p["in_context"] for p in unknown["passages"]] == [None, None]
    assert (unknown["context"], unknown["context_segments"]) == (None, None)


def test_in_context_is_the_passage_text_found_in_the_context_when_the_record_lists_no_ids(small: Comparison) -> None:
    records = pl.read_ndjson(SMALL_RECORDS.encode()).drop("context_passage_ids")
    corpus = pl.read_csv(SMALL_CORPUS.encode()).with_columns(pl.col("required_passage_ids").str.split(";"))
    run = freeze_run(records, corpus, {"name": "no-ids"})
    passages = pl.DataFrame({"passage_id": ["hotel-1", "x"], "source_version": ["v2", "v2"], "text": ["150", "absent"]})
    (hotel,) = case_details(compare(run, run, passages=passages), ["hotel@v2"])
    shown = hotel["sides"]["candidate"]
    assert [(p["text"], p["in_context"]) for p in shown["passages"]] == [("150", True), ("absent", False)]
    assert shown["context_segments"] == [
        {"text": "[hotel-1] ", "passage_id": None, "cut": False},
        {"text": "150", "passage_id": "hotel-1", "cut": False},
    ]


def test_summaries_take_the_texts_given_and_read_them_when_not(handmade: Comparison) -> None:
    cases = handmade.cases.head(3)
    read = case_summaries(handmade, cases, None)
    given = handmade.texts.of(cases.get_column("case_id"))
    assert case_summaries(handmade, cases, given) == [summary | {"language": None} for summary in read]
    renamed = given.with_columns(question=pl.lit("asked differently"))
    assert {summary["question"] for summary in case_summaries(handmade, cases, renamed)} == {"asked differently"}
    searched = cases.with_columns(question=pl.lit("from the rows"), language=pl.lit("xx"))  # rows a query kept
    summaries = case_summaries(handmade, searched, None)
    assert {(summary["question"], summary["language"]) for summary in summaries} == {("from the rows", "xx")}


def test_every_case_of_the_examples_is_plain_json_whose_pieces_join_back(examples: Comparison) -> None:
    ids = examples.cases.get_column("case_id").to_list()
    details = case_details(examples, ids)
    json.dumps(details, allow_nan=False)
    for detail in details:
        assert list(detail) == DETAIL_KEYS
        required = detail["required_passage_ids"] or []
        for side in ("baseline", "candidate"):
            shown: dict[str, Any] = detail["sides"][side]
            assert list(shown) == SIDE_KEYS
            assert [p["rank"] for p in shown["passages"]] == list(range(1, len(shown["passages"]) + 1))
            assert all(
                list(p) == PASSAGE_KEYS and p["gold"] == (p["passage_id"] in required) for p in shown["passages"]
            )
            if shown["context"] is not None:
                assert "".join(s["text"] for s in shown["context_segments"]) == shown["context"]
                found = {s["passage_id"] for s in shown["context_segments"] if s["passage_id"] and not s["cut"]}
                assert found == set(required) - set(shown["missing_from_context"] or [])
        answers = [detail["sides"][side]["answer"] for side in ("baseline", "candidate")]
        if detail["answer_diff"] is not None:
            assert "".join(t for op, t in detail["answer_diff"] if op != "+") == answers[0]
            assert "".join(t for op, t in detail["answer_diff"] if op != "-") == answers[1]
        else:
            assert None in answers


def test_max_diff_words_is_the_word_diffs_limit() -> None:
    assert MAX_DIFF_WORDS == WORD_DIFF_LIMIT == 5_000
