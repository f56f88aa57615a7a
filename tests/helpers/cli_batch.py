"""Run many command lines through the entry point in one process, one JSON line out per command as it ends.

``python -m tests.helpers.cli_batch COMMANDS.json`` reads ``{name: [arg, ...]}`` and prints
``{"name", "exit_code", "stderr", "unhandled"}`` (an exception that is not an exit, if any) for each, flushed at once: a caller that times the process out still
knows which commands ended, and so which one did not (``run_batch``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.helpers.data import ROOT

__all__ = ["run_batch"]


def run_batch(
    commands: Mapping[str, Sequence[str]], folder: Path, timeout: float, env: Mapping[str, str]
) -> dict[str, dict[str, Any]]:
    """The outcome of each command that ended within ``timeout`` seconds (all of them together), by name;
    ``env`` is set in the process besides the environment."""
    listed = folder / "commands.json"
    listed.write_text(json.dumps(commands))
    command = [sys.executable, "-m", "tests.helpers.cli_batch", str(listed)]
    environment = {**os.environ, **env}
    try:
        done = subprocess.run(
            command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=timeout, check=False
        )
        output = done.stdout
    except subprocess.TimeoutExpired as expired:
        output = expired.stdout.decode() if isinstance(expired.stdout, bytes) else expired.stdout or ""
    outcomes = [json.loads(line) for line in output.splitlines()]
    return {outcome["name"]: outcome for outcome in outcomes}


def _main(listed: str) -> None:
    from click.testing import CliRunner

    from rag_compare.cli.main import main

    for name, args in json.loads(Path(listed).read_text()).items():
        result = CliRunner().invoke(main, args)
        unhandled = None if isinstance(result.exception, SystemExit | None) else repr(result.exception)
        outcome = {"name": name, "exit_code": result.exit_code, "stderr": result.stderr, "unhandled": unhandled}
        print(json.dumps(outcome), flush=True)


if __name__ == "__main__":
    _main(sys.argv[1])
