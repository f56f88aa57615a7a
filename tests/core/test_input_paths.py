"""Input paths: what is not a regular file is refused before it is opened, naming what is there and what was
expected; the check itself, then every reading command's every input through the entry point.

The FIFOs go through the entry point in a process of their own with a timeout, so a reader that opens one
again fails its test instead of hanging the suite.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from rag_compare.compute.freezing import freeze_run
from rag_compare.core.errors import GateError, InputFileError
from rag_compare.core.input_paths import check_input
from rag_compare.io.external_scores import import_scores
from rag_compare.io.run_directory import MANIFEST, part_name
from rag_compare.llm.cache import CACHE_ENV
from tests.helpers.cli_batch import run_batch
from tests.helpers.data import HANDMADE_RUNS, ROOT
from tests.helpers.special_files import KINDS, make_special

Cli = Callable[..., Result]
FIXTURE = ROOT / "tests" / "fixtures" / "compare"
CORPUS, RECORDS, PASSAGES = FIXTURE / "corpus.csv", FIXTURE / "baseline.jsonl", FIXTURE / "passages.csv"
BASELINE, CANDIDATE = HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow"
CLOSED = "http://127.0.0.1:9/v1"
"""An endpoint nobody listens on: every command here stops at its input before it would send a request."""
ENDPOINT = ("--model", "m", "--base-url", CLOSED, "--timeout", "1", "--max-retries", "0")


# -- the check ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [kind for kind in KINDS if kind != "folder"])
def test_what_is_not_a_regular_file_is_refused_naming_what_it_is(tmp_path: Path, kind: str) -> None:
    path = make_special(kind, tmp_path / "gate.toml")
    with pytest.raises(GateError) as refused:
        check_input(path, "gate file", GateError)
    assert str(refused.value).startswith(f"{path}: ")
    assert KINDS[kind] in str(refused.value)
    assert "gate file. Give the path of a gate file." in str(refused.value)


def test_a_device_itself_and_a_link_to_one_say_so(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match=r"^/dev/null: is a character device, not a corpus file\. Check"):
        check_input("/dev/null", "corpus file", fix="Check the corpus path.")
    zero = make_special("missing", tmp_path / "manifest.json")
    zero.symlink_to("/dev/zero")
    with pytest.raises(InputFileError, match=r"is a link to a character device \(/dev/zero\), not a manifest"):
        check_input(zero, "manifest")


def test_a_folder_is_refused_unless_asked_for(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match=rf"^{tmp_path}: is a folder, not a pairs file\."):
        check_input(tmp_path, "pairs file")
    assert check_input(tmp_path, "run file or run directory", folder=True) == "folder"
    linked = tmp_path / "linked"
    linked.symlink_to(tmp_path)
    assert check_input(linked, "run file or run directory", folder=True) == "folder"


def test_a_regular_file_or_a_link_to_one_passes(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("x\n")
    (tmp_path / "b.csv").symlink_to(tmp_path / "a.csv")
    assert check_input(tmp_path / "a.csv", "corpus file") == "file"
    assert check_input(tmp_path / "b.csv", "corpus file") == "file"


def test_nothing_passes_only_where_a_reader_creates_the_file_and_a_broken_link_never(tmp_path: Path) -> None:
    assert check_input(tmp_path / "cache.sqlite3", "reply cache file", missing=True) == "missing"
    assert check_input(tmp_path / "no" / "cache.sqlite3", "reply cache file", missing=True) == "missing"
    broken = make_special("broken link", tmp_path / "cache.sqlite3")
    with pytest.raises(InputFileError, match="is a broken link"):
        check_input(broken, "reply cache file", missing=True)
    with pytest.raises(InputFileError, match="no such corpus file"):
        check_input(tmp_path / "a.csv" / "b.csv", "corpus file")


# -- every reader through the entry point --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Inputs:
    """Good inputs for every command, made once: a scores file of CANDIDATE and a run directory."""

    scores: Path
    run_directory: Path
    ragas: Path


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Inputs:
    folder = tmp_path_factory.mktemp("inputs")
    trust = folder / "trust.csv"
    trust.write_text("case_id,trust\nhotel-cap@2026-01,0.5\n")
    scores = folder / "scores.arrow"
    import_scores(CANDIDATE, trust, evaluator="e", mapping={"trust": "trustworthiness"}, output=scores)
    freeze_run(RECORDS, CORPUS, output=folder / "run", buckets=2)
    ragas = folder / "ragas.jsonl"
    sample = {"case_id": "c-improved@v1", "user_input": "q", "retrieved_contexts": ["Hotel stays"], "response": "a"}
    ragas.write_text(json.dumps(sample) + "\n")
    return Inputs(scores, folder / "run", ragas)


@dataclass(frozen=True)
class Slot:
    """One input of one command: where the bad path goes (``place`` under a test's folder), the command
    line around it, the kinds that do not apply, and what the message says instead of ``KINDS``."""

    name: str
    place: Callable[[Path, Inputs], Path]
    args: Callable[[Path, Path, Inputs], tuple[str | Path, ...]]
    skip: tuple[str, ...] = ()
    said: dict[str, str] = field(default_factory=dict)


def named(file: str) -> Callable[[Path, Inputs], Path]:
    return lambda tmp, inputs: tmp / file


def in_run_directory(file: str) -> Callable[[Path, Inputs], Path]:
    """``file`` of a copy of the run directory, removed first."""

    def place(tmp: Path, inputs: Inputs) -> Path:
        shutil.copytree(inputs.run_directory, tmp / "run")
        (tmp / "run" / file).unlink()
        return tmp / "run" / file

    return place


def parts(tmp: Path) -> Path:
    """The folder ``parts`` beside a test's bad part, with RECORDS as its good part."""
    shutil.copy(RECORDS, tmp / "parts" / "a.jsonl")
    return tmp / "parts"


RUN_FOLDER = {"folder": f"without {MANIFEST}, not a run directory"}
"""A folder given for a run is read as a run directory, and refused as one."""
SLOTS = [  # the reply cache and a capture's checkpoint are files updated in place: checked as outputs (test_options)
    Slot("validate CORPUS", named("c.csv"), lambda bad, tmp, i: ("validate", bad)),
    Slot("validate --passages", named("p.csv"), lambda bad, tmp, i: ("validate", CORPUS, "--passages", bad)),
    Slot("audit OLD", named("old.csv"), lambda bad, tmp, i: ("audit", bad, CORPUS)),
    Slot("audit NEW", named("new.csv"), lambda bad, tmp, i: ("audit", CORPUS, bad)),
    Slot(
        "freeze RECORDS",
        named("r.jsonl"),
        lambda bad, tmp, i: ("freeze", bad, "--corpus", CORPUS, "--output", tmp / "o.arrow"),
    ),
    Slot(
        "freeze RECORDS folder part",
        named("parts/b.jsonl"),
        lambda bad, tmp, i: ("freeze", parts(tmp), "--corpus", CORPUS, "--output", f"{tmp}/o/"),
        skip=("missing",),
    ),
    Slot(
        "freeze RECORDS glob part",
        named("parts/b.jsonl"),
        lambda bad, tmp, i: ("freeze", f"{parts(tmp)}/*.jsonl", "--corpus", CORPUS, "--output", f"{tmp}/o/"),
        skip=("missing", "folder"),
    ),
    Slot(
        "freeze --corpus",
        named("c.csv"),
        lambda bad, tmp, i: ("freeze", RECORDS, "--corpus", bad, "--output", tmp / "o.arrow"),
    ),
    Slot(
        "freeze --config",
        named("config.toml"),
        lambda bad, tmp, i: ("freeze", RECORDS, "--corpus", CORPUS, "--config", bad, "--output", tmp / "o.arrow"),
    ),
    *(
        Slot(
            f"import-run --from {source} SOURCE ({file})",
            named(file),
            lambda bad, tmp, i, source=source: (
                "import-run",
                bad,
                "--from",
                source,
                "--corpus",
                CORPUS,
                "--output",
                tmp / "o.arrow",
            ),
        )
        for source, file in (
            ("openinference", "spans.jsonl"),
            ("openinference", "spans.parquet"),
            ("ragas", "ragas.csv"),
            ("ragas", "ragas.jsonl"),
            ("promptfoo", "results.json"),
            ("deepeval", "run.json"),
            ("langsmith", "runs.jsonl"),
        )
    ),
    Slot(
        "import-run --passages",
        named("p.csv"),
        lambda bad, tmp, i: (
            "import-run",
            i.ragas,
            "--from",
            "ragas",
            "--corpus",
            CORPUS,
            "--passages",
            bad,
            "--output",
            tmp / "o.arrow",
        ),
    ),
    Slot(
        "merge-repeats RUNS",
        named("r.arrow"),
        lambda bad, tmp, i: ("merge-repeats", BASELINE, bad, "--output", tmp / "o.arrow"),
        said=RUN_FOLDER,
    ),
    Slot("show FILE", named("r.arrow"), lambda bad, tmp, i: ("show", bad), said=RUN_FOLDER),
    Slot(
        f"show {MANIFEST}",
        in_run_directory(MANIFEST),
        lambda bad, tmp, i: ("show", tmp / "run"),
        said={"missing": f"without {MANIFEST}, not a run directory"},
    ),
    Slot(
        "compare a run directory's part",
        in_run_directory(part_name(1)),
        lambda bad, tmp, i: (tmp / "run", CANDIDATE),
        said={"missing": "is missing from the run directory", "folder": "is a folder, not a Parquet part"},
    ),
    Slot("compare BASELINE", named("b.arrow"), lambda bad, tmp, i: (bad, CANDIDATE), said=RUN_FOLDER),
    Slot("compare CANDIDATE", named("c.arrow"), lambda bad, tmp, i: ("compare", BASELINE, bad), said=RUN_FOLDER),
    *(
        Slot(f"compare {flag}", named(file), lambda bad, tmp, i, flag=flag: (BASELINE, CANDIDATE, flag, bad))
        for flag, file in (
            ("--corpus", "c.csv"),
            ("--passages", "p.csv"),
            ("--baseline-scores", "s.arrow"),
            ("--candidate-scores", "s.arrow"),
            ("--pairs", "pairs.arrow"),
            ("--gate", "gate.toml"),
            ("--language-file", "xx.toml"),
        )
    ),
    Slot(
        "capture CORPUS",
        named("c.csv"),
        lambda bad, tmp, i: ("capture", bad, "--passages", PASSAGES, "--top-k", "2", "--output", tmp / "o.arrow"),
    ),
    Slot(
        "capture --passages",
        named("p.csv"),
        lambda bad, tmp, i: ("capture", CORPUS, "--passages", bad, "--top-k", "2", "--output", tmp / "o.arrow"),
    ),
    Slot(
        "capture --prompt-template",
        named("prompt.j2"),
        lambda bad, tmp, i: (
            "capture",
            CORPUS,
            "--passages",
            PASSAGES,
            "--top-k",
            "2",
            "--generator",
            "openai",
            *ENDPOINT,
            "--prompt-template",
            bad,
            "--output",
            tmp / "o.arrow",
        ),
    ),
    Slot(
        "draft-cases --passages",
        named("p.csv"),
        lambda bad, tmp, i: ("draft-cases", "--passages", bad, "--n", "1", *ENDPOINT, "--output", tmp / "d.csv"),
    ),
    Slot("admit DRAFTS", named("d.csv"), lambda bad, tmp, i: ("admit", bad, "--ids", "a@v1")),
    Slot(
        "score RUN",
        named("r.arrow"),
        lambda bad, tmp, i: ("score", bad, *ENDPOINT, "--output", tmp / "s.arrow"),
        said=RUN_FOLDER,
    ),
    Slot(
        "judge-pairs BASELINE",
        named("b.arrow"),
        lambda bad, tmp, i: ("judge-pairs", bad, CANDIDATE, *ENDPOINT, "--output", tmp / "p.arrow"),
        said=RUN_FOLDER,
    ),
    Slot(
        "import-scores RUN",
        named("r.arrow"),
        lambda bad, tmp, i: (
            "import-scores",
            bad,
            CORPUS,
            "--evaluator",
            "e",
            "--map",
            "a=trustworthiness",
            "--output",
            tmp / "s.arrow",
        ),
        said=RUN_FOLDER,
    ),
    *(
        Slot(
            f"import-scores FILE {' '.join(preset)}",
            named(file),
            lambda bad, tmp, i, preset=preset: ("import-scores", CANDIDATE, bad, *preset, "--output", tmp / "s.arrow"),
        )
        for preset, file in (
            (("--evaluator", "e", "--map", "a=trustworthiness"), "scores.csv"),
            (("--preset", "ragas"), "ragas.csv"),
            (("--preset", "deepeval"), "run.json"),
            (("--preset", "promptfoo"), "results.json"),
        )
    ),
    Slot(
        "fallback RUN",
        named("r.arrow"),
        lambda bad, tmp, i: (
            "fallback",
            bad,
            "--scores",
            i.scores,
            "--signal",
            "trustworthiness",
            "--threshold",
            "0.5",
        ),
        said=RUN_FOLDER,
    ),
    Slot(
        "fallback --scores",
        named("s.arrow"),
        lambda bad, tmp, i: (
            "fallback",
            CANDIDATE,
            "--scores",
            bad,
            "--signal",
            "trustworthiness",
            "--threshold",
            "0.5",
        ),
    ),
]
"""Every input of every command that reads one."""
CASES = [
    pytest.param(slot, kind, id=f"{slot.name} <- {kind}")
    for slot in SLOTS
    for kind in KINDS
    if kind not in slot.skip and kind != "fifo"
]


@pytest.mark.usefixtures("reply_cache")
@pytest.mark.parametrize(("slot", "kind"), CASES)
def test_every_reader_refuses_what_is_not_a_regular_file(
    cli: Cli, tmp_path: Path, inputs: Inputs, slot: Slot, kind: str
) -> None:
    bad = make_special(kind, slot.place(tmp_path, inputs))
    result = cli(*slot.args(bad, tmp_path, inputs))
    assert result.exit_code == 2, result.output
    expected = slot.said.get(kind, KINDS[kind])
    assert expected in result.stderr
    assert str(bad) in result.stderr or kind in slot.said
    assert not (tmp_path / "o.arrow").exists()
    assert not (tmp_path / "o").exists()


@pytest.fixture(scope="module")
def fifo_outcomes(tmp_path_factory: pytest.TempPathFactory, inputs: Inputs) -> dict[str, tuple[Path, dict[str, Any]]]:
    """Each slot given a FIFO, all run in one process of their own that is stopped after a minute: a reader
    that opened a FIFO waits for a writer, and leaves its slot and those after it without an outcome."""
    folder = tmp_path_factory.mktemp("fifos")
    fifos, commands = {}, {}
    for number, slot in enumerate(SLOTS):
        tmp = folder / str(number)
        fifos[slot.name] = make_special("fifo", slot.place(tmp, inputs))
        commands[slot.name] = [str(arg) for arg in slot.args(fifos[slot.name], tmp, inputs)]
    outcomes = run_batch(commands, folder, timeout=60, env={CACHE_ENV: str(folder / "replies.sqlite3")})
    return {name: (fifo, outcomes.get(name, {})) for name, fifo in fifos.items()}


@pytest.mark.parametrize("slot", [pytest.param(slot, id=slot.name) for slot in SLOTS])
def test_every_reader_refuses_a_fifo_at_once(fifo_outcomes: dict[str, tuple[Path, dict[str, Any]]], slot: Slot) -> None:
    fifo, outcome = fifo_outcomes[slot.name]
    assert outcome, f"{slot.name}: no outcome within a minute: the FIFO (or one before it) was opened"
    assert outcome["unhandled"] is None
    assert outcome["exit_code"] == 2, outcome["stderr"]
    assert f"{fifo}: is a FIFO (named pipe), not " in outcome["stderr"]
