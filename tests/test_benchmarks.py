"""The benchmark scripts still run (on tiny inputs; their timings live in benchmarks/README.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from benchmarks.synthetic import write_dataset
from rag_compare import load_run
from tests.helpers.data import ROOT

BENCHMARKS = ROOT / "benchmarks"


def run_script(name: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / name), *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_freeze_benchmark_runs_and_reports_a_ratio() -> None:
    result = run_script("bench_freeze.py", "--cases", "300", "--repeats", "1")
    assert result.returncode == 0, result.stderr
    assert "cases                      300" in result.stdout
    assert "ratio" in result.stdout


def test_synthetic_script_writes_a_corpus_and_two_frozen_runs(tmp_path: Path) -> None:
    result = run_script("synthetic.py", "--cases", "300", "--k", "5", "--out", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "cases             300 at k=5, seed 0" in result.stdout
    corpus = pl.read_parquet(tmp_path / "corpus.parquet")
    assert corpus.height == 300
    assert set(corpus.get_column("answerability")) == {"answerable", "unanswerable", "conflict"}
    for side in ("baseline", "candidate"):
        run = load_run(tmp_path / f"{side}.arrow")
        assert run.config["top_k"] == 5
        assert set(run.records.get_column("status")) <= {"ok", "failed"}
        assert run.records.get_column("retrieved_passage_ids").list.len().max() == 5


def test_synthetic_script_refuses_to_replace_runs(tmp_path: Path) -> None:
    assert run_script("synthetic.py", "--cases", "50", "--out", tmp_path).returncode == 0
    again = run_script("synthetic.py", "--cases", "50", "--out", tmp_path)
    assert again.returncode == 2
    assert "exists" in again.stderr


def test_synthetic_data_is_byte_identical_for_the_same_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = []
    for attempt in ("first", "second"):
        (tmp_path / attempt).mkdir()
        monkeypatch.chdir(tmp_path / attempt)
        paths = write_dataset(Path("data"), 200, k=4, seed=3)
        written.append({name: path.read_bytes() for name, path in paths.items()})
    assert written[0] == written[1]


def test_compare_benchmark_checks_the_cli_against_ranx(tmp_path: Path) -> None:
    result = run_script("bench_compare.py", "--cases", "300", "--repeats", "1", "--workdir", tmp_path / "data")
    assert result.returncode == 0, result.stderr + result.stdout
    lines = result.stdout
    assert "cases                      300 at k=10" in lines
    assert "rag-compare CLI" in lines
    assert "ratio ranx / CLI" in lines
    assert "ranx / metrics" in lines
    assert "peak RSS, CLI" in lines
    assert "CLI aggregates of recall, precision, mrr, ndcg, hit_rate equal ranx's means" in lines
    assert "targets" in lines


def test_report_benchmark_runs_every_format(tmp_path: Path) -> None:
    result = run_script("bench_report.py", "--cases", "300", "--k", "5", "--repeats", "1", "--workdir", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "cases         300 at k=5" in result.stdout
    for output_format in ("text", "markdown", "html"):
        assert f"\n{output_format} " in result.stdout
    assert "s over text" in result.stdout


def test_judge_benchmark_scores_against_the_chat_server(tmp_path: Path) -> None:
    options = ["--cases", "40", "--latency", "0.01", "--concurrency", "8", "--repeats", "1"]
    result = run_script("bench_judge.py", *options, "--workdir", tmp_path)
    assert result.returncode == 0, result.stderr + result.stdout
    lines = result.stdout
    assert "cases                  40" in lines
    assert "requests               40 (groundedness)" in lines
    assert "ideal                  0.05 s" in lines
    for label in ("CLI, first pass", "library, first pass", "CLI, cached rerun", "peak RSS, CLI", "targets"):
        assert label in lines
    assert "every case ok; each first pass sent 40 requests, reruns none" in lines


def test_capture_benchmark_captures_through_the_chat_server_and_offline(tmp_path: Path) -> None:
    options = ["--cases", "60", "--repeats", "1", "--latency", "0.01", "--concurrency", "8"]
    result = run_script("bench_capture.py", *options, "--workdir", tmp_path)
    assert result.returncode == 0, result.stderr + result.stdout
    lines = result.stdout
    assert "cases                      60, 240 passages, top_k 4" in lines
    assert "ideal                      0.08 s (ceil(60 / 8) x 0.01 s)" in lines
    assert "59 cases checkpointed, 1 to capture" in lines
    assert "rank_bm25 / rag-compare" in lines
    assert "same top-1 passage" in lines
    assert "every case ok after 1 attempt in every run (60 requests a chat pass)" in lines
    assert "target                     CLI through the chat model within 1.5x the ideal:" in lines


def test_startup_benchmark_times_the_cli_and_the_import_beside_click() -> None:
    result = run_script("bench_startup.py", "--repeats", "1")
    assert result.returncode == 0, result.stderr + result.stdout
    lines = result.stdout
    assert "processes                       1 of each, fresh, interleaved" in lines
    assert 'python -c "import click"        ' in lines
    assert "(reference; median of 1: " in lines
    assert lines.count("x click; median of 1: ") == 2
    assert 'target                          median <= 0.2 s: python -c "import rag_compare" ' in lines
