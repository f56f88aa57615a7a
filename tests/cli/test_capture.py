"""rag-compare capture through its entry point: offline on the examples, killed and resumed, bad input."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from click.testing import Result

from rag_compare import load_run
from rag_compare.pipeline.checkpoint import checkpoint_path
from tests.helpers.chat_server import ChatServer, Reply
from tests.helpers.credential_shapes import OPENAI_KEY
from tests.helpers.data import EXAMPLE_CORPUS, ROOT
from tests.helpers.special_files import not_blocked_by

PASSAGES = ROOT / "corpora" / "handbook_passages.csv"
REVIEWED_CASES = 35  # the example corpus holds 36 cases, one of them an unreviewed synthetic draft


def test_an_offline_capture_of_the_examples_is_a_run_that_compares(cli: Callable[..., Result], tmp_path: Path) -> None:
    outputs = {}
    for top_k in (3, 5):
        outputs[top_k] = tmp_path / f"top{top_k}.arrow"
        result = cli("capture", EXAMPLE_CORPUS, "--passages", PASSAGES, "--top-k", top_k, "--context-budget", 600,
                     "--output", outputs[top_k])  # fmt: skip
        assert result.exit_code == 0, result.output
        assert f"captured {REVIEWED_CASES} cases of 'top{top_k}'" in result.output
        assert "left out 1 unreviewed synthetic case: meal-allowance-per-day-alt@2026-01" in result.output
    run = load_run(outputs[3])
    assert run.config["top_k"] == 3
    assert run.config["retriever"]["kind"] == "bm25"
    assert run.config["generator"]["kind"] == "extractive"
    assert run.config["context_builder"]["budget_chars"] == 600
    assert run.config["knowledge_base"] == str(PASSAGES)
    assert run.records.get_column("context").str.len_chars().max() <= 600  # type: ignore[operator]
    compared = cli(outputs[3], outputs[5], "--passages", PASSAGES, "--format", "json")
    assert compared.exit_code == 0, compared.output
    report = json.loads(compared.output)
    assert {change["key"] for change in report["config_diff"]} - {"created_at"} == {"name", "top_k"}


def test_a_python_and_a_cli_capture_of_one_knowledge_base_have_the_same_config(
    cli: Callable[..., Result], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag_compare import BM25Retriever, ExtractiveGenerator, capture

    monkeypatch.chdir(ROOT)
    relative = PASSAGES.relative_to(ROOT)
    python = capture(EXAMPLE_CORPUS, BM25Retriever(PASSAGES), ExtractiveGenerator(), top_k=3,
                     config={"name": "python"}, output=tmp_path / "python.arrow")  # fmt: skip
    result = cli("capture", EXAMPLE_CORPUS, "--passages", relative, "--top-k", 3, "--set", "name=cli",
                 "--output", tmp_path / "cli.arrow")  # fmt: skip
    assert result.exit_code == 0, result.output
    command = load_run(tmp_path / "cli.arrow")
    assert (python.config["knowledge_base"], command.config["knowledge_base"]) == (str(PASSAGES), str(relative))
    compared = cli(python.path, command.path, "--format", "json")
    assert compared.exit_code == 0, compared.output
    assert {change["key"] for change in json.loads(compared.output)["config_diff"]} - {"created_at"} == {"name"}


def test_include_unreviewed_captures_the_draft_too(cli: Callable[..., Result], tmp_path: Path) -> None:
    output = tmp_path / "all.arrow"
    result = cli("capture", EXAMPLE_CORPUS, "--passages", PASSAGES, "--top-k", 2, "--include-unreviewed",
                 "--format", "json", "--output", output)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["cases"] == REVIEWED_CASES + 1


def test_bad_input_exits_2_with_a_message(cli: Callable[..., Result], tmp_path: Path) -> None:
    base = ("capture", EXAMPLE_CORPUS, "--passages", PASSAGES, "--top-k", 3)
    missing = cli("capture", tmp_path / "none.csv", "--passages", PASSAGES, "--top-k", 3, "--output", tmp_path / "a")
    assert missing.exit_code == 2
    assert "no such corpus file" in missing.output
    assert not (tmp_path / "a").exists()
    model = cli(*base, "--model", "m", "--output", tmp_path / "b.arrow")
    assert model.exit_code == 2
    assert "--model apply to --generator openai" in model.output
    no_model = cli(*base, "--generator", "openai", "--output", tmp_path / "c.arrow")
    assert no_model.exit_code == 2
    assert "needs --model" in no_model.output
    (tmp_path / "d.arrow").write_bytes(b"kept")
    exists = cli(*base, "--output", tmp_path / "d.arrow")
    assert exists.exit_code == 2
    assert "never overwritten" in exists.output
    assert (tmp_path / "d.arrow").read_bytes() == b"kept"
    taken = cli(*base, "--set", "top_k=9", "--output", tmp_path / "e.arrow")
    assert taken.exit_code == 2
    assert "capture records itself" in taken.output


@pytest.mark.parametrize("output", ["run.arrow", "run/"])
def test_a_fifo_as_the_checkpoint_is_refused_before_any_case_runs(
    cli: Callable[..., Result], tmp_path: Path, output: str
) -> None:
    fifo = checkpoint_path(tmp_path / output)
    os.mkfifo(fifo)
    with not_blocked_by(fifo):
        result = cli(
            "capture", EXAMPLE_CORPUS, "--passages", PASSAGES, "--top-k", 3, "--output", f"{tmp_path}/{output}"
        )
    assert result.exit_code == 2, result.output
    assert f"{fifo}: is a FIFO (named pipe), which the capture checkpoint is never written to" in result.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert list(tmp_path.iterdir()) == [fifo]


def _samples(records: pl.DataFrame) -> list[tuple[str, int]]:
    """The (case, repeat) pairs of ``records``, in their order."""
    return list(records.select("case_id", "repeat").iter_rows())


def test_repeats_3_on_the_examples_captures_every_case_and_repeat_once(
    cli: Callable[..., Result], tmp_path: Path
) -> None:
    output = tmp_path / "three.arrow"
    result = cli("capture", EXAMPLE_CORPUS, "--passages", PASSAGES, "--top-k", 3, "--repeats", 3,
                 "--output", output)  # fmt: skip
    assert result.exit_code == 0, result.output
    samples = REVIEWED_CASES * 3
    assert f"captured {REVIEWED_CASES} cases x 3 repeats ({samples} samples) of 'three'" in result.output
    assert f"(ok {samples} · failed 0 · timeout 0;" in result.output
    run = load_run(output)
    reviewed = pl.read_csv(EXAMPLE_CORPUS).filter(pl.col("reviewed")).get_column("case_id").to_list()
    assert _samples(run.records) == [(case_id, repeat) for case_id in reviewed for repeat in range(3)]
    assert "repeats" not in json.dumps(run.to_dict()["config"])  # the number of repeats is not in the config
    as_json = cli("capture", EXAMPLE_CORPUS, "--passages", PASSAGES, "--top-k", 3, "--repeats", 2,
                  "--format", "json", "--output", tmp_path / "two.arrow")  # fmt: skip
    assert as_json.exit_code == 0, as_json.output
    summary = json.loads(as_json.output)
    assert (summary["cases"], summary["samples"], summary["repeats"]) == (REVIEWED_CASES, REVIEWED_CASES * 2, 2)


def test_one_repeat_is_a_run_without_a_repeat_column(cli: Callable[..., Result], tmp_path: Path) -> None:
    result = cli("capture", EXAMPLE_CORPUS, "--passages", PASSAGES, "--top-k", 3, "--repeats", 1,
                 "--output", tmp_path / "one.arrow")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"captured {REVIEWED_CASES} cases of 'one'" in result.output
    assert "repeat" not in load_run(tmp_path / "one.arrow").records.columns


@pytest.mark.parametrize("repeats", ["0", "-1", "x", "1.5"])
def test_repeats_that_are_not_a_whole_number_of_1_or_more_exit_2(
    cli: Callable[..., Result], tmp_path: Path, repeats: str
) -> None:
    output = tmp_path / "run.arrow"
    result = cli("capture", EXAMPLE_CORPUS, "--passages", PASSAGES, "--top-k", 3, "--repeats", repeats,
                 "--output", output)  # fmt: skip
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '--repeats': '{repeats}' is not" in result.stderr or (
        f"Invalid value for '--repeats': {repeats} is not in the range x>=1" in result.stderr
    )
    assert "Traceback" not in result.stderr
    assert not output.exists()
    assert not checkpoint_path(output).exists()


def _command(server: ChatServer, output: Path, *more: str) -> list[str]:
    return [sys.executable, "-m", "rag_compare", "capture", str(EXAMPLE_CORPUS), "--passages", str(PASSAGES),
            "--top-k", "3", "--generator", "openai", "--model", "m", "--base-url", server.base_url,
            "--concurrency", "2", "--max-retries", "0", "--output", str(output), *more]  # fmt: skip


def _environment() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key not in {"OPENAI_API_KEY", "OPENAI_BASE_URL"}}


def _wait_for(server: ChatServer, requests: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while server.count() < requests:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the capture sent too few requests"
        time.sleep(0.02)


def _checkpointed(output: Path) -> list[dict[str, object]]:
    lines = checkpoint_path(output).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:]]


def test_a_killed_capture_resumes_with_every_case_recorded_exactly_once(tmp_path: Path) -> None:
    output = tmp_path / "run.arrow"
    with ChatServer(latency=0.1) as server:
        process = subprocess.Popen(_command(server, output), env=_environment(), text=True, stderr=subprocess.PIPE)
        _wait_for(server, 12, process)
        process.kill()  # no chance to clean up: a lost machine, an OOM kill
        process.communicate()
        assert not output.exists()
        finished = _checkpointed(output)
        assert len(finished) >= 10  # 12 requests at 2 at a time: at most 2 were in flight
        sent_before = server.count()

        resumed = subprocess.run(
            _command(server, output), env=_environment(), text=True, capture_output=True, check=False
        )
        assert resumed.returncode == 0, resumed.stderr
        assert server.count() - sent_before == REVIEWED_CASES - len(finished)  # only the unfinished cases
    run = load_run(output)
    ids = run.records.get_column("case_id")
    assert ids.len() == REVIEWED_CASES
    assert ids.n_unique() == REVIEWED_CASES
    assert set(run.records.get_column("status")) == {"ok"}
    kept = run.records.filter(pl.col("case_id").is_in([record["case_id"] for record in finished]))
    assert sorted(kept.get_column("latency_ms").to_list()) == sorted(record["latency_ms"] for record in finished)  # type: ignore[type-var]
    assert not checkpoint_path(output).exists()


def test_a_killed_capture_with_repeats_resumes_with_every_case_and_repeat_recorded_exactly_once(tmp_path: Path) -> None:
    output = tmp_path / "run.arrow"
    samples = REVIEWED_CASES * 3
    with ChatServer(latency=0.05) as server:
        process = subprocess.Popen(_command(server, output, "--repeats", "3"), env=_environment(), text=True,
                                   stderr=subprocess.PIPE)  # fmt: skip
        _wait_for(server, 40, process)
        process.kill()  # no chance to clean up
        process.communicate()
        assert not output.exists()
        finished = _checkpointed(output)
        assert len(finished) >= 38  # 40 requests at 2 at a time: at most 2 were in flight
        assert len({(record["case_id"], record["repeat"]) for record in finished}) == len(finished)
        sent_before = server.count()

        resumed = subprocess.run(
            _command(server, output, "--repeats", "3"), env=_environment(), text=True, capture_output=True, check=False
        )
        assert resumed.returncode == 0, resumed.stderr
        assert server.count() - sent_before == samples - len(finished)  # only the samples not yet finished
    run = load_run(output)
    assert run.records.height == samples
    reviewed = pl.read_csv(EXAMPLE_CORPUS).filter(pl.col("reviewed")).get_column("case_id").to_list()
    assert _samples(run.records) == [(case_id, repeat) for case_id in reviewed for repeat in range(3)]
    assert set(run.records.get_column("status")) == {"ok"}
    kept = run.records.join(
        pl.DataFrame(finished).select("case_id", "repeat", pl.col("latency_ms").alias("checkpointed_ms")),
        on=["case_id", "repeat"],
    )
    assert kept.height == len(finished)
    assert (kept.get_column("latency_ms") == kept.get_column("checkpointed_ms")).all()  # kept, not captured again
    assert not checkpoint_path(output).exists()


@pytest.mark.parametrize(("more", "finished"), [((), "case"), (("--repeats", "2"), "sample")], ids=["one", "repeats"])
def test_ctrl_c_exits_130_and_says_how_to_resume(tmp_path: Path, more: tuple[str, ...], finished: str) -> None:
    output = tmp_path / "run.arrow"
    with ChatServer(latency=0.1) as server:
        process = subprocess.Popen(_command(server, output, *more), env=_environment(), text=True,
                                   stderr=subprocess.PIPE)  # fmt: skip
        _wait_for(server, 6, process)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130
    assert f"every finished {finished} is in the checkpoint; run the same command again to resume" in stderr
    assert "Traceback" not in stderr
    assert not output.exists()
    assert len(_checkpointed(output)) >= 4


def test_a_top_k_beyond_what_can_be_indexed_is_refused(cli: Callable[..., Result], tmp_path: Path) -> None:
    output = tmp_path / "run.arrow"
    result = cli("capture", EXAMPLE_CORPUS, "--passages", PASSAGES, "--top-k", 2**32, "--output", output)
    assert result.exit_code == 2
    assert "1<=x<=1000000" in result.stderr
    assert not output.exists()


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ('{% include "other.j2" %}{{ question }}', "uses {% include %}"),
        ('{% import "macros.j2" as m %}{{ question }}', "uses {% import %}"),
        ('{% from "macros.j2" import m %}{{ question }}', "uses {% import %}"),
        ('{% extends "base.j2" %}', "uses {% extends %}"),
        ("{{ range(10**9) | length }} {{ question }}", "Range too big"),
        ("{{ question.__class__ }}", "does not render"),
        ("{{ 1 / 0 }}", "division by zero"),
        ("{{ question ", "does not render"),
    ],
    ids=["include", "import", "from-import", "extends", "huge-range", "unsafe-attribute", "zero-division", "syntax"],
)
def test_a_prompt_template_that_cannot_render_exits_2_naming_it(
    cli: Callable[..., Result], tmp_path: Path, template: str, message: str
) -> None:
    (tmp_path / "other.j2").write_text("{{ context }}", encoding="utf-8")  # what an include would read
    prompt = tmp_path / "prompt.j2"
    prompt.write_text(template, encoding="utf-8")
    output = tmp_path / "run.arrow"
    result = cli("capture", EXAMPLE_CORPUS, "--passages", PASSAGES, "--top-k", 3, "--generator", "openai",
                 "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--prompt-template", prompt,
                 "--output", output)  # fmt: skip
    assert result.exit_code == 2, result.output
    assert f"error: {prompt}: the prompt template" in result.stderr
    assert message in result.stderr
    assert not output.exists()


def test_a_capture_whose_answer_holds_a_key_stops_before_checkpointing_it(cli: Callable[..., Result],
                                                                          tmp_path: Path) -> None:  # fmt: skip
    output = tmp_path / "run.arrow"
    with ChatServer(lambda request, attempt: Reply(content=f"the key is {OPENAI_KEY}")) as server:
        result = cli("capture", EXAMPLE_CORPUS, "--passages", PASSAGES, "--top-k", 3, "--generator", "openai",
                     "--model", "m", "--base-url", server.base_url, "--concurrency", 1, "--output", output)  # fmt: skip
        sent = server.count()
    assert result.exit_code == 2, result.output
    first = pl.read_csv(EXAMPLE_CORPUS).get_column("case_id")[0]
    assert f"case '{first}': column 'answer' holds a credential" in result.output
    assert "<frame>" not in result.output
    assert OPENAI_KEY not in result.output
    assert sent <= 2  # stopped at the first answer, not after every case
    assert not output.exists()
    checkpoint = checkpoint_path(output)
    assert not checkpoint.exists() or OPENAI_KEY not in checkpoint.read_text(encoding="utf-8")


def test_a_capture_refuses_a_corpus_case_holding_a_key_before_it_starts(cli: Callable[..., Result],
                                                                       tmp_path: Path) -> None:  # fmt: skip
    corpus = tmp_path / "corpus.csv"
    corpus.write_text(EXAMPLE_CORPUS.read_text(encoding="utf-8").replace("Can I lease a bike", f"Is {OPENAI_KEY} ok"))
    output = tmp_path / "run.arrow"
    result = cli("capture", corpus, "--passages", PASSAGES, "--top-k", 3, "--output", output)
    assert result.exit_code == 2, result.output
    assert "case 'bike-lease@2026-01': corpus column 'question' holds a credential" in result.output
    assert OPENAI_KEY not in result.output
    assert not output.exists()
    assert not checkpoint_path(output).exists()


def test_a_failed_request_echoing_the_key_is_recorded_redacted(cli: Callable[..., Result], tmp_path: Path) -> None:
    output = tmp_path / "run.arrow"
    echo = Reply(status=400, body=json.dumps({"error": {"message": f"bad request with key {OPENAI_KEY}"}}))
    with ChatServer(lambda request, attempt: echo) as server:
        result = cli("capture", EXAMPLE_CORPUS, "--passages", PASSAGES, "--top-k", 2, "--generator", "openai",
                     "--model", "m", "--base-url", server.base_url, "--output", output)  # fmt: skip
    assert result.exit_code == 0, result.output
    errors = load_run(output).records.get_column("error")
    assert errors.str.contains("bad request with key sk-…(redacted)", literal=True).all()
    assert OPENAI_KEY.encode() not in output.read_bytes()
