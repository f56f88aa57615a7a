"""Scores files: frozen, verified, tied to their run, holding no credential; a comparison uses them and shows judge
failures."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import Result

from rag_compare import LexicalJudge, compare, freeze_run
from rag_compare.core.errors import RunExistsError, RunIntegrityError, ScoresError, SecretInConfigError
from rag_compare.io.runs import Run, load_run
from rag_compare.io.scores import Scores, load_scores, make_scores, score_run
from tests.helpers.chat_server import ChatServer, Reply, sample_for_schema
from tests.helpers.credential_shapes import KEY_SHAPES, OPENAI_KEY, copied_as, legacy_run, named_with, secret_parts
from tests.helpers.data import HANDMADE_RUNS
from tests.helpers.judged import CORPUS, DEFAULT_REQUESTS, RECORDS, SAMPLED_RECORDS
from tests.helpers.page import page_parts

COMPLETENESS_OFF = "answer_completeness is off"
"""The warning of runs compared without passages or a knowledge base, beside the ones a test is about."""
EVALUATOR = {"name": "hand", "fingerprint": "f" * 64, "config": {"name": "hand"}}
# Hand-made verdicts: the baseline is helpful at 0.5 everywhere it answered; the candidate at 1.0 on q0
# (improved), 0.25 on q2 (regressed), judging failed on q1, 0.5 elsewhere. failed@v1 failed in both runs.
BASELINE_HELPFULNESS = [0.5] * 8 + [None]
CANDIDATE_HELPFULNESS = [1.0, None, 0.25, 0.5, 0.5, 0.5, 0.5, 0.5, None]
EXPECTED_STATUS = {
    "q0@v1": "improved",
    "q1@v1": "judge_failed_in_candidate",
    "q2@v1": "regressed",
    "failed@v1": "failed_in_both",
}
# Paired helpfulness: the 7 cases with a value on both sides (not q1, not failed@v1).
PAIRED = (7, 0.5, (1.0 + 0.25 + 0.5 * 5) / 7)
# All cases: q1 counts at 0 for the candidate, failed@v1 at 0 on both sides; 9 cases.
ALL_CASES = (9, 0.5 * 8 / 9, (1.0 + 0.25 + 0.5 * 5) / 9)


@pytest.fixture
def runs() -> tuple[Run, Run]:
    return freeze_run(RECORDS, CORPUS, {"name": "baseline"}), freeze_run(RECORDS, CORPUS, {"name": "candidate"})


def hand_scores(run: Run, helpfulness: list[float | None], failed: str | None = None, **kwargs: Path) -> Scores:
    ids = run.records.get_column("case_id")
    status = pl.when(ids == "failed@v1").then(pl.lit("not_judged"))
    if failed:
        status = status.when(ids == failed).then(pl.lit("judge_failed"))
    frame = pl.DataFrame({"case_id": ids, "helpfulness": pl.Series(helpfulness, dtype=pl.Float64)}).with_columns(
        judge_status=status.otherwise(pl.lit("ok")),
        judge_error=pl.when(ids == (failed or "")).then(pl.lit("helpfulness: HTTP 500 (gave up after 5 attempts)")),
    )
    return make_scores(run, frame, EVALUATOR, output=kwargs.get("output"))


def test_lexical_scores_round_trip(runs: tuple[Run, Run], tmp_path: Path) -> None:
    path = tmp_path / "baseline.scores.arrow"
    made = score_run(runs[0], LexicalJudge(), output=path)
    loaded = load_scores(path)
    assert loaded.frame.equals(made.frame)
    assert loaded.fingerprint == made.fingerprint
    assert loaded.run["fingerprint"] == runs[0].fingerprint
    assert loaded.evaluator["fingerprint"] == LexicalJudge().fingerprint
    assert loaded.frame.get_column("judge_status").to_list() == ["ok"] * 8 + ["not_judged"]
    assert loaded.signals == ("grounded", "abstained", "abstention_correct")
    assert json.loads(loaded.to_json())["judge_status_counts"] == {"ok": 8, "judge_failed": 0, "not_judged": 1}


def test_scores_files_honour_source_date_epoch_as_runs_do(
    runs: tuple[Run, Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795000000")
    run = freeze_run(RECORDS, CORPUS, {"name": "baseline"})
    first = score_run(run, LexicalJudge(), output=tmp_path / "first.arrow")
    again = score_run(run, LexicalJudge(), output=tmp_path / "again.arrow")
    assert first.created_at == run.created_at == "2026-11-18T11:06:40+00:00"
    assert again.fingerprint == first.fingerprint  # the same scores, byte for byte
    assert load_scores(tmp_path / "first.arrow").created_at == first.created_at


def test_scores_files_are_never_overwritten_and_verified(runs: tuple[Run, Run], tmp_path: Path) -> None:
    path = tmp_path / "scores.arrow"
    score_run(runs[0], LexicalJudge(), output=path)
    with pytest.raises(RunExistsError):
        score_run(runs[0], LexicalJudge(), output=path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(RunIntegrityError):
        load_scores(path)


def test_a_run_file_is_not_a_scores_file(tmp_path: Path) -> None:
    path = tmp_path / "run.arrow"
    freeze_run(RECORDS, CORPUS, {"name": "run"}, output=path)
    with pytest.raises(ScoresError, match="is not a scores file"):
        load_scores(path)


def test_scores_must_cover_their_run_once(runs: tuple[Run, Run]) -> None:
    frame = hand_scores(runs[0], BASELINE_HELPFULNESS).frame
    with pytest.raises(ScoresError, match="each of its 9 records once"):
        make_scores(runs[0], frame.head(8), EVALUATOR)
    with pytest.raises(ScoresError, match="unknown judge_status"):
        make_scores(runs[0], frame.with_columns(judge_status=pl.lit("fine")), EVALUATOR)
    with pytest.raises(ScoresError, match="'helpfulness' \\(a number\\)"):
        make_scores(runs[0], frame.with_columns(pl.col("helpfulness").cast(pl.String)), EVALUATOR)


def test_comparison_uses_scores_and_shows_judge_failures(runs: tuple[Run, Run]) -> None:
    comparison = compare(
        *runs,
        baseline_scores=hand_scores(runs[0], BASELINE_HELPFULNESS),
        candidate_scores=hand_scores(runs[1], CANDIDATE_HELPFULNESS, failed="q1@v1"),
    )
    statuses = dict(comparison.cases.select("case_id", pl.col("status").cast(pl.String)).iter_rows())
    assert {case: statuses[case] for case in EXPECTED_STATUS} == EXPECTED_STATUS
    assert {status for case, status in statuses.items() if case not in EXPECTED_STATUS} == {"unchanged"}
    reasons = dict(comparison.cases.select("case_id", "reasons").iter_rows())
    assert reasons["q1@v1"] == ["candidate judge_failed: helpfulness: HTTP 500 (gave up after 5 attempts)"]
    assert reasons["q0@v1"] == ["helpfulness 0.5 -> 1 (better)"]
    helpfulness = comparison.aggregates.filter(pl.col("signal") == "helpfulness")
    for scope, (n, baseline, candidate) in (("paired", PAIRED), ("all_cases", ALL_CASES)):
        row = helpfulness.filter(pl.col("scope") == scope).row(0, named=True)
        assert row["n"] == n
        assert row["baseline"] == pytest.approx(baseline)
        assert row["candidate"] == pytest.approx(candidate)
    assert comparison.counts["judge_failed_in_candidate"] == 1
    assert [
        warning for warning in comparison.warnings if not warning.startswith(COMPLETENESS_OFF)
    ] == []  # one evaluator
    case = next(case for case in comparison.to_dict()["cases"] if case["case_id"] == "q1@v1")
    assert case["candidate"]["judge_status"] == "judge_failed"
    assert case["candidate"]["helpfulness"] is None
    assert comparison.evaluator["scores"]["candidate"]["name"] == "hand"


def test_reports_list_judge_failures(runs: tuple[Run, Run]) -> None:
    comparison = compare(
        *runs,
        baseline_scores=hand_scores(runs[0], BASELINE_HELPFULNESS),
        candidate_scores=hand_scores(runs[1], CANDIDATE_HELPFULNESS, failed="q1@v1"),
    )
    for format, status in (("text", "judge_failed_in_candidate"), ("markdown", r"judge\_failed\_in\_candidate")):
        rendered = comparison.render(format)
        assert status in rendered, format
        assert "HTTP 500 (gave up after 5 attempts)" in rendered, format
    html = comparison.render("html")
    assert "judge_failed_in_candidate" in html
    (case,) = [case for case in page_parts(html).data["cases"] if case["case_id"] == "q1@v1"]
    assert case["status"] == "judge_failed_in_candidate"
    assert case["sides"]["candidate"]["judge_error"] == "helpfulness: HTTP 500 (gave up after 5 attempts)"
    assert case["sides"]["baseline"]["judge_error"] is None
    assert "helpfulness" in case["sides"]["candidate"]["signals"]  # beside the answers


def test_different_evaluators_are_warned_about(runs: tuple[Run, Run]) -> None:
    comparison = compare(*runs, baseline_scores=hand_scores(runs[0], BASELINE_HELPFULNESS))
    warnings = [warning for warning in comparison.warnings if not warning.startswith(COMPLETENESS_OFF)]
    assert len(warnings) == 1
    assert "judged by different evaluators (baseline: hand (ffffffffffff), candidate: the offline judge)" in warnings[0]
    # The side without scores has no helpfulness: no pair, and the cases are not told apart by it.
    paired = comparison.aggregates.filter(pl.col("signal") == "helpfulness", pl.col("scope") == "paired")
    assert paired.get_column("n").to_list() == [0]


def test_scores_of_another_run_are_refused(runs: tuple[Run, Run]) -> None:
    with pytest.raises(ScoresError, match=r"scored run 'candidate'.*not 'baseline'"):
        compare(*runs, baseline_scores=hand_scores(runs[1], BASELINE_HELPFULNESS))


def test_comparison_without_scores_has_no_score_signals(runs: tuple[Run, Run]) -> None:
    comparison = compare(*runs)
    assert "helpfulness" not in comparison.aggregates.get_column("signal").to_list()
    assert not any(column.endswith("helpfulness") for column in comparison.cases.columns)
    assert comparison.evaluator["scores"] == {"baseline": None, "candidate": None}


def test_scores_holding_a_credential_are_refused(tmp_path: Path) -> None:
    run = freeze_run(RECORDS, CORPUS)
    ids = run.records.get_column("case_id").to_list()
    frame = pl.DataFrame(
        {
            "case_id": ids,
            "judge_status": ["ok"] * len(ids),
            "judge_error": [None] * (len(ids) - 1) + [f"the answer quotes {OPENAI_KEY}"],
        }
    )
    output = tmp_path / "scores.arrow"
    with pytest.raises(ScoresError, match=f"case '{ids[-1]}', column 'judge_error'") as excinfo:
        make_scores(run, frame, EVALUATOR, output=output)
    assert OPENAI_KEY not in str(excinfo.value)
    assert not output.exists()


def test_score_refuses_a_setting_that_is_not_finite_before_sending(cli: Callable[..., Result], tmp_path: Path) -> None:
    output = tmp_path / "scores.arrow"
    with ChatServer() as server:
        result = cli("score", HANDMADE_RUNS / "candidate.arrow", "--model", "m", "--base-url", server.base_url,
                     "--temperature", "nan", "--no-cache", "--output", output)  # fmt: skip
        assert server.count() == 0
    assert result.exit_code == 2, result.output
    assert "temperature" in result.output
    assert not output.exists()


def sampled_run() -> Run:
    return freeze_run(SAMPLED_RECORDS, CORPUS, {"name": "sampled"}, environ={})


def test_each_sample_of_a_run_with_repeats_is_judged_by_the_llm(tmp_path: Path) -> None:
    """The judge calls q0's second answer unsupported and every other claim supported: grounded 0 there, 1 else."""
    from rag_compare import Limits, OpenAIJudge

    def responder(request: dict[str, Any], attempt: int) -> Reply:
        schema = request["response_format"]["json_schema"]["schema"]
        reply = sample_for_schema(schema)
        if "claims" in reply and "9 days" in request["messages"][-1]["content"]:
            reply["claims"] = [{"claim": "9 days", "verdict": "unsupported", "evidence": ""}]
        return Reply(content=json.dumps(reply))

    run = sampled_run()
    cache = tmp_path / "cache.sqlite3"
    with ChatServer(responder) as server:
        judge = OpenAIJudge("judge-model", base_url=server.base_url, cache=cache, limits=Limits(backoff=0.01))
        scores = score_run(run, judge, output=tmp_path / "sampled.scores.arrow")
        assert server.count() == 2 * DEFAULT_REQUESTS  # every sample judged, even where answers are the same
        again = score_run(run, judge)
        assert server.count() == 2 * DEFAULT_REQUESTS  # and paid for once: the rerun comes from the cache
    assert again.frame.drop("requests").equals(scores.frame.drop("requests"))
    assert scores.frame.columns[:2] == ["case_id", "repeat"]
    grounded = {
        (case, repeat): value for case, repeat, value in scores.frame.select("case_id", "repeat", "grounded").rows()
    }
    assert (grounded[("q0@v1", 0)], grounded[("q0@v1", 1)], grounded[("q1@v1", 1)]) == (1.0, 0.0, 1.0)
    assert (
        scores.frame.filter(pl.col("case_id") == "failed@v1").get_column("judge_status").to_list() == ["not_judged"] * 2
    )
    loaded = load_scores(tmp_path / "sampled.scores.arrow")
    assert loaded.frame.equals(scores.frame)
    assert (loaded.to_dict()["cases"], loaded.to_dict()["samples"]) == (9, 18)
    loaded.check_scored(run)


def test_lexical_scores_of_a_run_with_repeats_are_per_sample() -> None:
    run = sampled_run()
    scores = score_run(run, LexicalJudge())
    assert scores.frame.select("case_id", "repeat").equals(run.records.select("case_id", "repeat"))
    assert scores.frame.get_column("judge_status").to_list() == (["ok"] * 8 + ["not_judged"]) * 2


def test_scores_of_a_run_with_repeats_are_keyed_by_case_and_repeat() -> None:
    run = sampled_run()
    frame = score_run(run, LexicalJudge()).frame
    with pytest.raises(ScoresError, match="its scores need a 'repeat' column beside case_id, one row per sample"):
        make_scores(run, frame.drop("repeat"), EVALUATOR)
    with pytest.raises(
        ScoresError, match=r"each of its 18 records once; got 18 rows \(17 distinct case_id and repeat\)"
    ):
        make_scores(
            run, frame.with_columns(repeat=pl.when(pl.int_range(pl.len()) == 0).then(1).otherwise("repeat")), EVALUATOR
        )
    with pytest.raises(ScoresError, match=r"records that run 'sampled' lacks: q0@v1 \(repeat 7\)"):
        make_scores(
            run, frame.with_columns(repeat=pl.when(pl.int_range(pl.len()) == 0).then(7).otherwise("repeat")), EVALUATOR
        )
    with pytest.raises(ScoresError, match=r"'repeat' \(Int64\)"):
        make_scores(run, frame.with_columns(pl.col("repeat").cast(pl.String)), EVALUATOR)
    single = freeze_run(RECORDS, CORPUS, {"name": "single"}, environ={})
    numbered = score_run(single, LexicalJudge()).frame.with_columns(repeat=pl.lit(0, pl.Int64))
    with pytest.raises(ScoresError, match=r"run 'single' has no 'repeat' column .*: its scores may not have one"):
        make_scores(single, numbered, EVALUATOR)


class _NeverAsked(LexicalJudge):
    """The offline judge, which no test of a refusal may reach."""

    def judge(self, frame: pl.DataFrame) -> pl.DataFrame:
        raise AssertionError("the judge was asked")


@pytest.mark.parametrize("place", ["run", "output", "name"])
@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_scoring_refuses_what_it_would_record_holding_a_credential_before_judging(
    tmp_path: Path, secret: str, place: str
) -> None:
    source = tmp_path / "run.arrow"
    freeze_run(RECORDS, CORPUS, {"name": "run"}, output=source)
    run = {
        "run": load_run(copied_as(source, secret)),
        "output": load_run(source),
        "name": load_run(legacy_run(source, secret, tmp_path / "old.arrow")),
    }[place]
    output = named_with(secret, tmp_path, ".arrow") if place == "output" else tmp_path / "scores.arrow"
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(SecretInConfigError) as raised:
        score_run(run, _NeverAsked(), output=output)
    said = {"run": "the path of `run` holds", "output": "the path of `output` holds", "name": "'run.name' holds"}
    assert said[place] in str(raised.value)
    assert not any(form in str(raised.value) for form in secret_parts(secret))
    assert sorted(tmp_path.rglob("*")) == before


def test_claims_of_another_shape_are_refused_naming_the_column(runs: tuple[Run, Run]) -> None:
    ids = runs[0].records.get_column("case_id")
    frame = pl.DataFrame({"case_id": ids, "claims": [["a claim"]] * ids.len()}).with_columns(
        judge_status=pl.lit("ok"), judge_error=pl.lit(None, pl.String)
    )
    with pytest.raises(ScoresError, match=r"lacks or mistypes the columns 'claims' \(a list of Struct"):
        make_scores(runs[0], frame, EVALUATOR)
