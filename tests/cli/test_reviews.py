"""``rag-compare reviews export`` and ``rag-compare show`` of a reviews file, through the entry point."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import Result

from rag_compare.io.reviews import load_reviews
from tests.helpers.credential_shapes import OPENAI_KEY
from tests.helpers.reviews import BASELINE, CANDIDATE, reviewed

Cli = Callable[..., Result]


def test_export_then_show(cli: Cli, tmp_path: Path) -> None:
    database, output = reviewed(tmp_path / "reviews.sqlite"), tmp_path / "reviews.arrow"
    result = cli("reviews", "export", "--db", database, BASELINE, CANDIDATE, "--output", output)
    assert result.exit_code == 0, result.output
    reviews = load_reviews(output)
    assert result.stdout == (
        f"exported 3 verdicts on 2 cases by 2 reviewers to {output} (fingerprint {reviews.fingerprint[:12]})\n"
    )
    shown = cli("show", output)
    assert shown.exit_code == 0, shown.output
    assert f"fingerprint  {reviews.fingerprint}" in shown.stdout
    assert "reviewers    ana 1, bo 2" in shown.stdout
    assert "status       agree 2, disagree 1" in shown.stdout
    assert "answer_correct      candidate  0            1   1" in shown.stdout
    as_json = json.loads(cli("show", output, "--format", "json").stdout)
    assert as_json == reviews.to_dict()


def test_export_as_json(cli: Cli, tmp_path: Path) -> None:
    database, output = reviewed(tmp_path / "reviews.sqlite"), tmp_path / "reviews.arrow"
    result = cli("reviews", "export", "--db", database, BASELINE, CANDIDATE, "--output", output, "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["fingerprint"] == load_reviews(output).fingerprint


def test_an_existing_output_is_refused_before_reading_anything(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "reviews.arrow"
    output.write_text("kept")
    result = cli("reviews", "export", "--db", tmp_path / "none.sqlite", BASELINE, CANDIDATE, "--output", output)
    assert result.exit_code == 2
    assert "already exists and is never overwritten by the reviews file. Give --output a new path" in result.stderr
    assert output.read_text() == "kept"
    assert not (tmp_path / "none.sqlite").exists()


def test_refusals_speak_of_flags_and_commands(cli: Cli, tmp_path: Path) -> None:
    missing = cli("reviews", "export", "--db", tmp_path / "none.sqlite", BASELINE, CANDIDATE, "--output", "x.arrow")
    assert missing.exit_code == 2
    assert "none.sqlite: no such review database. Give --db the file the review server wrote." in missing.stderr
    database = reviewed(tmp_path / "empty.sqlite", [])
    empty = cli("reviews", "export", "--db", database, BASELINE, CANDIDATE, "--output", tmp_path / "reviews.arrow")
    assert empty.exit_code == 2
    assert "Give verdicts on their review page first: `rag-compare review`, with this database as --db." in empty.stderr
    assert not (tmp_path / "reviews.arrow").exists()
    not_a_database = cli("reviews", "export", "--db", BASELINE, BASELINE, CANDIDATE, "--output", tmp_path / "r.arrow")
    assert not_a_database.exit_code == 2
    assert "is not a review database" in not_a_database.stderr


def test_a_credential_in_a_path_is_refused_without_showing_it(cli: Cli, tmp_path: Path) -> None:
    database = reviewed(tmp_path / "reviews.sqlite")
    result = cli("reviews", "export", "--db", database, BASELINE, CANDIDATE, "--output", tmp_path / f"{OPENAI_KEY}.a")
    assert result.exit_code == 2
    assert "the path of --output holds a credential" in result.stderr
    assert OPENAI_KEY not in result.output


def test_a_reviews_file_is_no_run(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "reviews.arrow"
    cli("reviews", "export", "--db", reviewed(tmp_path / "reviews.sqlite"), BASELINE, CANDIDATE, "--output", output)
    result = cli(output, CANDIDATE)
    assert result.exit_code == 2
    assert "is a reviews file (people's verdicts on two runs), not a run; `rag-compare show` shows it." in result.stderr
