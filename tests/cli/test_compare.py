"""``rag-compare BASELINE CANDIDATE`` through the entry point: routing, output, exit codes, messages."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from click.testing import Result

from tests.helpers.credential_shapes import KEY_SHAPES, copied_as, legacy_run, named_with, secret_parts
from tests.helpers.data import EXAMPLE_CORPUS, HANDMADE_RUNS, ROOT
from tests.helpers.page import page_parts

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
    output.parent.mkdir()
    result = cli(BASELINE, CANDIDATE, "--corpus", EXAMPLE_CORPUS, "--format", "json", "--output", output)
    assert result.exit_code == 0
    assert result.stdout.startswith(f"wrote the json comparison to {output}: ")
    payload = json.loads(output.read_text(encoding="utf-8"))
    assert payload["counts"]["missing_in_both"] == 1
    assert payload["unreviewed_left_out"] == ["meal-allowance-per-day-alt@2026-01"]  # not run by design
    assert sum(payload["counts"].values()) == len(payload["cases"]) == 35
    assert list(tmp_path.joinpath("out").iterdir()) == [output]


@pytest.mark.parametrize(
    ("fail_on", "code"),
    [("regressed", 1), ("failed_in_candidate,missing_in_candidate", 1), ("missing_in_baseline", 0), ("", 2)],
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
    for output_format, arrow in (("text", "->"), ("markdown", "-&gt;"), ("html", "->")):
        out = cli(*runs, "--format", output_format).stdout
        if output_format == "html":  # the page's cases are in its data
            out = "\n".join(reason for case in page_parts(out).data["cases"] for reason in case["reasons"])
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


@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_no_report_file_or_message_shows_a_credential_of_a_run_or_an_output_path(
    cli: Cli, tmp_path: Path, secret: str
) -> None:
    baseline = legacy_run(shutil.copy(HANDMADE_RUNS / "baseline.arrow", tmp_path / "baseline.arrow"), secret)
    candidate = copied_as(shutil.copy(HANDMADE_RUNS / "candidate.arrow", tmp_path / "candidate.arrow"), secret)
    report, folder = named_with(secret, tmp_path, ".html"), f"{tmp_path}/{secret}-compared/"
    results = [
        cli(baseline, candidate, "--fail-on", "regressed>50%"),
        cli(baseline, candidate, "--output", report),
        cli(baseline, candidate, "--output", folder),
    ]
    shown = [result.stdout + result.stderr for result in results]
    shown += [report.read_text(encoding="utf-8"), (Path(folder) / "summary.json").read_text(encoding="utf-8")]
    assert [result.exit_code for result in results] == [0, 0, 0], shown
    assert all("(redacted)" in text for text in shown)
    assert not any(part in text for text in shown for part in secret_parts(secret))


def _handmade(cli: Cli, tmp_path: Path, knowledge_bases: tuple[str | None, str | None] = (None, None)) -> list[Path]:
    """The hand-made runs frozen again, each recording the knowledge base given (``None``: none)."""
    runs = []
    for side, knowledge_base in zip(("baseline", "candidate"), knowledge_bases, strict=True):
        lines = (HANDMADE_RUNS / f"{side}.toml").read_text(encoding="utf-8").splitlines(keepends=True)
        kept = "".join(line for line in lines if not line.startswith("knowledge_base"))
        config = tmp_path / f"{side}.toml"
        config.write_text(("" if knowledge_base is None else f"knowledge_base = {json.dumps(knowledge_base)}\n") + kept)
        runs.append(tmp_path / f"{side}.arrow")
        records = HANDMADE_RUNS / "records" / f"{side}.jsonl"
        frozen = cli("freeze", records, "--corpus", EXAMPLE_CORPUS, "--config", config, "--output", runs[-1])
        assert frozen.exit_code == 0, frozen.output
    return runs


def _relabelled(cli: Cli, tmp_path: Path) -> tuple[list[Path], Path]:
    """Runs of one case frozen against two corpora that label it differently, and the first corpus."""
    runs, corpora = [], []
    for side, gold in (("baseline", "p1"), ("candidate", "p2")):
        corpora.append(tmp_path / f"{side}.csv")
        corpora[-1].write_text(
            f"case_id,question,answerability,source_version,required_passage_ids\nc@v1,Q?,answerable,v1,{gold}\n"
        )
        records = tmp_path / f"{side}.jsonl"
        records.write_text(json.dumps({"case_id": "c@v1", "retrieved_passage_ids": ["p1"], "answer": "A."}) + "\n")
        runs.append(tmp_path / f"{side}.arrow")
        assert cli("freeze", records, "--corpus", corpora[-1], "--output", runs[-1]).exit_code == 0
    return runs, corpora[0]


def _tagged(tmp_path: Path) -> tuple[Path, Path]:
    """The example corpus with some cases in Chinese, and a language file for Chinese."""
    corpus, language = tmp_path / "tagged.csv", tmp_path / "zh.toml"
    tags = pl.when(pl.col("case_id").str.starts_with("s")).then(pl.lit("zh-Hans")).otherwise(pl.lit("en"))
    pl.read_csv(EXAMPLE_CORPUS).with_columns(language=tags).write_csv(corpus)
    english = ROOT / "rag_compare" / "io" / "languages" / "en.toml"
    language.write_text(english.read_text(encoding="utf-8").replace('code = "en"', 'code = "zh"'), encoding="utf-8")
    return corpus, language


def _scenario(name: str, cli: Cli, tmp_path: Path) -> tuple[list[object], dict[str, list[object]]]:
    """A comparison's arguments whose warnings advise flags, and the value each advised flag takes."""
    examples: list[object] = [ROOT / "runs" / "baseline.arrow", ROOT / "runs" / "candidate.arrow"]
    fixes: dict[str, list[object]] = {"--corpus": [EXAMPLE_CORPUS], "--passages": [PASSAGES]}
    if name == "examples":
        return examples, fixes
    if name == "no knowledge base":
        return [*_handmade(cli, tmp_path)], fixes
    if name == "two knowledge bases":
        other = tmp_path / "other.csv"
        other.write_bytes(PASSAGES.read_bytes())
        return [*_handmade(cli, tmp_path, (str(PASSAGES), str(other)))], fixes
    if name == "relabelled":
        runs, corpus = _relabelled(cli, tmp_path)
        return [*runs], fixes | {"--corpus": [corpus]}
    corpus, language = _tagged(tmp_path)
    return [*examples, "--corpus", corpus, "--passages", PASSAGES], {"--language-file": [language]}


_ADVICE = re.compile(r"(?:[Pp]ass|with|\() ?(--[a-z-]+)")
"""A flag a warning advises: ``pass --corpus``, ``compare with --corpus``, ``(--language-file)``."""


def _advised(cli: Cli, args: list[object]) -> dict[str, list[str]]:
    result = cli(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    advised: dict[str, list[str]] = {}
    for warning in json.loads(result.stdout)["warnings"]:
        for flag in _ADVICE.findall(warning):
            advised.setdefault(flag, []).append(warning)
    return advised


@pytest.mark.parametrize("name", ["examples", "no knowledge base", "two knowledge bases", "relabelled", "languages"])
def test_following_a_warnings_advice_clears_it(cli: Cli, tmp_path: Path, name: str) -> None:
    args, fixes = _scenario(name, cli, tmp_path)
    advised = _advised(cli, args)
    assert advised, "the scenario raises no warning that advises a flag"
    assert set(advised) <= set(fixes), f"no value to follow the advice of {advised}"
    for flag in advised:
        assert _advised(cli, [*args, flag, *fixes[flag]]).get(flag) is None, f"{flag} given, still advised"


@pytest.mark.parametrize("output_format", ["text", "markdown", "html", "json", "github", "junit"])
def test_without_a_knowledge_base_every_format_says_first_that_answer_completeness_is_off(
    cli: Cli, tmp_path: Path, output_format: str
) -> None:
    result = cli(*_handmade(cli, tmp_path), "--format", output_format)
    assert result.exit_code == 0, result.output
    out = result.stdout.replace("\\", "")  # Markdown escapes the underscores
    said = out.find("answer_completeness is off: no --passages were given and neither run records a knowledge_base")
    first = {"text": "fingerprint", "markdown": "## Runs", "html": "<h2>Runs", "json": '"baseline"',
             "github": "::notice", "junit": "<testcase"}  # fmt: skip
    assert -1 < said < out.index(first[output_format]), out[:2000]


def test_a_relative_knowledge_base_is_looked_for_from_here_then_beside_the_run(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = _handmade(cli, tmp_path, ("kb.csv", "kb.csv"))
    (tmp_path / "kb.csv").write_bytes(PASSAGES.read_bytes())
    monkeypatch.chdir(ROOT)
    result = cli(*runs, "--format", "json")
    assert json.loads(result.stdout)["warnings"][0].startswith(
        f"passages read from the runs' knowledge_base {tmp_path / 'kb.csv'}; pass --passages to use another file."
    )
    assert (
        json.loads(result.stdout)["counts"]
        == json.loads(cli(*runs, "--passages", PASSAGES, "--format", "json").stdout)["counts"]
    )


@pytest.mark.parametrize("kind", ["fifo", "folder", "missing", "device"])
def test_a_knowledge_base_that_is_not_a_regular_file_is_not_read(cli: Cli, tmp_path: Path, kind: str) -> None:
    path = {"device": Path("/dev/zero")}.get(kind, tmp_path / "kb")
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    result = cli(*_handmade(cli, tmp_path, (str(path), str(path))), "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["warnings"][0] == (
        f"answer_completeness is off: no --passages were given and the runs' knowledge_base {path} is not a file "
        "here. Pass --passages (the knowledge base file) to check each answer against its required passages."
    )


def test_a_knowledge_base_that_is_no_passages_file_is_not_read_nor_quoted(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "notes.csv"
    path.write_text("line\nthe admin password is hunter2, and more\n", encoding="utf-8")
    result = cli(*_handmade(cli, tmp_path, (str(path), str(path))))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(
        f"warning: answer_completeness is off: no --passages were given and the runs' knowledge_base {path} is not a "
        "valid passages file (pass it as --passages to see why)."
    )
    assert "hunter2" not in result.stdout


def test_the_knowledge_base_one_run_records_is_read_and_named(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # where the knowledge base is shown from
    result = cli(*_handmade(cli, tmp_path, (None, str(PASSAGES))), "--format", "json")
    assert json.loads(result.stdout)["warnings"][0] == (
        "passages read from the knowledge_base of run 'candidate' corpora/handbook_passages.csv; pass --passages to "
        "use another file."
    )


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
