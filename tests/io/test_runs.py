"""Frozen runs: freeze/load round trips, refusals that write nothing, credentials (in paths too), the shipped
examples."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_compare.compute.freezing import freeze_run
from rag_compare.core.errors import (
    ConfigError,
    ContractError,
    NestingError,
    RunExistsError,
    RunFileError,
    SecretInConfigError,
)
from rag_compare.core.nesting import MAX_DEPTH
from rag_compare.core.protocols import MAX_K
from rag_compare.io.corpus import load_corpus
from rag_compare.io.runfile import serialize, write_atomically
from rag_compare.io.runs import CONFIG_KEY, FORMAT_KEY, json_ready, load_run, write_run
from tests.helpers.credential_shapes import KEY_SHAPES, copied_as, named_with, secret_parts
from tests.helpers.data import EXAMPLE_CORPUS, HANDMADE_RUNS, ROOT, SMALL_CORPUS
from tests.helpers.nesting import DEEP, nested_json

EPOCH = {"SOURCE_DATE_EPOCH": "1795000000"}


def test_freeze_then_load_gives_the_same_run(tmp_path: Path, small_records: Path, small_corpus: Path) -> None:
    output = tmp_path / "base.arrow"
    frozen = freeze_run(small_records, small_corpus, {"top_k": 3, "retriever": {"kind": "bm25"}}, output=output)
    loaded = load_run(output)
    assert loaded.records.equals(frozen.records)
    assert loaded.fingerprint == frozen.fingerprint
    assert dict(loaded.config) == dict(frozen.config)
    assert loaded.name == "base"
    assert loaded.config["top_k"] == 3
    assert loaded.config["retriever"] == {"kind": "bm25"}
    assert loaded.config["corpus"]["fingerprint"] == load_corpus(small_corpus).fingerprint
    assert loaded.config["corpus"]["cases"] == 4
    summary = loaded.to_dict()
    assert summary["cases"] == 3
    assert summary["status_counts"] == {"ok": 2, "failed": 1, "timeout": 0}


def test_source_date_epoch_makes_files_byte_identical(tmp_path: Path, small_records: Path, small_corpus: Path) -> None:
    first, second = tmp_path / "a.arrow", tmp_path / "b.arrow"
    config = {"name": "same"}
    run = freeze_run(small_records, small_corpus, config, output=first, environ=EPOCH)
    freeze_run(small_records, small_corpus, config, output=second, environ=EPOCH)
    assert first.read_bytes() == second.read_bytes()
    assert run.created_at == "2026-11-18T11:06:40+00:00"


def test_in_memory_freeze_writes_nothing(tmp_path: Path, small_records: Path, small_corpus: Path) -> None:
    run = freeze_run(small_records, small_corpus)
    assert run.path is None
    assert run.name == "run"
    assert set(tmp_path.iterdir()) == {small_corpus, small_records}


@pytest.mark.parametrize(
    "line",
    [
        '{"case_id": "nope@v2"}',
        '{"case_id": "meal@v2", "status": "exploded"}',
        '{"case_id": "meal@v2", "retrieved_passage_ids": ["a"], "retrieved_scores": [1.0, 2.0]}',
        '{"case_id": "meal@v2", "latency_ms": "slow"}',
        '{"case_id": "meal@v2"}\n{"case_id": "meal@v2"}',
    ],
    ids=["unknown-case", "unknown-status", "score-length", "wrong-type", "duplicate"],
)
def test_bad_records_are_refused_and_nothing_is_written(tmp_path: Path, small_corpus: Path, line: str) -> None:
    records = tmp_path / "records.jsonl"
    records.write_text(line + "\n")
    output = tmp_path / "run.arrow"
    with pytest.raises(ContractError):
        freeze_run(records, small_corpus, output=output)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["corpus.csv", "records.jsonl"]


def test_existing_output_is_untouched(tmp_path: Path, small_records: Path, small_corpus: Path) -> None:
    output = tmp_path / "run.arrow"
    first = freeze_run(small_records, small_corpus, output=output)
    before = output.read_bytes()
    with pytest.raises(RunExistsError):
        freeze_run(small_records, small_corpus, {"top_k": 9}, output=output)
    assert output.read_bytes() == before
    assert load_run(output).fingerprint == first.fingerprint


@pytest.mark.parametrize("key", ["created_at", "rag_compare_version", "corpus", "records", "merged_from"])
def test_reserved_config_keys_are_refused(small_records: Path, small_corpus: Path, key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        freeze_run(small_records, small_corpus, {key: "mine"})


def test_credentials_never_enter_the_file(tmp_path: Path, small_records: Path, small_corpus: Path) -> None:
    secret = "sk-proj-abcdefghijklmnop"
    environ = {"OPENAI_API_KEY": secret}
    with pytest.raises(SecretInConfigError, match="api_key"):
        freeze_run(small_records, small_corpus, {"generator": {"api_key": "x"}}, environ=environ)
    with pytest.raises(SecretInConfigError, match="OPENAI_API_KEY") as excinfo:
        freeze_run(small_records, small_corpus, {"headers": {"x": secret}}, environ=environ)
    assert secret not in str(excinfo.value)
    run = freeze_run(small_records, small_corpus, {"max_tokens": 512}, output=tmp_path / "ok.arrow", environ=environ)
    assert secret.encode() not in (tmp_path / "ok.arrow").read_bytes()
    assert run.config["max_tokens"] == 512


def test_a_file_of_another_format_version_is_refused(tmp_path: Path, small_corpus: Path) -> None:
    frame = pl.DataFrame({"case_id": ["a"]})
    data, _ = serialize(frame, {FORMAT_KEY: "99", CONFIG_KEY: "{}"})
    path = tmp_path / "future.arrow"
    write_atomically(path, data)
    with pytest.raises(RunFileError, match="format '99'"):
        load_run(path)


def test_a_run_without_the_contract_columns_is_refused(tmp_path: Path) -> None:
    data, _ = serialize(pl.DataFrame({"case_id": ["a"]}), {FORMAT_KEY: "1", CONFIG_KEY: "{}"})
    path = tmp_path / "thin.arrow"
    write_atomically(path, data)
    with pytest.raises(RunFileError, match="lacks or mistypes the columns status"):
        load_run(path)


_ids = st.text(alphabet="abcdefgh-@.", min_size=1, max_size=8)
_text = st.one_of(st.none(), st.text(max_size=40))
_record = st.fixed_dictionaries(
    {
        "status": st.sampled_from(["ok", "failed", "timeout"]),
        "answer": _text,
        "context": _text,
        "retrieved_passage_ids": st.one_of(st.none(), st.lists(_ids, max_size=5, unique=True)),
        "latency_ms": st.one_of(st.none(), st.floats(min_value=0, max_value=1e6, allow_nan=False)),
        "prompt_tokens": st.one_of(st.none(), st.integers(min_value=0, max_value=2**40)),
    }
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=st.lists(_record, min_size=1, max_size=4),
    config=st.fixed_dictionaries(
        {},
        optional={
            "top_k": st.integers(min_value=1, max_value=MAX_K),  # any other top_k is refused
            "model": st.one_of(st.integers(), st.text(max_size=10)),
            "note": st.one_of(st.integers(), st.text(max_size=10)),
        },
    ),
)
def test_freeze_load_round_trip_property(
    tmp_path_factory: pytest.TempPathFactory, records: list[dict[str, object]], config: dict[str, object]
) -> None:
    folder = tmp_path_factory.mktemp("prop")
    corpus = folder / "corpus.csv"
    corpus.write_text(SMALL_CORPUS)
    case_ids = ["hotel@v2", "meal@v2", "ceo@v2", "mileage@v2"]
    frame = pl.DataFrame(
        [{"case_id": case_ids[index], **record} for index, record in enumerate(records)],
        schema_overrides={"retrieved_passage_ids": pl.List(pl.String), "answer": pl.String, "context": pl.String},
    )
    output = folder / "run.arrow"
    frozen = freeze_run(frame, corpus, config, output=output, environ={})
    loaded = load_run(output)
    assert loaded.fingerprint == frozen.fingerprint
    assert loaded.records.equals(frozen.records)
    assert loaded.records.select(
        "case_id", "status", "answer", "context", "retrieved_passage_ids", "latency_ms", "prompt_tokens"
    ).equals(
        frame.select(
            "case_id",
            "status",
            "answer",
            "context",
            "retrieved_passage_ids",
            pl.col("latency_ms").cast(pl.Float64),
            pl.col("prompt_tokens").cast(pl.Int64),
        )
    )
    for key, value in config.items():
        assert loaded.config[key] == value


@pytest.mark.parametrize("name", ["baseline", "candidate"])
def test_shipped_example_runs_match_their_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.chdir(ROOT)
    shipped = load_run(HANDMADE_RUNS / f"{name}.arrow")
    config = tomllib.loads((HANDMADE_RUNS / f"{name}.toml").read_text())
    rebuilt = freeze_run(
        Path("tests/fixtures/handmade/records") / f"{name}.jsonl",
        Path("corpora/handbook.csv"),
        config,
        output=tmp_path / f"{name}.arrow",
        environ=EPOCH,
    )
    assert rebuilt.records.equals(shipped.records)
    assert "repeat" not in rebuilt.records.columns  # records without the column give a run without it
    assert rebuilt.fingerprint == shipped.fingerprint  # the same bytes as the shipped file
    assert json.dumps(dict(rebuilt.config), sort_keys=True, default=dict) == json.dumps(
        dict(shipped.config), sort_keys=True, default=dict
    )
    assert shipped.config["corpus"]["fingerprint"] == load_corpus(EXAMPLE_CORPUS).fingerprint


def test_example_runs_differ_in_one_retrieval_setting() -> None:
    baseline, candidate = (load_run(HANDMADE_RUNS / f"{name}.arrow") for name in ("baseline", "candidate"))
    assert (baseline.config["top_k"], candidate.config["top_k"]) == (3, 5)
    ignored = {"name", "created_at", "records", "rag_compare_version", "top_k", "retriever", "stored_signals"}
    assert {k: v for k, v in baseline.config.items() if k not in ignored} == {
        k: v for k, v in candidate.config.items() if k not in ignored
    }
    assert baseline.to_dict()["status_counts"] == {"ok": 33, "failed": 1, "timeout": 0}
    assert candidate.to_dict()["status_counts"] == {"ok": 31, "failed": 1, "timeout": 1}


SAMPLED = pl.DataFrame(
    {"case_id": ["meal@v2", "hotel@v2", "meal@v2", "meal@v2"], "repeat": [0, 0, 1, 2], "answer": ["a", "b", "c", "d"]}
)
"""meal@v2 sampled three times, hotel@v2 once: 2 cases, 4 samples, up to 3 per case."""


def test_a_run_with_repeats_keeps_them_through_freeze_and_load(tmp_path: Path, small_corpus: Path) -> None:
    output = tmp_path / "sampled.arrow"
    frozen = freeze_run(SAMPLED, small_corpus, {"top_k": 3}, output=output, environ=EPOCH)
    loaded = load_run(output)
    assert loaded.fingerprint == frozen.fingerprint
    assert loaded.records.equals(frozen.records)
    assert loaded.records.select("case_id", "repeat", "answer").equals(SAMPLED)
    assert loaded.repeats == 3
    summary = loaded.to_dict()
    assert (summary["cases"], summary["samples"], summary["repeats"]) == (2, 4, 3)
    assert summary["status_counts"] == {"ok": 4, "failed": 0, "timeout": 0}
    assert "repeat" not in loaded.config  # the number of repeats is seen in the records, not the config
    text = loaded.render()
    assert "2 of 4 in the corpus" in text
    assert "samples      4 (up to 3 per case)" in text


def test_a_run_of_one_sample_per_case_says_nothing_of_repeats(small_records: Path, small_corpus: Path) -> None:
    run = freeze_run(small_records, small_corpus, environ={})
    assert run.repeats == 1
    assert {"samples", "repeats"}.isdisjoint(run.to_dict())
    assert "samples" not in run.render()
    numbered = freeze_run(SAMPLED.filter(pl.col("repeat") == 0), small_corpus, environ={})
    assert numbered.repeats == 1  # a repeat column with one sample per case
    assert numbered.to_dict()["cases"] == 2


def test_a_run_whose_repeat_column_is_mistyped_is_refused(tmp_path: Path, small_corpus: Path) -> None:
    frozen = freeze_run(SAMPLED, small_corpus, environ={})
    path = tmp_path / "mistyped.arrow"
    data, _ = serialize(
        frozen.records.with_columns(pl.col("repeat").cast(pl.String)),
        {FORMAT_KEY: "1", CONFIG_KEY: json.dumps(dict(frozen.config))},
    )
    write_atomically(path, data)
    with pytest.raises(RunFileError, match="mistypes the columns repeat"):
        load_run(path)


def _freezings(tmp_path: Path, records: Path, corpus: Path, secret: str) -> dict[str, tuple[str, dict[str, object]]]:
    """Each way a path holding ``secret`` reaches ``freeze_run``: the parameter named, and its arguments."""
    held = copied_as(records, secret), copied_as(corpus, secret)
    output, folder = tmp_path / "run.arrow", tmp_path / secret
    folder.mkdir()
    (folder / "part-1.jsonl").write_bytes(records.read_bytes())
    return {
        "records": ("records", {"records": held[0], "corpus": corpus, "output": output}),
        "records-folder": ("records", {"records": folder, "corpus": corpus, "output": tmp_path / "run/"}),
        "records-glob": ("records", {"records": f"{folder}/*.jsonl", "corpus": corpus, "output": tmp_path / "run/"}),
        "corpus": ("corpus", {"records": records, "corpus": held[1], "output": output}),
        "loaded-corpus": ("corpus", {"records": records, "corpus": load_corpus(held[1]), "output": None}),
        "output": ("output", {"records": records, "corpus": corpus, "output": named_with(secret, tmp_path, ".arrow")}),
        "output-folder": ("output", {"records": records, "corpus": corpus, "output": f"{tmp_path}/{secret}-run/"}),
    }


@pytest.mark.parametrize(
    "way", ["records", "records-folder", "records-glob", "corpus", "loaded-corpus", "output", "output-folder"]
)
@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_a_path_holding_a_credential_is_refused_before_anything_is_read_or_written(
    tmp_path: Path, small_records: Path, small_corpus: Path, secret: str, way: str
) -> None:
    named, arguments = _freezings(tmp_path, small_records, small_corpus, secret)[way]
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(SecretInConfigError) as raised:
        freeze_run(**arguments)
    assert str(raised.value).startswith(f"the path of `{named}` holds a credential")
    assert not any(form in str(raised.value) for form in secret_parts(secret))
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_no_config_holding_a_credential_is_written_whatever_added_it(tmp_path: Path, secret: str) -> None:
    frozen = load_run(HANDMADE_RUNS / "baseline.arrow")
    config = {**frozen.config, "corpus": {**frozen.config["corpus"], "path": f"corpora/{secret}.csv"}}
    output = tmp_path / "run.arrow"
    with pytest.raises(SecretInConfigError, match=r"'corpus\.path' holds a credential") as raised:
        write_run(frozen.records, config, output)
    assert not any(form in str(raised.value) for form in secret_parts(secret))
    assert not output.exists()


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 1000])
def test_a_run_file_forged_with_a_config_nested_too_deep_is_refused(tmp_path: Path, levels: int) -> None:
    """A fingerprint anyone can recompute: the config is still read within the limit."""
    frozen = load_run(HANDMADE_RUNS / "baseline.arrow")
    config = nested_json({**json_ready(frozen.config), "notes": DEEP}, levels)
    data, _ = serialize(frozen.records, {FORMAT_KEY: "1", CONFIG_KEY: config})
    path = tmp_path / "forged.arrow"
    write_atomically(path, data)
    with pytest.raises(NestingError, match=f"^{path}: its config: nests lists or objects more than {MAX_DEPTH} levels"):
        load_run(path)
