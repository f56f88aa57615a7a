"""The command line through its entry point: output, exit codes, messages, never a traceback."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from rag_compare.runs import load_run
from tests.conftest import EXAMPLE_CORPUS, HANDMADE_RUNS

Cli = Callable[..., Result]
Write = Callable[[str, str | bytes], Path]


def test_validate_example_prints_summary_and_warning(cli: Cli) -> None:
    result = cli("validate", EXAMPLE_CORPUS)
    assert result.exit_code == 0
    assert "valid corpus" in result.stdout
    assert "answerable 28 · unanswerable 6 · conflict 2" in result.stdout
    assert "warnings (1)" in result.stdout


def test_validate_strict_refuses_warnings(cli: Cli) -> None:
    result = cli("validate", "--strict", EXAMPLE_CORPUS)
    assert result.exit_code == 2
    assert "--strict turns warnings into errors" in result.stderr
    assert "row 5, column 'reviewed'" in result.stderr


def test_validate_json_lists_every_problem(cli: Cli, write: Write) -> None:
    bad = write("bad.csv", "case_id,question,answerability,source_version,required_passage_ids\na@v1,,maybe,v1,p1\n")
    result = cli("validate", bad, "--format", "json")
    assert result.exit_code == 2
    payload = json.loads(result.stdout)
    assert payload["valid"] is False
    assert {(p["row"], p["column"]) for p in payload["problems"]} == {(1, "question"), (1, "answerability")}
    ok = json.loads(cli("validate", EXAMPLE_CORPUS, "--format", "json").stdout)
    assert ok["valid"] is True
    assert ok["cases"] == 36


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b"case_id,question\n", "has a header but no rows"),
        (b"case_id,question\nx,caf\xe9\n", "is not UTF-8 text"),
        (b"case_id,question\nx,q\n", "a column named 'answerability' (required"),
        (
            b'case_id,question,answerability,source_version,required_passage_ids\nx@1,q,answerable,1,"[""a"",\n',
            "never closed",
        ),
    ],
    ids=["empty", "header-only", "not-utf8", "missing-column", "broken-list"],
)
def test_bad_corpus_files_get_their_own_message(cli: Cli, write: Write, content: bytes, message: str) -> None:
    result = cli("validate", write("corpus.csv", content))
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stderr.startswith("error: ")


def test_broken_json_list_in_jsonl(cli: Cli, write: Write) -> None:
    corpus = write(
        "c.csv",
        'case_id,question,answerability,source_version,required_passage_ids\nx@1,q,answerable,1,"[""a"", ]"\n',
    )
    result = cli("validate", corpus)
    assert result.exit_code == 2
    assert "row 1, column 'required_passage_ids'" in result.stderr
    assert "a JSON array" in result.stderr


def test_freeze_and_show(cli: Cli, tmp_path: Path, small_records: Path, small_corpus: Path, write: Write) -> None:
    config = write("config.toml", 'model = "m1"\n[retriever]\nkind = "bm25"\n')
    output = tmp_path / "out" / "base.arrow"
    result = cli(
        "freeze", small_records, "--corpus", small_corpus, "--config", config,
        "--set", "top_k=5", "--set", "retriever.kind=dense", "--set", "label=v 2", "--output", output,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"froze 3 cases of 'base' to {output}" in result.stdout
    run = load_run(output)
    assert (run.config["top_k"], run.config["retriever"], run.config["label"]) == (5, {"kind": "dense"}, "v 2")
    shown = cli("show", output)
    assert shown.exit_code == 0
    assert run.fingerprint in shown.stdout
    assert "3 of 4 in the corpus" in shown.stdout
    assert "ok 2 · failed 1 · timeout 0" in shown.stdout
    assert "retriever.kind" in shown.stdout
    payload = json.loads(cli("show", output, "--format", "json").stdout)
    assert payload["fingerprint"] == run.fingerprint
    assert payload["status_counts"] == {"ok": 2, "failed": 1, "timeout": 0}


def test_freeze_refusals_exit_2_and_write_nothing(
    cli: Cli, tmp_path: Path, small_records: Path, small_corpus: Path, write: Write
) -> None:
    output = tmp_path / "run.arrow"
    bad_records = write("bad.jsonl", '{"case_id": "ghost@v2"}\n')
    cases = [
        (["freeze", bad_records, "--corpus", small_corpus, "--output", output], "a case id of the corpus"),
        (
            ["freeze", small_records, "--corpus", small_corpus, "--set", "api_key=abc", "--output", output],
            "named like a credential",
        ),
        (
            ["freeze", small_records, "--corpus", small_corpus, "--set", "novalue", "--output", output],
            "--set expects KEY=VALUE",
        ),
        (
            [
                "freeze",
                small_records,
                "--corpus",
                small_corpus,
                "--config",
                write("c.toml", "x = ["),
                "--output",
                output,
            ],
            "not valid TOML",
        ),
        (["freeze", small_records, "--corpus", small_corpus], "Missing option '--output'"),
    ]
    for args, message in cases:
        result = cli(*args)
        assert result.exit_code == 2, args
        assert message in result.stderr, (args, result.stderr)
        assert not output.exists()


def test_freeze_never_overwrites(cli: Cli, tmp_path: Path, small_records: Path, small_corpus: Path) -> None:
    output = tmp_path / "run.arrow"
    assert cli("freeze", small_records, "--corpus", small_corpus, "--output", output).exit_code == 0
    before = output.read_bytes()
    again = cli("freeze", small_records, "--corpus", small_corpus, "--output", output)
    assert again.exit_code == 2
    assert "never overwritten" in again.stderr
    assert output.read_bytes() == before


def test_secret_from_environment_is_refused(cli: Cli, tmp_path: Path, small_records: Path, small_corpus: Path) -> None:
    secret = "sk-abcdefghijklmnop"
    result = cli(
        "freeze", small_records, "--corpus", small_corpus, "--set", f"note={secret}", "--output", tmp_path / "r.arrow",
        env={"OPENAI_API_KEY": secret},
    )  # fmt: skip
    assert result.exit_code == 2
    assert "OPENAI_API_KEY" in result.stderr
    assert secret not in result.output


def test_show_refuses_a_damaged_run(cli: Cli, tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.arrow"
    data = bytearray((HANDMADE_RUNS / "baseline.arrow").read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    result = cli("show", damaged)
    assert result.exit_code == 2
    assert "damaged.arrow" in result.stderr
    short = tmp_path / "short.arrow"
    short.write_bytes((HANDMADE_RUNS / "baseline.arrow").read_bytes()[:-100])
    cut = cli("show", short)
    assert cut.exit_code == 2
    assert "cut short" in cut.stderr


def test_show_missing_file(cli: Cli, tmp_path: Path) -> None:
    result = cli("show", tmp_path / "nowhere.arrow")
    assert result.exit_code == 2
    assert "no such run file" in result.stderr


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from rag_compare.cli import main
    from rag_compare.errors import RunFileError

    result = CliRunner().invoke(main, ["--debug", "show", str(tmp_path / "nowhere.arrow")])
    assert isinstance(result.exception, RunFileError)


def test_unknown_command_and_help(cli: Cli) -> None:
    assert cli("frobnicate").exit_code == 2
    helped = cli("--help")
    assert helped.exit_code == 0
    for command in ("validate", "audit", "freeze", "show"):
        assert command in helped.stdout


def test_console_script_runs_without_traceback(tmp_path: Path) -> None:
    executable = shutil.which("rag-compare", path=str(Path(sys.executable).parent))
    assert executable is not None, "the rag-compare console script is not installed next to this Python"
    ok = subprocess.run(
        [executable, "show", str(HANDMADE_RUNS / "candidate.arrow")], capture_output=True, text=True, check=False
    )
    assert ok.returncode == 0
    assert "candidate" in ok.stdout
    bad = subprocess.run(
        [executable, "validate", str(tmp_path / "none.csv")], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2
    assert "no such file" in bad.stderr
    assert "Traceback" not in bad.stderr
    module = subprocess.run(
        [sys.executable, "-m", "rag_compare", "--version"], capture_output=True, text=True, check=False
    )
    assert module.returncode == 0
    assert "rag-compare" in module.stdout


def _console_script() -> str:
    executable = shutil.which("rag-compare", path=str(Path(sys.executable).parent))
    assert executable is not None, "the rag-compare console script is not installed next to this Python"
    return executable


def test_console_script_exit_code_is_the_same_every_time(write: Write) -> None:
    """A quick error exit after a CSV read never aborts in the threads' teardown (exit 134)."""
    header_only = write("hdr.csv", "case_id,question,answerability,source_version,required_passage_ids\n")
    codes = [
        subprocess.run([_console_script(), "validate", str(header_only)], capture_output=True, check=False).returncode
        for _ in range(20)
    ]
    assert codes == [2] * 20


def test_console_script_flushes_stdout_and_keeps_the_exit_code(tmp_path: Path) -> None:
    run = subprocess.run(
        [_console_script(), "show", str(HANDMADE_RUNS / "candidate.arrow"), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0
    assert json.loads(run.stdout)["name"] == "candidate"
    cut = subprocess.run(  # the reader of stdout left early: the shell's SIGPIPE code, no traceback
        f"{_console_script()} show {HANDMADE_RUNS / 'candidate.arrow'} --format json | head -c 1",
        shell=True,
        capture_output=True,
        text=True,
        check=False,
        executable="/bin/bash",
    )
    assert "Traceback" not in cut.stderr


def test_ctrl_c_exits_130_with_one_line(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupt(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("rag_compare.corpus.load_corpus", interrupt)
    result = cli("validate", EXAMPLE_CORPUS)
    assert result.exit_code == 130
    assert result.stderr.strip() == "interrupted: no output was left half-written."
    assert "Aborted" not in result.output


@pytest.mark.parametrize(
    ("signal_number", "code", "said"),
    [(signal.SIGTERM, 143, ""), (signal.SIGINT, 130, "interrupted: no output was left half-written.")],
    ids=["sigterm", "ctrl-c"],
)
def test_a_signal_mid_write_leaves_no_partial_file(tmp_path: Path, signal_number: int, code: int, said: str) -> None:
    """The real entry point, stopped while a report is half-written: the hidden temp file goes too."""
    output = tmp_path / "report.html"
    slow_writer = (
        "import sys, time\n"
        "from rag_compare.comparison import Comparison\n"
        "def write(self, stream, *args, **kwargs):\n"
        "    stream.write('<html>' * 1000)\n"
        "    stream.flush()\n"
        "    time.sleep(60)\n"
        "Comparison.write = write\n"
        "from rag_compare.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    command = [sys.executable, "-c", slow_writer, str(HANDMADE_RUNS / "baseline.arrow")]
    command += [str(HANDMADE_RUNS / "candidate.arrow"), "--format", "html", "--output", str(output)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".report.html.*.partial")):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the report was never started"
        time.sleep(0.05)
    process.send_signal(signal_number)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == code
    assert stderr.strip() == said
    assert list(tmp_path.iterdir()) == []


CONTROL = "\x1b[31m\u202e\x07"
"""An ANSI colour escape, a right-to-left override and a bell: text that would take over a terminal."""
SHOWN = "\\x1b[31m\\u202e\\x07"


def test_terminal_output_escapes_control_characters(cli: Cli, tmp_path: Path, write: Write) -> None:
    corpus = write(
        "corpus.csv",
        "case_id,question,answerability,source_version,required_passage_ids\n"
        f"a{CONTROL}@v1,Q{CONTROL}?,answerable,v1,p1\nb@v1,Q?,answerable,v1,p1\n",
    )
    runs = {}
    for side, status in (("baseline", "ok"), ("candidate", "failed")):
        records = write(
            f"{side}.jsonl",
            json.dumps({"case_id": f"a{CONTROL}@v1", "status": status, "error": f"HTTP {CONTROL}",
                        "retrieved_passage_ids": ["p1"], "answer": f"p1 {CONTROL}"}) + "\n"
            + json.dumps({"case_id": "b@v1", "retrieved_passage_ids": ["p1"]}) + "\n",
        )  # fmt: skip
        runs[side] = tmp_path / f"{side}.arrow"
        frozen = cli("freeze", records, "--corpus", corpus, "--set", f"name={side}{CONTROL}", "--output", runs[side])
        assert frozen.exit_code == 0, frozen.output
        assert SHOWN in frozen.stdout
    shown = cli("show", runs["baseline"])
    compared = cli(runs["baseline"], runs["candidate"])
    validated = cli("validate", corpus)
    refused = cli("validate", tmp_path / f"none{CONTROL}.csv")
    assert refused.exit_code == 2
    for result in (shown, compared, validated, refused):
        assert not {"\x1b", "\u202e", "\x07"} & set(result.output), result.output
        assert SHOWN in result.output or result is validated
    assert f"a{SHOWN}@v1\n" in compared.stdout  # its case id, listed as failed_in_candidate
    assert f"candidate failed: HTTP {SHOWN}\n" in compared.stdout
    as_json = cli(runs["baseline"], runs["candidate"], "--format", "json")
    assert json.loads(as_json.stdout)["cases"][0]["case_id"] == f"a{CONTROL}@v1"  # data for programs is kept as is


def test_a_cut_off_beyond_what_can_be_indexed_is_refused(
    cli: Cli, tmp_path: Path, small_records: Path, small_corpus: Path
) -> None:
    runs = HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow"
    huge = cli(*runs, "--k", 2**32)
    assert huge.exit_code == 2
    assert "k must be a whole number from 1 to 1,000,000" in huge.stderr
    assert cli(*runs, "--k", 1_000_000).exit_code == 0
    output = tmp_path / "run.arrow"
    frozen = cli("freeze", small_records, "--corpus", small_corpus, "--set", f"top_k={2**32}", "--output", output)
    assert frozen.exit_code == 2
    assert "top_k" in frozen.stderr
    assert "1,000,000" in frozen.stderr
    assert not output.exists()


def test_report_with_a_huge_case_limit_lists_every_case(cli: Cli, tmp_path: Path) -> None:
    runs = HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow"
    for output_format in ("markdown", "html"):
        result = cli(*runs, "--format", output_format, "--max-cases", 10**12)
        assert result.exit_code == 0
        assert result.stdout == cli(*runs, "--format", output_format, "--max-cases", 0).stdout


@pytest.mark.parametrize("where", ["write", "fsync"])
@pytest.mark.parametrize("output_format", ["text", "html"])
def test_a_full_disk_names_the_report_path(
    cli: Cli, tmp_path: Path, full_disk: Callable[[str], None], where: str, output_format: str
) -> None:
    output = tmp_path / "report.out"
    full_disk(where)
    runs = HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow"
    result = cli(*runs, "--format", output_format, "--output", output)
    assert result.exit_code == 2
    assert f"error: {output}: cannot be written (No space left on device)" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("where", ["write", "fsync"])
def test_a_full_disk_names_the_run_path(
    cli: Cli, tmp_path: Path, small_records: Path, small_corpus: Path, full_disk: Callable[[str], None], where: str
) -> None:
    output = tmp_path / "out" / "run.arrow"
    full_disk(where)
    result = cli("freeze", small_records, "--corpus", small_corpus, "--output", output)
    assert result.exit_code == 2
    assert f"error: {output}: cannot be written (No space left on device)" in result.stderr
    assert list(output.parent.iterdir()) == []


def test_freeze_refuses_a_config_value_it_cannot_store(
    cli: Cli, tmp_path: Path, small_records: Path, small_corpus: Path, write: Write
) -> None:
    output = tmp_path / "run.arrow"
    config = write("config.toml", "released = 2026-01-31\n[window]\nstarts = 07:30:00\n")
    result = cli("freeze", small_records, "--corpus", small_corpus, "--config", config, "--output", output)
    assert result.exit_code == 2
    assert "Object of type date is not JSON serializable" in result.stderr
    assert "quoted text" in result.stderr
    assert not output.exists()
