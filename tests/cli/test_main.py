"""The command group through its entry point: exit codes, --debug, interrupts and signals, never a traceback."""

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

from tests.helpers.data import EXAMPLE_CORPUS, HANDMADE_RUNS

Cli = Callable[..., Result]
Write = Callable[[str, str | bytes], Path]


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from rag_compare.cli.main import main
    from rag_compare.core.errors import RunFileError

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
    assert "no such corpus file" in bad.stderr
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

    monkeypatch.setattr("rag_compare.io.corpus.load_corpus", interrupt)
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
        "from rag_compare.compute.comparison import Comparison\n"
        "def write(self, stream, *args, **kwargs):\n"
        "    stream.write('<html>' * 1000)\n"
        "    stream.flush()\n"
        "    time.sleep(60)\n"
        "Comparison.write = write\n"
        "from rag_compare.cli.main import main\n"
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
