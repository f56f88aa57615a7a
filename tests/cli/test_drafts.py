"""``draft-cases`` and ``admit`` through the ``rag-compare`` entry point, against a loopback ``ChatServer``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner, Result

from rag_compare.cli.main import main
from rag_compare.io.corpus import load_corpus
from tests.helpers.chat_server import ChatServer, Reply
from tests.helpers.credential_shapes import KEY_SHAPES, named_with, secret_parts
from tests.helpers.drafting import PASSAGES, distinct, passage_of

FAST = ("--timeout", "5", "--max-retries", "0")


pytestmark = pytest.mark.usefixtures("reply_cache")


@pytest.fixture
def passages(tmp_path: Path) -> Path:
    path = tmp_path / "passages.csv"
    PASSAGES.write_csv(path)
    return path


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer(distinct) as running:
        yield running


def run(*args: str | Path) -> Result:
    """Run the entry point; fail the test on any traceback (an unhandled exception)."""
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"unhandled {result.exception!r}; output:\n{result.output}") from result.exception
    assert "Traceback" not in result.output
    return result


def draft(server: ChatServer, passages: Path, output: Path, *options: str) -> Result:
    base = ("draft-cases", "--passages", passages, "--model", "drafter", "--base-url", server.base_url)
    return run(*base, "--n", "2", *FAST, "--output", output, *options)


@pytest.fixture
def drafts_file(server: ChatServer, passages: Path, tmp_path: Path) -> Path:
    output = tmp_path / "drafts.csv"
    assert draft(server, passages, output, "--source-version", "v2").exit_code == 0
    return output


# -- draft-cases ------------------------------------------------------------------------------------------------------


def test_draft_cases_writes_drafts_and_says_what_comes_next(server: ChatServer, passages: Path, tmp_path: Path) -> None:
    output = tmp_path / "drafts.jsonl"
    result = draft(server, passages, output, "--wordings", "1", "--source-version", "v2", "--seed", "5")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "drafted 6 cases from 2 passages"
    assert f"wrote {output}" in lines
    assert lines[-1].startswith("next: review every draft")
    assert lines[-1].endswith(f"rag-compare admit {output} --ids ID[,ID...]")
    assert result.stderr == ""
    corpus = load_corpus(output)
    assert corpus.frame.height == 6
    assert not corpus.frame.get_column("reviewed").any()
    assert {request["seed"] for request in server.requests} == {5}


def test_draft_cases_json(server: ChatServer, passages: Path, tmp_path: Path) -> None:
    output = tmp_path / "drafts.parquet"
    result = draft(server, passages, output, "--format", "json", "--no-cache")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["path"] == str(output)
    assert payload["cases"] == 8
    assert payload["passages"]["drafted"] == 2
    assert payload["usage"]["requests"] == 2


def test_draft_cases_warns_about_failed_passages(passages: Path, tmp_path: Path) -> None:
    def broken_meal(request: dict[str, object], attempt: int) -> Reply:
        return Reply(status=500) if passage_of(request) == "meal-1" else distinct(request, attempt)

    output = tmp_path / "drafts.csv"
    with ChatServer(broken_meal) as server:
        result = draft(server, passages, output, "--n", "3", "--source-version", "v2")
    assert result.exit_code == 0, result.output
    assert "  - meal-1: HTTP 500" in result.stdout
    assert "warning: 1 passage could not be drafted" in result.stderr
    assert "meal-1" not in load_corpus(output).frame.get_column("drafted_from").to_list()


def test_draft_cases_refuses_an_existing_output_before_sending(
    server: ChatServer, passages: Path, tmp_path: Path
) -> None:
    output = tmp_path / "drafts.csv"
    output.write_text("keep me\n", encoding="utf-8")
    result = draft(server, passages, output)
    assert result.exit_code == 2
    assert "already exists" in result.stderr
    assert server.count() == 0
    assert output.read_text(encoding="utf-8") == "keep me\n"


def test_draft_cases_refuses_an_unknown_output_type(server: ChatServer, passages: Path, tmp_path: Path) -> None:
    result = draft(server, passages, tmp_path / "drafts.xlsx")
    assert result.exit_code == 2
    assert "unknown drafts file type '.xlsx'" in result.stderr
    assert server.count() == 0


def test_draft_cases_needs_a_model(passages: Path, tmp_path: Path) -> None:
    result = run("draft-cases", "--passages", passages, "--n", "2", "--output", tmp_path / "drafts.csv")
    assert result.exit_code == 2
    assert "Missing option '--model'" in result.stderr


def test_draft_cases_refused_key_is_exit_code_2(passages: Path, tmp_path: Path) -> None:
    output = tmp_path / "drafts.csv"
    with ChatServer(lambda request, attempt: Reply(status=401)) as server:
        result = draft(server, passages, output)
    assert result.exit_code == 2
    assert "the endpoint refused the request: HTTP 401" in result.stderr
    assert not output.exists()


# -- admit ------------------------------------------------------------------------------------------------------------


def test_admit_marks_the_ids_in_place(drafts_file: Path) -> None:
    ids = load_corpus(drafts_file).frame.get_column("case_id").to_list()
    result = run("admit", drafts_file, "--ids", f"{ids[0]},{ids[1]}", "--ids", ids[2])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"admitted 3 cases as reviewed; wrote {drafts_file}",
        f"5 of {len(ids)} cases still await review (reviewed=false)",
    ]
    frame = load_corpus(drafts_file).frame
    assert frame.filter("reviewed").get_column("case_id").to_list() == ids[:3]
    again = run("admit", drafts_file, "--ids", ids[0], "--format", "json")
    assert again.exit_code == 0, again.output
    payload = json.loads(again.stdout)
    assert (payload["admitted"], payload["already_reviewed"], payload["unreviewed"]) == ([ids[0]], [ids[0]], 5)


def test_admit_unknown_id_is_exit_code_2_and_changes_nothing(drafts_file: Path) -> None:
    before = drafts_file.read_bytes()
    known = load_corpus(drafts_file).frame.get_column("case_id")[0]
    result = run("admit", drafts_file, "--ids", f"{known},nope@v2")
    assert result.exit_code == 2
    assert "'nope@v2'" in result.stderr
    assert "Nothing was admitted" in result.stderr
    assert drafts_file.read_bytes() == before


def test_admit_to_an_output(drafts_file: Path, tmp_path: Path) -> None:
    before = drafts_file.read_bytes()
    known = load_corpus(drafts_file).frame.get_column("case_id")[0]
    output = tmp_path / "gold.jsonl"
    result = run("admit", drafts_file, "--ids", known, "--output", output)
    assert result.exit_code == 0, result.output
    assert drafts_file.read_bytes() == before
    assert load_corpus(output).frame.filter(pl.col("reviewed")).get_column("case_id").to_list() == [known]
    existing = run("admit", drafts_file, "--ids", known, "--output", output)
    assert existing.exit_code == 2
    assert "already exists" in existing.stderr


def test_admit_needs_ids(drafts_file: Path) -> None:
    assert run("admit", drafts_file).exit_code == 2
    result = run("admit", drafts_file, "--ids", " , ")
    assert result.exit_code == 2
    assert "give at least one case id" in result.stderr


def test_admit_keeps_reviewer_text_that_looks_like_a_null(tmp_path: Path) -> None:
    drafts = tmp_path / "drafts.csv"
    drafts.write_text(
        "case_id,question,answerability,source_version,required_passage_ids,acceptance_note,origin,reviewed,comment\n"
        "a@v1,Is NA a region?,answerable,v1,p1,N/A,synthetic,false,null\n"
        "b@v1,Q?,unanswerable,v1,,NA,synthetic,false,\n",
        encoding="utf-8",
    )
    result = run("admit", drafts, "--ids", "a@v1")
    assert result.exit_code == 0, result.output
    frame = load_corpus(drafts).frame
    assert frame.select("acceptance_note", "comment").rows() == [("N/A", "null"), ("NA", None)]
    assert frame.get_column("reviewed").to_list() == [True, False]


@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_no_message_shows_a_credential_a_drafts_path_holds(
    server: ChatServer, passages: Path, tmp_path: Path, secret: str
) -> None:
    output = named_with(secret, tmp_path, ".csv")
    drafted = draft(server, passages, output)
    assert drafted.exit_code == 0, drafted.output
    ids = load_corpus(output).frame.get_column("case_id").to_list()
    admitted = run("admit", output, "--ids", ids[0])
    as_json = run("admit", output, "--ids", ids[1], "--format", "json")
    for result in (drafted, admitted, as_json):
        assert result.exit_code == 0, result.output
        assert "(redacted)" in result.stdout
        assert not any(part in result.stdout + result.stderr for part in secret_parts(secret))
