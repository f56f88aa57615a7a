"""A scores or pairs file forged with its fingerprint made again to match is refused whole, by every reader, when
what it says of itself is not what freezing writes: a message and exit code 2, never a ``KeyError``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from rag_compare.core.errors import PairsError, ScoresError
from rag_compare.io.pairs import PAIRS_KEY, judge_pairs, load_pairs
from rag_compare.io.runfile import freeze_frame, read_frozen
from rag_compare.io.runs import load_run
from rag_compare.io.scores import SCORES_KEY, load_scores
from tests.helpers.data import HANDMADE_RUNS
from tests.helpers.pairs import BASELINE, CANDIDATE, CORPUS, ScriptedPairJudge

Cli = Callable[..., Result]
FORGERIES: dict[str, tuple[Callable[[dict[str, Any]], object], str]] = {
    # what is done to the description, and the part of it the message names
    "no evaluator": (lambda described: described.pop("evaluator"), "the description: 'evaluator' is a required"),
    "evaluator a list": (lambda described: described.update(evaluator=[]), "evaluator: [] is not of type 'object'"),
    "no evaluator name": (lambda described: described["evaluator"].pop("name"), "evaluator: 'name' is a required"),
    "config a string": (lambda described: described["evaluator"].update(config="x"), "evaluator/config: 'x'"),
    "created_at a number": (lambda described: described.update(created_at=5), "created_at: 5 is not of type"),
    "another object": (lambda described: described.clear() or described.update(x=1), "is a required property"),
}
"""Each forgery of a description, and what the message says of it."""
RUN_FORGERIES: dict[str, tuple[Callable[[dict[str, Any]], object], str]] = {
    "no fingerprint": (lambda run: run.pop("fingerprint"), "'fingerprint' is a required property"),
    "fingerprint short": (lambda run: run.update(fingerprint="abc"), "'abc' does not match"),
    "path a number": (lambda run: run.update(path=3), "path: 3 is not of type"),
}


def _forged(path: Path, key: str, forge: Callable[[dict[str, Any]], object], run_key: str | None = None) -> Path:
    """A copy of the frozen file at ``path`` whose description under ``key`` is forged, fingerprinted again."""
    frame, metadata, _ = read_frozen(path)
    described = json.loads(metadata[key])
    forge(described if run_key is None else described[run_key])
    forged = path.with_name(f"forged-{path.name}")
    freeze_frame(frame, {**metadata, key: json.dumps(described)}, forged)
    return forged


@pytest.fixture
def scores(cli: Cli, tmp_path: Path) -> Path:
    output = tmp_path / "s.arrow"
    assert cli("score", HANDMADE_RUNS / "candidate.arrow", "--judge", "lexical", "--output", output).exit_code == 0
    return output


@pytest.fixture
def pairs(tmp_path: Path) -> Path:
    from rag_compare import freeze_run

    runs = (
        freeze_run(BASELINE, CORPUS, {"name": "base"}, output=tmp_path / "base.arrow"),
        freeze_run(CANDIDATE, CORPUS, {"name": "cand"}, output=tmp_path / "cand.arrow"),
    )
    judge_pairs(*runs, ScriptedPairJudge(), output=tmp_path / "p.arrow")
    return tmp_path / "p.arrow"


def test_a_scores_and_a_pairs_file_as_made_are_read(scores: Path, pairs: Path) -> None:
    assert load_scores(scores).run["fingerprint"] == load_run(HANDMADE_RUNS / "candidate.arrow").fingerprint
    assert load_pairs(pairs).baseline["name"] == "base"


@pytest.mark.parametrize("forgery", [*FORGERIES, *(f"run: {name}" for name in RUN_FORGERIES)])
def test_a_forged_scores_file_is_refused_by_every_reader(cli: Cli, scores: Path, forgery: str) -> None:
    forge, says = RUN_FORGERIES[forgery[5:]] if forgery.startswith("run: ") else FORGERIES[forgery]
    forged = _forged(scores, SCORES_KEY, forge, "run" if forgery.startswith("run: ") else None)
    with pytest.raises(ScoresError, match="says of itself what freezing never writes") as refused:
        load_scores(forged)
    assert says in str(refused.value)
    candidate = HANDMADE_RUNS / "candidate.arrow"
    for args in (("show", forged), (HANDMADE_RUNS / "baseline.arrow", candidate, "--candidate-scores", forged)):
        result = cli(*args)
        assert (result.exit_code, result.stderr) == (2, f"error: {refused.value}\n")


@pytest.mark.parametrize("forgery", [*FORGERIES, *(f"candidate: {name}" for name in RUN_FORGERIES)])
def test_a_forged_pairs_file_is_refused_by_every_reader(cli: Cli, pairs: Path, forgery: str) -> None:
    run_key = "candidate" if forgery.startswith("candidate: ") else None
    forge, says = RUN_FORGERIES[forgery[11:]] if run_key else FORGERIES[forgery]
    forged = _forged(pairs, PAIRS_KEY, forge, run_key)
    with pytest.raises(PairsError, match="says of itself what freezing never writes") as refused:
        load_pairs(forged)
    assert says in str(refused.value)
    result = cli("show", forged)
    assert (result.exit_code, result.stderr) == (2, f"error: {refused.value}\n")
