"""Shared fixtures: the shipped examples, small corpus and records files, the files a command may be given, and
the CLI entry point."""

from __future__ import annotations

import errno
import functools
import json
import os
import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import settings

from rag_compare import Comparison
from rag_compare.cli.main import main
from rag_compare.io.runs import load_run
from tests.helpers.data import HANDMADE_RUNS, SMALL_CORPUS, SMALL_RECORDS
from tests.helpers.golden import check_golden
from tests.helpers.hostile import hostile_comparison
from tests.helpers.producers import produce

os.environ.setdefault("NUMBA_DISABLE_JIT", "1")
"""ranx, the reference of the retrieval metrics, compiles its numba kernels on first use: half a minute on two cores,
for inputs of a few thousand cases. Its kernels run as the Python they are written in, with the same results (the
benchmark scripts the tests start inherit this; run by hand, they compile)."""

settings.register_profile("shared-cores", deadline=None)
settings.load_profile("shared-cores")
"""No example fails for its time alone: on two cores shared by two test processes (``make test``) and more, an
example's time says more about the machine than about the code."""


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str | bytes], Path]:
    """Write text (dedented) or bytes to a file under tmp_path and return its path."""

    def _write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content), encoding="utf-8")
        return path

    return _write


@pytest.fixture
def small_corpus(write: Callable[[str, str | bytes], Path]) -> Path:
    return write("corpus.csv", SMALL_CORPUS)


@pytest.fixture
def small_records(write: Callable[[str, str | bytes], Path]) -> Path:
    return write("records.jsonl", SMALL_RECORDS)


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    """Run the ``rag-compare`` entry point; fail the test on any traceback (an unhandled exception)."""
    for name in ("OPENAI_API_KEY", "SOURCE_DATE_EPOCH"):
        monkeypatch.delenv(name, raising=False)

    def _run(*args: str | Path, env: dict[str, str] | None = None) -> Result:
        result = CliRunner().invoke(main, [str(arg) for arg in args], env=env)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"unhandled {result.exception!r}; output:\n{result.output}") from result.exception
        assert "Traceback" not in result.output
        return result

    return _run


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Fill the disk: from then on each file opened for writing writes to /dev/full (``"write"``: every write
    fails with ENOSPC, Python's and native writers' alike), or its fsync fails so (``"fsync"``)."""

    def refuse(*args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def fill(where: str) -> None:
        if where == "fsync":
            monkeypatch.setattr(os, "fsync", refuse)
            return
        opened = os.fdopen

        def fdopen(fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            if "w" in mode:
                full = os.open("/dev/full", os.O_WRONLY)
                os.dup2(full, fd)
                os.close(full)
            return opened(fd, mode, *args, **kwargs)

        monkeypatch.setattr(os, "fdopen", fdopen)

    return fill


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="Rewrite the golden files (tests/golden) from the current output instead of checking against them.",
    )


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[str, str], None]:
    """Check an output against its golden file in tests/golden, or rewrite that file (``pytest --update-golden``)."""
    return functools.partial(check_golden, update=bool(request.config.getoption("--update-golden")))


@pytest.fixture
def away_from_the_knowledge_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Work from a folder without the hand-made runs' knowledge base (their configs record the relative path
    ``corpora/handbook_passages.csv``): compared without passages, they then have no answer_completeness."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def hostile() -> Comparison:
    """Two runs whose questions, notes, ids, answers, errors and config values carry ``PAYLOAD``."""
    return hostile_comparison()


@pytest.fixture
def files(
    tmp_path: Path, small_corpus: Path, small_records: Path, write: Callable[[str, str | bytes], Path]
) -> dict[str, Path]:
    """Copies of the hand-made runs, a scores file of the candidate, and small corpus, records and passages files."""
    from rag_compare.io.external_scores import import_scores

    paths = {name: tmp_path / f"{name}.arrow" for name in ("baseline", "candidate")}
    for name, path in paths.items():
        shutil.copy(HANDMADE_RUNS / f"{name}.arrow", path)
    case_ids = load_run(paths["candidate"]).records.get_column("case_id").to_list()
    trust = write("trust.csv", "case_id,trust\n" + "".join(f"{case_id},0.5\n" for case_id in case_ids))
    scores = tmp_path / "scores.arrow"
    import_scores(paths["candidate"], trust, evaluator="e", mapping={"trust": "trustworthiness"}, output=scores)
    passages = write("passages.csv", "passage_id,source_version,text\nhotel-1,v2,The cap is 150.\n")
    return {
        **paths,
        "scores": scores,
        "trust": trust,
        "corpus": small_corpus,
        "records": small_records,
        "passages": passages,
        "new": tmp_path / "new.arrow",
    }


@pytest.fixture(scope="module")
def writer_inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Valid inputs of every command and function that writes, in a folder of their own (shared by a module's
    tests, which write nothing there): the hand-made runs, a scores file of the candidate, the small corpus,
    records and passages, two runs of one config to merge, and a source to import (read by the stand-in
    reader of ``tests/io/test_run_import.py``)."""
    from rag_compare.compute.freezing import freeze_run
    from rag_compare.io.external_scores import import_scores

    folder = tmp_path_factory.mktemp("inputs")
    paths = {name: folder / f"{name}.arrow" for name in ("baseline", "candidate", "scores", "first", "second")}
    texts = {
        "corpus.csv": SMALL_CORPUS,
        "records.jsonl": SMALL_RECORDS,
        "meal.jsonl": '{"case_id": "meal@v2", "answer": "45 euros"}\n',
        "passages.csv": "passage_id,source_version,text\nmeal-1,v2,The meal allowance is 45 euros.\n",
        "trust.csv": "case_id,trust\n"
        + "".join(f"{case},0.5\n" for case in load_run(HANDMADE_RUNS / "candidate.arrow").records["case_id"]),
        "units.json": json.dumps({"units": [{"meta": {"case_id": "meal@v2"}, "question": "q", "answer": "45"}]}),
    }
    for name, text in texts.items():
        paths[name.split(".")[0]] = folder / name
        paths[name.split(".")[0]].write_text(text, encoding="utf-8")
    for name in ("baseline", "candidate"):
        shutil.copy(HANDMADE_RUNS / f"{name}.arrow", paths[name])
    import_scores(
        paths["candidate"], paths["trust"], evaluator="e", mapping={"trust": "trustworthiness"}, output=paths["scores"]
    )
    freeze_run(paths["records"], paths["corpus"], {"top_k": 3}, output=paths["first"])
    freeze_run(paths["meal"], paths["corpus"], {"top_k": 3}, output=paths["second"])
    return paths


@pytest.fixture
def reply_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads or writes the user's reply cache, or reaches a real endpoint: the cache is a file
    under ``tmp_path`` and no endpoint, key or debug setting comes from the environment."""
    path = tmp_path / "replies.sqlite3"
    monkeypatch.setenv("RAG_COMPARE_CACHE", str(path))
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "RAG_COMPARE_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    return path


@pytest.fixture(scope="session")
def ragas_made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files ``tests/producers/make_ragas.py`` writes, made once: the Ragas reader's tests and the ragas
    preset's read them (and write nothing there)."""
    return produce("make_ragas.py", tmp_path_factory.mktemp("ragas"))


@pytest.fixture(scope="session")
def deepeval_made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files ``tests/producers/make_deepeval.py`` writes, made once: the DeepEval reader's tests and the
    deepeval preset's read them (and write nothing there)."""
    return produce("make_deepeval.py", tmp_path_factory.mktemp("deepeval"))


SLOWEST_FILES = (
    "tests/test_benchmarks.py",
    "tests/compute/test_ray_engine.py",
    "tests/io/sources/test_openinference.py",
    "tests/cli/test_main.py",
    "tests/io/test_score_presets.py",
    "tests/compute/test_repeats.py",
    "tests/test_notebooks.py",
    "tests/cli/test_capture.py",
    "tests/compute/test_compare_runs.py",
)
"""The test files that take longest (about half the suite's time), slowest first. They run first, so that with the
files shared out over processes (``make test``) the quick files fill in around them at the end."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: place for place, path in enumerate(SLOWEST_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.partition("::")[0], len(rank)))
