"""Library messages name Python parameters; the command line says the flags (``rag_compare.cli.flags``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from rag_compare import admit_cases, compare, freeze_run
from rag_compare.cli.flags import as_flags
from rag_compare.cli.main import main
from rag_compare.core.errors import ContractError, RunExistsError

Cli = Callable[..., Result]
Write = Callable[[str, str | bytes], Path]

UNREVIEWED = """\
case_id,question,answerability,source_version,required_passage_ids,origin,reviewed
hotel@v2,What is the hotel cap?,answerable,v2,hotel-1,synthetic,false
"""


@pytest.mark.parametrize(
    ("command", "library", "said"),
    [
        ("compare", "Pass `k` to choose", "Pass --k to choose"),
        ("score", "Check `model` and `base_url`.", "Check --model and --base-url."),
        ("validate", "(`strict=True` turns warnings into errors)", "(--strict turns warnings into errors)"),
        ("score", "Choose `cache`, or pass `cache=False`.", "Choose --cache, or pass --no-cache."),
        ("freeze", "(e.g. `assignments=['top_k=5']`)", "(e.g. --set top_k=5)"),
        ("freeze", "Check the `config_file` path.", "Check the --config path."),
        ("admit", "give `ids=[ID, ...]`", "give --ids ID[,ID...]"),
        ("compare", "`k={[1]: 2}`", "--k {[1]: 2}"),
        ("import-scores", "`evaluator=NAME`, `mapping={COLUMN: SIGNAL}`", "--evaluator NAME, --map COLUMN=SIGNAL"),
        ("freeze", "then `admit_cases('d.csv', ids=['a@v1'])`", "then rag-compare admit d.csv --ids a@v1"),
        ("compare", "score it: `score_run(RUN, ...)`", "score it: rag-compare score RUN ..."),
        ("show", "Use `freeze_run`.", "Use `rag-compare freeze`."),
        ("reviews", "with this database as `db`", "with this database as --db"),
        ("reviews", "Make one with `export_reviews`.", "Make one with `rag-compare reviews export`."),
        ("reviews", "first: `Comparison.review`, with", "first: `rag-compare review`, with"),
        ("show", "`comparison.cases`", "`comparison.cases`"),
    ],
)
def test_each_parameter_or_call_named_becomes_the_flag_or_the_command(command: str, library: str, said: str) -> None:
    assert as_flags(library, main, command) == said


@pytest.mark.parametrize(
    ("command", "library", "said"),
    [
        ("freeze", "the path of `records` holds", "the path of RECORDS holds"),
        ("merge-repeats", "path 2 of `runs` holds", "path 2 of RUNS holds"),
        ("capture", "the path of `corpus` holds", "the path of CORPUS holds"),  # its argument, not freeze's option
        ("freeze", "the path of `corpus` holds", "the path of --corpus holds"),
    ],
)
def test_an_argument_of_the_command_is_said_by_its_name(command: str, library: str, said: str) -> None:
    assert as_flags(library, main, command) == said


def test_a_parameter_the_command_lacks_is_the_flag_of_the_command_that_has_it() -> None:
    assert as_flags("Pass it with `baseline_scores`.", main, "show") == "Pass it with --baseline-scores."


@pytest.mark.parametrize(
    "text", ["`rag-compare show` shows it", "`problems`", "`no_such_parameter`", "`a, b`", "`x=1`", "`k\0`"]
)
def test_other_quoted_text_stays_as_written(text: str) -> None:
    assert as_flags(text, main, "compare") == text


def test_a_parameter_in_a_library_error_is_a_flag_at_the_command_line(cli: Cli, write: Write) -> None:
    drafts, taken = write("drafts.csv", UNREVIEWED), write("taken.csv", UNREVIEWED)
    with pytest.raises(RunExistsError) as raised:
        admit_cases(drafts, ["hotel@v2"], output=taken)
    assert "Give `output` a new path, or move the file away first." in str(raised.value)
    assert "--" not in str(raised.value)
    result = cli("admit", drafts, "--ids", "hotel@v2", "--output", taken)
    assert result.exit_code == 2
    assert "Give --output a new path, or move the file away first." in result.stderr


def test_a_call_a_library_error_suggests_is_a_command_at_the_command_line(
    cli: Cli, tmp_path: Path, write: Write
) -> None:
    drafts, records = write("drafts.csv", UNREVIEWED), write("records.jsonl", '{"case_id": "hotel@v2"}\n')
    with pytest.raises(ContractError) as raised:
        freeze_run(records, drafts)
    expected = raised.value.problems[0].expected
    assert f"review it, then `admit_cases({str(drafts)!r}, ids=['hotel@v2'])`" in expected
    assert "--" not in str(raised.value)
    hint = f"review it, then rag-compare admit {drafts} --ids hotel@v2 (or pass --include-unreviewed to use drafts"
    freeze = ("freeze", records, "--corpus", drafts, "--output", tmp_path / "run.arrow")
    assert hint in cli(*freeze).stderr
    [problem] = json.loads(cli(*freeze, "--format", "json").stdout)["problems"]
    assert hint in problem["expected"]


def test_problems_past_fifty_are_listed_in_the_error_or_with_format_json(cli: Cli, write: Write) -> None:
    header = "case_id,question,answerability,source_version,required_passage_ids\n"
    corpus = write("many.csv", header + "".join(f"c{n}@v1,Q,perhaps,v1,p1\n" for n in range(60)))
    result = cli("validate", corpus)
    assert "  … and 10 more (all are listed with --format json)\n" in result.stderr
    assert "`problems`" not in result.stderr


def test_comparison_warnings_name_parameters_and_the_command_line_prints_flags(
    cli: Cli, tmp_path: Path, small_records: Path, small_corpus: Path, write: Write
) -> None:
    relabelled = write("relabelled.csv", small_corpus.read_text(encoding="utf-8").replace("hotel cap?", "cap?"))
    baseline = freeze_run(small_records, small_corpus, {"name": "b"}, output=tmp_path / "b.arrow")
    candidate = freeze_run(small_records, relabelled, {"name": "c"}, output=tmp_path / "c.arrow")
    warnings = compare(baseline, candidate).warnings
    assert any(warning.endswith("compare with `corpus`.") for warning in warnings)
    assert not [warning for warning in warnings if "--" in warning]
    out = cli(baseline.path, candidate.path).stdout
    assert "pass --corpus to judge both runs against the same labels." in out
    assert "the two runs hold different labels for 1 case (hotel@v2): compare with --corpus." in out
    assert "`corpus`" not in cli(baseline.path, candidate.path, "--format", "json").stdout
