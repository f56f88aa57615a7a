"""``rag-compare BASELINE CANDIDATE`` through the entry point: routing, output, exit codes, messages."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from click.testing import Result

from tests.helpers.data import EXAMPLE_CORPUS, HANDMADE_RUNS, ROOT

Cli = Callable[..., Result]
BASELINE, CANDIDATE = HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow"
PASSAGES = ROOT / "corpora" / "handbook_passages.csv"


def test_bare_form_compares_the_examples(cli: Cli) -> None:
    result = cli(BASELINE, CANDIDATE, "--passages", PASSAGES)
    assert result.exit_code == 0
    out = result.stdout
    assert "34 cases: missing_in_candidate 1 · failed_in_baseline 1 · failed_in_candidate 2" in out
    for regressed in ("hotel-approval@2026-01", "remote-abroad-days@2026-01", "sabbatical@2026-01"):
        assert f"{'regressed':<25} {regressed}" in out
    assert "abstention_correct true -> false (worse)" in out
    assert "candidate timeout: generator timed out after 30 s" in out
    assert "no record in the candidate run" in out
    assert "Paired: the cases with a value on both sides" in out


def test_compare_alias_and_python_m_give_the_same_output(cli: Cli) -> None:
    bare = cli(BASELINE, CANDIDATE).stdout
    assert cli("compare", BASELINE, CANDIDATE).stdout == bare
    assert cli("--debug", BASELINE, CANDIDATE).stdout == bare
    module = subprocess.run(
        [sys.executable, "-m", "rag_compare", str(BASELINE), str(CANDIDATE)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert (module.returncode, module.stdout) == (0, bare)


def test_json_output_to_a_file(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "out" / "comparison.json"
    result = cli(BASELINE, CANDIDATE, "--corpus", EXAMPLE_CORPUS, "--format", "json", "--output", output)
    assert result.exit_code == 0
    assert result.stdout.startswith(f"wrote the json comparison to {output}: ")
    payload = json.loads(output.read_text(encoding="utf-8"))
    assert payload["counts"]["missing_in_both"] == 2
    assert sum(payload["counts"].values()) == len(payload["cases"]) == 36
    assert list(tmp_path.joinpath("out").iterdir()) == [output]


@pytest.mark.parametrize(
    ("fail_on", "code"),
    [("regressed", 1), ("failed_in_candidate,missing_in_candidate", 1), ("missing_in_baseline", 0), ("", 0)],
)
def test_fail_on_sets_exit_code_one_when_a_case_has_the_status(cli: Cli, fail_on: str, code: int) -> None:
    assert cli(BASELINE, CANDIDATE, "--fail-on", fail_on).exit_code == code


def test_fail_on_an_unknown_status_is_a_usage_error(cli: Cli) -> None:
    result = cli(BASELINE, CANDIDATE, "--fail-on", "regresed")
    assert result.exit_code == 2
    assert "unknown status regresed; use any of: missing_in_baseline" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("missing.arrow", CANDIDATE), "missing.arrow"),
        ((BASELINE, CANDIDATE, "--k", "0"), "0 is not in the range x>=1"),
        ((BASELINE, CANDIDATE, "--tolerance", "-1"), "-1.0 is not in the range x>=0"),
        ((BASELINE, CANDIDATE, "--tolerance", "nan", "--fail-on", "regressed"), "'nan' is not a finite number"),
        ((BASELINE, CANDIDATE, "--tolerance", "inf", "--fail-on", "regressed"), "'inf' is not a finite number"),
        ((BASELINE, CANDIDATE, "--corpus", "nowhere.csv"), "nowhere.csv"),
        ((BASELINE, EXAMPLE_CORPUS), "handbook.csv"),
    ],
)
def test_bad_input_is_exit_code_two_with_a_message(cli: Cli, args: tuple[object, ...], message: str) -> None:
    result = cli(*args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_an_unknown_command_word_is_not_taken_for_a_run(cli: Cli) -> None:
    result = cli("valdate", EXAMPLE_CORPUS)
    assert result.exit_code == 2
    assert "No such command 'valdate'" in result.stderr


def test_an_unwritable_output_leaves_nothing_behind(cli: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "report"
    folder.mkdir()
    result = cli(BASELINE, CANDIDATE, "--output", folder)
    assert result.exit_code == 2
    assert "is a folder" in result.stderr
    assert list(folder.iterdir()) == []


def _freeze_ranks(cli: Cli, tmp_path: Path, ranks: dict[str, list[int]]) -> list[Path]:
    """Runs of one-gold-passage cases, each case retrieving its gold passage at the rank given per side."""
    case_ids = [f"c{index}@v1" for index in range(len(ranks["baseline"]))]
    corpus = tmp_path / "corpus.csv"
    corpus.write_text(
        "case_id,question,answerability,source_version,required_passage_ids\n"
        + "".join(f"{case_id},Q?,answerable,v1,gold\n" for case_id in case_ids),
        encoding="utf-8",
    )
    runs = []
    for side, side_ranks in ranks.items():
        records = tmp_path / f"{side}.jsonl"
        lines = [
            json.dumps({"case_id": case_id, "retrieved_passage_ids": [f"other-{i}" for i in range(1, rank)] + ["gold"]})
            for case_id, rank in zip(case_ids, side_ranks, strict=True)
        ]
        records.write_text("\n".join(lines) + "\n", encoding="utf-8")
        runs.append(tmp_path / f"{side}.arrow")
        assert cli("freeze", records, "--corpus", corpus, "--output", runs[-1]).exit_code == 0
    return runs


def test_a_reason_shows_digits_enough_to_see_the_change(cli: Cli, tmp_path: Path) -> None:
    runs = _freeze_ranks(cli, tmp_path, {"baseline": [100], "candidate": [101]})
    for output_format, arrow in (("text", "->"), ("markdown", "-&gt;"), ("html", "-&gt;")):
        out = cli(*runs, "--format", output_format).stdout
        assert f"mrr 0.01 {arrow} 0.0099 (worse)" in out
        assert f"ndcg 0.1502 {arrow} 0.1499 (worse)" in out


def test_the_p_value_of_a_zero_mean_change_is_one(cli: Cli, tmp_path: Path) -> None:
    # mrr moves 1/2 -> 1/6 (by -1/3) on 10 cases, 1/6 -> 1/2 on 10 and stays on 20: the mean delta is exactly zero.
    ranks = {"baseline": [2] * 10 + [6] * 10 + [1] * 20, "candidate": [6] * 10 + [2] * 10 + [1] * 20}
    result = cli(*_freeze_ranks(cli, tmp_path, ranks), "--format", "json")
    mrr = next(row for row in json.loads(result.stdout)["aggregates"] if row["signal"] == "mrr")
    assert (mrr["n"], mrr["p_value"]) == (40, 1.0)


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def test_the_json_of_a_degenerate_comparison_is_strict_json(cli: Cli, tmp_path: Path) -> None:
    # One case, every delta zero, and signals that no case has a value of (the abstention flags, completeness).
    output = tmp_path / "comparison.json"
    runs = _freeze_ranks(cli, tmp_path, {"baseline": [3], "candidate": [3]})
    assert cli(*runs, "--format", "json", "--output", output).exit_code == 0
    payload = json.loads(output.read_text(encoding="utf-8"), parse_constant=_refuse_constant)
    rows = {(row["scope"], row["signal"]): row for row in payload["aggregates"]}
    assert (rows["paired", "mrr"]["delta"], rows["paired", "mrr"]["p_value"]) == (0.0, 1.0)
    assert rows["paired", "answer_completeness"]["n"] == 0
    assert payload["counts"]["unchanged"] == 1


def test_report_with_a_huge_case_limit_lists_every_case(cli: Cli, tmp_path: Path) -> None:
    runs = HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow"
    for output_format in ("markdown", "html"):
        result = cli(*runs, "--format", output_format, "--max-cases", 10**12)
        assert result.exit_code == 0
        assert result.stdout == cli(*runs, "--format", output_format, "--max-cases", 0).stdout


def test_a_cut_off_beyond_what_can_be_indexed_is_refused(cli: Cli) -> None:
    huge = cli(BASELINE, CANDIDATE, "--k", 2**32)
    assert huge.exit_code == 2
    assert "k must be a whole number from 1 to 1,000,000" in huge.stderr
    assert cli(BASELINE, CANDIDATE, "--k", 1_000_000).exit_code == 0


def test_runs_with_repeats_freeze_and_compare_through_the_cli(cli: Cli, tmp_path: Path) -> None:
    # tests/fixtures/repeats: three repeats a side; its EXPECTED.md gives the statuses and the noise floor.
    fixture = ROOT / "tests" / "fixtures" / "repeats"
    runs = []
    for side in ("baseline", "candidate"):
        output = tmp_path / f"{side}.arrow"
        frozen = cli("freeze", fixture / f"{side}.jsonl", "--corpus", fixture / "corpus.csv", "--output", output)
        assert frozen.exit_code == 0, frozen.output
        assert "froze 24 samples of 8 cases" in frozen.stdout
        runs.append(output)
    text = cli(*runs)
    assert text.exit_code == 0
    assert "8 cases: failed_in_candidate 1 · improved 1 · regressed 1 · unstable 4 · unchanged 1" in text.stdout
    assert "Noise floor (two single samples of one config)\n" in text.stdout
    assert f"{'unstable':<25} c2@v1" in text.stdout
    gated = cli(*runs, "--fail-on", "unstable", "--format", "json")
    assert gated.exit_code == 1
    document = json.loads(gated.stdout)
    assert document["noise_floor"]["expected"]["regressed"] == pytest.approx(0.5)
    assert document["counts"]["unstable"] == 4


def test_an_output_with_a_trailing_slash_is_a_folder_of_the_json_summary_and_parquet_cases(
    cli: Cli, tmp_path: Path
) -> None:
    folder = tmp_path / "out"
    result = cli(BASELINE, CANDIDATE, "--passages", PASSAGES, "--output", f"{folder}/")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.startswith(f"wrote the comparison to {folder}/: ")
    whole = json.loads(cli(BASELINE, CANDIDATE, "--passages", PASSAGES, "--format", "json").stdout)
    cases = whole.pop("cases")
    assert json.loads((folder / "summary.json").read_text(encoding="utf-8")) == whole
    assert pl.read_parquet(folder / "cases" / "part-00000.parquet").to_dicts() == cases
    again = cli(BASELINE, CANDIDATE, "--output", f"{folder}/")
    assert again.exit_code == 2
    assert "already exists and is never overwritten by the comparison folder" in again.stderr
    report = cli(BASELINE, CANDIDATE, "--format", "markdown", "--output", f"{tmp_path / 'other'}/")
    assert report.exit_code == 2
    assert "writes a folder of JSON and Parquet, not markdown" in report.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out"]


def test_with_texts_the_json_cases_hold_their_texts_in_a_file_or_a_folder(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "comparison.json"
    result = cli(BASELINE, CANDIDATE, "--format", "json", "--with-texts", "--output", output)
    assert (result.exit_code, result.stderr) == (0, "")
    cases = json.loads(output.read_text(encoding="utf-8"))["cases"]
    missing = next(case for case in cases if case["status"] == "missing_in_candidate")
    assert missing["question"]
    assert missing["baseline"]["answer"]
    assert missing["candidate"] is None
    failed = next(case for case in cases if case["status"] == "failed_in_baseline")
    assert failed["baseline"]["status"] == "failed"
    assert failed["baseline"]["error"] == "HTTP 500 from generator: upstream overloaded"
    folder = tmp_path / "out"
    assert cli(BASELINE, CANDIDATE, "--with-texts", "--output", f"{folder}/").exit_code == 0
    assert pl.read_parquet(folder / "cases" / "part-00000.parquet").to_dicts() == cases
    assert "--with-texts" in cli("compare", "--help").stdout


@pytest.mark.parametrize("output_format", ["text", "markdown", "html", "github", "junit"])
def test_with_texts_is_for_the_json_only(cli: Cli, tmp_path: Path, output_format: str) -> None:
    result = cli(BASELINE, CANDIDATE, "--format", output_format, "--with-texts", "--output", tmp_path / "out")
    assert result.exit_code == 2
    assert "--with-texts is for JSON: add --format json (or a folder --output), or leave it out." in result.stderr
    assert list(tmp_path.iterdir()) == []
