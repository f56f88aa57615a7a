"""Deep nesting through the entry point: every kind of input nested past its limit (``core.nesting``: 50 levels;
a config 49) is refused with exit code 2, no traceback, naming the file and the line (a Parquet file: the column;
a cell or an attribute's text: its row); one nested as deep as allowed is read, where the format has room."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import Result

from rag_compare import freeze_run
from rag_compare.core.nesting import MAX_DEPTH
from rag_compare.io.config import CONFIG_DEPTH
from rag_compare.io.run_directory import MANIFEST
from rag_compare.io.runs import load_run
from tests.helpers.data import HANDMADE_RUNS, SMALL_CORPUS, SMALL_RECORDS
from tests.helpers.nesting import DEEP, nested_json, nested_toml, nested_type

Cli = Callable[..., Result]
Input = tuple[list[str | Path], str]
"""The command that reads the input, and where its refusal must point."""
QUESTION = "What is the hotel cap?"
HOTEL = {"case_id": "hotel@v2"}
RUN = HANDMADE_RUNS / "candidate.arrow"


def corpus(tmp: Path) -> Path:
    path = tmp / "corpus.csv"
    path.write_text(SMALL_CORPUS, encoding="utf-8")
    return path


def written(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def freeze(tmp: Path, records: Path, *options: str | Path) -> list[str | Path]:
    return ["freeze", records, "--corpus", corpus(tmp), *options, "--output", tmp / "out.arrow"]


def imported(tmp: Path, source: Path, tool: str) -> list[str | Path]:
    return ["import-run", source, "--from", tool, "--corpus", corpus(tmp), "--output", tmp / "out.arrow"]


def scores(source: Path, *options: str | Path) -> list[str | Path]:
    return ["import-scores", RUN, source, *options, "--output", source.with_suffix(".scores.arrow")]


def parquet(path: Path, columns: dict[str, pa.Array]) -> Path:
    pq.write_table(pa.table(columns), path)
    return path


def records_jsonl(tmp: Path, depth: int) -> Input:
    line = nested_json({"case_id": "ceo@v2", "extra": DEEP}, depth)
    path = written(tmp / "records.jsonl", f"{SMALL_RECORDS}{line}\n")
    return freeze(tmp, path), f"{path}: line 4"


def records_parquet(tmp: Path, depth: int) -> Input:
    extra = pa.array([None], type=nested_type(depth - 1))  # the row is one level
    path = parquet(tmp / "records.parquet", {"case_id": pa.array(["hotel@v2"]), "extra": extra})
    return freeze(tmp, path), f"{path}: column 'extra'"


def records_csv_cell(tmp: Path, depth: int) -> Input:
    cell = nested_json(DEEP, depth).replace('"', '""')
    path = written(tmp / "records.csv", f'case_id,retrieved_passage_ids\nhotel@v2,"{cell}"\n')
    return freeze(tmp, path), f"{path}: not a valid run records file (1 problem; nothing was loaded):\n  - row 1"


def scores_jsonl(tmp: Path, depth: int) -> Input:
    line = nested_json({"case_id": "bike-lease@2026-01", "trust": 0.5, "extra": DEEP}, depth)
    path = written(tmp / "trust.jsonl", f"{line}\n")
    return scores(path, "--evaluator", "e", "--map", "trust=trustworthiness"), f"{path}: line 1"


def config_json(tmp: Path, depth: int) -> Input:
    path = written(tmp / "config.json", '{"model": "m",\n"x": ' + nested_json(DEEP, depth - 1) + "}")
    return freeze(tmp, written(tmp / "records.jsonl", SMALL_RECORDS), "--config", path), f"{path}: line 2"


def config_toml(tmp: Path, depth: int) -> Input:
    path = written(tmp / "config.toml", f'model = "m"\nx = {nested_toml(depth - 1)}\n')
    return freeze(tmp, written(tmp / "records.jsonl", SMALL_RECORDS), "--config", path), f"{path}: line 2"


def config_toml_tables(tmp: Path, depth: int) -> Input:
    path = written(tmp / "config.toml", f'model = "m"\n\n[{".".join(["t"] * (depth - 1))}]\nk = 1\n')
    return freeze(tmp, written(tmp / "records.jsonl", SMALL_RECORDS), "--config", path), f"{path}: line 3"


def set_value(tmp: Path, depth: int) -> Input:
    setting = "x=" + nested_json(DEEP, depth - 1)
    return freeze(tmp, written(tmp / "records.jsonl", SMALL_RECORDS), "--set", setting), "--set: the setting 'x'"


def set_key(tmp: Path, depth: int) -> Input:
    setting = ".".join(["k"] * depth) + "=1"
    return freeze(tmp, written(tmp / "records.jsonl", SMALL_RECORDS), "--set", setting), "--set: the setting 'k.k"


def gate(tmp: Path, depth: int) -> Input:
    text = f'[gate]\nfail_on = ["regressed>1000"]\n\n[notes]\nx = {nested_toml(depth - 2)}\n'
    path = written(tmp / "gate.toml", text)
    return [HANDMADE_RUNS / "baseline.arrow", RUN, "--gate", path], f"{path}: line 5"


def language_file(tmp: Path, depth: int) -> Input:
    path = written(tmp / "xx.toml", f'code = "xx"\nstopwords = {nested_toml(depth - 1)}\n')
    return [HANDMADE_RUNS / "baseline.arrow", RUN, "--language-file", path], f"{path}: line 2"


def promptfoo_results(tmp: Path, depth: int) -> Path:
    result = {
        "vars": {**HOTEL, "question": QUESTION, "extra": DEEP},
        "prompt": {"raw": "[hotel-1] The cap is 150 euros."},
        "response": {"output": "150 euros."},
        "promptIdx": 0,
    }
    return written(tmp / "results.json", nested_json({"results": {"results": [result]}}, depth))


def promptfoo(tmp: Path, depth: int) -> Input:
    path = promptfoo_results(tmp, depth)
    return imported(tmp, path, "promptfoo"), f"{path}: line 1"


def promptfoo_preset(tmp: Path, depth: int) -> Input:
    path = promptfoo_results(tmp, depth)
    return scores(path, "--preset", "promptfoo"), f"{path}: line 1"


def deepeval_run(tmp: Path, depth: int) -> Path:
    case = {"name": "t1", "input": QUESTION, "actualOutput": "150 euros.", "metadata": {**HOTEL, "extra": DEEP}}
    return written(tmp / "latest_test_run.json", nested_json({"testCases": [case]}, depth))


def deepeval(tmp: Path, depth: int) -> Input:
    path = deepeval_run(tmp, depth)
    return imported(tmp, path, "deepeval"), f"{path}: line 1"


def deepeval_preset(tmp: Path, depth: int) -> Input:
    path = deepeval_run(tmp, depth)
    return scores(path, "--preset", "deepeval"), f"{path}: line 1"


def langsmith(tmp: Path, depth: int) -> Input:
    def run(case_id: str, inputs: dict[str, object]) -> dict[str, object]:
        return {"id": case_id, "run_type": "chain", "inputs": inputs, "outputs": {"output": "150 euros."},
                "extra": {"metadata": {"case_id": case_id}}}  # fmt: skip

    first = json.dumps(run("meal@v2", {"question": "What is the meal allowance?"}))
    second = nested_json(run("hotel@v2", {"question": QUESTION, "extra": DEEP}), depth)
    path = written(tmp / "runs.jsonl", f"{first}\n\n{second}\n")
    return imported(tmp, path, "langsmith"), f"{path}: line 3"


def ragas_dataset(tmp: Path, depth: int) -> Path:
    return written(tmp / "dataset.jsonl", nested_json({**HOTEL, "user_input": QUESTION, "extra": DEEP}, depth) + "\n")


def ragas(tmp: Path, depth: int) -> Input:
    path = ragas_dataset(tmp, depth)
    return imported(tmp, path, "ragas"), f"{path}: line 1"


def ragas_preset(tmp: Path, depth: int) -> Input:
    path = ragas_dataset(tmp, depth)
    return scores(path, "--preset", "ragas"), f"{path}: line 1"


def ragas_csv_cell(tmp: Path, depth: int) -> Input:
    cell = nested_json(DEEP, depth).replace('"', '""')
    path = written(tmp / "dataset.csv", f'case_id,user_input,retrieved_contexts\nhotel@v2,{QUESTION},"{cell}"\n')
    return imported(tmp, path, "ragas"), f"{path}: not a valid ragas file (1 problem; nothing was loaded):\n  - row 1"


def span(attributes: dict[str, object], **fields: object) -> dict[str, object]:
    """An OTLP span of an LLM call that is a trace's root, asking ``QUESTION`` of case hotel@v2."""
    values = {"openinference.span.kind": {"stringValue": "LLM"}, "input.value": {"stringValue": QUESTION}}
    values |= {"metadata": {"stringValue": json.dumps(HOTEL)}, **attributes}
    return {"traceId": "ab" * 16, "spanId": "cd" * 8, "startTimeUnixNano": "1", "endTimeUnixNano": "2",
            "attributes": [{"key": key, "value": value} for key, value in values.items()], **fields}  # fmt: skip


def otlp_file(tmp: Path, line: str) -> Path:
    return written(tmp / "traces.jsonl", f"{line}\n")


def request(span: dict[str, object]) -> dict[str, object]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


def otlp(tmp: Path, depth: int) -> Input:
    path = otlp_file(tmp, nested_json(request(span({}, extra=DEEP)), depth))
    return imported(tmp, path, "openinference"), f"{path}: line 1"


def otlp_value(tmp: Path, depth: int) -> Input:
    """An attribute whose OTLP value is arrays in arrays (3 levels each; the attribute's value is at level 10),
    the levels they leave in a field no reader looks at."""
    arrays = (depth - 11) // 3
    value = '{"stringValue": "s", "pad": ' + nested_json(DEEP, depth - 10 - 3 * arrays) + "}"
    for _ in range(arrays):
        value = '{"arrayValue": {"values": [' + value + "]}}"
    path = otlp_file(tmp, json.dumps(request(span({"tags": DEEP}))).replace(json.dumps(DEEP), value))
    return imported(tmp, path, "openinference"), f"{path}: line 1"


def otlp_text(tmp: Path, depth: int) -> Input:
    text = nested_json({**HOTEL, "extra": DEEP}, depth)
    path = otlp_file(tmp, json.dumps(request(span({"metadata": {"stringValue": text}}))))
    expected = "expected a trace whose attributes can be read"
    return imported(
        tmp, path, "openinference"
    ), f"{path}: not a valid openinference file (1 problem; nothing was loaded):\n  - row 1: {expected}"


PHOENIX_ROW = {
    "context.trace_id": "ab" * 16,
    "context.span_id": "cd" * 8,
    "span_kind": "LLM",
    "start_time": "2026-01-01T00:00:00Z",
    "end_time": "2026-01-01T00:00:01Z",
    "attributes.input.value": QUESTION,
    "attributes.metadata": json.dumps(HOTEL),
}


def phoenix(tmp: Path, depth: int) -> Input:
    path = written(tmp / "spans.jsonl", nested_json({**PHOENIX_ROW, "attributes.extra": DEEP}, depth) + "\n")
    return imported(tmp, path, "openinference"), f"{path}: line 1"


def phoenix_parquet(tmp: Path, depth: int) -> Input:
    columns = {name: pa.array([value]) for name, value in PHOENIX_ROW.items()}
    extra = pa.array([None], type=nested_type(depth - 1))
    path = parquet(tmp / "spans.parquet", {**columns, "attributes.extra": extra})
    return imported(tmp, path, "openinference"), f"{path}: column 'attributes.extra'"


def manifest(tmp: Path, depth: int) -> Input:
    run = tmp / "run"
    freeze_run(written(tmp / "records.jsonl", SMALL_RECORDS), corpus(tmp), output=f"{run}/")
    path = run / MANIFEST
    path.write_text(path.read_text(encoding="utf-8")[:-1] + ', "notes": ' + nested_json(DEEP, depth - 1) + "}")
    return ["show", run], f"{path}: line 1"


CASES: dict[str, tuple[Callable[[Path, int], Input], int, bool]] = {
    # name: (the input, its limit, whether one as deep as its limit is read: the format has room for it)
    "records-jsonl": (records_jsonl, MAX_DEPTH, True),
    "records-parquet": (records_parquet, MAX_DEPTH, True),
    "records-csv-cell": (records_csv_cell, MAX_DEPTH, False),
    "scores-jsonl": (scores_jsonl, MAX_DEPTH, True),
    "config-json": (config_json, CONFIG_DEPTH, True),
    "config-toml": (config_toml, CONFIG_DEPTH, True),
    "config-toml-tables": (config_toml_tables, CONFIG_DEPTH, True),
    "set-value": (set_value, CONFIG_DEPTH, True),
    "set-key": (set_key, CONFIG_DEPTH, True),
    "gate-file": (gate, MAX_DEPTH, True),
    "language-file": (language_file, MAX_DEPTH, False),
    "promptfoo": (promptfoo, MAX_DEPTH, True),
    "promptfoo-preset": (promptfoo_preset, MAX_DEPTH, False),
    "deepeval": (deepeval, MAX_DEPTH, True),
    "deepeval-preset": (deepeval_preset, MAX_DEPTH, False),
    "langsmith": (langsmith, MAX_DEPTH, True),
    "ragas": (ragas, MAX_DEPTH, True),
    "ragas-preset": (ragas_preset, MAX_DEPTH, False),
    "ragas-csv-cell": (ragas_csv_cell, MAX_DEPTH, False),
    "otlp": (otlp, MAX_DEPTH, True),
    "otlp-value": (otlp_value, MAX_DEPTH, True),
    "otlp-attribute-text": (otlp_text, MAX_DEPTH, True),
    "phoenix-jsonl": (phoenix, MAX_DEPTH, True),
    "phoenix-parquet": (phoenix_parquet, MAX_DEPTH, True),
    "run-directory-manifest": (manifest, MAX_DEPTH, False),  # a manifest changed by hand is refused anyway
}


@pytest.mark.parametrize("depth", ["past-limit", 1000])
@pytest.mark.parametrize("name", CASES)
def test_an_input_nested_past_its_limit_is_refused(cli: Cli, tmp_path: Path, name: str, depth: str | int) -> None:
    make, limit, _ = CASES[name]
    args, where = make(tmp_path, limit + 1 if depth == "past-limit" else int(depth))
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert where in result.stderr
    assert "not a valid" in where or f"more than {limit} levels deep" in result.stderr


@pytest.mark.parametrize("name", [name for name, (_, _, room) in CASES.items() if room])
def test_an_input_nested_as_deep_as_allowed_is_read(cli: Cli, tmp_path: Path, name: str) -> None:
    make, limit, _ = CASES[name]
    args, _ = make(tmp_path, limit)
    result = cli(*args)
    assert result.exit_code == 0, result.output


def test_a_run_of_the_deepest_config_is_read_back(cli: Cli, tmp_path: Path) -> None:
    """A run directory's manifest holds the config one level down: at ``CONFIG_DEPTH``, it is ``MAX_DEPTH`` deep."""
    args, _ = config_json(tmp_path, CONFIG_DEPTH)
    for output in (tmp_path / "run.arrow", tmp_path / "run"):
        assert cli(*args[:-1], f"{output}/" if output.suffix == "" else output).exit_code == 0
        assert cli("show", output).exit_code == 0
        assert load_run(output).config["x"] is not None
