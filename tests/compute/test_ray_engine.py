"""The ray engine gives the comparison the memory engine gives (Ray started once here, on two CPUs), from
the library and the command line; without Ray it says how to install it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result
from polars.testing import assert_frame_equal

from rag_compare import compare, compare_many
from rag_compare.core.errors import EngineError
from tests.compute.test_compare_many import NAMES
from tests.compute.test_compare_many import frozen as three_candidates
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


def test_the_command_on_ray_writes_the_json_of_memory_with_a_corpus_and_passages(
    cli: Callable[..., Result], tmp_path: Path
) -> None:
    paths = run_files(tmp_path)
    options = ["--corpus", COMPARE / "corpus.csv", "--passages", COMPARE / "passages.csv", "--format", "json"]
    memory = cli(*paths, *options)
    on_ray = cli(*paths, *options, "--engine", "ray", "--buckets", "3")
    assert (memory.exit_code, on_ray.exit_code) == (0, 0)
    assert on_ray.stdout == memory.stdout


def test_without_ray_the_engine_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails
    with pytest.raises(EngineError, match=r"pip install 'rag-compare\[ray\]'"):
        compare(*frozen(COMPARE), engine="ray")


def test_several_candidates_on_ray_are_those_in_memory() -> None:
    baseline, *candidates = (three_candidates(name) for name in ("baseline", *NAMES[:2]))
    memory = compare_many(baseline, candidates, rank_by=["mrr"])
    on_ray = compare_many(baseline, candidates, rank_by=["mrr"], engine="ray", buckets=2)
    assert_frame_equal(on_ray.status_matrix, memory.status_matrix)
    assert_frame_equal(on_ray.aggregates, memory.aggregates, check_exact=False, rel_tol=0, abs_tol=1e-12)
    assert (on_ray.ranking.best, on_ray.ranking.tests.equals(memory.ranking.tests)) == ("a", True)
