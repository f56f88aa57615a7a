"""The command line through its entry point: output, exit codes, messages, never a traceback."""

from __future__ import annotations

import csv
import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_compare.io.runs import load_run
from tests.helpers.data import EXAMPLE_CORPUS, HANDMADE_RUNS

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
        (
            b'case_id,question,answerability,source_version,required_passage_ids\nx@1,q,answerable,1,"[""a"", ]"\n',
            "row 1, column 'required_passage_ids': got '[\"a\", ]'; expected a list of ids: a JSON array",
        ),
        (
            b"case_id,question,answerability,source_version,required_passage_ids\na@v1,Q?,null,v1,\n",
            "row 1, column 'answerability': got 'null'; expected one of",  # the token as written, not "an empty cell"
        ),
    ],
    ids=["empty", "header-only", "not-utf8", "missing-column", "broken-list", "bad-json-list", "null-token"],
)
def test_bad_corpus_files_get_their_own_message(cli: Cli, write: Write, content: bytes, message: str) -> None:
    result = cli("validate", write("corpus.csv", content))
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stderr.startswith("error: ")


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
    assert "no such file" in bad.stderr
    assert "Traceback" not in bad.stderr
    module = subprocess.run(
        [sys.executable, "-m", "rag_compare", "--version"], capture_output=True, text=True, check=False
    )
    assert module.returncode == 0
    assert "rag-compare" in module.stdout


# -- cells kept as written --------------------------------------------------------------------------------------------

NULL_TOKENS = ("NA", "N/A", "null", "NULL", "nan", "NaN", "None", "n/a", "#N/A", "-NaN")


def test_csv_null_tokens_are_text_like_in_jsonl(cli: Cli, tmp_path: Path, small_corpus: Path, write: Write) -> None:
    """An answer "N/A" in CSV is the same record as in JSONL: only an empty cell is empty."""
    frozen = {}
    for name, text in {
        "csv": "case_id,answer,error,context\nceo@v2,N/A,NA,\n",
        "jsonl": '{"case_id": "ceo@v2", "answer": "N/A", "error": "NA"}\n',
    }.items():
        output = tmp_path / f"{name}.arrow"
        result = cli("freeze", write(f"records.{name}", text), "--corpus", small_corpus, "--output", output)
        assert result.exit_code == 0, result.output
        frozen[name] = load_run(output).records.select("answer", "error", "context").row(0)
    assert frozen["csv"] == frozen["jsonl"] == ("N/A", "NA", None)


@pytest.mark.parametrize("token", NULL_TOKENS)
def test_every_null_token_survives_every_text_column(cli: Cli, tmp_path: Path, write: Write, token: str) -> None:
    corpus = write(
        "corpus.csv",
        "case_id,question,answerability,source_version,required_passage_ids,acceptance_note,team\n"
        f"a@v1,{token},unanswerable,v1,,{token},{token}\n",
    )
    records = write("records.csv", f"case_id,answer,context,error,team_note\na@v1,{token},{token},{token},{token}\n")
    output = tmp_path / "run.arrow"
    assert cli("freeze", records, "--corpus", corpus, "--output", output).exit_code == 0
    row = load_run(output).records.select(
        "question", "acceptance_note", "team", "answer", "context", "error", "team_note"
    )
    assert row.row(0) == (token,) * 7


def test_a_quoted_cell_of_several_megabytes_is_read(cli: Cli, write: Write) -> None:
    long_note = "line of text\n" * 500_000  # 6.5 MB in one quoted cell, with line breaks
    corpus = write(
        "corpus.csv",
        "case_id,question,answerability,source_version,required_passage_ids,acceptance_note\n"
        f'a@v1,Q?,unanswerable,v1,,"{long_note}"\nb@v1,Q?,unanswerable,v1,,short\n',
    )
    result = cli("validate", corpus, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["cases"] == 2


@pytest.mark.parametrize(("delimiter", "named"), [(";", "semicolons (;)"), ("\t", "tabs")])
def test_a_csv_with_another_delimiter_gets_a_hint(cli: Cli, write: Write, delimiter: str, named: str) -> None:
    header = delimiter.join(["case_id", "question", "answerability", "source_version", "required_passage_ids"])
    corpus = write("corpus.csv", f"{header}\n" + delimiter.join(["a@v1", "Q?", "unanswerable", "v1", ""]) + "\n")
    result = cli("validate", corpus)
    assert result.exit_code == 2
    assert f"separated by {named}" in result.stderr
    assert "Save it with ',' as the delimiter" in result.stderr


# -- no output over an input ------------------------------------------------------------------------------------------

OVER_INPUT = {
    # command line (names in braces are files under tmp_path), the file it would write over
    "compare over its baseline": ("{baseline} {candidate} --format json --output {baseline}", "baseline"),
    "compare over --corpus": ("{baseline} {candidate} --corpus {corpus} --output {corpus}", "corpus"),
    "compare over --candidate-scores": (
        "{baseline} {candidate} --candidate-scores {scores} --output {scores}",
        "scores",
    ),
    "freeze over its records": ("freeze {records} --corpus {corpus} --output {records}", "records"),
    "capture over --passages": ("capture {corpus} --passages {passages} --top-k 2 --output {passages}", "passages"),
    "score over its run": ("score {candidate} --model m --output {candidate}", "candidate"),
    "score with --cache its run": ("score {candidate} --model m --cache {candidate} --output {new}", "candidate"),
    "score with --cache its output": ("score {candidate} --model m --cache {new} --output {new}", None),
    "import-scores over its file": (
        "import-scores {candidate} {trust} --evaluator e --map trust=trustworthiness --output {trust}",
        "trust",
    ),
    "fallback over its scores": (
        "fallback {candidate} --scores {scores} --signal trustworthiness --output {scores}",
        "scores",
    ),
    "admit --output over its drafts": ("admit {corpus} --ids hotel@v2 --output {corpus}", "corpus"),
    "draft-cases over --passages": (
        "draft-cases --passages {passages} --model m --n 1 --output {passages}",
        "passages",
    ),
}


@pytest.fixture
def files(tmp_path: Path, small_corpus: Path, small_records: Path, write: Write) -> dict[str, Path]:
    """Copies of the hand-made runs, a scores file of the candidate, and small corpus, records and passages files."""
    from rag_compare.io.external_scores import import_scores

    paths = {name: tmp_path / f"{name}.arrow" for name in ("baseline", "candidate")}
    for name, path in paths.items():
        shutil.copy(HANDMADE_RUNS / f"{name}.arrow", path)
    case_ids = load_run(paths["candidate"]).records.get_column("case_id").to_list()
    trust = write("trust.csv", "case_id,trust\n" + "".join(f"{case_id},0.5\n" for case_id in case_ids))
    scores = tmp_path / "scores.arrow"
    import_scores(paths["candidate"], trust, evaluator="e", mapping={"trust": "trustworthiness"}, output=scores)
    passages = write("passages.csv", "passage_id,source_version,text\nhotel-1,v2,The cap is 150.\n")
    return {
        **paths,
        "scores": scores,
        "trust": trust,
        "corpus": small_corpus,
        "records": small_records,
        "passages": passages,
        "new": tmp_path / "new.arrow",
    }


@pytest.mark.parametrize(("command", "target"), OVER_INPUT.values(), ids=OVER_INPUT.keys())
def test_no_command_writes_over_its_own_input(
    cli: Cli, files: dict[str, Path], command: str, target: str | None
) -> None:
    before = {name: path.read_bytes() for name, path in files.items() if path.exists()}
    result = cli(*command.format(**files).split(), env={"OPENAI_API_KEY": ""})
    assert result.exit_code == 2, result.output
    written = files[target] if target else files["new"]
    assert f"{written} is the same file as" in result.stderr
    assert "never writes over one of its own inputs" in result.stderr
    assert {name: path.read_bytes() for name, path in files.items() if path.exists()} == before
    assert not files["new"].exists()


def test_a_report_never_replaces_a_frozen_file(cli: Cli, files: dict[str, Path], tmp_path: Path) -> None:
    for kept in (tmp_path / "other-run.arrow", tmp_path / "other-scores.arrow"):
        shutil.copy(files["baseline" if "run" in kept.name else "scores"], kept)
        before = kept.read_bytes()
        result = cli(files["baseline"], files["candidate"], "--format", "json", "--output", kept)
        assert result.exit_code == 2, result.output
        assert f"{kept}: holds an Arrow file (a frozen run or scores file), which is never replaced" in result.stderr
        assert kept.read_bytes() == before
    report = tmp_path / "report.json"
    report.write_text("an old report", encoding="utf-8")
    assert cli(files["baseline"], files["candidate"], "--format", "json", "--output", report).exit_code == 0
    assert json.loads(report.read_text(encoding="utf-8"))["schema_version"] == 1


# -- look-alike ids ---------------------------------------------------------------------------------------------------

COMPOSED, DECOMPOSED, ZERO_WIDTH = "caf\u00e9@v1", "cafe\u0301@v1", "ho\u200btel@v1"


def test_case_ids_that_only_look_different_are_a_warning_and_strict_refuses_them(cli: Cli, write: Write) -> None:
    rows = [COMPOSED, DECOMPOSED, ZERO_WIDTH, "hotel@v1", "meal@v1"]
    corpus = write(
        "corpus.csv",
        "case_id,question,answerability,source_version,required_passage_ids\n"
        + "".join(f"{case_id},Q?,unanswerable,v1,\n" for case_id in rows),
    )
    result = cli("validate", corpus, "--format", "json")
    assert result.exit_code == 0, result.output
    warned = [(warning["row"], warning["column"]) for warning in json.loads(result.stdout)["warnings"]]
    assert warned == [(1, "case_id"), (2, "case_id"), (3, "case_id"), (4, "case_id")]  # meal@v1 is alone
    strict = cli("validate", corpus, "--strict")
    assert strict.exit_code == 2
    assert "differs from 'hotel@v1' (row 4) only by Unicode normalisation or invisible characters" in strict.stderr
    assert "'ho\\u200btel@v1' here, 'hotel@v1' there" in strict.stderr


def test_a_record_id_matching_a_corpus_id_only_after_normalisation_is_named(
    cli: Cli, tmp_path: Path, write: Write
) -> None:
    corpus = write(
        "corpus.csv",
        f"case_id,question,answerability,source_version,required_passage_ids\n{COMPOSED},Q?,unanswerable,v1,\n",
    )
    records = write("records.jsonl", json.dumps({"case_id": DECOMPOSED}) + "\n" + '{"case_id": "ghost@v1"}\n')
    result = cli("freeze", records, "--corpus", corpus, "--output", tmp_path / "run.arrow")
    assert result.exit_code == 2
    assert f"row 1, column 'case_id': got '{DECOMPOSED}'; expected a case id of the corpus" in result.stderr
    assert f"it matches '{COMPOSED}' only after Unicode normalisation" in result.stderr
    assert f"row 2, column 'case_id': got 'ghost@v1'; expected a case id of the corpus {corpus}\n" in result.stderr


# -- any input: exit 0 or 2, nothing half-written, every cell as written ---------------------------------------------

_CELL = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12) | st.sampled_from(
    ["", "NA", "N/A", "null", "None", "nan", "-inf", "1e999", '"', ",", ";", "[]", '["a"', "\r\n", " x ", "\x1b[31m"]
)
_ID = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1, max_size=8)
_MOSTLY = 6  # a contract cell is valid six times in seven, so that some files are valid and some are not
_LABELS = st.sampled_from(
    [("answerable", "p1"), ("unanswerable", ""), ("conflict", "p1;p2"), ("answerable", '["p1"]')] * _MOSTLY
    + [("maybe", ""), ("", ""), ("NA", "p1"), ("unanswerable", "p1"), ("answerable", "[1, 2]"), ("answerable", ";")]
)
_CORPUS_ROW = st.fixed_dictionaries(
    {
        "question": _CELL.filter(str.strip) | st.sampled_from(["", " "]),
        "labels": _LABELS,
        "source_version": st.sampled_from(["v1"] * _MOSTLY + ["", "NA"]),
        "acceptance_note": _CELL,
        "team": _CELL,
    }
)
_RECORD_ROW = st.fixed_dictionaries(
    {
        "status": st.sampled_from(["", "ok", "failed", "timeout"] * _MOSTLY + ["NA", "OK", "null"]),
        "answer": _CELL,
        "context": _CELL,
        "error": _CELL,
        "latency_ms": st.sampled_from(["", "12.5", "7"] * _MOSTLY + ["x", "NaN", "inf"]),
        "note": _CELL,
    }
)


def _corpus_cells(case_id: str, row: dict[str, Any]) -> dict[str, str]:
    answerability, required = row.pop("labels")
    return {"case_id": case_id, "answerability": answerability, "required_passage_ids": required, **row}


def _write_rows(path: Path, rows: list[dict[str, str]]) -> None:
    """Rows of text cells as CSV (Python's csv module, quoting as needed) or JSONL (an empty cell as null)."""
    if path.suffix == ".csv":
        with path.open("w", encoding="utf-8", newline="") as stream:
            writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    else:
        lines = (json.dumps({name: value or None for name, value in row.items()}, ensure_ascii=False) for row in rows)
        path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def _as_written(value: str) -> str | None:
    return value or None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ids=st.lists(_ID, min_size=1, max_size=4, unique=True),
    corpus_rows=st.lists(_CORPUS_ROW, min_size=4, max_size=4),
    record_rows=st.lists(_RECORD_ROW, min_size=4, max_size=4),
    suffixes=st.tuples(st.sampled_from([".csv", ".jsonl"]), st.sampled_from([".csv", ".jsonl"])),
)
def test_validate_and_freeze_take_any_input_safely(
    cli: Cli,
    tmp_path_factory: pytest.TempPathFactory,
    ids: list[str],
    corpus_rows: list[dict[str, Any]],
    record_rows: list[dict[str, str]],
    suffixes: tuple[str, str],
) -> None:
    folder = tmp_path_factory.mktemp("any")
    corpus, records, output = folder / f"corpus{suffixes[0]}", folder / f"records{suffixes[1]}", folder / "run.arrow"
    corpus_cells = [_corpus_cells(case_id, dict(row)) for case_id, row in zip(ids, corpus_rows, strict=False)]
    record_cells = [{"case_id": case_id, **row} for case_id, row in zip(ids, record_rows, strict=False)]
    _write_rows(corpus, corpus_cells)
    _write_rows(records, record_cells)
    validated = cli("validate", corpus)
    assert validated.exit_code in (0, 2), validated.output
    frozen = cli("freeze", records, "--corpus", corpus, "--output", output)
    assert frozen.exit_code in (0, 2), frozen.output
    if validated.exit_code == 2:
        assert frozen.exit_code == 2
    if frozen.exit_code == 2:
        assert frozen.stderr.startswith("error: ")
        assert sorted(path.name for path in folder.iterdir()) == sorted([corpus.name, records.name])
        return
    run = load_run(output).records
    assert run.get_column("case_id").to_list() == ids
    for column in ("question", "acceptance_note", "team"):
        assert run.get_column(column).to_list() == [_as_written(row[column]) for row in corpus_cells], column
    for column in ("answer", "context", "error", "note"):
        assert run.get_column(column).to_list() == [_as_written(row[column]) for row in record_cells], column


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
