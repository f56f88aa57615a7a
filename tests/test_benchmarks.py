"""The benchmark scripts still run (on tiny inputs; their timings live in benchmarks/README.md)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
import openai
import polars as pl
import pytest
from openai.types.chat import ChatCompletion

from benchmarks.harness import chat_server
from benchmarks.synthetic import write_dataset
from rag_compare import load_run
from rag_compare.llm.judge_checks import CHECKS
from tests.helpers.browser import require_chromium
from tests.helpers.data import ROOT

BENCHMARKS = ROOT / "benchmarks"


def run_script(name: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / name), *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_measure_prints_the_commands_wall_and_cpu_time_peak_memory_and_exit_code() -> None:
    result = run_script("measure.py", sys.executable, "-c", "import sys; sum(range(10**6)); sys.exit(3)")
    assert result.returncode == 0, result.stderr
    measured = json.loads(result.stdout)
    assert list(measured) == ["seconds", "cpu_seconds", "peak_rss_bytes", "returncode"]
    assert measured["returncode"] == 3
    assert measured["cpu_seconds"] > 0
    assert measured["seconds"] > 0
    assert measured["peak_rss_bytes"] > 2**20


def test_freeze_benchmark_runs_and_reports_a_ratio() -> None:
    result = run_script("bench_freeze.py", "--cases", "300", "--repeats", "1")
    assert result.returncode == 0, result.stderr
    assert "cases                      300" in result.stdout
    assert "ratio" in result.stdout


def test_import_benchmark_reads_the_producers_traces_copied() -> None:
    result = run_script("bench_import.py", "--copies", "2", "--repeats", "1")
    assert result.returncode == 0, result.stderr
    assert "traces                      20 (" in result.stdout
    assert "9 cases kept" in result.stdout
    assert "x the reference" in result.stdout


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


SCALE_RUNS: dict[str, tuple[list[str], list[str]]] = {
    "bench_many.py": (
        ["--cases", "200", "--candidates", "2", "--repeats", "1"],
        [
            "cases                   200 a run, 2 candidates, 1 runs each",
            "two runs",
            "2 candidates, memory",
            "target                  under 3x two runs:",
            "correctness             the first candidate's comparison is the two runs' but for the family's p",
        ],
    ),
    "bench_history.py": (
        ["--runs", "5", "--cases", "200", "--repeats", "1"],
        [
            "runs                   5 of 200 cases",
            "list_runs, cold",
            "list_runs, warm",
            "ratio, warm",
            "correctness            the 5 runs in creation order",
            "target                 5 runs listed in under 2 s: yes",
        ],
    ),
    "bench_compare.py": (
        ["--cases", "300", "--repeats", "1"],
        [
            "cases                      300 at k=10",
            "rag-compare CLI",
            "ratio ranx / CLI",
            "ranx / metrics",
            "peak RSS, CLI",
            "CLI aggregates of recall, precision, mrr, ndcg, hit_rate equal ranx's means",
            "targets",
        ],
    ),
    "bench_report.py": (
        ["--cases", "300", "--k", "5", "--repeats", "1"],
        ["cases         300 at k=5", "\ntext ", "\nmarkdown ", "\nhtml ", "s over text"],
    ),
    "bench_review.py": (
        ["--cases", "300", "--k", "5", "--repeats", "1"],
        [
            "cases              300 at k=5",
            "server ready",
            "the page",
            "filter: regressed",
            "sort by a delta",
            "last page of 500",
            "next to review",
            "a case",
            "a verdict",
            "targets            first page < 1.0 s: ",
        ],
    ),
    "bench_agreement.py": (
        ["--cases", "300", "--k", "5", "--repeats", "1"],
        [
            "cases              300 at k=5",
            "judges x labels        7 rows",
            "agreement, text",
            "agreement, json",
            "scikit-learn",
            "target                 the report under 5 s: ",
        ],
    ),
    "bench_case_details.py": (
        ["--cases", "300", "--k", "5", "--repeats", "1", "--shown", "20"],
        ["cases         300 at k=5", "details of 20", "details of 1 ", "summaries of 20", "JSON"],
    ),
    "bench_judge.py": (
        ["--cases", "40", "--latency", "0.01", "--concurrency", "8", "--repeats", "1"],
        [
            "cases                  40",
            "requests               40 (groundedness)",
            "ideal                  0.05 s",
            "CLI, first pass",
            "library, first pass",
            "CLI, cached rerun",
            "peak RSS, CLI",
            "targets",
            "every case ok; each first pass sent 40 requests, reruns none",
        ],
    ),
    "bench_capture.py": (
        ["--cases", "60", "--repeats", "1", "--latency", "0.01", "--concurrency", "8"],
        [
            "cases                      60, 240 passages, top_k 4",
            "ideal                      0.08 s (ceil(60 / 8) x 0.01 s)",
            "59 cases checkpointed, 1 to capture",
            "rank_bm25 / rag-compare",
            "same top-1 passage",
            "every case ok after 1 attempt in every run (60 requests a chat pass)",
            "target                     CLI through the chat model within 1.5x the ideal:",
        ],
    ),
    "bench_lexical_judge.py": (  # the code against itself: no verdict moves
        ["--before", str(ROOT), "--records", "200", "--repeats", "1"],
        [
            "records                    200 (synthetic.py's baseline run, seed 0)",
            "s per 1M records, median of",
            "after / before",
            "verdicts moved             0 of 200",
            "  a name the context lacks                0",
        ],
    ),
}
"""Per benchmark with a work folder: its options for tiny inputs, and what its output must say."""


@pytest.mark.parametrize("script", SCALE_RUNS)
def test_benchmark_runs_on_tiny_inputs_and_prints_its_figures(script: str, tmp_path: Path) -> None:
    options, expected = SCALE_RUNS[script]
    result = run_script(script, *options, "--workdir", tmp_path / "data")
    assert result.returncode == 0, result.stderr + result.stdout
    assert [line for line in expected if line not in result.stdout] == [], result.stdout


def test_page_benchmark_times_the_page_in_chromium_beside_the_text_summary(tmp_path: Path) -> None:
    require_chromium()
    result = run_script("bench_page.py", "--cases", "300", "--k", "5", "--repeats", "1", "--workdir", tmp_path)
    assert result.returncode == 0, result.stderr + result.stdout
    lines = result.stdout
    assert "cases                            300 at k=5" in lines
    for measured in ("text summary shown", "page: first case listed", "filter: improved only", "search ("):
        assert measured in lines
    assert "ratio page / summary" in lines
    assert "targets                          page < 10 MB: yes;" in lines


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_the_chat_endpoint_answers_each_check_with_a_reply_its_schema_accepts(check: str) -> None:
    with chat_server(latency=0) as url:
        client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=5)
        body = {"model": "bench", "messages": [{"role": "user", "content": "?"}]}
        judged = client.post(
            "/chat/completions", body=body | {"response_format": CHECKS[check].response_format}, cast_to=ChatCompletion
        )
        answered = client.post("/chat/completions", body=body, cast_to=ChatCompletion)
    reply = json.loads(judged.choices[0].message.content or "")
    jsonschema.Draft202012Validator(CHECKS[check].schema).validate(reply)
    assert CHECKS[check].score(reply) == 1
    assert answered.choices[0].message.content == "ok"


def test_startup_benchmark_times_the_cli_and_the_import_beside_click() -> None:
    result = run_script("bench_startup.py", "--repeats", "1")
    assert result.returncode == 0, result.stderr + result.stdout
    lines = result.stdout
    assert "processes                       1 of each, fresh, interleaved" in lines
    assert 'python -c "import click"        ' in lines
    assert "(reference; median of 1: " in lines
    assert lines.count("x click; median of 1: ") == 2
    assert 'target                          median <= 0.2 s: python -c "import rag_compare" ' in lines


def test_repeats_benchmark_compares_both_forms(tmp_path: Path) -> None:
    result = run_script("bench_repeats.py", "--cases", "300", "--samples", "2", "--repeats", "1", "--workdir", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "cases                      300 x 2 samples a side" in result.stdout
    assert "ratio" in result.stdout
    run = load_run(tmp_path / "repeats-candidate.arrow")
    assert (run.records.height, run.repeats) == (600, 2)
    assert load_run(tmp_path / "cases-candidate.arrow").records.get_column("case_id").n_unique() == 600


def test_run_directory_benchmark_freezes_parts_and_verifies_them(tmp_path: Path) -> None:
    args = ("--cases", "300", "--part-cases", "120", "--buckets", "4", "--workdir", tmp_path)
    result = run_script("bench_run_directory.py", *args)
    assert result.returncode == 0, result.stderr
    assert "cases             300 in parts of 120, 4 buckets" in result.stdout
    assert len(list((tmp_path / "records").iterdir())) == 3
    run = load_run(tmp_path / "run-4")
    assert (run.buckets, run.records.height) == (4, 300)


def test_engines_benchmark_gives_the_same_answer_from_each_engine(tmp_path: Path) -> None:
    layout = "directories"  # run directories frozen from parts (the files layout is synthetic.py's runs)
    result = run_script(
        "bench_engines.py",
        "--cases",
        "400",
        "--engines",
        "memory,streaming",
        "--repeats",
        "1",
        "--layout",
        layout,
        "--buckets",
        "3",
        "--workdir",
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert f"cases             400 ({layout})" in result.stdout
    assert "streaming" in result.stdout
    assert "x memory" in result.stdout
    assert "same answer       yes" in result.stdout


def _readme_benchmarks() -> tuple[str, list[list[str]]]:
    """The README's Development text before its benchmarks table, and the table's rows (cells stripped)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    development = readme.split("\n## Development\n", 1)[1].split("\n## Changelog\n", 1)[0]
    prose, table = development.split("\n### Benchmarks\n", 1)
    rows = [
        [cell.strip() for cell in line.strip("|").split(" | ")]
        for line in table.splitlines()
        if line.startswith("| ") and not line.startswith("| workload")
    ]
    return prose, rows


def test_readme_benchmarks_are_one_table_each_figure_with_its_command_and_date() -> None:
    prose, rows = _readme_benchmarks()
    assert not re.search(r"\d \s?(s|ms|GiB|MiB)\b", prose), "figures belong in the table, not the prose"
    workloads = [row[0] for row in rows]
    assert len(rows) >= 8
    assert len(set(workloads)) == len(workloads), "one row per workload"
    scripts = sorted({found[1] for row in rows if (found := re.fullmatch(r"`benchmarks/(\w+\.py).*`", row[3]))})
    with ThreadPoolExecutor(max_workers=4) as pool:  # each script's --help, asked once, side by side
        helps = dict(zip(scripts, pool.map(lambda script: run_script(script, "--help").stdout, scripts), strict=True))
    for workload, _, _, command, date in rows:
        assert re.fullmatch(r"2\d{3}-\d{2}-\d{2}", date), workload
        named = re.fullmatch(r"`benchmarks/(\w+\.py)(.*)`", command)
        assert named, f"{workload}: {command} is not a benchmark's command"
        help_text = helps[named[1]]
        for flag in re.findall(r"--[a-z-]+", named[2]):
            assert flag in help_text, f"{workload}: {named[1]} takes no {flag}"
