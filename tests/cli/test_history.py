"""``rag-compare history`` through the entry point, on the shipped example runs: text, JSON and HTML, a corpus
version, and bad input said in one message with exit code 2 and nothing written."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from rag_compare.cli.history import history_command
from rag_compare.cli.main import main

Cli = Callable[..., Result]
BASELINE, CANDIDATE = Path("runs/baseline.arrow"), Path("runs/candidate.arrow")
# From corpora/README.md: the baseline ran on handbook.csv (35 records, the unreviewed synthetic case left out), the
# candidate on examples/handbook_at_branch.csv (34 records: public-transport-pass@2026-01 missing), so the corpus
# fingerprint changes (42250babd46c -> 50320371d356) and the two are compared on the 34 cases both hold. Three
# settings changed: top_k 3 -> 5, retriever.stopwords, generator.min_overlap 0.4 -> 0.3. 13 of handbook.csv's cases
# are of 2025-01, and both runs hold all 13.
CORPUS_NOTE = "the corpus changed (fingerprint 42250babd46c → 50320371d356): compared on the 34 cases both runs hold"


@pytest.fixture
def cli(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Cli:
    """The entry point, with ``history`` among its commands."""
    monkeypatch.setitem(main.commands, "history", history_command)
    return cli


def test_a_folder_of_runs_in_creation_order_ties_by_path(cli: Cli) -> None:
    result = cli("history", "runs/")
    assert result.exit_code == 0, result.output
    assert "Skipped, not runs: runs/reviews.arrow (reviews file)." in result.stdout
    rows = [line.split()[:2] for line in result.stdout.split("Runs, in creation order\n", 1)[1].splitlines()[1:4]]
    assert rows == [["1", "baseline"], ["2", "candidate"], ["3", "stopwords"]]  # one creation time: by path
    assert f"  {CORPUS_NOTE}; the trend breaks here" in result.stdout
    assert "  config: generator.min_overlap 0.4 → 0.3; retriever.stopwords " in result.stdout
    assert "recall (higher is better)" in result.stdout


def test_the_json_written_to_a_file(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "history.json"
    result = cli("history", CANDIDATE, BASELINE, "--output", output)
    assert result.exit_code == 0, result.output
    assert "format json, from the .json extension of --output" in result.stderr
    document = json.loads(output.read_text(encoding="utf-8"))
    assert document["schema_version"] == 1
    assert [run["name"] for run in document["runs"]] == ["baseline", "candidate"]
    change = document["runs"][1]["change"]
    assert (change["corpus_changed"], change["shared_cases"]) == (True, 34)
    assert [item["key"] for item in change["config_changes"]] == [
        "generator.min_overlap",
        "retriever.stopwords",
        "top_k",
    ]
    assert document["runs"][1]["segment"] == 2


def test_a_corpus_version_and_chosen_signals(cli: Cli) -> None:
    result = cli(
        "history", BASELINE, CANDIDATE, "--corpus-version", "2025-01", "--signal", "recall", "--format", "json"
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["corpus_version"], document["signals"]) == ("2025-01", ["recall"])
    assert [run["cases"] for run in document["runs"]] == [13, 13]
    assert document["runs"][1]["change"]["shared_cases"] == 13
    assert [item["signal"] for item in document["runs"][1]["aggregates"]] == ["recall"]


def test_the_page_has_a_trend_chart_per_signal_and_runs_no_script(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "history.html"
    result = cli("history", BASELINE, CANDIDATE, "--signal", "recall", "--signal", "precision", "--output", output)
    assert result.exit_code == 0, result.output
    page = output.read_text(encoding="utf-8")
    assert page.count("<svg") == 2
    assert page.count('<line class="break"') == 2  # the corpus changed between the two runs: each chart breaks
    assert "default-src &#39;none&#39;" in page
    assert "<script" not in page


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["runs/nothing-*.arrow"], "runs/nothing-*.arrow: the pattern matches no file or folder."),
        (["runs/reviews.arrow"], "runs/reviews.arrow: is a reviews file, not a run."),
        (["corpora/"], "corpora: holds no run (no run file `*.arrow` or run directory in it)."),
        (["README.md"], "README.md: is not a frozen run (not an Arrow file"),
        ([str(BASELINE), "--signal", "recal"], "--signal: unknown signal 'recal'; use any of recall"),
        ([str(BASELINE), "--corpus-version", "v9"], "Give --corpus-version one of those"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(cli: Cli, tmp_path: Path, args: list[str], message: str) -> None:
    output = tmp_path / "history.txt"
    result = cli("history", *args, "--output", output)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split())
    assert not output.exists()


def test_an_output_is_never_written_over_an_input(cli: Cli, tmp_path: Path) -> None:
    run = tmp_path / "run.arrow"
    run.write_bytes(BASELINE.read_bytes())
    result = cli("history", run, "--output", run, "--format", "json")
    assert result.exit_code == 2
    assert "is the same file as RUNS" in result.stderr
    assert run.read_bytes() == BASELINE.read_bytes()
