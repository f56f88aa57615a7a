"""Run directories through the entry point: freeze, import-run and capture write them (--output DIR/ or
--buckets N), show and compare read them, and a changed directory exits 2 naming what changed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import Result

from rag_compare import load_run
from tests.helpers.data import EXAMPLE_CORPUS, ROOT

Cli = Callable[..., Result]
FIXTURE = ROOT / "tests" / "fixtures" / "compare"
PASSAGES = ROOT / "corpora" / "handbook_passages.csv"
HOTEL = {"meta": {"case_id": "hotel@v2"}, "question": "What is the hotel cap?", "answer": "150"}
MEAL = {"meta": {"case_id": "meal@v2"}, "question": "What is the meal allowance?", "status": "failed"}


def freeze(
    cli: Cli,
    output: str | Path,
    *args: str | Path,
    records: Path = FIXTURE / "baseline.jsonl",
    env: dict[str, str] | None = None,
) -> Result:
    return cli("freeze", records, "--corpus", FIXTURE / "corpus.csv", "--output", output, *args, env=env)


def test_a_trailing_slash_freezes_a_run_directory_of_the_default_buckets(cli: Cli, tmp_path: Path) -> None:
    result = freeze(cli, f"{tmp_path / 'base'}/")
    assert result.exit_code == 0, result.output
    assert f"froze 11 cases of 'base' to {tmp_path / 'base'}/ (16 parts)" in result.stdout
    listed = sorted(path.name for path in (tmp_path / "base").iterdir())
    assert listed == ["manifest.json", *(f"part-{bucket:05d}.parquet" for bucket in range(16))]


def test_buckets_freeze_a_run_directory_that_shows_and_compares_like_a_run_file(cli: Cli, tmp_path: Path) -> None:
    epoch = {"SOURCE_DATE_EPOCH": "1795000000"}
    assert freeze(cli, tmp_path / "base", "--buckets", "3", "--set", "name=baseline", env=epoch).exit_code == 0
    assert freeze(cli, tmp_path / "base.arrow", "--set", "name=baseline", env=epoch).exit_code == 0
    candidate = tmp_path / "cand.arrow"
    assert freeze(cli, candidate, records=FIXTURE / "candidate.jsonl").exit_code == 0
    assert len(list((tmp_path / "base").iterdir())) == 4
    shown = json.loads(cli("show", tmp_path / "base", "--format", "json").stdout)
    assert shown["cases"] == 11
    assert shown["status_counts"] == {"ok": 9, "failed": 2, "timeout": 0}
    by_dir = json.loads(cli(tmp_path / "base", candidate, "--format", "json").stdout)
    by_file = json.loads(cli(tmp_path / "base.arrow", candidate, "--format", "json").stdout)
    for report in (by_dir, by_file):
        for key in ("path", "fingerprint"):
            report["baseline"].pop(key)
    assert by_dir == by_file


def damage_part(run_dir: Path) -> str:
    part = run_dir / "part-00001.parquet"
    part.write_bytes(part.read_bytes()[:-3] + b"xyz")
    return "part-00001.parquet: this part of the run directory was changed or damaged"


def remove_part(run_dir: Path) -> str:
    (run_dir / "part-00002.parquet").unlink()
    return "part-00002.parquet: is missing from the run directory"


def add_file(run_dir: Path) -> str:
    (run_dir / "notes.txt").write_text("mine")
    return "notes.txt: is in the run directory but not in its manifest"


def edit_manifest(run_dir: Path) -> str:
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["parts"][0]["rows"] += 1
    (run_dir / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, separators=(",", ":")))
    return "manifest.json: does not match the run's fingerprint"


@pytest.mark.parametrize("change", [damage_part, remove_part, add_file, edit_manifest])
def test_a_changed_run_directory_exits_2_naming_what_changed(
    cli: Cli, tmp_path: Path, change: Callable[[Path], str]
) -> None:
    assert freeze(cli, tmp_path / "base", "--buckets", "4").exit_code == 0
    says = change(tmp_path / "base")
    for args in (("show", tmp_path / "base"), (tmp_path / "base", tmp_path / "base")):
        result = cli(*args)
        assert result.exit_code == 2, result.output
        assert says in result.stderr
        assert "restore the directory" in result.stderr.lower()


def test_an_existing_output_directory_is_refused(cli: Cli, tmp_path: Path) -> None:
    assert freeze(cli, f"{tmp_path / 'base'}/").exit_code == 0
    before = sorted((tmp_path / "base").iterdir())
    again = freeze(cli, f"{tmp_path / 'base'}/", "--buckets", "2")
    assert again.exit_code == 2
    assert "already exists and is never overwritten" in again.stderr
    assert sorted((tmp_path / "base").iterdir()) == before


def test_freeze_takes_a_quoted_glob_of_record_parts(cli: Cli, tmp_path: Path) -> None:
    records = pl.read_ndjson(FIXTURE / "baseline.jsonl")
    (tmp_path / "in").mkdir()
    records.head(5).write_parquet(tmp_path / "in" / "a.parquet")
    records.tail(6).write_ndjson(tmp_path / "in" / "b.jsonl")
    result = freeze(cli, tmp_path / "run", "--buckets", "2", records=Path(str(tmp_path / "in" / "*")))
    assert result.exit_code == 0, result.output
    assert sorted(load_run(tmp_path / "run").records.get_column("case_id")) == sorted(records.get_column("case_id"))


def test_a_duplicate_across_record_parts_exits_2_and_leaves_nothing(cli: Cli, tmp_path: Path) -> None:
    records = pl.read_ndjson(FIXTURE / "baseline.jsonl")
    (tmp_path / "in").mkdir()
    records.write_parquet(tmp_path / "in" / "a.parquet")
    records.head(1).write_parquet(tmp_path / "in" / "b.parquet")
    result = freeze(cli, f"{tmp_path / 'run'}/", records=tmp_path / "in")
    assert result.exit_code == 2
    first = records.get_column("case_id")[0]
    assert f"got '{first}'; expected a case id given once: it is in row 1 of {tmp_path / 'in' / 'a.parquet'}" in (
        result.stderr
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["in"]


@pytest.fixture
def stand_in_ragas(monkeypatch: pytest.MonkeyPatch) -> str:
    """The stand-in ``ragas`` reader of ``tests/io/test_run_import.py`` (as in ``tests/cli/test_runs.py``)."""
    from rag_compare.io.run_import import FORMATS

    monkeypatch.setitem(FORMATS, "ragas", "tests.io.test_run_import:units_reader")
    return "ragas"


def test_import_run_writes_a_run_directory(
    cli: Cli, tmp_path: Path, small_corpus: Path, write: Callable[[str, str], Path], stand_in_ragas: str
) -> None:
    source = write("units.json", json.dumps({"units": [HOTEL, MEAL]}))
    output = tmp_path / "imported"
    result = cli("import-run", source, "--from", stand_in_ragas, "--corpus", small_corpus, "--output", f"{output}/")
    assert result.exit_code == 0, result.output
    run = load_run(output)
    assert run.buckets == 16
    assert sorted(run.records.get_column("case_id")) == ["hotel@v2", "meal@v2"]
    assert run.config["imported"]["format"] == "ragas"


def test_capture_writes_a_run_directory(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "captured"
    args: tuple[Any, ...] = ("capture", EXAMPLE_CORPUS, "--passages", PASSAGES, "--top-k", 3, "--output", output)
    result = cli(*args, "--buckets", 4)
    assert result.exit_code == 0, result.output
    run = load_run(output)
    assert run.buckets == 4
    assert run.records.height == 35  # the example corpus' reviewed cases
    assert not (tmp_path / "captured.checkpoint.jsonl").exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["captured"]
