"""Run directories through the entry point: freeze, import-run and capture write them (--output DIR/ or
--buckets N), show and compare read them, and a changed directory exits 2 naming what changed; a forged run
(a directory or a file whose fingerprint was made again) is refused alike by every command that opens it."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import Result

from rag_compare import load_run
from rag_compare.compute.freezing import freeze_run
from rag_compare.core.errors import RagCompareError
from rag_compare.io.run_directory import MANIFEST, part_name
from rag_compare.io.runfile import freeze_frame
from rag_compare.io.runs import CONFIG_KEY, FORMAT_KEY, FORMAT_VERSION, json_ready, write_run
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


# -- one opener: a run the manifest of which was forged (its fingerprint made again) is refused by every command -------

Manifest = dict[str, Any]


def _canonical(manifest: Manifest) -> bytes:
    return json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def forge(run_dir: Path, change: Callable[[Manifest, Path], None]) -> None:
    """Apply ``change`` to the manifest of ``run_dir`` (and its parts), then give it its fingerprint again, so that
    only what the manifest says can show the forgery."""
    manifest = json.loads((run_dir / MANIFEST).read_bytes())
    del manifest["fingerprint"]
    change(manifest, run_dir)
    (run_dir / MANIFEST).write_bytes(
        _canonical({**manifest, "fingerprint": hashlib.sha256(_canonical(manifest)).hexdigest()})
    )


def rewrite_part(manifest: Manifest, run_dir: Path, bucket: int, frame: pl.DataFrame) -> None:
    """Bucket ``bucket``'s part written again as ``frame``, its digest and rows listed accordingly."""
    path = run_dir / part_name(bucket)
    frame.write_parquet(path, compression="zstd", statistics=False)
    manifest["parts"][bucket] |= {"sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "rows": frame.height}


def _part(run_dir: Path, bucket: int) -> pl.DataFrame:
    return pl.read_parquet(run_dir / part_name(bucket))


def _set(*keys: str | int, value: Any) -> Callable[[Manifest, Path], None]:
    def change(manifest: Manifest, run_dir: Path) -> None:
        inner = manifest
        for key in keys[:-1]:
            inner = inner[key]
        inner[keys[-1]] = value

    return change


def _drop(*keys: str | int) -> Callable[[Manifest, Path], None]:
    def change(manifest: Manifest, run_dir: Path) -> None:
        inner = manifest
        for key in keys[:-1]:
            inner = inner[key]
        del inner[keys[-1]]

    return change


def _rows_moved(manifest: Manifest, run_dir: Path) -> None:
    manifest["parts"][0]["rows"] += 1
    manifest["parts"][1]["rows"] -= 1


def _bucket_twice(manifest: Manifest, run_dir: Path) -> None:
    manifest["parts"][1] = dict(manifest["parts"][0])


def _parts_swapped(manifest: Manifest, run_dir: Path) -> None:
    first, second = (_part(run_dir, bucket) for bucket in (0, 1))
    rewrite_part(manifest, run_dir, 0, second)
    rewrite_part(manifest, run_dir, 1, first)


def _case_moved(manifest: Manifest, run_dir: Path) -> None:
    first, second = (_part(run_dir, bucket) for bucket in (0, 1))
    rewrite_part(manifest, run_dir, 0, pl.concat([first, second.head(1)]).sort("case_id"))
    rewrite_part(manifest, run_dir, 1, second.tail(-1))


def _case_twice(manifest: Manifest, run_dir: Path) -> None:
    second = _part(run_dir, 1)
    rewrite_part(manifest, run_dir, 1, pl.concat([second, second.head(1)]).sort("case_id"))


def _case_without_id(manifest: Manifest, run_dir: Path) -> None:
    second = _part(run_dir, 1)
    first_id = pl.when(pl.int_range(pl.len()) > 0).then(pl.col("case_id"))
    rewrite_part(manifest, run_dir, 1, second.with_columns(first_id.alias("case_id")))


def _other_columns(manifest: Manifest, run_dir: Path) -> None:
    rewrite_part(manifest, run_dir, 1, _part(run_dir, 1).drop("answer"))


def _not_parquet(manifest: Manifest, run_dir: Path) -> None:
    (run_dir / part_name(1)).write_bytes(b"PAR1 not really")
    manifest["parts"][1]["sha256"] = hashlib.sha256(b"PAR1 not really").hexdigest()


FORGED = {
    "negative rows": (_set("parts", 0, "rows", value=-1), "part 0 lists -1 rows, not a whole number of 0 or more"),
    "rows not the part's": (_set("parts", 1, "rows", value=0), "it holds 5 rows where the manifest lists 0"),
    "rows moved to another part": (_rows_moved, "where the manifest lists"),
    "rows as text": (_set("parts", 0, "rows", value="1"), "part 0 lists '1' rows"),
    "rows as a fraction": (_set("parts", 0, "rows", value=1.5), "part 0 lists 1.5 rows"),
    "rows as true": (_set("parts", 0, "rows", value=True), "part 0 lists True rows"),
    "no config": (_drop("config"), "it lacks config"),
    "no bucket rule": (_drop("bucket_rule"), "it lacks bucket_rule"),
    "no parts": (_drop("parts"), "it lacks parts"),
    "a part without its digest": (_drop("parts", 0, "sha256"), "part 0 is not an object of exactly file, rows, sha256"),
    "an unknown key": (_set("notes", value="x"), "it has unknown keys notes"),
    "a part's unknown key": (_set("parts", 2, "notes", value=1), "part 2 is not an object of exactly"),
    "buckets as text": (_set("buckets", value="3"), "its buckets are '3', not a whole number of 1 or more"),
    "no buckets": (lambda manifest, run_dir: manifest.update(buckets=0, parts=[]), "its buckets are 0"),
    "buckets not the parts'": (_set("buckets", value=4), "it lists 3 parts for 4 buckets"),
    "another bucket rule": (_set("bucket_rule", value="xxhash"), "its bucket rule is 'xxhash'"),
    "config a list": (_set("config", value=[]), "its config is not a JSON object"),
    "parts an object": (_set("parts", value={"0": 1}), "its parts are not a list"),
    "a part's file a number": (_set("parts", 0, "file", value=5), "part 0 is the file 5"),
    "a bucket twice": (_bucket_twice, "part 1 is the file 'part-00000.parquet', where bucket 1's part is"),
    "a digest not hexadecimal": (_set("parts", 0, "sha256", value="z" * 64), "not 64 hexadecimal digits"),
    "the corpus as text": (_set("config", "corpus", value="x"), "its 'corpus' is 'x', not an object"),
    "a top_k no comparison can use": (_set("config", "top_k", value=-3), "its top_k is -3, not a whole number"),
    "a number that is not finite": (_set("config", "temperature", value=math.nan), "'temperature' is not a finite"),
    "the creation time a number": (_set("config", "created_at", value=1), "its 'created_at' is 1, not text"),
    "parts swapped": (_parts_swapped, "which belongs in another bucket's part"),
    "a case in another bucket's part": (_case_moved, "which belongs in another bucket's part"),
    "a case twice": (_case_twice, "it holds the case 'c-abstain@v1' twice"),
    "a case without an id": (_case_without_id, "it holds a record without a case id"),
    "a part in other columns": (_other_columns, "its columns differ from those of part-00000.parquet"),
    "a part not Parquet": (_not_parquet, "it cannot be read as Parquet"),
}
"""Forgeries of a run directory of 3 buckets (parts of 1, 5 and 5 records), and what refuses each."""


@pytest.fixture(scope="module")
def frozen(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A run directory of the baseline (3 buckets) and a run file of the candidate, frozen once."""
    folder = tmp_path_factory.mktemp("frozen")
    corpus = FIXTURE / "corpus.csv"
    freeze_run(FIXTURE / "baseline.jsonl", corpus, output=folder / "base", buckets=3)
    freeze_run(FIXTURE / "candidate.jsonl", corpus, output=folder / "cand.arrow")
    return folder / "base", folder / "cand.arrow"


@pytest.mark.parametrize(("change", "says"), list(FORGED.values()), ids=list(FORGED))
def test_show_compare_and_load_run_refuse_a_forged_manifest_alike(
    cli: Cli, tmp_path: Path, frozen: tuple[Path, Path], change: Callable[[Manifest, Path], None], says: str
) -> None:
    run_dir = Path(shutil.copytree(frozen[0], tmp_path / "base"))
    forge(run_dir, change)
    with pytest.raises(RagCompareError) as refused:
        load_run(run_dir).records  # noqa: B018  # a run directory's records are read when first used
    assert says in str(refused.value)
    for args in (("show", run_dir), ("show", run_dir, "--format", "json"), (run_dir, frozen[1]), (frozen[1], run_dir)):
        result = cli(*args)
        assert result.exit_code == 2, result.output
        assert result.stderr == f"error: {refused.value}\n"


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ({"name": "x", "corpus": "x"}, "its 'corpus' is 'x', not an object"),
        ({"name": "x", "top_k": 0}, "its top_k is 0, not a whole number"),
        ({"name": "x", "records": {"path": "r"}, "seed": math.inf}, "its 'seed' is not a finite number"),
    ],
)
def test_a_run_file_of_a_config_freezing_never_writes_is_refused_alike(
    cli: Cli, tmp_path: Path, frozen: tuple[Path, Path], config: dict[str, Any], says: str
) -> None:
    metadata = {FORMAT_KEY: FORMAT_VERSION, CONFIG_KEY: json.dumps(config)}  # as write_run would, unchecked
    forged = freeze_frame(load_run(frozen[1]).records, metadata, tmp_path / "forged.arrow")[1]
    assert forged is not None
    with pytest.raises(RagCompareError) as refused:
        load_run(forged)
    assert says in str(refused.value)
    for args in (
        ("show", forged),
        (forged, frozen[1]),
        ("merge-repeats", forged, frozen[1], "--output", tmp_path / "m"),
    ):
        result = cli(*args)
        assert result.exit_code == 2, result.output
        assert result.stderr == f"error: {refused.value}\n"


def test_a_run_file_holding_a_case_twice_is_refused_alike(cli: Cli, tmp_path: Path, frozen: tuple[Path, Path]) -> None:
    loaded = load_run(frozen[1])
    twice = pl.concat([loaded.records, loaded.records.head(2)])
    forged = write_run(twice, json_ready(loaded.config), tmp_path / "forged.arrow").path
    with pytest.raises(RagCompareError) as refused:
        load_run(forged)
    assert "these case ids appear more than once: c-improved@v1, c-regressed@v1" in str(refused.value)
    for args in (("show", forged), (forged, frozen[1]), (frozen[1], forged), ("merge-repeats", forged, frozen[1])):
        result = cli(*args, *(("--output", tmp_path / "m.arrow") if args[0] == "merge-repeats" else ()))
        assert result.exit_code == 2, result.output
        assert result.stderr == f"error: {refused.value}\n"
