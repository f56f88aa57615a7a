"""The endpoint client: where keys may be sent, and a name for the endpoint that holds no credentials."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from rag_compare.core.errors import ConfigError
from rag_compare.llm.endpoint import INSECURE_KEY_ENV, endpoint_name, open_client
from rag_compare.pipeline.checkpoint import checkpoint_path
from tests.helpers.chat_server import ChatServer
from tests.helpers.credential_shapes import OPENAI_KEY
from tests.helpers.data import EXAMPLE_CORPUS, HANDMADE_RUNS, ROOT

Cli = Callable[..., Result]
PASSAGES = ROOT / "corpora" / "handbook_passages.csv"


def _capture(cli: Cli, base_url: str, output: Path, env: dict[str, str]) -> Result:
    return cli("capture", EXAMPLE_CORPUS, "--passages", PASSAGES, "--top-k", 2, "--generator", "openai",
               "--model", "m", "--base-url", base_url, "--max-retries", 0, "--output", output, env=env)  # fmt: skip


def test_a_key_is_not_sent_to_plain_http_on_another_host(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "run.arrow"
    result = _capture(cli, "http://example.com/v1", output, {"OPENAI_API_KEY": OPENAI_KEY})
    assert result.exit_code == 2, result.output
    assert "http://example.com/v1" in result.output
    assert f"{INSECURE_KEY_ENV}=1" in result.output
    assert OPENAI_KEY not in result.output
    assert not output.exists()
    assert not checkpoint_path(output).exists()  # refused before the capture started


def test_a_judge_key_is_not_sent_to_plain_http_on_another_host(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "scores.arrow"
    result = cli("score", HANDMADE_RUNS / "candidate.arrow", "--model", "m", "--base-url", "http://10.1.2.3:8000/v1",
                 "--no-cache", "--output", output, env={"OPENAI_API_KEY": OPENAI_KEY})  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "http://10.1.2.3:8000/v1" in result.output
    assert INSECURE_KEY_ENV in result.output
    assert not output.exists()


def test_a_key_may_go_to_plain_http_on_loopback(cli: Cli, tmp_path: Path) -> None:
    output = tmp_path / "run.arrow"
    with ChatServer() as server:
        result = _capture(cli, server.base_url, output, {"OPENAI_API_KEY": OPENAI_KEY})
        assert server.count() > 0
    assert result.exit_code == 0, result.output
    assert output.exists()


@pytest.mark.parametrize(
    "base_url",
    ["https://example.com/v1", "http://localhost:8000/v1", "http://127.0.0.2/v1", "http://[::1]:8000/v1", None],
)
def test_keys_may_go_to_https_and_loopback(base_url: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(INSECURE_KEY_ENV, raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert open_client(base_url, OPENAI_KEY).api_key == OPENAI_KEY


@pytest.mark.parametrize("base_url", ["http://example.com/v1", "HTTP://10.0.0.5:8000/v1", "http://localhost.evil.com"])
def test_a_key_for_plain_http_elsewhere_is_refused(base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(INSECURE_KEY_ENV, raising=False)
    with pytest.raises(ConfigError, match=INSECURE_KEY_ENV) as excinfo:
        open_client(base_url, OPENAI_KEY)
    assert OPENAI_KEY not in str(excinfo.value)


def test_the_environment_base_url_is_checked_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(INSECURE_KEY_ENV, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://user:pw@example.com/v1")
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    with pytest.raises(ConfigError, match=r"http://example\.com/v1") as excinfo:
        open_client()
    assert "pw@" not in str(excinfo.value)


def test_the_opt_in_allows_plain_http(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(INSECURE_KEY_ENV, "1")
    assert open_client("http://example.com/v1", OPENAI_KEY).api_key == OPENAI_KEY


def test_plain_http_without_a_key_is_fine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(INSECURE_KEY_ENV, raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert open_client("http://example.com/v1").api_key == "unused"


def test_endpoint_name_drops_user_and_password() -> None:
    assert endpoint_name(base_url="http://user:secret@127.0.0.1:9/v1/") == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("base_url", "problem"),
    [
        ("http://[::1/v1", "Invalid IPv6 URL"),
        ("http://localhost:99999/v1", "Port out of range 0-65535"),
        ("ftp://example.com/v1", "not an http:// or https:// URL with a host"),
        ("localhost:8000", "not an http:// or https:// URL with a host"),
    ],
)
def test_an_endpoint_that_is_not_a_url_exits_2_before_anything_runs(
    cli: Cli, tmp_path: Path, base_url: str, problem: str
) -> None:
    for command in ("capture", "score"):
        output = tmp_path / f"{command}.arrow"
        if command == "capture":
            result = _capture(cli, base_url, output, {})
        else:
            result = cli("score", HANDMADE_RUNS / "candidate.arrow", "--model", "m", "--base-url", base_url,
                         "--no-cache", "--output", output)  # fmt: skip
        assert result.exit_code == 2, result.output
        assert f"the endpoint '{base_url}' is not usable ({problem})" in result.stderr
        assert not output.exists()


def test_endpoint_name_of_a_broken_url_drops_user_and_password() -> None:
    assert endpoint_name(base_url="http://user:secret@[::1/v1/") == "http://[::1/v1"
