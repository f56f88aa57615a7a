"""``score``, ``import-scores``, ``fallback`` and ``--baseline-scores/--candidate-scores`` through the entry point.

The LLM judge talks to a loopback ``ChatServer``; every reply cache is a file under tmp_path.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import Result

from rag_compare.compute.freezing import freeze_run
from rag_compare.io.external_scores import import_scores
from rag_compare.io.runs import load_run
from rag_compare.io.scores import load_scores, make_scores
from rag_compare.llm.cache import ReplyCache
from tests.helpers.chat_server import ChatServer, Reply
from tests.helpers.data import HANDMADE_RUNS
from tests.helpers.judged import CORPUS as JUDGED_CORPUS
from tests.helpers.judged import SAMPLED_RECORDS

Cli = Callable[..., Result]
BASELINE, CANDIDATE = HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow"
CANDIDATE_IDS: list[str] = load_run(CANDIDATE).records.get_column("case_id").to_list()  # 33 records
NOT_OK = {"leave-carryover@2025-01", "phone-allowance@2026-01"}  # the candidate's failed and timed-out records
FAST = ("--timeout", "2", "--max-retries", "0")

# An imported trust score for the candidate run. The label-derived truth of the candidate (see fallback) calls two
# answers bad: sabbatical@2026-01 (answers an unanswerable case) and equipment-budget@2026-01 (a passage was cut).
TRUST = {
    "sabbatical@2026-01": 0.1,  # bad, replaced at 0.5: caught
    "hotel-cap@2026-01": 0.3,  # good, replaced: hidden
    "bike-lease@2026-01": 0.5,  # equal to the threshold: kept
    "equipment-budget@2026-01": 0.7,  # bad, kept: shown
}
UNSCORED = "stock-options@2026-01"  # not in the file: judge_failed, never replaced
# At threshold 0.5, over the 31 answered records: replaced 2, bad caught 1, good hidden 1, bad shown 1, unscored 1;
# catch rate 1/2; hide rate 1/29 (28 good answers shown).
AT_HALF = {"replaced": 2, "bad_caught": 1, "good_hidden": 1, "bad_shown": 1, "unscored": 1, "not_answered": 2}


pytestmark = pytest.mark.usefixtures("reply_cache")


@pytest.fixture
def trust_file(tmp_path: Path) -> Path:
    """The trust scores of TRUST (0.9 for every other case) as CSV, without UNSCORED."""
    path = tmp_path / "trust.csv"
    rows = [(case_id, TRUST.get(case_id, 0.9)) for case_id in CANDIDATE_IDS if case_id != UNSCORED]
    path.write_text("case_id,trust\n" + "".join(f"{case_id},{value}\n" for case_id, value in rows), encoding="utf-8")
    return path


@pytest.fixture
def trust_scores(tmp_path: Path, trust_file: Path) -> Path:
    output = tmp_path / "candidate.trust.arrow"
    import_scores(CANDIDATE, trust_file, evaluator="hosted", mapping={"trust": "trustworthiness"}, output=output)
    return output


# -- import-scores ----------------------------------------------------------------------------------------------------


def test_import_scores_writes_a_scores_file(cli: Cli, tmp_path: Path, trust_file: Path) -> None:
    output = tmp_path / "out.arrow"
    result = cli(
        "import-scores", CANDIDATE, trust_file, "--evaluator", "hosted", "--map", "trust=trustworthiness",
        "--set", "model=x", "--output", output,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "imported trustworthiness for 33 cases (ok 30, judge_failed 1, not_judged 2)"
    scores = load_scores(output)
    assert lines[1] == f"wrote {output} (evaluator hosted {scores.evaluator['fingerprint'][:12]})"
    assert scores.evaluator["config"] == {
        "name": "hosted",
        "mapping": {"trust": "trustworthiness"},
        "settings": {"model": "x"},
        "source": str(trust_file),
    }
    values = dict(scores.frame.select("case_id", "trustworthiness").iter_rows())
    assert (values["hotel-cap@2026-01"], values["bike-lease@2026-01"], values[UNSCORED]) == (0.3, 0.5, None)


@pytest.mark.parametrize("value", ["1.7", "inf", "-Infinity", "1e999"])
def test_import_scores_refuses_a_bad_value_naming_row_and_column(
    cli: Cli, tmp_path: Path, trust_file: Path, value: str
) -> None:
    lines = trust_file.read_text(encoding="utf-8").splitlines()
    assert lines[3] == "meal-allowance-daily@2025-01,0.9"  # data row 3 (line 1 is the header)
    lines[3] = f"meal-allowance-daily@2025-01,{value}"
    trust_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    output = tmp_path / "out.arrow"
    result = cli(
        "import-scores",
        CANDIDATE,
        trust_file,
        "--evaluator",
        "hosted",
        "--map",
        "trust=trustworthiness",
        "--output",
        output,
    )
    assert result.exit_code == 2
    assert f"row 3, column 'trust': got '{value}'; expected a number from 0 to 1" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    assert not output.exists()


@pytest.mark.parametrize(("value", "shown"), [(float("nan"), "'NaN'"), (float("inf"), "'inf'")])
def test_import_scores_refuses_a_native_number_that_is_not_finite(
    cli: Cli, tmp_path: Path, value: float, shown: str
) -> None:
    scores = tmp_path / "trust.parquet"
    pl.DataFrame({"case_id": CANDIDATE_IDS[:2], "trust": [0.5, value]}).write_parquet(scores)
    output = tmp_path / "out.arrow"
    args = ("import-scores", CANDIDATE, scores, "--evaluator", "hosted", "--map", "trust=trustworthiness")
    result = cli(*args, "--output", output)
    assert result.exit_code == 2
    assert f"row 2, column 'trust': got {shown}; expected a number from 0 to 1" in result.stderr
    assert not output.exists()


def test_import_scores_json_lists_the_problems(cli: Cli, tmp_path: Path, trust_file: Path) -> None:
    trust_file.write_text(trust_file.read_text(encoding="utf-8") + "nope@2026-01,0.5\n", encoding="utf-8")
    args = ("import-scores", CANDIDATE, trust_file, "--evaluator", "hosted", "--map", "trust=trustworthiness")
    result = cli(*args, "--output", tmp_path / "out.arrow", "--format", "json")
    assert result.exit_code == 2
    payload = json.loads(result.stdout)
    assert payload["valid"] is False
    assert payload["problems"] == [
        {"row": 33, "column": "case_id", "value": "'nope@2026-01'", "expected": "a case id of run 'candidate'"}
    ]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--map", "trust=bogus"), "unknown signal bogus"),
        (("--map", "trust"), "expected COLUMN=SIGNAL, got 'trust'"),
        (("--map", "trust=trustworthiness", "--set", "api_key=sk-abcdefghijklmnopqrstuvwx"), "api_key"),
    ],
)
def test_import_scores_usage_errors(
    cli: Cli, tmp_path: Path, trust_file: Path, options: tuple[str, ...], message: str
) -> None:
    output = tmp_path / "out.arrow"
    result = cli("import-scores", CANDIDATE, trust_file, "--evaluator", "hosted", *options, "--output", output)
    assert result.exit_code == 2
    assert message in result.stderr
    assert not output.exists()


# -- fallback ---------------------------------------------------------------------------------------------------------


def test_fallback_at_one_threshold_shows_the_counts(cli: Cli, trust_scores: Path) -> None:
    result = cli("fallback", CANDIDATE, "--scores", trust_scores, "--signal", "trustworthiness", "--threshold", "0.5")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "evaluator      name hosted" in out
    assert "rule           replace the answer when trustworthiness < T" in out
    row = next(line for line in out.splitlines() if line.startswith("0.50 "))
    assert row.split() == ["0.50", "2", "1", "1", "1", "1", "50.0%", "3.4%"]
    assert "replaced at trustworthiness < 0.50: hotel-cap@2026-01, sabbatical@2026-01\n" in out


def test_fallback_sweep_as_json(cli: Cli, trust_scores: Path) -> None:
    args = ("fallback", CANDIDATE, "--scores", trust_scores, "--signal", "trustworthiness")
    result = cli(*args, "--threshold", "0.5", "--sweep", "--format", "json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    thresholds = [row["threshold"] for row in payload["thresholds"]]
    assert len(thresholds) >= 21
    assert thresholds[0] == 0.5  # the threshold given first; the sweep's 0.5 is not repeated
    assert sorted(thresholds) == [step / 20 for step in range(21)]
    rows = {row["threshold"]: row for row in payload["thresholds"]}
    assert {name: rows[0.5][name] for name in AT_HALF} == AT_HALF
    assert rows[0.0]["replaced"] == 0  # nothing is below 0
    assert rows[1.0]["replaced"] == 30  # every scored answer (UNSCORED and the failed records are never replaced)
    assert payload["evaluator"]["name"] == "hosted"
    assert len(payload["cases"]) == 33


def test_fallback_takes_people_s_labels_as_the_truth_and_the_threshold_agreement_found(
    cli: Cli, tmp_path: Path, trust_scores: Path
) -> None:
    labels = tmp_path / "labels.csv"
    # People's answer_correct of TRUST's four answers: the two label-derived bad ones are bad to people too.
    labels.write_text(
        "case_id,answer_correct\nsabbatical@2026-01,no\nhotel-cap@2026-01,yes\nbike-lease@2026-01,yes\n"
        "equipment-budget@2026-01,no\n"
    )
    args = ("fallback", CANDIDATE, "--scores", trust_scores, "--signal", "trustworthiness", "--truth-labels", labels)
    result = cli(*args, "--threshold", "0.5", "--format", "json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["truth"] == {"source": "people", "labels": str(labels), "label": "answer_correct"}
    row = payload["thresholds"][0]
    # Replaced at 0.5: sabbatical (bad: caught), hotel-cap (good: hidden); shown: equipment-budget (bad), bike-lease
    # (good); the 27 other answered records are unlabelled: unknown.
    assert {name: row[name] for name in ("bad_caught", "good_hidden", "bad_shown", "good_shown", "unknown")} == {
        "bad_caught": 1, "good_hidden": 1, "bad_shown": 1, "good_shown": 1, "unknown": 27,
    }  # fmt: skip
    found = tmp_path / "agreement.json"
    measured = cli(
        "agreement", labels, trust_scores, "--map", "answer_correct=trustworthiness", "--target-recall", "1",
        "--output", found,
    )  # fmt: skip
    assert measured.exit_code == 0, measured.output
    # The highest threshold keeping every answer people call correct (hotel-cap 0.3, bike-lease 0.5) is 0.3.
    chosen = cli(*args, "--agreement", found, "--format", "json")
    assert chosen.exit_code == 0, chosen.output
    at = json.loads(chosen.stdout)["thresholds"][0]
    assert (at["threshold"], at["replaced"], at["bad_caught"], at["good_hidden"]) == (0.3, 1, 1, 0)


def test_fallback_refuses_an_agreement_without_a_threshold_for_its_signal(
    cli: Cli, tmp_path: Path, trust_scores: Path
) -> None:
    found = tmp_path / "agreement.json"
    found.write_text('{"judges": [], "agreement": []}')
    args = ("fallback", CANDIDATE, "--scores", trust_scores, "--signal", "trustworthiness", "--agreement", found)
    result = cli(*args)
    assert result.exit_code == 2
    assert "holds no threshold found for trustworthiness by this judge" in result.stderr


def test_fallback_writes_every_case_with_its_original_answer(cli: Cli, tmp_path: Path, trust_scores: Path) -> None:
    output = tmp_path / "cases.csv"
    args = ("fallback", CANDIDATE, "--scores", trust_scores, "--signal", "trustworthiness", "--threshold", "0.5")
    result = cli(*args, "--fallback-text", "Ask HR.", "--output", output)
    assert result.exit_code == 0, result.output
    with output.open(encoding="utf-8", newline="") as stream:
        rows = {row["case_id"]: row for row in csv.DictReader(stream)}
    assert list(rows) == CANDIDATE_IDS
    answers = dict(load_run(CANDIDATE).records.select("case_id", "answer").iter_rows())
    for case_id, row in rows.items():
        assert row["original_answer"] == (answers[case_id] or "")
        replaced = case_id in {"hotel-cap@2026-01", "sabbatical@2026-01"}
        assert row["replaced"] == str(replaced).lower()
        assert row["shown_answer"] == ("Ask HR." if replaced else row["original_answer"])
    again = cli(*args, "--output", output)  # never overwritten
    assert again.exit_code == 2
    assert "already exists" in again.stderr


def test_fallback_refuses_the_scores_of_another_run(cli: Cli, trust_scores: Path) -> None:
    result = cli("fallback", BASELINE, "--scores", trust_scores, "--signal", "trustworthiness", "--threshold", "0.5")
    assert result.exit_code == 2
    assert "scored run 'candidate'" in result.stderr
    assert "not 'baseline'" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--signal", "bogus", "--threshold", "0.5"), "signal 'bogus' is not a column of the scores"),
        (("--signal", "trustworthiness"), "give --threshold T, --agreement FILE, or --sweep"),
        (("--signal", "trustworthiness", "--threshold", "1.5"), "1.5 is not in the range 0<=x<=1"),
    ],
)
def test_fallback_usage_errors(cli: Cli, trust_scores: Path, options: tuple[str, ...], message: str) -> None:
    result = cli("fallback", CANDIDATE, "--scores", trust_scores, *options)
    assert result.exit_code == 2
    assert message in result.stderr


def test_fallback_over_an_existing_file_says_what_it_would_write(cli: Cli, tmp_path: Path, trust_scores: Path) -> None:
    output = tmp_path / "cases.csv"
    output.write_text("case_id\nkept\n", encoding="utf-8")
    result = cli("fallback", CANDIDATE, "--scores", trust_scores, "--signal", "trustworthiness", "--threshold", "0.5",
                 "--output", output)  # fmt: skip
    assert result.exit_code == 2
    assert f"{output}: already exists and is never overwritten by the fallback table" in result.stderr
    assert "frozen run" not in result.stderr
    assert output.read_text(encoding="utf-8") == "case_id\nkept\n"


@pytest.mark.parametrize("where", ["write", "fsync"])
@pytest.mark.parametrize("suffix", ["csv", "parquet", "jsonl"])
def test_fallback_on_a_full_disk_names_the_path(
    cli: Cli, tmp_path: Path, trust_scores: Path, full_disk: Callable[[str], None], suffix: str, where: str
) -> None:
    output = tmp_path / "out" / f"cases.{suffix}"
    output.parent.mkdir()
    full_disk(where)
    result = cli("fallback", CANDIDATE, "--scores", trust_scores, "--signal", "trustworthiness", "--threshold", "0.5",
                 "--output", output)  # fmt: skip
    assert result.exit_code == 2
    assert f"error: {output}: cannot be written (No space left on device)" in result.stderr
    assert list(output.parent.iterdir()) == []


# -- score ------------------------------------------------------------------------------------------------------------


def test_score_against_an_endpoint_then_again_from_the_cache(cli: Cli, tmp_path: Path) -> None:
    cache = tmp_path / "own-cache.sqlite3"
    with ChatServer() as server:
        base = ("score", CANDIDATE, "--model", "m", "--base-url", server.base_url, "--cache", cache, *FAST)
        first = cli(*base, "--output", tmp_path / "first.arrow")
        assert first.exit_code == 0, first.output
        sent = server.count()
        assert sent > 0
        assert first.stdout.startswith(f"scored 33 cases of 'candidate' (ok 31, not_judged 2), {sent} requests sent\n")
        scores = load_scores(tmp_path / "first.arrow")
        assert set(scores.frame.get_column("judge_status")) == {"ok", "not_judged"}
        not_judged = scores.frame.filter(pl.col("judge_status") == "not_judged").get_column("case_id")
        assert set(not_judged) == NOT_OK
        assert {"grounded", "context_sufficiency", "helpfulness"} <= set(scores.signals)
        assert scores.evaluator["name"] == "openai"
        assert scores.evaluator["config"]["model"] == "m"

        second = cli(*base, "--output", tmp_path / "second.arrow")
        assert second.exit_code == 0, second.output
        assert server.count() == sent  # every reply came from the cache
        assert "0 requests sent" in second.stdout
        again = load_scores(tmp_path / "second.arrow")
        assert again.frame.drop("requests").equals(scores.frame.drop("requests"))
        assert again.evaluator["fingerprint"] == scores.evaluator["fingerprint"]
    assert cache.exists()
    assert not (tmp_path / "replies.sqlite3").exists()  # --cache, not $RAG_COMPARE_CACHE


def test_score_spreads_over_a_pool_of_endpoints(cli: Cli, tmp_path: Path) -> None:
    with ChatServer(latency=0.02) as first, ChatServer(latency=0.02) as second:
        result = cli(
            "score", CANDIDATE, "--model", "m", "--base-url", first.base_url, "--base-url", second.base_url,
            "--concurrency", "4", *FAST, "--output", tmp_path / "pool.arrow",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        counts = first.count(), second.count()
        alone = cli(
            "score", CANDIDATE, "--model", "m", "--base-url", second.base_url, *FAST, "--output", tmp_path / "one.arrow"
        )
        assert alone.exit_code == 0, alone.output
        assert second.count() == counts[1] + counts[0]  # what the first endpoint answered is under its key
    assert min(counts) > 0
    assert result.stdout.startswith(
        f"scored 33 cases of 'candidate' (ok 31, not_judged 2), {sum(counts)} requests sent\n"
    )
    assert result.stderr.splitlines()[-2:] == [
        f"endpoint {first.base_url}: {counts[0]} requests sent, {counts[0]} succeeded, 0 failed",
        f"endpoint {second.base_url}: {counts[1]} requests sent, {counts[1]} succeeded, 0 failed",
    ]
    assert "endpoint " not in alone.stderr  # one endpoint: the count of requests says it all
    pool, one = load_scores(tmp_path / "pool.arrow"), load_scores(tmp_path / "one.arrow")
    assert pool.evaluator["config"]["endpoint"] == sorted([first.base_url, second.base_url])
    assert one.evaluator["config"]["endpoint"] == second.base_url
    assert pool.frame.drop("requests").equals(one.frame.drop("requests"))


def test_score_refuses_a_pool_with_an_unusable_url(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "s.arrow"
    with ChatServer() as server:
        result = cli(
            "score", CANDIDATE, "--model", "m", "--base-url", server.base_url, "--base-url", "localhost:8000",
            *FAST, "--output", output,
        )  # fmt: skip
        assert server.count() == 0
    assert result.exit_code == 2, result.output
    assert "the endpoint 'localhost:8000' is not usable (not an http:// or https:// URL with a host)" in result.stderr
    assert not output.exists()


def test_score_uses_the_cache_named_by_the_environment(cli: Cli, tmp_path: Path, reply_cache: Path) -> None:
    with ChatServer() as server:
        base = ("score", CANDIDATE, "--model", "m", "--base-url", server.base_url, *FAST)
        assert cli(*base, "--output", tmp_path / "a.arrow").exit_code == 0
        sent = server.count()
        assert reply_cache.exists()
        assert cli(*base, "--output", tmp_path / "b.arrow").exit_code == 0
        assert server.count() == sent


def test_score_dry_run_sends_nothing(cli: Cli, tmp_path: Path) -> None:
    with ChatServer() as server:
        result = cli("score", CANDIDATE, "--model", "m", "--base-url", server.base_url, "--dry-run", *FAST)
        assert result.exit_code == 0, result.output
        assert server.count() == 0
    out = result.stdout
    assert "dry run: nothing was sent" in out
    assert "cases                        33" in out
    assert "estimated prompt tokens" in out
    assert "estimated completion tokens" in out
    requests = int(next(line for line in out.splitlines() if line.startswith("requests ")).split()[-1])
    assert requests > 0
    assert [path.name for path in tmp_path.iterdir() if path.name != "replies.sqlite3"] == []  # no scores file


def test_score_dry_run_as_json(cli: Cli) -> None:
    with ChatServer() as server:
        result = cli("score", CANDIDATE, "--model", "m", "--base-url", server.base_url, "--dry-run", "--format", "json")
        assert server.count() == 0
    payload = json.loads(result.stdout)
    assert payload["cases"] == 33
    assert payload["to_send"] == payload["requests"] > 0
    assert payload["estimated_prompt_tokens"] > 0


def test_score_openai_needs_a_model(cli: Cli, tmp_path: Path) -> None:
    result = cli(
        "score", CANDIDATE, "--judge", "openai", "--base-url", "http://127.0.0.1:9/v1", "--output", tmp_path / "s.arrow"
    )
    assert result.exit_code == 2
    assert "--judge openai needs --model" in result.stderr
    assert not (tmp_path / "s.arrow").exists()


def test_score_refuses_an_existing_output_before_sending(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "s.arrow"
    output.write_bytes(b"keep me")
    with ChatServer() as server:
        result = cli("score", CANDIDATE, "--model", "m", "--base-url", server.base_url, "--output", output, *FAST)
        assert server.count() == 0
    assert result.exit_code == 2
    assert "already exists" in result.stderr
    assert output.read_bytes() == b"keep me"


def test_score_needs_an_output(cli: Cli) -> None:
    result = cli("score", CANDIDATE, "--judge", "lexical")
    assert result.exit_code == 2
    assert "give --output PATH" in result.stderr


def test_score_stops_on_a_refused_key(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "s.arrow"
    with ChatServer(lambda request, attempt: Reply(status=401)) as server:
        result = cli("score", CANDIDATE, "--model", "m", "--base-url", server.base_url, "--output", output, *FAST)
    assert result.exit_code == 2
    assert "the endpoint refused the request" in result.stderr
    assert "OPENAI_API_KEY" in result.stderr
    assert "Traceback" not in result.output
    assert not output.exists()


def test_score_lexical_needs_no_endpoint(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "lexical.arrow"
    result = cli("score", CANDIDATE, "--judge", "lexical", "--output", output)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("scored 33 cases of 'candidate' (ok 31, not_judged 2)\n")
    scores = load_scores(output)
    assert scores.evaluator["name"] == "lexical"
    assert scores.counts == {"ok": 31, "judge_failed": 0, "not_judged": 2}
    assert {"abstained", "abstention_correct"} <= set(scores.signals)
    assert not (tmp_path / "replies.sqlite3").exists()


# -- compare with scores ----------------------------------------------------------------------------------------------

FAILING_CASE = "flight-class@2026-01"
FAILING_QUESTION = "Can I book business class for a work flight?"  # no other case of either run asks it


@pytest.fixture
def scored(cli: Cli, tmp_path: Path) -> tuple[Path, Path]:
    """The baseline's and the candidate's scores, made with the same judge settings against one server."""
    paths = tmp_path / "baseline.scores.arrow", tmp_path / "candidate.scores.arrow"
    with ChatServer() as server:
        for run, output in zip((BASELINE, CANDIDATE), paths, strict=True):
            result = cli("score", run, "--model", "m", "--base-url", server.base_url, "--output", output, *FAST)
            assert result.exit_code == 0, result.output
    return paths


def test_compare_with_scores_reports_the_score_signals(cli: Cli, scored: tuple[Path, Path]) -> None:
    baseline_scores, candidate_scores = scored
    result = cli(BASELINE, CANDIDATE, "--baseline-scores", baseline_scores, "--candidate-scores", candidate_scores)
    assert result.exit_code == 0, result.output
    out = result.stdout
    table = out.split("Paired:", 1)[1].split("All cases:", 1)[0].splitlines()
    assert any(line.startswith("context_sufficiency ") for line in table)
    assert any(line.startswith("helpfulness ") for line in table)
    assert "context_sufficiency" not in cli(BASELINE, CANDIDATE).stdout  # only scores carry it
    assert "different evaluators" not in result.output  # both sides: the same judge settings
    assert "judge_failed" not in out

    options = ("--baseline-scores", baseline_scores, "--candidate-scores", candidate_scores, "--format", "json")
    payload = json.loads(cli(BASELINE, CANDIDATE, *options).stdout)
    aggregates = {row["signal"]: row for row in payload["aggregates"] if row["scope"] == "paired"}
    assert {"context_sufficiency", "helpfulness", "grounded"} <= set(aggregates)
    assert aggregates["context_sufficiency"]["n"] > 0
    assert payload["counts"]["judge_failed_in_candidate"] == payload["counts"]["judge_failed_in_baseline"] == 0
    used = payload["evaluator"]["scores"]
    assert used["baseline"]["path"] == str(baseline_scores)
    assert used["candidate"]["path"] == str(candidate_scores)
    assert used["baseline"]["fingerprint"] == used["candidate"]["fingerprint"]


def test_compare_refuses_swapped_scores(cli: Cli, scored: tuple[Path, Path]) -> None:
    baseline_scores, candidate_scores = scored
    result = cli(BASELINE, CANDIDATE, "--baseline-scores", candidate_scores, "--candidate-scores", baseline_scores)
    assert result.exit_code == 2
    assert f"{candidate_scores}: scored run 'candidate'" in result.stderr
    assert "not 'baseline'" in result.stderr
    assert "Pass the scores made from this run" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("value", [float("nan"), float("-inf")])
def test_compare_refuses_scores_that_are_not_finite(cli: Cli, tmp_path: Path, value: float) -> None:
    # Scores made through the library from a frame (a custom judge's verdicts, say) may hold NaN.
    run = load_run(CANDIDATE)
    ok = pl.col("status") == "ok"
    frame = run.records.select(
        "case_id",
        trustworthiness=pl.when(ok).then(pl.when(pl.col("case_id") == UNSCORED).then(value).otherwise(0.5)),
        judge_status=pl.when(ok).then(pl.lit("ok")).otherwise(pl.lit("not_judged")),
        judge_error=pl.lit(None, pl.String),
    )
    scores = tmp_path / "odd.scores.arrow"
    make_scores(run, frame, {"name": "custom", "fingerprint": "f", "config": {}}, output=scores)
    result = cli(BASELINE, CANDIDATE, "--candidate-scores", scores, "--format", "json")
    assert result.exit_code == 2
    assert f"{scores}: the trustworthiness of {UNSCORED} is {value!r}, not a finite number" in result.stderr
    assert result.stdout == ""


def test_a_case_whose_judging_failed_in_the_candidate(cli: Cli, tmp_path: Path) -> None:
    failing = {"on": False}

    def responder(request: dict[str, Any], attempt: int) -> Reply:
        if failing["on"] and FAILING_QUESTION in request["messages"][-1]["content"]:
            return Reply(status=500)
        return Reply()

    paths = tmp_path / "baseline.scores.arrow", tmp_path / "candidate.scores.arrow"
    with ChatServer(responder) as server:
        base = ("score", "--model", "m", "--base-url", server.base_url, *FAST)
        assert cli(base[0], BASELINE, *base[1:], "--output", paths[0]).exit_code == 0
        failing["on"] = True  # only the candidate's requests for that case fail
        result = cli(base[0], CANDIDATE, *base[1:], "--output", paths[1])
        assert result.exit_code == 0, result.output
        failed_requests = [r for r in server.requests if FAILING_QUESTION in r["messages"][-1]["content"]]
    assert "(ok 30, judge_failed 1, not_judged 2)" in result.stdout
    assert "warning: 1 cases could not be judged" in result.stderr
    assert len(failed_requests) >= 2  # the baseline's (answered) and the candidate's (500, no retry)
    candidate = load_scores(paths[1])
    row = candidate.frame.filter(pl.col("case_id") == FAILING_CASE).row(0, named=True)
    assert row["judge_status"] == "judge_failed"
    assert "HTTP 500" in row["judge_error"]
    assert (row["grounded"], row["context_sufficiency"], row["helpfulness"]) == (None, None, None)

    options = ("--baseline-scores", paths[0], "--candidate-scores", paths[1])
    payload = json.loads(cli(BASELINE, CANDIDATE, *options, "--format", "json").stdout)
    status = {case["case_id"]: case["status"] for case in payload["cases"]}
    assert status[FAILING_CASE] == "judge_failed_in_candidate"
    assert [case_id for case_id, found in status.items() if found == "judge_failed_in_candidate"] == [FAILING_CASE]
    assert payload["counts"]["judge_failed_in_candidate"] == 1
    text = cli(BASELINE, CANDIDATE, *options)
    assert text.exit_code == 0
    assert "judge_failed_in_candidate 1" in text.stdout
    assert f"judge_failed_in_candidate {FAILING_CASE}" in text.stdout
    assert "candidate judge_failed: context_sufficiency: HTTP 500" in text.stdout


def test_show_tells_a_scores_file_from_a_run(cli: Cli, trust_scores: Path) -> None:
    shown = cli("show", trust_scores)
    assert shown.exit_code == 0, shown.output
    assert "candidate" in shown.output
    assert "trustworthiness" in shown.output
    as_json = json.loads(cli("show", trust_scores, "--format", "json").output)
    assert as_json["run"]["name"] == "candidate"
    assert as_json["judge_status_counts"]["judge_failed"] == 1


def test_a_scores_file_given_as_a_run_is_refused_with_a_hint(cli: Cli, trust_scores: Path) -> None:
    result = cli(BASELINE, trust_scores)
    assert result.exit_code == 2
    assert "is a scores file, not a run" in result.output
    assert "--candidate-scores" in result.output


def test_an_interrupted_score_writes_nothing_and_resumes(tmp_path: Path, reply_cache: Path) -> None:
    """Ctrl-C midway: exit code 130, no scores file; the rerun sends only what the cache lacks."""
    output = tmp_path / "scores.arrow"
    with ChatServer(latency=0.1) as server:
        command = [sys.executable, "-m", "rag_compare", "score", BASELINE, "--model", "m"]
        command += ["--base-url", server.base_url, "--concurrency", "2", "--output", output]
        process = subprocess.Popen(
            [str(part) for part in command], env=os.environ | {"RAG_COMPARE_CACHE": str(reply_cache)}
        )
        deadline = time.monotonic() + 30
        while server.count() < 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130
        assert not output.exists()
        cached = len(ReplyCache(reply_cache))
        assert 8 <= cached < 94  # the baseline plans 94 requests
        before = server.count()
        result = subprocess.run(
            [str(part) for part in command], env=os.environ, capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stderr
        assert server.count() - before == 94 - cached
    assert load_scores(output).counts == {"ok": 33, "judge_failed": 0, "not_judged": 1}


def test_import_scores_of_a_run_with_repeats_takes_their_column(cli: Cli, tmp_path: Path) -> None:
    run = tmp_path / "sampled.arrow"
    freeze_run(SAMPLED_RECORDS, JUDGED_CORPUS, {"name": "sampled"}, output=run, environ={})
    rows = [{"case_id": case_id, "sample": repeat, "trust": 0.5} for case_id, repeat in
            load_run(run).records.select("case_id", "repeat").rows()]  # fmt: skip
    source = tmp_path / "trust.csv"
    pl.DataFrame(rows).write_csv(source)
    output = tmp_path / "scores.arrow"
    args = ("import-scores", run, source, "--evaluator", "hosted", "--map", "trust=trustworthiness", "--output", output)
    refused = cli(*args)
    assert refused.exit_code == 2
    assert (
        "needs a column 'repeat' numbering the samples as the run does (name another column with --repeat-column)"
        in (refused.stderr)
    )
    assert not output.exists()
    result = cli(*args, "--repeat-column", "sample")
    assert result.exit_code == 0, result.output
    scores = load_scores(output)
    assert scores.counts == {"ok": 16, "judge_failed": 0, "not_judged": 2}  # 9 cases twice, failed@v1 not judged
    assert scores.frame.select("case_id", "repeat").equals(load_run(run).records.select("case_id", "repeat"))
