"""The ray engine gives the comparison the memory engine gives (Ray started once here, on two CPUs): of two runs
from the library, of several candidates from the command line; without Ray it says how to install it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result

from rag_compare import compare
from rag_compare.core.errors import EngineError
from tests.compute.test_engines import COMPARE, REPEATS, assert_same, frozen, run_files


@pytest.fixture(scope="module", autouse=True)
def ray_cluster() -> Iterator[None]:
    import ray  # the ray extra, installed with the dev one by `make`

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_equals_memory_with_repeats_and_a_bucket_no_run_has(tmp_path: Path) -> None:
    runs = frozen(REPEATS)
    memory = compare(*runs, REPEATS / "corpus.csv")
    on_ray = compare(*runs, REPEATS / "corpus.csv", engine="ray", buckets=16)  # more buckets than cases
    assert memory.noise_floor is not None
    assert_same(memory, on_ray)


def test_the_command_on_ray_writes_the_json_of_memory_for_several_candidates(
    cli: Callable[..., Result], tmp_path: Path
) -> None:
    baseline, candidate = run_files(tmp_path)
    paths = [baseline, candidate, baseline]  # the baseline compared with itself too: two candidates on Ray
    options = ["--corpus", COMPARE / "corpus.csv", "--passages", COMPARE / "passages.csv", "--format", "json"]
    memory = cli(*paths, *options)
    on_ray = cli(*paths, *options, "--engine", "ray", "--buckets", "3")
    assert (memory.exit_code, on_ray.exit_code) == (0, 0)
    assert on_ray.stdout == memory.stdout
    assert '"changed_cases"' in memory.stdout


def test_without_ray_the_engine_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails
    with pytest.raises(EngineError, match=r"pip install 'rag-compare\[ray\]'"):
        compare(*frozen(COMPARE), engine="ray")
