"""Tests for ``rag_compare.io.config``: reading, ``--set`` overrides, flattening and credential checks, of the
paths stored too."""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from rag_compare.core.errors import ConfigError, NestingError, SecretInConfigError
from rag_compare.core.nesting import MAX_DEPTH
from rag_compare.io.config import (
    CONFIG_DEPTH,
    apply_assignments,
    check_config,
    flatten,
    read_config_file,
    refuse_credential_paths,
)
from rag_compare.io.runs import json_ready
from tests.helpers.credential_shapes import KEY_SHAPES, OPENAI_KEY, ORDINARY_TEXTS, secret_parts
from tests.helpers.nesting import DEEP, nested_json

Cli = Callable[..., Result]

SECRET = "sk-test-1234567890"
ENV = {"OPENAI_API_KEY": SECRET}


def test_read_toml_with_nested_tables(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text(
        'name = "baseline"\ntop_k = 5\n\n[retriever]\nk = 3\n\n[generator.sampling]\ntemperature = 0.2\n',
        encoding="utf-8",
    )
    assert read_config_file(path) == {
        "name": "baseline",
        "top_k": 5,
        "retriever": {"k": 3},
        "generator": {"sampling": {"temperature": 0.2}},
    }


def test_read_json_with_nested_objects(tmp_path: Path) -> None:
    path = tmp_path / "run.JSON"
    path.write_text('{"name": "v2", "retriever": {"k": 3, "filters": {"lang": "en"}}}', encoding="utf-8")
    assert read_config_file(path) == {"name": "v2", "retriever": {"k": 3, "filters": {"lang": "en"}}}


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("run.toml", "top_k = \n", ("is not valid TOML", "Fix the syntax")),
        ("run.json", '{\n  "top_k": 5,\n}\n', ("is not valid JSON", "line 3")),
        ("run.json", '[{"top_k": 5}]', ("must hold one JSON object", "not list")),
        ("run.yaml", "top_k: 5\n", ("unknown config type '.yaml'", ".toml or .json")),
        ("absent.toml", None, ("{path}", "no such config file")),
        ("run.toml", b'name = "caf\xe9"\n', ("is not UTF-8", "Save the config as UTF-8")),
    ],
    ids=["toml syntax", "json syntax", "json list", "unknown suffix", "missing", "not utf-8"],
)
def test_a_config_file_that_cannot_be_read_is_refused_saying_why(
    tmp_path: Path, name: str, content: str | bytes | None, expected: tuple[str, str]
) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError) as excinfo:
        read_config_file(path)
    assert [part for part in expected if part.format(path=path) not in str(excinfo.value)] == []


@pytest.mark.parametrize(
    ("assignment", "key", "expected"),
    [
        ("top_k=5", "top_k", 5),
        ("temperature=0.2", "temperature", 0.2),
        ("flag=true", "flag", True),
        ("name=baseline", "name", "baseline"),
        ("x=[1,2]", "x", [1, 2]),
        ("prompt=a=b", "prompt", "a=b"),
        ("empty=", "empty", ""),
    ],
)
def test_apply_assignment_value_types(assignment: str, key: str, expected: Any) -> None:
    result = apply_assignments({}, [assignment])
    assert result == {key: expected}
    assert type(result[key]) is type(expected)


def test_dotted_key_nests_and_keeps_siblings() -> None:
    config = {"retriever": {"k": 5, "index": "bm25"}}
    result = apply_assignments(config, ["retriever.k=3", "generator.sampling.top_p=0.9"])
    assert result == {"retriever": {"k": 3, "index": "bm25"}, "generator": {"sampling": {"top_p": 0.9}}}


@pytest.mark.parametrize("assignment", ["noequals", "=5", "a..b=1", ".a=1", "a.=1", " =1"])
def test_malformed_assignment_is_refused(assignment: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        apply_assignments({}, [assignment])
    message = str(excinfo.value)
    assert "KEY=VALUE" in message
    assert repr(assignment) in message


def test_setting_a_key_under_a_scalar_is_refused() -> None:
    with pytest.raises(ConfigError) as excinfo:
        apply_assignments({"top_k": 5}, ["top_k.inner=1"])
    assert "'top_k' is a value, not a table" in str(excinfo.value)


def test_apply_assignments_does_not_modify_input() -> None:
    config: dict[str, Any] = {"retriever": {"k": 5, "filters": {"lang": "en"}}, "tags": ["a"]}
    before = copy.deepcopy(config)
    result = apply_assignments(config, ["retriever.k=3", "retriever.filters.lang=fr", "new=1"])
    assert config == before
    result["tags"].append("b")
    assert config["tags"] == ["a"]
    assert result["retriever"]["filters"] is not config["retriever"]["filters"]


def test_flatten_nested_config_keeps_empty_tables() -> None:
    config = {
        "name": "v1",
        "retriever": {"k": 5, "filters": {}},
        "generator": {"sampling": {"t": 0.2}},
        "x": {},
    }
    assert flatten(config) == {
        "name": "v1",
        "retriever.k": 5,
        "retriever.filters": {},
        "generator.sampling.t": 0.2,
        "x": {},
    }


def test_flatten_keeps_lists_as_values() -> None:
    assert flatten({"a": {"ids": [1, 2]}}) == {"a.ids": [1, 2]}


@pytest.mark.parametrize(
    "config",
    [
        pytest.param({"api_key": "x"}, id="top-level"),
        pytest.param({"generator": {"api_key": "x"}}, id="nested"),
        pytest.param({"a": {"b": {"clientSecret": 1}}}, id="deep-camel"),
    ],
)
def test_credential_key_is_refused_at_any_depth(config: dict[str, Any]) -> None:
    with pytest.raises(SecretInConfigError) as excinfo:
        check_config(config, environ={})
    assert "named like a credential" in str(excinfo.value)


@pytest.mark.parametrize(
    ("config", "key"),
    [
        pytest.param({"note": SECRET}, "note", id="equal"),
        pytest.param({"generator": {"header": f"key={SECRET};"}}, "generator.header", id="containing"),
        pytest.param({"headers": ["x", SECRET]}, "headers[1]", id="in-list"),
    ],
)
def test_env_secret_value_is_refused_without_showing_it(config: dict[str, Any], key: str) -> None:
    with pytest.raises(SecretInConfigError) as excinfo:
        check_config(config, environ=ENV)
    message = str(excinfo.value)
    assert f"'{key}'" in message
    assert "OPENAI_API_KEY" in message
    assert SECRET not in message


def test_bearer_value_is_refused_without_showing_it() -> None:
    with pytest.raises(SecretInConfigError) as excinfo:
        check_config({"headers": {"x": "Bearer xyz12345678"}}, environ={})
    message = str(excinfo.value)
    assert "'headers.x' holds a credential (an API key or an authorization header)" in message
    assert "xyz12345678" not in message


def test_credential_key_message_does_not_show_its_value() -> None:
    with pytest.raises(SecretInConfigError) as excinfo:
        check_config({"generator": {"api_key": SECRET}}, environ=ENV)
    message = str(excinfo.value)
    assert "'generator.api_key'" in message
    assert SECRET not in message


def test_ordinary_config_is_accepted() -> None:
    config = {"max_tokens": 512, "generator": {"model": "gpt", "prompt_tokens": 100}, "name": "sk-test"}
    assert check_config(config, environ=ENV) is None


def test_secret_error_is_a_config_error() -> None:
    assert issubclass(SecretInConfigError, ConfigError)


def _freeze(cli: Cli, tmp_path: Path, records: Path, corpus: Path, *options: str | Path) -> Result:
    output = tmp_path / "run.arrow"
    result = cli("freeze", records, "--corpus", corpus, *options, "--output", output)
    assert result.exit_code == 2, result.output
    assert not output.exists()
    return result


@pytest.mark.parametrize(
    ("value", "where"),
    [
        pytest.param(
            [{"name": "search", "auth": {"user": "me"}}],
            "'tools[0].auth' is named like a credential",
            id="key-in-a-dict-in-a-list",
        ),
        pytest.param(
            ["x", {"header": KEY_SHAPES["aws"]}], "'tools[1].header' holds a credential", id="value-in-a-list"
        ),
        pytest.param({"deep": [[OPENAI_KEY]]}, "'tools.deep[0][0]' holds a credential", id="nested-lists"),
        pytest.param({OPENAI_KEY: 1}, "'tools.sk-…(redacted)' is a key holding a credential", id="key-is-a-secret"),
    ],
)
def test_freeze_refuses_credentials_anywhere_in_the_config(
    cli: Cli, tmp_path: Path, small_records: Path, small_corpus: Path, value: Any, where: str
) -> None:
    result = _freeze(cli, tmp_path, small_records, small_corpus, "--set", f"tools={json.dumps(value)}")
    assert where in result.output
    assert OPENAI_KEY not in result.output
    assert KEY_SHAPES["aws"] not in result.output


@pytest.mark.parametrize(
    "assignments",
    [
        pytest.param(["a=1", f"a.b={OPENAI_KEY}"], id="under-a-value"),
        pytest.param([OPENAI_KEY], id="no-equals"),
        pytest.param([f"x=[{OPENAI_KEY}"], id="not-json"),
    ],
)
def test_a_failed_set_never_prints_its_value(
    cli: Cli, tmp_path: Path, small_records: Path, small_corpus: Path, assignments: list[str]
) -> None:
    options = [word for assignment in assignments for word in ("--set", assignment)]
    result = _freeze(cli, tmp_path, small_records, small_corpus, *options)
    assert OPENAI_KEY not in result.output
    assert "Ab3dEf6hIj" not in result.output


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999", "[1, NaN]", '{"t": Infinity}'])
def test_set_refuses_a_number_that_is_not_finite(
    cli: Cli, tmp_path: Path, small_records: Path, small_corpus: Path, value: str
) -> None:
    result = _freeze(cli, tmp_path, small_records, small_corpus, "--set", f"generator.temperature={value}")
    assert "--set generator.temperature=" in result.output
    assert "not a finite number" in result.output


@pytest.mark.parametrize(
    ("name", "text", "key"),
    [
        pytest.param("run.toml", "[generator]\ntemperature = nan\n", "generator.temperature", id="toml-nan"),
        pytest.param("run.toml", "budgets = [1.0, -inf]\n", "budgets[1]", id="toml-inf-in-a-list"),
        pytest.param("run.json", '{"generator": {"temperature": NaN}}', "generator.temperature", id="json-nan"),
        pytest.param("run.json", '{"top_p": 1e400}', "top_p", id="json-overflow"),
    ],
)
def test_config_files_refuse_numbers_that_are_not_finite(
    cli: Cli, tmp_path: Path, small_records: Path, small_corpus: Path, name: str, text: str, key: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    result = _freeze(cli, tmp_path, small_records, small_corpus, "--config", path)
    assert f"{path}: '{key}' is not a finite number" in result.output


def test_check_config_refuses_numbers_that_are_not_finite() -> None:
    with pytest.raises(ConfigError, match=r"'a\.b\[0\]' is not a finite number"):
        check_config({"a": {"b": [float("nan")]}}, environ={})


def _given(secret: str) -> dict[str, object]:
    """The ways a path holding ``secret`` is given: as text, as a path, in a folder's name, in a list."""
    return {
        "text": f"corpus-{secret}.csv",
        "path": Path(f"corpus_{secret}.csv"),
        "folder": Path("data") / secret / "corpus.csv",
        "list": ["ok.csv", f"data/{secret}.csv"],
    }


@pytest.mark.parametrize("how", ["text", "path", "folder", "list"])
@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_a_path_holding_a_credential_is_refused_naming_its_parameter_not_the_path(secret: str, how: str) -> None:
    given = _given(secret)[how]
    with pytest.raises(SecretInConfigError) as raised:
        refuse_credential_paths({"records": "records.jsonl", "corpus": given, "output": None}, environ={})
    message = str(raised.value)
    which = "path 2 of `corpus`" if how == "list" else "the path of `corpus`"
    assert message.startswith(f"{which} holds a credential (an API key or an authorization header).")
    assert "rename the file or its folder" in message
    assert not any(form in message for form in secret_parts(secret))


def test_a_path_holding_the_value_of_a_credential_variable_is_refused_naming_the_variable() -> None:
    with pytest.raises(SecretInConfigError, match="the path of `output` holds the value of OPENAI_API_KEY"):
        refuse_credential_paths({"output": f"runs/{SECRET}.arrow"}, environ=ENV)


def test_paths_without_credentials_and_values_that_are_no_paths_pass() -> None:
    import polars as pl

    ordinary = {f"path {number}": f"runs/{text}.arrow" for number, text in enumerate(ORDINARY_TEXTS)}
    frame = pl.DataFrame({"case_id": [OPENAI_KEY]})  # a frame's cells are scanned where it is read, not here
    assert refuse_credential_paths({**ordinary, "records": frame, "output": None, "runs": []}, environ=ENV) is None


def _nested(levels: int) -> dict[str, Any]:
    """A config nesting ``levels`` levels, built without recursion."""
    config: dict[str, Any] = {"leaf": 1}
    for _ in range(levels - 1):
        config = {"a": config}
    return config


@pytest.mark.parametrize("levels", [CONFIG_DEPTH + 1, 100_000])
def test_a_config_nested_too_deep_is_refused_before_anything_walks_it(levels: int) -> None:
    config = _nested(levels)
    with pytest.raises(NestingError, match=f"^the config: nests lists or objects more than {CONFIG_DEPTH} levels"):
        check_config(config, environ={})
    with pytest.raises(NestingError, match=f"^`config`: nests lists or objects more than {CONFIG_DEPTH} levels"):
        apply_assignments(config, [])


@pytest.mark.parametrize(
    "assignment",
    ["a." * CONFIG_DEPTH + "b=1", "a=" + "[" * CONFIG_DEPTH + "]" * CONFIG_DEPTH, "a=" + "[" * 5000],
    ids=["dotted-key", "value", "value-never-closed"],
)
def test_an_assignment_nesting_the_config_too_deep_is_refused(assignment: str) -> None:
    with pytest.raises(NestingError, match=r"^`assignments`: the setting 'a.*more than 49 levels deep"):
        apply_assignments({}, [assignment])


def test_a_config_file_as_deep_as_a_config_may_be_is_read_and_one_level_more_refused(tmp_path: Path) -> None:
    """A run directory's manifest holds the config one level down, so a config nests one level fewer than a file."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_nested(CONFIG_DEPTH)), encoding="utf-8")
    assert read_config_file(path) == _nested(CONFIG_DEPTH)
    path.write_text(json.dumps(_nested(CONFIG_DEPTH + 1), indent=1), encoding="utf-8")
    with pytest.raises(NestingError, match=f"^{path}: line {CONFIG_DEPTH + 1}: .* more than {CONFIG_DEPTH} levels"):
        read_config_file(path)


def test_the_walks_over_a_config_as_deep_as_allowed_stay_inside_the_recursion_limit() -> None:
    """Checked, flattened and made ready for JSON where most of the stack is used already."""
    config = {"model": "m", "x": json.loads(nested_json(DEEP, CONFIG_DEPTH - 1))}

    def deep_in_the_stack(frames: int) -> None:
        if frames:
            deep_in_the_stack(frames - 1)
            return
        check_config(apply_assignments(config, ["top_k=5"]), environ={})
        assert flatten(config)["model"] == "m"
        assert json.loads(json.dumps(json_ready(config))) == config

    deep_in_the_stack(sys.getrecursionlimit() - 5 * MAX_DEPTH)
