"""The real producers of the files ``import-run`` reads, run offline to make the tests' fixtures.

The Python producers (LlamaIndex, LangChain and OpenInference with the OpenTelemetry SDK, Ragas,
DeepEval, LangSmith) live in their own environment, ``.venv-producers`` (``make test`` makes it from
``tests/producers/requirements.txt``); promptfoo comes from npm into ``tests/producers/node_modules``.
Each script in ``tests/producers/`` writes its files into the directory it is given.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.data import ROOT

PRODUCERS = ROOT / "tests" / "producers"
PRODUCERS_PYTHON = Path(os.environ.get("RAG_COMPARE_PRODUCERS_PYTHON", ROOT / ".venv-producers" / "bin" / "python"))
PHOENIX_PYTHON = Path(os.environ.get("RAG_COMPARE_PHOENIX_PYTHON", ROOT / ".venv-phoenix" / "bin" / "python"))
"""Phoenix has an environment of its own (``.venv-phoenix``, from ``tests/producers/phoenix-requirements.txt``):
its openai conflicts with ragas'."""
PROMPTFOO = PRODUCERS / "node_modules" / ".bin" / "promptfoo"

OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "DO_NOT_TRACK": "1",
    "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "NO",
    "RAGAS_DO_NOT_TRACK": "true",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "PROMPTFOO_DISABLE_TELEMETRY": "1",
    "PROMPTFOO_DISABLE_UPDATE": "1",
    "PROMPTFOO_DISABLE_SHARING": "1",
    "PHOENIX_TELEMETRY_ENABLED": "false",
    "OPENAI_API_KEY": "",
}
"""Settings that keep every producer from reaching a service (telemetry, update checks, model hubs)."""


def produce(script: str, output: Path, *args: str, python: Path = PRODUCERS_PYTHON) -> Path:
    """Run ``tests/producers/<script>`` with the producers' ``python``, writing into ``output``; return it."""
    if not python.exists():
        pytest.fail(f"{python} is missing: `make test` makes the producers' environments (`make producers`)")
    _run(script, [str(python), str(PRODUCERS / script), str(output), *args], output)
    return output


def promptfoo_eval(config: Path, output: Path) -> Path:
    """``promptfoo eval -c config -o output/results.json`` with promptfoo from npm, offline; the results
    file. The test is skipped only where node itself is absent."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed here, so promptfoo cannot run (CI installs it)")
    if not PROMPTFOO.exists():
        pytest.fail(f"{PROMPTFOO} is missing: `make test` installs promptfoo with npm")
    results = output / "results.json"
    command = [str(PROMPTFOO), "eval", "-c", str(config), "-o", str(results), "--no-cache", "--no-share", "--no-write"]
    _run("promptfoo eval", command, output, {"PROMPTFOO_FAILED_TEST_EXIT_CODE": "0"})
    return results


def _run(what: str, command: list[str], output: Path, env: dict[str, str] | None = None) -> None:
    """Run a producer's ``command`` in ``output`` (its home there too), offline; fail the test if it fails."""
    output.mkdir(parents=True, exist_ok=True)
    completed = subprocess.run(
        command,
        check=False,
        cwd=output,
        env={**os.environ, **OFFLINE, "HOME": str(output / "home"), **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )
    if completed.returncode != 0:
        pytest.fail(f"{what} failed ({completed.returncode}):\n{completed.stdout}\n{completed.stderr}")
