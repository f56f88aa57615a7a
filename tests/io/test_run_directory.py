"""Run directories: the bucket rule, the manifest and its fingerprint, refusals of a changed directory, the
same content as a run file, and the streaming freeze from parts."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rag_compare.compute.compare_runs import compare
from rag_compare.compute.freezing import freeze_run
from rag_compare.core.errors import (
    ContractError,
    InputFileError,
    NestingError,
    RunExistsError,
    RunIntegrityError,
    SecretInConfigError,
)
from rag_compare.core.nesting import MAX_DEPTH
from rag_compare.io.corpus import load_corpus
from rag_compare.io.run_directory import Part, bucket_of, iter_buckets, read_run_directory, write_manifest
from rag_compare.io.runs import Run, load_run, open_run
from tests.helpers.credential_shapes import KEY_SHAPES, secret_parts
from tests.helpers.data import ROOT
from tests.helpers.nesting import nested_type

FIXTURE = ROOT / "tests" / "fixtures" / "compare"
EPOCH = {"SOURCE_DATE_EPOCH": "1795000000"}
IDS = ["hotel@v2", "meal@v2", "ceo@v2", "mileage@v2", "caf\u00e9@v1", "q123@v1", ""]


def hand_bucket(case_id: str, buckets: int) -> int:
    """The bucket rule by hand: the first 8 bytes of the SHA-256 of the UTF-8 id, big-endian, modulo."""
    return int.from_bytes(hashlib.sha256(case_id.encode("utf-8")).digest()[:8], "big") % buckets


def freeze_dir(tmp_path: Path, name: str = "base", buckets: int = 4, **kwargs: object) -> Run:
    records = kwargs.pop("records", FIXTURE / "baseline.jsonl")
    corpus = kwargs.pop("corpus", FIXTURE / "corpus.csv")
    return freeze_run(
        records,  # type: ignore[arg-type]
        corpus,  # type: ignore[arg-type]
        {"name": "baseline", "top_k": 3},
        output=tmp_path / name,
        buckets=buckets,
        environ=EPOCH,
        **kwargs,  # type: ignore[arg-type]
    )


def test_the_bucket_rule_is_the_sha256_prefix_modulo_the_buckets() -> None:
    for buckets in (1, 7, 64):
        assert bucket_of(pl.Series(IDS), buckets).to_list() == [hand_bucket(case_id, buckets) for case_id in IDS]


def test_buckets_are_the_same_in_another_process() -> None:
    script = (
        "import json, sys, polars as pl\n"
        "from rag_compare.io.run_directory import bucket_of\n"
        "print(json.dumps(bucket_of(pl.Series(json.loads(sys.argv[1])), 64).to_list()))\n"
    )
    # Another hash seed: a rule built on Python's or Polars' hash would change with it.
    env = {"PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "12345"}
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(IDS)], capture_output=True, text=True, check=True, env=env
    )
    assert json.loads(done.stdout) == bucket_of(pl.Series(IDS), 64).to_list()


def test_each_case_is_in_the_part_of_its_bucket_sorted_by_case_id(tmp_path: Path) -> None:
    run = freeze_dir(tmp_path, buckets=4)
    assert run.buckets == 4
    assert [part.name for part in run.parts] == [f"part-0000{bucket}.parquet" for bucket in range(4)]
    expected_ids = pl.read_ndjson(FIXTURE / "baseline.jsonl").get_column("case_id").to_list()
    seen = []
    for part in run.parts:
        ids = pl.read_parquet(part).get_column("case_id").to_list()
        assert ids == sorted(ids)
        assert {hand_bucket(case_id, 4) for case_id in ids} <= {int(part.stem[-5:])}
        seen += ids
        groups = pq.ParquetFile(part).metadata
        assert {groups.row_group(i).column(0).compression for i in range(groups.num_row_groups)} <= {"ZSTD"}
    assert any(pq.ParquetFile(part).metadata.num_row_groups for part in run.parts)
    assert sorted(seen) == sorted(expected_ids)


def test_the_manifest_lists_config_buckets_rule_and_parts_and_its_digest_is_the_fingerprint(tmp_path: Path) -> None:
    run = freeze_dir(tmp_path, buckets=3)
    data = (tmp_path / "base" / "manifest.json").read_bytes()
    manifest = json.loads(data)
    assert set(manifest) == {"format", "config", "buckets", "bucket_rule", "parts", "fingerprint"}
    assert manifest["format"] == "run-directory-1"
    assert manifest["buckets"] == 3
    assert manifest["bucket_rule"] == "case_hash-mod-buckets"
    assert manifest["config"] == dict(run.config) | {"corpus": dict(run.config["corpus"])}
    for part, path in zip(manifest["parts"], run.parts, strict=True):
        assert part["file"] == path.name
        assert part["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert part["rows"] == pl.read_parquet(path).height
    body = {key: value for key, value in manifest.items() if key != "fingerprint"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    assert run.fingerprint == manifest["fingerprint"] == hashlib.sha256(canonical).hexdigest()
    assert data == json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()


def test_a_loaded_run_directory_holds_the_records_and_yields_them_by_bucket(tmp_path: Path) -> None:
    frozen = freeze_dir(tmp_path, buckets=4)
    loaded = load_run(tmp_path / "base")
    assert loaded.fingerprint == frozen.fingerprint
    assert loaded.parts == frozen.parts
    assert loaded.to_dict() == frozen.to_dict()
    by_bucket = list(iter_buckets(tmp_path / "base"))
    assert [bucket for bucket, _ in by_bucket] == [0, 1, 2, 3]
    assert loaded.records.equals(pl.concat([frame for _, frame in by_bucket]))
    assert loaded.records.height == 11


def test_a_run_file_and_a_run_directory_of_the_same_records_hold_the_same_content(tmp_path: Path) -> None:
    config = {"name": "baseline", "top_k": 3}
    args = (FIXTURE / "baseline.jsonl", FIXTURE / "corpus.csv", config)
    file_run = freeze_run(*args, output=tmp_path / "base.arrow", environ=EPOCH)
    dir_run = load_run(freeze_run(*args, output=tmp_path / "base", buckets=5, environ=EPOCH).path or "")
    assert dict(dir_run.config) == dict(file_run.config)
    assert dir_run.records.columns == file_run.records.columns
    assert dir_run.records.sort("case_id").equals(file_run.records.sort("case_id"))
    candidate = freeze_run(FIXTURE / "candidate.jsonl", FIXTURE / "corpus.csv", {"top_k": 3}, environ=EPOCH)
    of_file, of_dir = compare(file_run, candidate), compare(dir_run, candidate)
    assert of_dir.cases.sort("case_id").equals(of_file.cases.sort("case_id"))
    assert of_dir.aggregates.equals(of_file.aggregates)
    assert of_dir.breakdowns.equals(of_file.breakdowns)
    statuses = of_file.cases.get_column("status").value_counts().sort("status")
    assert of_dir.cases.get_column("status").value_counts().sort("status").equals(statuses)
    file_side, dir_side = of_file.to_dict()["baseline"], of_dir.to_dict()["baseline"]
    assert dir_side["path"] != file_side["path"]
    assert dir_side["fingerprint"] != file_side["fingerprint"]
    unlike = {"path", "fingerprint"}
    assert {key: value for key, value in dir_side.items() if key not in unlike} == {
        key: value for key, value in file_side.items() if key not in unlike
    }


@pytest.mark.parametrize(
    ("damage", "named", "says"),
    [
        (lambda run: run / "part-00001.parquet", "part-00001.parquet", "do not match the SHA-256"),
        (lambda run: run / "manifest.json", "manifest.json", "does not match the run's fingerprint"),
    ],
)
def test_a_changed_part_or_manifest_is_refused(tmp_path: Path, damage: object, named: str, says: str) -> None:
    freeze_dir(tmp_path)
    target = damage(tmp_path / "base")  # type: ignore[operator]
    if target.name == "manifest.json":
        manifest = json.loads(target.read_bytes())
        manifest["config"]["top_k"] = 5
        target.write_bytes(json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode())
    else:
        data = bytearray(target.read_bytes())
        data[len(data) // 2] ^= 0xFF
        target.write_bytes(bytes(data))
    with pytest.raises(RunIntegrityError, match=says) as error:
        load_run(tmp_path / "base")
    assert named in str(error.value)
    assert "Restore" in str(error.value)


def test_the_rows_of_some_cases_read_alike_from_a_run_file_and_a_run_directory(tmp_path: Path) -> None:
    args = (FIXTURE / "baseline.jsonl", FIXTURE / "corpus.csv", {"name": "baseline", "top_k": 3})
    file_run = freeze_run(*args, output=tmp_path / "base.arrow", environ=EPOCH)
    freeze_run(*args, output=tmp_path / "base", buckets=5, environ=EPOCH)
    records = file_run.records.sort("case_id")
    wanted = records.get_column("case_id").gather([0, 2, 3]).append(pl.Series(["not a case"]))
    expected = records.filter(pl.col("case_id").is_in(wanted.implode()))
    for path in (tmp_path / "base.arrow", tmp_path / "base"):
        rows = open_run(path).rows(wanted, records.columns).sort("case_id")
        assert rows.schema == expected.schema
        assert rows.equals(expected)


def test_a_part_changed_after_loading_is_refused_when_read(tmp_path: Path) -> None:
    freeze_dir(tmp_path)
    loaded = load_run(tmp_path / "base")
    part = tmp_path / "base" / "part-00003.parquet"
    part.write_bytes(part.read_bytes() + b"x")
    with pytest.raises(RunIntegrityError, match=r"part-00003\.parquet"):
        _ = loaded.records


def test_a_missing_or_an_extra_part_is_refused(tmp_path: Path) -> None:
    freeze_dir(tmp_path)
    run_dir = tmp_path / "base"
    moved = tmp_path / "kept.parquet"
    (run_dir / "part-00002.parquet").rename(moved)
    with pytest.raises(RunIntegrityError, match=r"part-00002\.parquet: is missing from the run directory"):
        load_run(run_dir)
    moved.rename(run_dir / "part-00002.parquet")
    load_run(run_dir)
    (run_dir / "part-00004.parquet").write_bytes((run_dir / "part-00000.parquet").read_bytes())
    with pytest.raises(
        RunIntegrityError, match=r"part-00004\.parquet: is in the run directory but not in its manifest"
    ):
        load_run(run_dir)
    (run_dir / "part-00004.parquet").unlink()
    (run_dir / ".DS_Store").write_bytes(b"")
    with pytest.raises(RunIntegrityError, match="not in its manifest"):
        list(iter_buckets(run_dir))


def test_an_existing_output_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    (tmp_path / "base").mkdir()
    with pytest.raises(RunExistsError, match="already exists"):
        freeze_dir(tmp_path)
    assert list(tmp_path.iterdir()) == [tmp_path / "base"]
    assert list((tmp_path / "base").iterdir()) == []
    (tmp_path / "file").write_text("x")
    with pytest.raises(RunExistsError):
        freeze_run(FIXTURE / "baseline.jsonl", FIXTURE / "corpus.csv", output=str(tmp_path / "file") + "/")


def write_parts(folder: Path, frame: pl.DataFrame, sizes: list[int], suffix: str = ".parquet") -> list[Path]:
    """``frame`` cut into consecutive parts of ``sizes`` rows, the first as JSONL, the rest with ``suffix``."""
    folder.mkdir()
    paths, start = [], 0
    for index, size in enumerate(sizes):
        piece = frame.slice(start, size)
        path = folder / f"part{index}{'.jsonl' if index == 0 else suffix}"
        piece.write_ndjson(path) if index == 0 else piece.write_parquet(path)
        paths.append(path)
        start += size
    return paths


def test_a_glob_of_record_parts_freezes_as_the_file_of_them_all(tmp_path: Path) -> None:
    records = pl.read_ndjson(FIXTURE / "baseline.jsonl")
    write_parts(tmp_path / "in", records, [4, 3, 4])
    whole = freeze_run(
        FIXTURE / "baseline.jsonl", FIXTURE / "corpus.csv", {"name": "b"}, output=tmp_path / "whole.arrow"
    )
    pattern = str(tmp_path / "in" / "part*")
    parted = freeze_run(pattern, FIXTURE / "corpus.csv", {"name": "b"}, output=tmp_path / "run", buckets=3)
    assert parted.config["records"] == {"path": pattern}
    unlike = {"records", "created_at"}
    assert {k: v for k, v in parted.config.items() if k not in unlike} == {
        k: v for k, v in whole.config.items() if k not in unlike
    }
    assert parted.records.sort("case_id").equals(whole.records.sort("case_id"))
    by_folder = freeze_run(tmp_path / "in", FIXTURE / "corpus.csv", output=tmp_path / "run2", buckets=3)
    assert by_folder.records.equals(parted.records)


def test_a_corpus_in_parts_has_the_fingerprint_of_its_buckets(tmp_path: Path) -> None:
    corpus = load_corpus(FIXTURE / "corpus.csv").frame
    raw = pl.read_csv(FIXTURE / "corpus.csv", infer_schema=False)
    write_parts(tmp_path / "corpus", raw, [5, 8])
    run = freeze_run(FIXTURE / "baseline.jsonl", tmp_path / "corpus", output=tmp_path / "run", buckets=3, environ=EPOCH)
    whole = freeze_run(FIXTURE / "baseline.jsonl", FIXTURE / "corpus.csv", environ=EPOCH)
    assert run.records.sort("case_id").equals(whole.records.sort("case_id"))
    contract = corpus.columns  # all contract columns; this corpus has no metadata
    buckets = bucket_of(corpus.get_column("case_id"), 3)
    digests = [
        hashlib.sha256(
            corpus.filter(buckets == bucket).select(contract).sort("case_id").write_ndjson().encode()
        ).hexdigest()
        for bucket in range(3)
    ]
    expected = hashlib.sha256("\n".join(digests).encode()).hexdigest()
    assert run.config["corpus"] == {"path": str(tmp_path / "corpus"), "fingerprint": expected, "cases": 13}


def test_a_case_id_in_two_record_parts_is_refused_naming_it_and_both_places(tmp_path: Path) -> None:
    records = pl.read_ndjson(FIXTURE / "baseline.jsonl")
    again = records.filter(pl.col("case_id") == "c-improved@v1")
    paths = write_parts(tmp_path / "in", pl.concat([records, again], how="diagonal_relaxed"), [6, 6])
    where = records.get_column("case_id").to_list().index("c-improved@v1") + 1
    with pytest.raises(ContractError) as error:
        freeze_run(tmp_path / "in", FIXTURE / "corpus.csv", output=tmp_path / "run", buckets=4)
    message = str(error.value)
    assert message.startswith(f"{paths[0]}: not a valid run records file")
    assert "'c-improved@v1'" in message
    assert f"row {where} of {paths[0]}, row 6 of {paths[1]}" in message
    assert sorted(path.name for path in tmp_path.iterdir()) == ["in"]


def test_a_bad_cell_is_refused_at_its_part_and_row(tmp_path: Path) -> None:
    records = pl.read_ndjson(FIXTURE / "baseline.jsonl").with_columns(
        pl.when(pl.int_range(pl.len()) == 8).then(pl.lit("done")).otherwise("status").alias("status"),
        latency_ms=pl.when(pl.int_range(pl.len()) == 9).then(pl.lit("fast")).otherwise(pl.lit("1.5")),
    )
    paths = write_parts(tmp_path / "in", records, [5, 6])
    with pytest.raises(ContractError) as error:
        freeze_run(tmp_path / "in", FIXTURE / "corpus.csv", output=tmp_path / "run", buckets=2)
    message = str(error.value)
    assert message.startswith(f"{paths[1]}: not a valid run records file (2 problems")
    assert "row 4, column 'status': got 'done'" in message
    assert "row 5, column 'latency_ms': got 'fast'" in message
    assert sorted(path.name for path in tmp_path.iterdir()) == ["in"]


def test_unreviewed_cases_of_a_corpus_in_parts_are_refused_at_their_row(tmp_path: Path) -> None:
    raw = pl.read_csv(FIXTURE / "corpus.csv", infer_schema=False).with_columns(
        origin=pl.when(pl.col("case_id") == "c-regressed@v1").then(pl.lit("synthetic")).otherwise(pl.lit("manual"))
    )
    paths = write_parts(tmp_path / "corpus", raw, [1, 12])
    row = raw.get_column("case_id").to_list().index("c-regressed@v1") + 1 - 1
    with pytest.raises(ContractError, match="unreviewed synthetic cases are not gold") as error:
        freeze_run(FIXTURE / "baseline.jsonl", tmp_path / "corpus", output=tmp_path / "run", buckets=3)
    assert str(error.value).startswith(f"{paths[1]}: ")
    assert f"row {row}, column 'case_id': got 'c-regressed@v1'" in str(error.value)
    run = freeze_run(
        FIXTURE / "baseline.jsonl", tmp_path / "corpus", output=tmp_path / "run", buckets=3, include_unreviewed=True
    )
    assert "c-regressed@v1" in run.records.get_column("case_id").to_list()


def test_a_glob_matching_nothing_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="matches no run records files"):
        freeze_run(str(tmp_path / "nope*.parquet"), FIXTURE / "corpus.csv", output=tmp_path / "run", buckets=2)
    assert list(tmp_path.iterdir()) == []


def test_compared_by_path_a_run_directory_is_opened_part_by_part_like_its_run_file(tmp_path: Path) -> None:
    args = (FIXTURE / "baseline.jsonl", FIXTURE / "corpus.csv", {"name": "baseline", "top_k": 3})
    file_run = freeze_run(*args, output=tmp_path / "base.arrow", environ=EPOCH)
    dir_run = freeze_run(*args, output=tmp_path / "base", buckets=5, environ=EPOCH)
    candidate = tmp_path / "cand.arrow"
    freeze_run(FIXTURE / "candidate.jsonl", FIXTURE / "corpus.csv", {"top_k": 3}, output=candidate, environ=EPOCH)
    of_file, of_dir = compare(tmp_path / "base.arrow", candidate), compare(tmp_path / "base", candidate)
    assert of_dir.cases.sort("case_id").equals(of_file.cases.sort("case_id"))
    assert of_dir.aggregates.equals(of_file.aggregates)
    shown = {}
    for name, comparison, run in (("file", of_file, file_run), ("dir", of_dir, dir_run)):
        text = comparison.render("markdown")
        for value in (run.fingerprint, run.fingerprint[:12], str(run.path), str(run.path).replace("_", "\\_")):
            text = text.replace(value, "RUN")
        shown[name] = text
    shown_file, shown_dir = shown["file"], shown["dir"]
    assert shown_dir == shown_file
    assert "c-regressed@v1" in shown_dir


def test_on_a_terminal_freezing_shows_the_buckets_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    freeze_dir(tmp_path, buckets=3)
    drawn = capsys.readouterr().err
    assert "freezing buckets" in drawn
    assert "3/3" in drawn


@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_a_manifest_never_holds_a_credential_whatever_put_it_in_the_config(tmp_path: Path, secret: str) -> None:
    config = {"name": "run", "records": {"path": f"parts/{secret}/*.jsonl"}}
    with pytest.raises(SecretInConfigError, match="holds a credential") as raised:
        write_manifest(tmp_path, config, ())
    assert not any(form in str(raised.value) for form in secret_parts(secret))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("levels", [MAX_DEPTH, 1000])
def test_a_part_forged_with_a_column_nested_too_deep_is_refused_naming_it(tmp_path: Path, levels: int) -> None:
    """Its digest listed in a manifest whose fingerprint is recomputed: each read refuses it before decoding it."""
    run = freeze_dir(tmp_path).path
    assert run is not None
    directory = read_run_directory(run)
    forged = pq.read_table(run / "part-00002.parquet")
    forged = forged.append_column("extra", pa.array([None] * forged.num_rows, type=nested_type(levels)))
    pq.write_table(forged, run / "part-00002.parquet")
    data = (run / "part-00002.parquet").read_bytes()
    parts = [
        Part(part.file, part.rows, hashlib.sha256(data).hexdigest()) if part.file == "part-00002.parquet" else part
        for part in directory.parts
    ]
    write_manifest(run, directory.config, tuple(parts))
    for read in (load_run, lambda path: list(iter_buckets(path))):
        with pytest.raises(NestingError, match=rf"part-00002\.parquet: column 'extra': nests .* more than {MAX_DEPTH}"):
            read(run)
