"""Fallback-rule simulation: a hand-made run and scores with each kind of case, expected numbers beside them."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from rag_compare.compute.case_signals import case_signals
from rag_compare.compute.fallback import DEFAULT_FALLBACK_TEXT, SWEEP_THRESHOLDS, simulate_fallback
from rag_compare.compute.freezing import freeze_run
from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.core.errors import RunExistsError, ScoresError
from rag_compare.io.runs import Run, load_run
from tests.helpers.data import HANDMADE_RUNS

FALLBACK = "Please contact HR."
IDK = "I don't know."

# case_id, answerability, required passages, status, context passage ids, answer, human_ok
CASES = [
    ("ceo@v1", "unanswerable", [], "ok", [], "The CEO earns 1M.", False),  # answered an unanswerable: bad
    ("leave@v1", "unanswerable", [], "ok", [], IDK, True),  # abstained on an unanswerable: good
    ("meal@v1", "answerable", ["meal-1"], "ok", ["meal-1"], IDK, False),  # abstained on an answerable: bad
    ("hotel@v1", "answerable", ["hotel-1", "hotel-2"], "ok", ["hotel-1"], "150 euros.", None),  # hotel-2 cut: bad
    ("bike@v1", "answerable", ["bike-1"], "ok", ["bike-1"], "Up to 3,000 euros.", True),  # good
    ("parking@v1", "answerable", ["park-1"], "ok", ["park-1"], "Free.", True),  # good (with a low score)
    ("mileage@v1", "conflict", ["mile-1", "mile-2"], "ok", ["mile-1", "mile-2"], "Sources disagree.", True),  # good
    ("tax@v1", "answerable", ["tax-1"], "ok", None, "20 percent.", True),  # coverage unknown: truth unknown
    ("gym@v1", "answerable", ["gym-1"], "ok", ["gym-1"], "Yes.", True),  # good; judging failed
    ("desk@v1", "answerable", ["desk-1"], "ok", ["desk-1"], "Row 3.", True),  # good; missing from the scores
    ("train@v1", "answerable", ["train-1"], "failed", None, None, False),  # failed: not answered, whatever the review
    ("visa@v1", "unanswerable", [], "timeout", None, None, None),  # timed out, missing from the scores: not answered
]
EXPECTED_BAD = [True, False, True, True, False, False, False, None, False, False, None, None]

# The scores: desk@v1 and visa@v1 are absent; train@v1 (a failed record) carries a low score that must never replace it.
SCORES = pl.DataFrame(
    {
        "case_id": [case[0] for case in CASES if case[0] not in {"desk@v1", "visa@v1"}],
        "judge_status": ["ok"] * 8 + ["judge_failed", "not_judged"],
        "judge_error": [None] * 8 + ["timeout", None],
        "trustworthiness": [0.2, 0.6, 0.5, 0.3, 0.9, 0.4, 0.7, 0.2, None, 0.1],
        "votes": [1, 3, 2, 1, 3, 2, 3, 1, None, 0],
        "grounded_flag": [True] * 9 + [None],
        "note": ["x"] * 10,
    }
)
# At T: replaced = ok records scored below T (ceo .2, tax .2, hotel .3, parking .4, meal .5, leave .6, mileage .7,
# bike .9); ok records: 10, not answered: 2 (train, visa), unscored: 2 (gym, desk), unknown truth: 1 (tax).
# threshold: (replaced, shown, bad_caught, good_hidden, bad_shown, good_shown, catch_rate, hide_rate)
EXPECTED = {
    0.5: (4, 6, 2, 1, 1, 5, 2 / 3, 1 / 6),  # ceo, tax, hotel, parking; meal (== 0.5) is kept
    0.0: (0, 10, 0, 0, 3, 6, 0.0, 0.0),
    0.35: (3, 7, 2, 0, 1, 6, 2 / 3, 0.0),  # ceo, tax, hotel
    1.0: (8, 2, 3, 4, 0, 2, 1.0, 4 / 6),  # all scored ok records; gym and desk are shown
}


@pytest.fixture(scope="module")
def run() -> Run:
    corpus = pl.DataFrame(
        {
            "case_id": [case[0] for case in CASES],
            "question": [f"Question {case[0]}?" for case in CASES],
            "answerability": [case[1] for case in CASES],
            "source_version": ["v1"] * len(CASES),
            "required_passage_ids": [case[2] for case in CASES],
            "category": ["rule"] * len(CASES),
        }
    )
    records = pl.DataFrame(
        {
            "case_id": [case[0] for case in CASES],
            "status": [case[3] for case in CASES],
            "context_passage_ids": pl.Series([case[4] for case in CASES], dtype=pl.List(pl.String)),
            "answer": [case[5] for case in CASES],
            "human_ok": pl.Series([case[6] for case in CASES], dtype=pl.Boolean),
            "reviewer": ["ann"] * len(CASES),
        }
    )
    return freeze_run(records, corpus, {"name": "hand-made"})


def test_label_truth_per_case(run: Run) -> None:
    sim = simulate_fallback(run, SCORES, "trustworthiness", [0.5])
    assert sim.cases["case_id"].to_list() == [case[0] for case in CASES]
    assert sim.cases["bad"].to_list() == EXPECTED_BAD


def test_counts_and_rates_per_threshold(run: Run) -> None:
    sim = simulate_fallback(run, SCORES, "trustworthiness", list(EXPECTED))
    table = sim.thresholds
    assert table["threshold"].to_list() == list(EXPECTED)
    columns = ("replaced", "shown", "bad_caught", "good_hidden", "bad_shown", "good_shown", "catch_rate", "hide_rate")
    for row, expected in zip(table.iter_rows(named=True), EXPECTED.values(), strict=True):
        assert tuple(row[name] for name in columns) == pytest.approx(expected), row["threshold"]
        assert (row["unscored"], row["unknown"], row["not_answered"]) == (2, 1, 2)
    assert table.schema["replaced"] == pl.Int64


def test_decisions_at_the_first_threshold(run: Run) -> None:
    sim = simulate_fallback(run, SCORES, "trustworthiness", [0.5, 1.0], fallback_text=FALLBACK)
    cases = {row["case_id"]: row for row in sim.cases.iter_rows(named=True)}
    replaced = [case_id for case_id, row in cases.items() if row["replaced"]]
    assert replaced == ["ceo@v1", "hotel@v1", "parking@v1", "tax@v1"]
    assert not cases["meal@v1"]["replaced"]  # score == threshold is kept
    assert not cases["train@v1"]["replaced"]  # failed record with a low score
    assert cases["train@v1"]["record_status"] == "failed"
    assert cases["gym@v1"]["score"] is None
    assert cases["gym@v1"]["judge_status"] == "judge_failed"
    assert cases["desk@v1"]["score"] is None  # kept though the scores lack it
    assert cases["desk@v1"]["judge_status"] is None


def test_original_answers_kept_and_shown_answer(run: Run) -> None:
    sim = simulate_fallback(run, SCORES, "trustworthiness", [0.5], fallback_text=FALLBACK)
    assert sim.cases["original_answer"].to_list() == [case[5] for case in CASES]
    shown = [FALLBACK if case[0] in {"ceo@v1", "hotel@v1", "parking@v1", "tax@v1"} else case[5] for case in CASES]
    assert sim.cases["shown_answer"].to_list() == shown
    assert shown[-1] is None  # the failed record has no answer
    assert sim.fallback_text == FALLBACK
    assert simulate_fallback(run, SCORES, "trustworthiness", [0.5]).fallback_text == DEFAULT_FALLBACK_TEXT


def test_sweep_and_integer_signal(run: Run) -> None:
    assert len(SWEEP_THRESHOLDS) == 21
    assert SWEEP_THRESHOLDS[:3] == (0.0, 0.05, 0.1)
    assert SWEEP_THRESHOLDS[-1] == 1.0
    sim = simulate_fallback(run, SCORES, "trustworthiness", SWEEP_THRESHOLDS)
    assert sim.thresholds.height == 21
    assert sim.thresholds["replaced"].to_list()[:6] == [0, 0, 0, 0, 0, 2]  # 0.25: ceo and tax (0.2)
    votes = simulate_fallback(run, SCORES, "votes", [1.0])  # integer votes in [0, 3]: nothing below 1 but train
    assert votes.thresholds["replaced"].item() == 0
    assert votes.cases.schema["score"] == pl.Float64


def test_truth_column(run: Run) -> None:
    sim = simulate_fallback(run, SCORES, "trustworthiness", [0.5, 0.0], truth="human_ok")
    # human_ok false: ceo, meal (bad); null: hotel; not answered: train, visa; the rest good.
    assert sim.cases["bad"].to_list() == [True, False, True, None, False, False, False, False, False, False, None, None]
    first, zero = sim.thresholds.iter_rows(named=True)
    assert (first["bad_caught"], first["good_hidden"], first["bad_shown"], first["unknown"]) == (1, 2, 1, 1)
    assert first["catch_rate"] == pytest.approx(0.5)
    assert zero["hide_rate"] == 0.0
    all_good = simulate_fallback(_all_good(run), SCORES, "trustworthiness", [0.5], truth="human_ok")
    assert all_good.thresholds["catch_rate"].item() is None  # no bad answer: the rate is unknown, not 0
    assert all_good.thresholds["hide_rate"].item() == pytest.approx(4 / 10)


def _all_good(run: Run) -> Run:
    """The run with every answer reviewed as good."""
    return Run(records=run.records.with_columns(human_ok=pl.lit(True)), config=run.config, fingerprint=run.fingerprint)


def test_nan_score_is_unscored(run: Run) -> None:
    nan = SCORES.with_columns(
        pl.when(pl.col("case_id") == "bike@v1").then(float("nan")).otherwise("trustworthiness").alias("trustworthiness")
    )
    sim = simulate_fallback(run, nan, "trustworthiness", [1.0])
    assert sim.thresholds["unscored"].item() == 3  # gym, desk, bike
    assert sim.thresholds["replaced"].item() == 7
    assert sim.cases.filter(pl.col("case_id") == "bike@v1")["score"].item() is None


@pytest.mark.parametrize(
    ("signal", "thresholds", "message"),
    [
        ("helpfulness", [0.5], "signal 'helpfulness' is not a column of the scores; use a numeric column"),
        ("note", [0.5], "signal 'note' is a String column"),
        ("grounded_flag", [0.5], "trustworthiness, votes"),
        ("trustworthiness", [0.5, 1.5], "between 0 and 1; got 1.5"),
        ("trustworthiness", [-0.1], "got -0.1"),
        ("trustworthiness", [float("nan")], "got nan"),
        ("trustworthiness", [], "at least one threshold"),
    ],
)
def test_bad_signal_or_threshold(run: Run, signal: str, thresholds: list[float], message: str) -> None:
    with pytest.raises(ScoresError, match=message):
        simulate_fallback(run, SCORES, signal, thresholds)


def test_scores_of_another_run_are_refused(run: Run) -> None:
    strangers = pl.DataFrame({"case_id": [f"x{i}@v1" for i in range(12)], "judge_status": "ok", "trustworthiness": 0.5})
    with pytest.raises(ScoresError, match=r"12 case ids that run 'hand-made' lacks: x0@v1, .*x9@v1 … and 2 more"):
        simulate_fallback(run, pl.concat([SCORES.select(strangers.columns), strangers]), "trustworthiness", [0.5])
    twice = pl.concat([SCORES, SCORES.head(1)])
    with pytest.raises(ScoresError, match="more than once: ceo@v1"):
        simulate_fallback(run, twice, "trustworthiness", [0.5])


@pytest.mark.parametrize(
    ("column", "message"), [("human", "not a column of the run"), ("reviewer", "a String column.*human_ok")]
)
def test_bad_truth_column(run: Run, column: str, message: str) -> None:
    with pytest.raises(ScoresError, match=message):
        simulate_fallback(run, SCORES, "trustworthiness", [0.5], truth=column)


def test_inputs_not_mutated(run: Run) -> None:
    scores, records = SCORES.clone(), run.records.clone()
    simulate_fallback(run, SCORES, "trustworthiness", [0.5], truth="human_ok")
    simulate_fallback(run, SCORES, "trustworthiness", [0.5])
    assert SCORES.equals(scores)
    assert run.records.equals(records)
    assert run.records.columns == records.columns


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_write_cases_round_trips_and_never_overwrites(run: Run, tmp_path: Path, suffix: str) -> None:
    sim = simulate_fallback(run, SCORES, "trustworthiness", [0.5])
    path = tmp_path / f"cases{suffix}"
    sim.write_cases(path)
    read = {".csv": pl.read_csv, ".parquet": pl.read_parquet, ".jsonl": pl.read_ndjson}[suffix]
    back = read(path)
    assert back.height == len(CASES)
    assert back["case_id"].to_list() == sim.cases["case_id"].to_list()
    with pytest.raises(RunExistsError):
        sim.write_cases(path)
    assert read(path).height == len(CASES)


def test_write_cases_refuses_an_unknown_suffix(run: Run, tmp_path: Path) -> None:
    sim = simulate_fallback(run, SCORES, "trustworthiness", [0.5])
    with pytest.raises(ScoresError, match=r"unknown file type '\.xlsx'.*\.csv.*\.parquet.*\.jsonl"):
        sim.write_cases(tmp_path / "cases.xlsx")
    assert not list(tmp_path.iterdir())


def test_json_render(run: Run) -> None:
    evaluator = {"name": "openai", "fingerprint": "abc"}
    payload = json.loads(simulate_fallback(run, SCORES, "trustworthiness", [0.5], evaluator=evaluator).render("json"))
    assert list(payload) == ["run", "signal", "evaluator", "truth", "fallback_text", "thresholds", "cases"]
    assert payload["run"] == {"name": "hand-made", "fingerprint": run.fingerprint}
    assert payload["evaluator"] == evaluator
    assert payload["truth"] == {"source": "labels"}
    assert payload["thresholds"][0]["bad_caught"] == 2
    assert len(payload["cases"]) == len(CASES)
    assert payload["cases"][0]["shown_answer"] == DEFAULT_FALLBACK_TEXT


def test_label_truth_matches_the_full_lexical_judge() -> None:
    """The truth skips the grounding check; abstention and coverage are those of ``LexicalJudge``."""
    example = load_run(HANDMADE_RUNS / "candidate.arrow")
    scores = pl.DataFrame({"case_id": example.records["case_id"], "judge_status": "ok", "grounded": 0.5})
    bad = simulate_fallback(example, scores, "grounded", [0.5]).cases["bad"]
    signals = case_signals(example.records, LexicalJudge())
    unanswerable = example.records["answerability"] == "unanswerable"
    expected = (
        signals.select(
            pl.when(pl.lit(unanswerable))
            .then(~pl.col("abstention_correct"))
            .otherwise(pl.col("abstained") | (pl.col("context_coverage") < 1))
        )
        .to_series()
        .alias("bad")
    )
    assert bad.equals(expected)
    assert bad.sum() > 0
    assert (~bad).sum() > 0
