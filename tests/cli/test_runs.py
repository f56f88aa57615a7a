"""`rag-compare freeze` and `rag-compare show` through the entry point: run files written, shown and refused."""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_compare.io.runs import load_run
from tests.helpers.credential_shapes import KEY_SHAPES, legacy_run, secret_parts
from tests.helpers.data import COMPOSED, DECOMPOSED, HANDMADE_RUNS

Cli = Callable[..., Result]
Write = Callable[[str, str | bytes], Path]


def test_freeze_and_show(cli: Cli, tmp_path: Path, small_records: Path, small_corpus: Path, write: Write) -> None:
    config = write("config.toml", 'model = "m1"\n[retriever]\nkind = "bm25"\n')
    output = tmp_path / "base.arrow"
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


@pytest.mark.parametrize("where", ["write", "fsync"])
def test_a_full_disk_names_the_run_path(
    cli: Cli, tmp_path: Path, small_records: Path, small_corpus: Path, full_disk: Callable[[str], None], where: str
) -> None:
    output = tmp_path / "out" / "run.arrow"
    output.parent.mkdir()
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


def test_a_cut_off_beyond_what_can_be_indexed_is_refused(
    cli: Cli, tmp_path: Path, small_records: Path, small_corpus: Path
) -> None:
    output = tmp_path / "run.arrow"
    frozen = cli("freeze", small_records, "--corpus", small_corpus, "--set", f"top_k={2**32}", "--output", output)
    assert frozen.exit_code == 2
    assert "top_k" in frozen.stderr
    assert "1,000,000" in frozen.stderr
    assert not output.exists()


@pytest.fixture
def stand_in_format(monkeypatch: pytest.MonkeyPatch) -> str:
    """The ``ragas`` format read by the stand-in reader of ``tests/io/test_run_import.py`` (the real one is
    tested against Ragas' own files); returns the name to pass to ``--from``."""
    from rag_compare.io.run_import import FORMATS

    monkeypatch.setitem(FORMATS, "ragas", "tests.io.test_run_import:units_reader")
    return "ragas"


def _units(write: Write, *units: dict[str, Any], **rest: Any) -> Path:
    return write("units.json", json.dumps({"units": list(units), **rest}))


HOTEL = {"meta": {"case_id": "hotel@v2"}, "question": "What is the hotel cap?", "answer": "150"}
MEAL = {"meta": {"case_id": "meal@v2"}, "question": "What is the meal allowance?", "status": "failed"}


def test_import_run_freezes_and_accounts_for_every_unit(
    cli: Cli, tmp_path: Path, small_corpus: Path, write: Write, stand_in_format: str
) -> None:
    source = _units(write, HOTEL, MEAL, skipped=[[3, "no query (an indexing trace)"]])
    output = tmp_path / "imported.arrow"
    result = cli("import-run", source, "--from", stand_in_format, "--corpus", small_corpus, "--set", "model=m",
                 "--output", output)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"read 3 traces of {source} (ragas; case ids from the metadata key 'case_id')" in result.stdout
    assert "imported 2 cases (1 failed)" in result.stdout
    assert "skipped 1 trace: no query (an indexing trace) 1" in result.stdout
    assert f"froze 2 cases of 'imported' to {output}" in result.stdout
    run = load_run(output)
    assert (run.config["model"], run.config["imported"]["format"]) == ("m", "ragas")
    again = cli("import-run", source, "--from", stand_in_format, "--corpus", small_corpus, "--output", output,
                "--format", "json")  # fmt: skip
    assert again.exit_code == 2
    assert "already exists" in again.stderr


def test_import_run_json_lists_what_was_left_out(
    cli: Cli, tmp_path: Path, small_corpus: Path, write: Write, stand_in_format: str
) -> None:
    source = _units(write, {**HOTEL, "started_ns": 2}, {**HOTEL, "started_ns": 1})
    args = ("import-run", source, "--from", stand_in_format, "--corpus", small_corpus)
    refused = cli(*args, "--output", tmp_path / "a.arrow")
    assert refused.exit_code == 2
    assert "--keep first" in refused.stderr
    assert not (tmp_path / "a.arrow").exists()
    kept = cli(*args, "--keep", "last", "--output", tmp_path / "b.arrow", "--format", "json")
    assert kept.exit_code == 0, kept.output
    payload = json.loads(kept.stdout)
    assert payload["import"]["left_out"] == [
        {"position": 2, "source_id": None, "case_id": "hotel@v2", "reason": "a repeat of the case (kept last)"}
    ]
    assert payload["run"]["cases"] == 1


def test_import_run_takes_a_key_or_the_question_not_both(
    cli: Cli, tmp_path: Path, small_corpus: Path, write: Write, stand_in_format: str
) -> None:
    source = _units(write, HOTEL)
    result = cli("import-run", source, "--from", stand_in_format, "--corpus", small_corpus, "--case-id-key", "k",
                 "--match-question", "--output", tmp_path / "r.arrow")  # fmt: skip
    assert result.exit_code == 2
    assert "not both" in result.stderr


def test_import_run_lists_the_formats_the_library_reads() -> None:
    from rag_compare.cli.runs import _FORMATS
    from rag_compare.io.run_import import FORMATS

    assert tuple(FORMATS) == _FORMATS


def _freeze_samples(cli: Cli, write: Write, corpus: Path, name: str, lines: str, *options: str) -> Path:
    """``lines`` (JSON lines records) frozen against ``corpus`` as ``name.arrow``, with ``options`` (``--set ...``)."""
    records = write(f"{name}.jsonl", lines)
    output = records.with_suffix(".arrow")
    result = cli("freeze", records, "--corpus", corpus, *options, "--output", output)
    assert result.exit_code == 0, result.output
    return output


def test_freeze_says_how_many_samples_of_how_many_cases(cli: Cli, write: Write, small_corpus: Path) -> None:
    lines = '{"case_id": "meal@v2", "repeat": 0}\n{"case_id": "meal@v2", "repeat": 1}\n{"case_id": "hotel@v2", "repeat": 0}\n'
    records = write("sampled.jsonl", lines)
    output = records.with_suffix(".arrow")
    result = cli("freeze", records, "--corpus", small_corpus, "--output", output)
    assert result.exit_code == 0, result.output
    assert f"froze 3 samples of 2 cases of 'sampled' to {output}" in result.stdout
    shown = cli("show", output)
    assert "samples      3 (up to 2 per case)" in shown.stdout
    payload = json.loads(cli("show", output, "--format", "json").stdout)
    assert (payload["cases"], payload["samples"], payload["repeats"]) == (2, 3, 2)


def test_merge_repeats_merges_runs_of_one_config(cli: Cli, write: Write, small_corpus: Path, tmp_path: Path) -> None:
    first = _freeze_samples(cli, write, small_corpus, "first", '{"case_id": "meal@v2"}\n{"case_id": "hotel@v2"}\n',
                            "--set", "top_k=3")  # fmt: skip
    second = _freeze_samples(cli, write, small_corpus, "second", '{"case_id": "meal@v2"}\n', "--set", "top_k=3")
    output = tmp_path / "merged.arrow"
    result = cli("merge-repeats", first, second, "--output", output, "--name", "pooled")
    assert result.exit_code == 0, result.output
    merged = load_run(output)
    assert merged.records.select("case_id", "repeat").rows() == [("meal@v2", 0), ("meal@v2", 1), ("hotel@v2", 0)]
    assert result.stdout == (
        f"merged 2 runs into 3 samples of 2 cases of 'pooled' (up to 2 per case) to {output} "
        f"(fingerprint {merged.fingerprint[:12]})\n"
    )
    again = tmp_path / "again.arrow"
    payload = json.loads(cli("merge-repeats", first, second, "--output", again, "--format", "json").stdout)
    assert (payload["name"], payload["samples"], payload["repeats"]) == ("first", 3, 2)
    assert [entry["path"] for entry in payload["config"]["merged_from"]] == [str(first), str(second)]


def test_merge_repeats_refusals_exit_2_and_write_nothing(
    cli: Cli, write: Write, small_corpus: Path, tmp_path: Path
) -> None:
    first = _freeze_samples(cli, write, small_corpus, "first", '{"case_id": "meal@v2"}\n', "--set", "top_k=3")
    other = _freeze_samples(cli, write, small_corpus, "other", '{"case_id": "meal@v2"}\n', "--set", "top_k=5")
    output = tmp_path / "merged.arrow"
    cases = [
        ([first, other], "top_k: 3 in 'first', 5 in run 2 'other'"),
        ([first, first], "runs 1 and 2 are the same run"),
        ([first], "needs two runs of one config or more; got 1"),
        ([first, tmp_path / "nope.arrow"], "no such run file"),
    ]
    for runs, message in cases:
        result = cli("merge-repeats", *runs, "--output", output)
        assert result.exit_code == 2, runs
        assert message in result.stderr, (runs, result.stderr)
        assert "Traceback" not in result.stderr
        assert not output.exists()
    refused = cli("merge-repeats", first, other, "--output", first)
    assert refused.exit_code == 2
    assert f"--output {first} is the same file as RUNS {first}: a command never writes over" in refused.stderr
    assert cli("merge-repeats", "--output", output).exit_code == 2  # no run at all: a usage error


@pytest.mark.parametrize("output_format", ["text", "json"])
@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_show_shows_a_run_whose_path_name_and_config_hold_a_credential_redacted(
    cli: Cli, tmp_path: Path, secret: str, output_format: str
) -> None:
    run = legacy_run(shutil.copy(HANDMADE_RUNS / "baseline.arrow", tmp_path / "baseline.arrow"), secret)
    result = cli("show", run, "--format", output_format)
    assert result.exit_code == 0, result.output
    assert "(redacted)" in result.stdout
    assert not any(part in result.stdout + result.stderr for part in secret_parts(secret))
