"""The offline judge's languages from the command line: --language, --language-file, a corpus' language column."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import polars as pl
from click.testing import Result

from rag_compare.io.scores import load_scores
from tests.helpers.data import EXAMPLE_CORPUS, HANDMADE_RUNS, ROOT

Cli = Callable[..., Result]
RUNS = (ROOT / "runs" / "baseline.arrow", ROOT / "runs" / "candidate.arrow")
ENGLISH_FILE = ROOT / "rag_compare" / "io" / "languages" / "en.toml"


def evaluator(result: Result) -> dict[str, str]:
    assert result.exit_code == 0, result.output
    found: dict[str, str] = json.loads(result.stdout)["evaluator"]
    return found


def test_language_and_language_files_set_the_offline_judge(cli: Cli, tmp_path: Path) -> None:
    default = evaluator(cli(*RUNS, "--format", "json"))
    german = evaluator(cli(*RUNS, "--format", "json", "--language", "de"))
    swedish = tmp_path / "sv.toml"
    swedish.write_text(ENGLISH_FILE.read_text(encoding="utf-8").replace('code = "en"', 'code = "sv"'), encoding="utf-8")
    extended = evaluator(cli(*RUNS, "--format", "json", "--language-file", swedish, "--language", "sv"))
    assert len({default["fingerprint"], german["fingerprint"], extended["fingerprint"]}) == 3


def test_unknown_languages_and_bad_language_files_are_exit_code_two(cli: Cli, tmp_path: Path) -> None:
    result = cli(*RUNS, "--language", "sv")
    assert result.exit_code == 2
    assert "language 'sv' has no rules: the judge knows de, en, es, fr, it, nl, pt" in result.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text(ENGLISH_FILE.read_text(encoding="utf-8").replace('decimal_separator = "."', ""), encoding="utf-8")
    result = cli(*RUNS, "--language-file", bad)
    assert result.exit_code == 2
    assert f"{bad}: lacks decimal_separator" in result.stderr
    assert "Traceback" not in result.output


def test_cases_in_languages_without_rules_are_not_judged_and_warned_of(cli: Cli, tmp_path: Path) -> None:
    corpus = tmp_path / "tagged.csv"
    frame = pl.read_csv(EXAMPLE_CORPUS)
    tags = pl.when(pl.col("case_id").str.starts_with("s")).then(pl.lit("zh-Hans")).otherwise(pl.lit("en"))
    frame.with_columns(language=tags).write_csv(corpus)
    result = cli(*RUNS, "--corpus", corpus)
    assert result.exit_code == 0, result.output
    # sabbatical, sick-leave-certificate and stock-options start with "s"; the candidate's sick-leave failed
    assert "run 'baseline' has 3 cases in languages the offline judge has no rules for (zh 3)" in result.stdout
    assert "run 'candidate' has 2 cases in languages the offline judge has no rules for (zh 2)" in result.stdout
    assert "Give the judge a language file for them (--language-file)" in result.stdout


def test_score_lexical_takes_the_language(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "s.arrow"
    result = cli(
        "score", HANDMADE_RUNS / "candidate.arrow", "--judge", "lexical", "--language", "nl", "--output", output
    )
    assert result.exit_code == 0, result.output
    assert load_scores(output).evaluator["config"]["language"] == "nl"
    new = tmp_path / "new.arrow"
    result = cli("score", HANDMADE_RUNS / "candidate.arrow", "--model", "m", "--language", "nl", "--output", new)
    assert result.exit_code == 2
    assert "--language and --language-file set the offline judge: use them with --judge lexical." in result.stderr
