"""``judge-pairs`` and ``compare --pairs`` through the entry point, against a loopback chat server.

The runs are the fixture of tests/helpers/pairs.py: six pairs are asked (a, b, c, d, h, i), two requests each.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from rag_compare import freeze_run
from rag_compare.io.pairs import load_pairs
from tests.helpers.chat_server import ChatServer, Reply, closed_port_url
from tests.helpers.judged import CORPUS as JUDGED_CORPUS
from tests.helpers.judged import SAMPLED_RECORDS
from tests.helpers.pairs import BASELINE, CANDIDATE, CORPUS, candidate_answer, case_letter, shown_answers

Cli = Callable[..., Result]
ASKED = 6
FAST = ("--timeout", "1", "--max-retries", "1")


pytestmark = pytest.mark.usefixtures("reply_cache")


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    paths = tmp_path / "base.arrow", tmp_path / "cand.arrow"
    freeze_run(BASELINE, CORPUS, {"name": "base"}, output=paths[0])
    freeze_run(CANDIDATE, CORPUS, {"name": "cand"}, output=paths[1])
    return paths


def choose(better: str) -> Reply:
    return Reply(content=json.dumps({"better": better, "reason": f"the {better} one"}))


def always_first(request: dict[str, Any], attempt: int) -> Reply:
    return choose("first")


def prefers_the_candidate(request: dict[str, Any], attempt: int) -> Reply:
    """Chooses whichever position shows the candidate's answer, in either order."""
    first, _ = shown_answers(request)
    return choose("first" if first == candidate_answer(case_letter(request)) else "second")


def judge(cli: Cli, runs: tuple[Path, Path], server: ChatServer, output: Path, *options: str | Path) -> Result:
    return cli("judge-pairs", *runs, "--model", "m", "--base-url", server.base_url, *FAST, "--output", output, *options)


def compared(cli: Cli, runs: tuple[Path, Path], pairs: Path) -> dict[str, Any]:
    result = cli(*runs, "--pairs", pairs, "--format", "json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_a_judge_that_always_answers_first_wins_nothing(cli: Cli, runs: tuple[Path, Path], tmp_path: Path) -> None:
    with ChatServer(always_first) as server:
        result = judge(cli, runs, server, tmp_path / "pairs.arrow")
        assert result.exit_code == 0, result.output
        assert server.count() == 2 * ASKED
    data = compared(cli, runs, tmp_path / "pairs.arrow")
    preference = data["preference"]
    assert preference["wins"] == preference["losses"] == 0
    assert preference["counts"]["inconsistent"] == ASKED
    assert preference["win_rate"] is None
    assert preference["position_bias"]["consistency_rate"] == 0.0
    assert preference["position_bias"]["first_position_rate"] == 1.0
    assert data["counts"]["improved"] == data["counts"]["regressed"] == 0


def test_a_judge_preferring_the_candidate_in_both_orders_gives_wins(
    cli: Cli, runs: tuple[Path, Path], tmp_path: Path
) -> None:
    with ChatServer(prefers_the_candidate) as server:
        result = judge(cli, runs, server, tmp_path / "pairs.arrow")
        assert result.exit_code == 0, result.output
    data = compared(cli, runs, tmp_path / "pairs.arrow")
    preference = data["preference"]
    assert preference["wins"] == ASKED
    assert preference["losses"] == 0
    assert preference["win_rate"] == 1.0
    assert preference["p_value"] == pytest.approx(2 * 0.5**ASKED)  # the sign test: 6 wins, no loss
    assert preference["position_bias"]["consistency_rate"] == 1.0
    assert preference["position_bias"]["first_position_rate"] == 0.5
    statuses = {case["case_id"]: case["status"] for case in data["cases"]}
    # Nothing else moved in these cases: the preference decides them.
    assert [case for case, status in statuses.items() if status == "improved"] == [
        "a_better@v1",
        "b_worse@v1",
        "c_tie@v1",
        "d_first@v1",
        "h_judgefail@v1",
        "i_halftie@v1",
    ]


def test_a_rerun_makes_no_request(cli: Cli, runs: tuple[Path, Path], tmp_path: Path) -> None:
    with ChatServer(prefers_the_candidate) as server:
        assert judge(cli, runs, server, tmp_path / "first.arrow").exit_code == 0
        sent = server.count()
        again = judge(cli, runs, server, tmp_path / "second.arrow")
        assert again.exit_code == 0, again.output
        assert server.count() == sent
        plan = cli("judge-pairs", *runs, "--model", "m", "--base-url", server.base_url, "--dry-run", "--format", "json")
        assert server.count() == sent
    assert (
        load_pairs(tmp_path / "second.arrow")
        .frame.drop("requests")
        .equals(load_pairs(tmp_path / "first.arrow").frame.drop("requests"))
    )
    assert json.loads(plan.stdout)["to_send"] == 0
    assert json.loads(plan.stdout)["cached"] == 2 * ASKED


class Faulty:
    """a: 429 once, then fine; b: 500 always; c: hangs past the timeout; d: broken JSON; the rest prefer the
    candidate. Once ``healed``, every pair prefers the candidate."""

    def __init__(self) -> None:
        self.healed = False

    def __call__(self, request: dict[str, Any], attempt: int) -> Reply:
        letter = case_letter(request)
        if self.healed:
            return prefers_the_candidate(request, attempt)
        if letter == "a" and attempt == 1:
            return Reply(status=429, headers={"Retry-After": "0"})
        if letter == "b":
            return Reply(status=500)
        if letter == "c":
            return Reply(delay=3.0)
        if letter == "d":
            return Reply(content='{"better": "first", "reason": ')
        return prefers_the_candidate(request, attempt)


def test_a_pool_of_endpoints_survives_a_dead_one_and_says_what_each_did(
    cli: Cli, runs: tuple[Path, Path], tmp_path: Path
) -> None:
    """One request at a time, the dead endpoint first: it is tried by three requests, then set aside."""
    dead = closed_port_url()
    with ChatServer(prefers_the_candidate) as live:
        result = cli(
            "judge-pairs", *runs, "--model", "m", "--base-url", dead, "--base-url", live.base_url,
            "--concurrency", "1", *FAST, "--output", tmp_path / "pairs.arrow",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert live.count() == 2 * ASKED
    assert result.stderr.splitlines()[-2:] == [
        f"endpoint {dead}: 3 requests sent, 0 succeeded, 3 failed",
        f"endpoint {live.base_url}: {2 * ASKED} requests sent, {2 * ASKED} succeeded, 0 failed",
    ]
    pairs = load_pairs(tmp_path / "pairs.arrow")
    assert pairs.evaluator["config"]["endpoint"] == sorted([dead, live.base_url])
    assert pairs.counts["judge_failed"] == 0
    assert compared(cli, runs, tmp_path / "pairs.arrow")["preference"]["wins"] == ASKED


def test_a_pool_with_an_unusable_url_exits_2_before_any_request(
    cli: Cli, runs: tuple[Path, Path], tmp_path: Path
) -> None:
    with ChatServer(always_first) as server:
        result = judge(cli, runs, server, tmp_path / "pairs.arrow", "--base-url", "ftp://judge-2/v1")
        assert server.count() == 0
    assert result.exit_code == 2, result.output
    assert "the endpoint 'ftp://judge-2/v1' is not usable (not an http:// or https:// URL with a host)" in result.stderr
    assert not (tmp_path / "pairs.arrow").exists()


def test_faults_keep_every_case_and_a_rerun_sends_only_what_failed(
    cli: Cli, runs: tuple[Path, Path], tmp_path: Path
) -> None:
    responder = Faulty()
    with ChatServer(responder) as server:
        result = judge(cli, runs, server, tmp_path / "pairs.arrow")
        assert result.exit_code == 0, result.output
        assert "3 pairs could not be judged" in result.stderr
        pairs = load_pairs(tmp_path / "pairs.arrow")
        frame = {row["case_id"]: row for row in pairs.frame.iter_rows(named=True)}
        assert len(frame) == 9  # every case kept
        assert frame["a_better@v1"]["verdict"] == "candidate"  # the 429 was retried
        assert frame["a_better@v1"]["requests"] == 4  # each order: a 429, then its reply
        for case_id, error in (
            ("b_worse@v1", "500"),
            ("c_tie@v1", "no reply within the timeout"),
            ("d_first@v1", "JSON"),
        ):
            assert frame[case_id]["judge_status"] == "judge_failed", case_id
            assert frame[case_id]["verdict"] is None
            assert error.lower() in frame[case_id]["judge_error"].lower(), frame[case_id]["judge_error"]
        assert pairs.counts["judge_failed"] == 3
        responder.healed = True
        sent = server.count()
        again = judge(cli, runs, server, tmp_path / "again.arrow")
        assert again.exit_code == 0, again.output
        # Only the three failed pairs, both orders of each (a failed order was never cached).
        assert server.count() - sent == 3 * 2
    assert load_pairs(tmp_path / "again.arrow").counts["candidate"] == ASKED


def test_dry_run_prints_the_cost_and_sends_nothing(cli: Cli, runs: tuple[Path, Path]) -> None:
    with ChatServer() as server:
        result = cli("judge-pairs", *runs, "--model", "m", "--base-url", server.base_url, "--dry-run")
        assert server.count() == 0
    assert result.exit_code == 0, result.output
    assert f"{2 * ASKED}" in result.stdout
    assert "token" in result.stdout


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ((), "give --output PATH"),
        (("--output", "x.arrow"), "needs --model"),
    ],
)
def test_usage_errors(cli: Cli, runs: tuple[Path, Path], options: tuple[str, ...], message: str) -> None:
    arguments = ("--model", "m", *options) if message != "needs --model" else options
    result = cli("judge-pairs", *runs, *arguments)
    assert result.exit_code == 2
    assert message in result.output


def test_an_existing_output_is_refused_before_any_request(cli: Cli, runs: tuple[Path, Path], tmp_path: Path) -> None:
    output = tmp_path / "pairs.arrow"
    output.write_text("keep")
    with ChatServer() as server:
        result = judge(cli, runs, server, output)
        assert server.count() == 0
    assert result.exit_code == 2
    assert output.read_text() == "keep"


def test_runs_with_repeats_and_a_refused_key_exit_2(cli: Cli, runs: tuple[Path, Path], tmp_path: Path) -> None:
    sampled = tmp_path / "sampled.arrow"
    freeze_run(SAMPLED_RECORDS, JUDGED_CORPUS, {"name": "sampled"}, output=sampled)
    with ChatServer() as server:
        result = judge(cli, (sampled, sampled), server, tmp_path / "p.arrow")
        assert server.count() == 0
    assert result.exit_code == 2
    assert "several samples of a case" in result.output
    with ChatServer(lambda request, attempt: Reply(status=401)) as server:
        refused = judge(cli, runs, server, tmp_path / "q.arrow")
    assert refused.exit_code == 2
    assert not (tmp_path / "q.arrow").exists()


def test_compare_refuses_pairs_of_other_runs(cli: Cli, runs: tuple[Path, Path], tmp_path: Path) -> None:
    with ChatServer(always_first) as server:
        assert judge(cli, runs, server, tmp_path / "pairs.arrow").exit_code == 0
    swapped = cli(runs[1], runs[0], "--pairs", tmp_path / "pairs.arrow")
    assert swapped.exit_code == 2
    assert "the other way round" in swapped.output
    not_pairs = cli(*runs, "--pairs", runs[0])
    assert not_pairs.exit_code == 2
    assert "is not a pairs file" in not_pairs.output


def test_show_and_text_output_of_a_pairs_file(cli: Cli, runs: tuple[Path, Path], tmp_path: Path) -> None:
    with ChatServer(prefers_the_candidate) as server:
        made = judge(cli, runs, server, tmp_path / "pairs.arrow")
    assert made.exit_code == 0, made.output
    assert "wrote" in made.stdout
    shown = cli("show", tmp_path / "pairs.arrow", "--format", "json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["counts"]["candidate"] == ASKED
