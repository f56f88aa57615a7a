"""`rag-compare validate` and `rag-compare audit` through the entry point: summaries, JSON, exit codes, messages."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.helpers.data import COMPOSED, DECOMPOSED, EXAMPLE_CORPUS, EXAMPLE_OLD_CORPUS, SMALL_CORPUS, ZERO_WIDTH

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


def test_audit_exit_codes_and_json(cli: Cli, write: Write, small_corpus: Path) -> None:
    clean = cli("audit", EXAMPLE_OLD_CORPUS, EXAMPLE_CORPUS)
    assert clean.exit_code == 0
    assert "no violations" in clean.stdout
    kept = [line for line in SMALL_CORPUS.splitlines(keepends=True) if not line.startswith(("hotel@", "ceo@"))]
    broken = cli("audit", small_corpus, write("new.csv", "".join(kept)), "--format", "json")
    assert broken.exit_code == 1
    payload = json.loads(broken.stdout)
    assert payload["violations"] == 2
    assert [row["case_id"] for row in payload["removed"]] == ["ceo@v2", "hotel@v2"]
    bad = cli("audit", small_corpus, write("bad.csv", "case_id\nx\n"))
    assert bad.exit_code == 2
    assert "bad.csv: not a valid corpus" in bad.stderr


def test_an_audit_shows_case_ids_whole_and_sorted_at_any_width(
    cli: Cli, write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    header = "case_id,question,answerability,source_version,required_passage_ids\n"
    keys = ["zz-equipment-budget-for-remote-workers", "equipment-budget", "aa-meal-allowance-client-site-abroad"]
    old = write("old.csv", header + "".join(f"{key}@2025-01,Q?,answerable,2025-01,p\n" for key in keys))
    new = header + "".join(f"{key}@2026-01,Q?,answerable,2026-01,p\n" for key in keys)
    result = cli("audit", old, write("new.csv", new + f"{keys[0]}@2025-01,Q?,unanswerable,2025-01,\n"))
    assert result.exit_code == 1
    assert ": 3 violations\n" in result.stdout  # 2 removed, 1 relabeled
    assert "…" not in result.stdout
    added = result.stdout.split("Added cases\n")[1].splitlines()[1:4]
    assert [line.split()[0] for line in added] == sorted(f"{key}@2026-01" for key in keys)
    versions = result.stdout.split("New versions of a question\n")[1].splitlines()[1:4]
    assert [line.split()[1:4:2] for line in versions] == [[f"{key}@2025-01", f"{key}@2026-01"] for key in sorted(keys)]
    single = cli(
        "audit", old, write("one.csv", new + "".join(f"{key}@2025-01,Q?,answerable,2025-01,p\n" for key in keys[1:]))
    )
    assert ": 1 violation\n" in single.stdout
