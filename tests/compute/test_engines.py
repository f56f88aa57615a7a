"""Every engine gives the comparison the memory engine gives: the streaming engine here, with any number of
buckets (``test_ray_engine`` for Ray). Identical statuses, reasons, counts, n, intervals, p-values, noise
floor, flaky cases and warnings; means within 1e-12 (sums added in another order). Its cases live on disk,
are read back in case id order, and go when the comparison goes."""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import Result
from polars.testing import assert_frame_equal

from rag_compare import CompareError, Comparison, compare, freeze_run
from rag_compare.compute import comparison as comparison_module
from rag_compare.compute.case_table import CaseTable, range_bounds, range_of
from rag_compare.io.runs import Run
from tests.helpers.data import ROOT

FIXTURES = ROOT / "tests" / "fixtures"
COMPARE, REPEATS = FIXTURES / "compare", FIXTURES / "repeats"
MEANS = ("baseline", "candidate", "delta", "baseline_within_variance", "candidate_within_variance")


def frozen(folder: Path, **options: Any) -> list[Run]:
    return [
        freeze_run(folder / f"{side}.jsonl", folder / "corpus.csv", {"name": side}, **options)
        for side in ("baseline", "candidate")
    ]


def assert_same(expected: Comparison, actual: Comparison) -> None:
    """``actual`` is ``expected`` but for the rounding of means."""
    assert actual.counts == expected.counts
    assert actual.warnings == expected.warnings
    assert actual.baseline == expected.baseline
    assert actual.candidate == expected.candidate
    assert actual.noise_floor == expected.noise_floor
    assert_frame_equal(actual.flaky, expected.flaky)
    assert_frame_equal(actual.cases, expected.cases, check_exact=False, rel_tol=0, abs_tol=1e-12)
    assert actual.cases.select("case_id", "status", "reasons").equals(
        expected.cases.select("case_id", "status", "reasons")
    )
    for name in ("aggregates", "breakdowns"):
        left, right = getattr(expected, name), getattr(actual, name)
        means = [column for column in MEANS if column in left.columns]
        assert_frame_equal(right.drop(means), left.drop(means))  # n, intervals, p-values: identical
        assert_frame_equal(right.select(means), left.select(means), check_exact=False, rel_tol=0, abs_tol=1e-12)


@pytest.fixture(scope="module")
def compare_runs() -> list[Run]:
    return frozen(COMPARE)


@pytest.fixture(scope="module")
def repeat_runs() -> list[Run]:
    return frozen(REPEATS)


@pytest.mark.parametrize("buckets", [1, 3, 7])
def test_streaming_equals_memory_with_a_corpus_and_passages(compare_runs: list[Run], buckets: int) -> None:
    options: dict[str, Any] = {"corpus": COMPARE / "corpus.csv", "passages": COMPARE / "passages.csv"}
    memory = compare(*compare_runs, **options)
    streamed = compare(*compare_runs, **options, engine="streaming", buckets=buckets)
    assert_same(memory, streamed)
    assert streamed.case_table.frame is None  # on disk


@pytest.mark.parametrize(("corpus", "buckets"), [(None, 2), (REPEATS / "corpus.csv", 5)])
def test_streaming_equals_memory_with_repeats(repeat_runs: list[Run], corpus: Path | None, buckets: int) -> None:
    memory = compare(*repeat_runs, corpus)
    streamed = compare(*repeat_runs, corpus, engine="streaming", buckets=buckets)
    assert memory.noise_floor is not None  # the fixture exercises the noise floor
    assert not memory.flaky.is_empty()  # and flaky cases
    assert_same(memory, streamed)


def test_run_directories_of_as_many_buckets_are_joined_part_by_part(tmp_path: Path, compare_runs: list[Run]) -> None:
    folders = [
        freeze_run(COMPARE / f"{side}.jsonl", COMPARE / "corpus.csv", {"name": side}, output=tmp_path / side, buckets=4)
        for side in ("baseline", "candidate")
    ]
    streamed = compare(*(run.path for run in folders if run.path), engine="streaming")
    assert len(streamed.case_table.ranges) == 4  # the runs' own buckets, one range of ids each
    memory = compare(*compare_runs)
    assert streamed.counts == memory.counts
    assert streamed.cases.select("case_id", "status", "reasons").equals(
        memory.cases.select("case_id", "status", "reasons")
    )
    assert_frame_equal(streamed.aggregates.drop(MEANS), memory.aggregates.drop(MEANS))


def test_the_json_and_the_folder_are_the_same_from_either_engine(
    tmp_path: Path, compare_runs: list[Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(comparison_module, "_JSON_SLICE_ROWS", 4)  # slices cut across the buckets' parts
    monkeypatch.setattr(comparison_module, "PART_ROWS", 5)
    memory = compare(*compare_runs)
    streamed = compare(*compare_runs, engine="streaming", buckets=3)
    assert streamed.to_json() == memory.to_json()
    assert [case["case_id"] for case in json.loads(streamed.to_json())["cases"]] == sorted(memory.cases["case_id"])
    for name, comparison in (("memory", memory), ("streaming", streamed)):
        comparison.write_directory(tmp_path / name)
    parts = sorted(path.name for path in (tmp_path / "memory" / "cases").iterdir())
    assert parts == sorted(path.name for path in (tmp_path / "streaming" / "cases").iterdir())
    assert len(parts) == -(-memory.n_cases // 5)
    for part in parts:
        expected = pl.read_parquet(tmp_path / "memory" / "cases" / part)
        assert_frame_equal(pl.read_parquet(tmp_path / "streaming" / "cases" / part), expected)


def test_the_spilled_cases_go_with_the_comparison(compare_runs: list[Run]) -> None:
    streamed = compare(*compare_runs, engine="streaming", buckets=2)
    parts = [piece for pieces in streamed.case_table.ranges for piece in pieces]
    assert parts
    assert all(part.is_file() for part in parts)
    del streamed
    gc.collect()
    assert not any(part.exists() for part in parts)
    assert not parts[0].parent.exists()


def test_slices_of_pieces_come_in_case_id_order_of_the_size_asked_and_within_their_bounds(tmp_path: Path) -> None:
    ids = [f"q{number:03d}" for number in range(23)]
    ranges = []
    for first, last, pieces in ((0, 10, 2), (10, 23, 3)):  # each range's ids spread over pieces, interleaved
        paths = []
        for piece in range(pieces):
            held = ids[first + piece : last : pieces]
            path = tmp_path / f"piece-{first}-{piece}.arrow"
            pl.DataFrame({"case_id": held, "status": ["improved"] * len(held)}).write_ipc(path)
            paths.append(path)
        ranges.append(paths)
    table = CaseTable.spilled(ranges, {"case_id": pl.String(), "status": pl.String()}, {"improved": 23}, spill=None)
    assert [len(piece) for piece in table.slices(5)] == [5, 5, 5, 5, 3]
    assert pl.concat(table.slices(5)).get_column("case_id").to_list() == ids
    assert table.collect().get_column("case_id").to_list() == ids
    assert table.lazy().filter(pl.col("case_id") > "q018").collect().get_column("case_id").to_list() == ids[19:]
    for rows in (1, 5, 23, 30):  # the slice of each id, as range_of the slices' bounds gives it
        expected = [number // rows for number in range(len(ids))]
        assert range_of(pl.Series(ids), table.slice_bounds(rows)).to_list() == expected
        held = CaseTable.held(table.collect())
        assert held.slice_bounds(rows).equals(table.slice_bounds(rows))


def test_range_bounds_cut_sorted_ids_into_ranges_of_about_as_many() -> None:
    ids = pl.Series("case_id", [f"q{number:02d}" for number in range(10)])
    bounds = range_bounds(ids, 4)
    assert bounds.to_list() == ["q02", "q05", "q07"]  # positions 10*1//4, 10*2//4, 10*3//4
    assert range_of(pl.Series(["q00", "q02", "q04", "q07", "q99", "a"]), bounds).to_list() == [0, 1, 1, 3, 3, 0]
    assert range_bounds(ids.head(0), 4).is_empty()
    assert range_bounds(ids, 1).is_empty()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"engine": "gpu"}, "engine must be one of memory, streaming, ray; got 'gpu'"),
        ({"buckets": 4}, "buckets are for the streaming and ray engines"),
        ({"engine": "streaming", "buckets": 0}, "buckets must be a whole number of 1 or more, got 0"),
    ],
)
def test_unusable_engine_settings_are_refused(compare_runs: list[Run], options: dict[str, Any], message: str) -> None:
    with pytest.raises(CompareError, match=message):
        compare(*compare_runs, **options)


def run_files(folder: Path) -> list[str]:
    """The paths of the compare fixture's two runs, frozen into files in ``folder``."""
    return [
        str(
            freeze_run(
                COMPARE / f"{side}.jsonl", COMPARE / "corpus.csv", {"name": side}, output=folder / f"{side}.arrow"
            ).path
        )
        for side in ("baseline", "candidate")
    ]


def test_the_command_streams_and_refuses_buckets_in_memory(cli: Callable[..., Result], tmp_path: Path) -> None:
    paths = run_files(tmp_path)
    memory = cli(*paths, "--format", "json")
    streamed = cli(*paths, "--format", "json", "--engine", "streaming", "--buckets", "3")
    assert (memory.exit_code, streamed.exit_code) == (0, 0)
    assert streamed.stdout == memory.stdout
    refused = cli(*paths, "--buckets", "3")
    assert refused.exit_code == 2
    assert "--buckets is for --engine streaming or ray" in refused.output
    refused = cli(*paths, "--ray-address", "auto")
    assert refused.exit_code == 2
    assert "--ray-address is for --engine ray" in refused.output


def test_on_a_terminal_a_comparison_shows_its_sides_and_buckets_progress(
    compare_runs: list[Run], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    compare(*compare_runs, engine="streaming", buckets=2)
    drawn = capsys.readouterr()
    assert drawn.out == ""
    assert "baseline: signals" in drawn.err
    assert "candidate: signals" in drawn.err
    assert "joining buckets" in drawn.err
    assert "2/2" in drawn.err
