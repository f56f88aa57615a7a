"""Merging runs of one config into one run with repeats: the renumbering rule, and every refusal writing nothing
(of a credential in a path, a name or an older run's config too)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import polars as pl
import pytest

from rag_compare import merge_repeats
from rag_compare.compute.freezing import freeze_run
from rag_compare.core.errors import ConfigError, RunExistsError, RunFileError, SecretInConfigError
from rag_compare.io.runs import Run, load_run
from tests.helpers.credential_shapes import KEY_SHAPES, copied_as, legacy_run, named_with, secret_parts
from tests.helpers.data import SMALL_CORPUS

EPOCH = {"SOURCE_DATE_EPOCH": "1795000000"}
CONFIG = {"top_k": 3, "retriever": {"kind": "bm25"}}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.csv"
    path.write_text(SMALL_CORPUS, encoding="utf-8")
    return path


def frozen(
    tmp_path: Path, corpus: Path, name: str, records: dict[str, list[Any]], config: dict[str, Any] | None = None
) -> Run:
    return freeze_run(
        pl.DataFrame(records), corpus, {"name": name, **(config or CONFIG)}, output=tmp_path / f"{name}.arrow",
        environ=EPOCH,
    )  # fmt: skip


def test_two_runs_without_repeats_become_repeats_0_and_1(tmp_path: Path, corpus: Path) -> None:
    first = frozen(tmp_path, corpus, "first", {"case_id": ["meal@v2", "hotel@v2"], "answer": ["a1", "b1"]})
    second = frozen(tmp_path, corpus, "second", {"case_id": ["hotel@v2", "meal@v2"], "answer": ["b2", "a2"]})
    output = tmp_path / "merged.arrow"
    merged = merge_repeats([first.path, second.path], output, environ=EPOCH)
    # In the order the cases first appear (meal, hotel), then by repeat.
    assert merged.records.select("case_id", "repeat", "answer").rows() == [
        ("meal@v2", 0, "a1"), ("meal@v2", 1, "a2"), ("hotel@v2", 0, "b1"), ("hotel@v2", 1, "b2"),
    ]  # fmt: skip
    assert merged.records.columns[:3] == ["case_id", "repeat", "status"]
    assert merged.records.get_column("question").to_list()[:2] == ["What is the meal allowance?"] * 2
    assert merged.repeats == 2
    assert merged.name == "first"  # the first run's config, by default its name
    assert (merged.config["top_k"], merged.config["retriever"]) == (3, {"kind": "bm25"})
    assert merged.config["merged_from"] == [
        {"name": "first", "fingerprint": first.fingerprint, "path": str(first.path), "repeats": 1},
        {"name": "second", "fingerprint": second.fingerprint, "path": str(second.path), "repeats": 1},
    ]
    loaded = load_run(output)
    assert loaded.fingerprint == merged.fingerprint
    assert loaded.records.equals(merged.records)


def test_three_runs_one_with_repeats_are_numbered_one_after_another(tmp_path: Path, corpus: Path) -> None:
    """Offsets: run 1 (no repeat column) 0; run 2 (repeats 0..2, largest 2) 1; run 3 (no column) 1 + 3 = 4.
    So meal@v2 is 0 (run 1), 1, 2, 3 (run 2's 0, 1, 2), 4 (run 3); hotel@v2 only in run 2's repeat 1: 2;
    mileage@v2 in runs 1 and 3: 0 and 4."""
    one = frozen(tmp_path, corpus, "one", {"case_id": ["meal@v2", "mileage@v2"], "answer": ["m0", "x0"]})
    two = frozen(
        tmp_path, corpus, "two",
        {"case_id": ["meal@v2", "meal@v2", "hotel@v2", "meal@v2"], "repeat": [0, 1, 1, 2], "answer": ["m1", "m2", "h", "m3"]},
    )  # fmt: skip
    three = frozen(tmp_path, corpus, "three", {"case_id": ["mileage@v2", "meal@v2"], "answer": ["x4", "m4"]})
    merged = merge_repeats([one, two, three], tmp_path / "merged.arrow", name="pooled", environ=EPOCH)
    assert merged.records.select("case_id", "repeat", "answer").rows() == [
        ("meal@v2", 0, "m0"), ("meal@v2", 1, "m1"), ("meal@v2", 2, "m2"), ("meal@v2", 3, "m3"), ("meal@v2", 4, "m4"),
        ("mileage@v2", 0, "x0"), ("mileage@v2", 4, "x4"),
        ("hotel@v2", 2, "h"),
    ]  # fmt: skip
    assert merged.name == "pooled"
    assert merged.repeats == 5
    assert [entry["repeats"] for entry in merged.config["merged_from"]] == [1, 3, 1]
    summary = merged.to_dict()
    assert (summary["cases"], summary["samples"], summary["repeats"]) == (3, 8, 5)
    # A merged run merges again: its config's merged_from is bookkeeping, the new list replaces it.
    four = frozen(tmp_path, corpus, "four", {"case_id": ["meal@v2"], "answer": ["m5"]})
    again = merge_repeats([merged, four], tmp_path / "again.arrow", environ=EPOCH)
    assert again.records.filter(pl.col("case_id") == "meal@v2").get_column("repeat").to_list() == [0, 1, 2, 3, 4, 5]
    assert [entry["name"] for entry in again.config["merged_from"]] == ["pooled", "four"]


def test_runs_differing_only_in_bookkeeping_are_merged(tmp_path: Path, corpus: Path) -> None:
    first = frozen(tmp_path, corpus, "first", {"case_id": ["meal@v2"]})
    later = freeze_run(
        pl.DataFrame({"case_id": ["meal@v2"]}), corpus, {"name": "later", **CONFIG}, output=tmp_path / "later.arrow",
        environ={"SOURCE_DATE_EPOCH": "1796000000"},
    )  # fmt: skip
    assert first.created_at != later.created_at
    merged = merge_repeats([first, later], tmp_path / "merged.arrow", environ=EPOCH)
    assert merged.repeats == 2
    assert merged.created_at == first.created_at  # created now: SOURCE_DATE_EPOCH here


def test_runs_differing_in_a_setting_are_refused_listing_every_key(tmp_path: Path, corpus: Path) -> None:
    first = frozen(tmp_path, corpus, "first", {"case_id": ["meal@v2"]})
    other = frozen(tmp_path, corpus, "other", {"case_id": ["meal@v2"]}, {"top_k": 5, "retriever": {"kind": "dense"}})
    extra = frozen(tmp_path, corpus, "extra", {"case_id": ["meal@v2"]}, {**CONFIG, "model": "m2"})
    output = tmp_path / "merged.arrow"
    with pytest.raises(ConfigError) as caught:
        merge_repeats([first, other, extra], output)
    message = str(caught.value)
    assert "  - retriever.kind: 'bm25' in 'first', 'dense' in run 2 'other'" in message
    assert "  - top_k: 3 in 'first', 5 in run 2 'other'" in message
    assert "  - model: None in 'first', 'm2' in run 3 'extra'" in message
    assert not output.exists()


def test_a_case_relabelled_between_the_runs_is_refused(tmp_path: Path, corpus: Path) -> None:
    first = frozen(tmp_path, corpus, "first", {"case_id": ["meal@v2", "hotel@v2"]})
    relabelled = tmp_path / "relabelled.csv"
    relabelled.write_text(SMALL_CORPUS.replace("meal@v2,What is the meal allowance?", "meal@v2,What is the meal cap?"))
    second = freeze_run(
        pl.DataFrame({"case_id": ["meal@v2", "hotel@v2"]}), relabelled, {"name": "second", **CONFIG},
        output=tmp_path / "second.arrow",
    )  # fmt: skip
    output = tmp_path / "merged.arrow"
    with pytest.raises(RunFileError, match=r"1 case with different labels \(question, .*\) in the runs: meal@v2\."):
        merge_repeats([first, second], output)
    assert not output.exists()


def test_the_same_run_twice_is_refused(tmp_path: Path, corpus: Path) -> None:
    run = frozen(tmp_path, corpus, "run", {"case_id": ["meal@v2"]})
    copy = tmp_path / "copy.arrow"
    copy.write_bytes(run.path.read_bytes())
    with pytest.raises(RunFileError, match=r"runs 1 and 2 are the same run \('run', fingerprint"):
        merge_repeats([run.path, copy], tmp_path / "merged.arrow")
    with pytest.raises(RunFileError, match="merging repeats needs two runs of one config or more; got 1"):
        merge_repeats([run], tmp_path / "merged.arrow")
    assert not (tmp_path / "merged.arrow").exists()


def test_the_output_is_never_an_input_nor_an_existing_file(tmp_path: Path, corpus: Path) -> None:
    first = frozen(tmp_path, corpus, "first", {"case_id": ["meal@v2"]})
    second = frozen(tmp_path, corpus, "second", {"case_id": ["meal@v2"]})
    before = second.path.read_bytes()
    with pytest.raises(RunFileError, match="is one of the runs being merged"):
        merge_repeats([first, second], tmp_path / "." / "second.arrow")
    assert second.path.read_bytes() == before
    taken = tmp_path / "taken.arrow"
    taken.write_text("mine")
    with pytest.raises(RunExistsError):
        merge_repeats([first, second], taken)
    assert taken.read_text() == "mine"


def test_a_metadata_column_of_two_types_is_refused(tmp_path: Path, corpus: Path) -> None:
    first = frozen(tmp_path, corpus, "first", {"case_id": ["meal@v2"], "team": ["ops"]})
    second = frozen(tmp_path, corpus, "second", {"case_id": ["meal@v2"], "team": [7]})
    with pytest.raises(RunFileError, match="team: a column holding values of different types"):
        merge_repeats([first, second], tmp_path / "merged.arrow")


@pytest.mark.parametrize("place", ["runs", "output", "name"])
@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_a_path_or_name_holding_a_credential_is_refused_before_any_run_is_read(
    tmp_path: Path, corpus: Path, secret: str, place: str
) -> None:
    first = frozen(tmp_path, corpus, "first", {"case_id": ["meal@v2"]})
    second = frozen(tmp_path, corpus, "second", {"case_id": ["hotel@v2"]})
    runs: list[Any] = [first.path, copied_as(cast(Path, second.path), secret) if place == "runs" else second]
    output = named_with(secret, tmp_path, ".arrow") if place == "output" else tmp_path / "merged.arrow"
    name = f"pooled-{secret}" if place == "name" else None
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(SecretInConfigError) as raised:
        merge_repeats(runs, output, name=name, environ=EPOCH)
    said = {"runs": "path 2 of `runs` holds", "output": "the path of `output` holds", "name": "'name' holds"}[place]
    assert said in str(raised.value)
    assert not any(form in str(raised.value) for form in secret_parts(secret))
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_runs_an_older_version_froze_with_a_credential_in_their_config_are_not_merged(
    tmp_path: Path, corpus: Path, secret: str
) -> None:
    runs = [frozen(tmp_path, corpus, name, {"case_id": [case]}) for name, case in (("a", "meal@v2"), ("b", "hotel@v2"))]
    legacy = [legacy_run(cast(Path, run.path), secret, tmp_path / f"old-{run.name}.arrow") for run in runs]
    output = tmp_path / "merged.arrow"
    with pytest.raises(SecretInConfigError, match="holds a credential") as raised:
        merge_repeats(legacy, output, name="pooled", environ=EPOCH)
    assert not any(form in str(raised.value) for form in secret_parts(secret))
    assert not output.exists()
