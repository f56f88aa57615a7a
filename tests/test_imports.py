"""``import rag_compare`` and ``rag-compare --help`` load no heavy dependency (each checked in a fresh process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.data import HANDMADE_RUNS, ROOT

HEAVY = (
    "polars",
    "pyarrow",
    "pandera",
    "numpy",
    "openai",
    "jinja2",
    "bm25s",
    "rich",
    "Stemmer",
    "jsonschema",
    "ray",
    "pandas",
)

_LOADED = f"sorted({{name.split('.')[0] for name in sys.modules}} & set({HEAVY!r}))"

_CLI = f"""
import json, os, sys
from rag_compare.cli.main import main

exit = os._exit


def report(code):
    print(json.dumps({{"code": code, "loaded": {_LOADED}}}), flush=True)
    exit(0)


os._exit = report
sys.argv = ["rag-compare", *sys.argv[1:]]
main()
"""


def _python(code: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False, cwd=cwd, timeout=60
    )


def test_import_rag_compare_loads_no_heavy_dependency() -> None:
    result = _python(f"import sys, json, rag_compare\nrag_compare.__all__\nprint(json.dumps({_LOADED}))")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_a_public_name_loads_its_dependencies_on_first_use() -> None:
    result = _python(f"import sys, json\nfrom rag_compare import load_run\nprint(json.dumps({_LOADED}))")
    assert result.returncode == 0, result.stderr
    assert "polars" in json.loads(result.stdout)


@pytest.mark.parametrize(
    "args", [["--help"], ["score", "--help"], ["capture", "--help"], ["compare", "--help"], ["import-run", "--help"]]
)
def test_help_loads_no_heavy_dependency(args: list[str]) -> None:
    result = _python(_CLI, *args)
    assert result.returncode == 0, result.stderr
    help_text, _, last = result.stdout.rstrip("\n").rpartition("\n")
    assert help_text.startswith("Usage: rag-compare")
    assert json.loads(last) == {"code": 0, "loaded": []}


def test_comparing_frozen_runs_loads_no_validation_library_nor_pandas(tmp_path: Path) -> None:
    """Pandera validates input files; a comparison of frozen runs (checked by their fingerprints) that reads no
    other file needs none: here their knowledge base is not where they say (a relative path, and this runs in
    another folder). Nor pandas (a second's import), which an Arrow table made to read a run file's schema
    would load."""
    runs = [str(HANDMADE_RUNS / f"{side}.arrow") for side in ("baseline", "candidate")]
    code = f"import sys, json\nfrom rag_compare import compare\ncompare(*{runs!r})\nprint(json.dumps({_LOADED}))"
    result = _python(code, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout)
    assert "polars" in loaded
    assert "pandera" not in loaded
    assert "pandas" not in loaded
