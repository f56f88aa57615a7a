"""The history of runs: creation order, each run's means and intervals, the significant changes from the run before,
the config keys changed, corpus changes that break a trend, and a corpus version's runs measured on its cases."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from rag_compare.compute.freezing import freeze_run
from rag_compare.compute.history import History, history
from rag_compare.core.errors import CompareError

GOLD = [f"q{index}@v1" for index in range(12)]
NEW = [f"n{index}@v2" for index in range(4)]
CORPUS_V1 = pl.DataFrame(
    {
        "case_id": GOLD,
        "question": [f"What is rule {index}?" for index in range(12)],
        "answerability": ["answerable"] * 12,
        "source_version": ["v1"] * 12,
        "required_passage_ids": [[f"p{index}"] for index in range(12)],
    }
)
CORPUS_V2 = pl.concat(
    [
        CORPUS_V1,
        pl.DataFrame(
            {
                "case_id": NEW,
                "question": [f"What is new rule {index}?" for index in range(4)],
                "answerability": ["answerable"] * 4,
                "source_version": ["v2"] * 4,
                "required_passage_ids": [[f"new{index}"] for index in range(4)],
            }
        ),
    ]
)
MISSED = pl.DataFrame({"case_id": GOLD, "retrieved_passage_ids": [["x"]] * 12})
FOUND = pl.DataFrame({"case_id": GOLD, "retrieved_passage_ids": [[f"p{index}"] for index in range(12)]})
# The v2 cases: n0 and n1 retrieve their passage, n2 and n3 do not.
FOUND_V2 = pl.concat(
    [FOUND, pl.DataFrame({"case_id": NEW, "retrieved_passage_ids": [["new0"], ["new1"], ["x"], ["x"]]})]
)
HOUR = 3600
# Four runs, by creation time (file names run the other way, and "second" and "third" tie: the path decides):
#   1 first   (d-first.arrow,  0 h, corpus v1)       every case misses its passage: recall 0, full_coverage 0
#   2 second  (b-second.arrow, 1 h, corpus v1)       every case finds it: recall 1; model m1 -> m2
#   3 third   (c-third/,       1 h, corpus v1)       the same answers as second: no change; the same config (a run
#                                                    directory)
#   4 fourth  (a-fourth.arrow, 2 h, corpus v1 + v2)  v1 as third; v2: 2 of 4 found: recall 14/16 = 0.875
# first -> second: recall +1 on each of 12 cases: the interval [1, 1], significant, better. full_coverage is a flag:
# exact McNemar with 12 discordant cases all one way, p = 2 * 0.5^12 = 0.00048828125; Holm multiplies it by at
# most 12 (the signals tested), 0.0059 < 0.05: significant too.
# third -> fourth: another corpus (its fingerprint), the cases of other versions (v1 -> v1, v2): compared on the
# 12 cases both hold (deltas 0), a new segment.
RUNS = (
    ("d-first.arrow", "first", 0, MISSED, CORPUS_V1, "m1"),
    ("b-second.arrow", "second", 1, FOUND, CORPUS_V1, "m2"),
    ("c-third/", "third", 1, FOUND, CORPUS_V1, "m2"),
    ("a-fourth.arrow", "fourth", 2, FOUND_V2, CORPUS_V2, "m2"),
)
ORDER = ["first", "second", "third", "fourth"]
MCNEMAR_P = 2 * 0.5**12


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = tmp_path_factory.mktemp("history")
    for file, name, hours, records, corpus, model in RUNS:
        environ = {"SOURCE_DATE_EPOCH": str(1_800_000_000 + hours * HOUR)}
        freeze_run(records, corpus, {"name": name, "model": model}, output=f"{made}/{file}", environ=environ)
    return made


@pytest.fixture(scope="module")
def every(folder: Path) -> History:
    return history(folder)


def _aggregate(result: History, position: int, signal: str) -> dict[str, object]:
    rows = result.aggregates.filter((pl.col("position") == position) & (pl.col("signal") == signal))
    return rows.drop("position", "signal").row(0, named=True)


def _change(result: History, position: int, signal: str) -> dict[str, object]:
    rows = result.changes.filter((pl.col("position") == position) & (pl.col("signal") == signal))
    return rows.drop("position", "signal").row(0, named=True)


def test_runs_are_in_creation_order_with_their_corpus_segments(every: History) -> None:
    runs = every.runs
    assert runs.get_column("name").to_list() == ORDER
    assert runs.get_column("position").to_list() == [1, 2, 3, 4]
    assert runs.get_column("cases").to_list() == [12, 12, 12, 16]
    assert runs.get_column("corpus_versions").to_list() == [["v1"], ["v1"], ["v1"], ["v1", "v2"]]
    assert runs.get_column("segment").to_list() == [1, 1, 1, 2]
    assert runs.get_column("corpus_fingerprint").n_unique() == 2


def test_each_run_has_its_means_and_intervals(every: History) -> None:
    assert _aggregate(every, 1, "recall") == {"mean": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n": 12}
    assert _aggregate(every, 2, "recall") == {"mean": 1.0, "ci_low": 1.0, "ci_high": 1.0, "n": 12}
    assert _aggregate(every, 3, "full_coverage") == {"mean": 1.0, "ci_low": 1.0, "ci_high": 1.0, "n": 12}
    fourth = _aggregate(every, 4, "recall")
    assert fourth["mean"] == 0.875
    assert fourth["n"] == 16
    assert 0 < fourth["ci_low"] < 0.875 < fourth["ci_high"] <= 1  # type: ignore[operator]
    assert "grounded" not in every.signals  # no run has an answer to judge: a signal without values is left out


def test_a_change_is_significant_when_its_interval_leaves_out_zero_and_holm_p_is_small(every: History) -> None:
    recall = _change(every, 2, "recall")
    assert (recall["previous"], recall["current"], recall["delta"]) == (0.0, 1.0, 1.0)
    assert (recall["ci_low"], recall["ci_high"], recall["n"]) == (1.0, 1.0, 12)
    assert recall["significant"] is True
    assert recall["direction"] == "better"
    coverage = _change(every, 2, "full_coverage")
    assert coverage["p_value"] == pytest.approx(MCNEMAR_P)
    assert MCNEMAR_P <= coverage["p_adjusted"] <= 12 * MCNEMAR_P  # type: ignore[operator]
    assert coverage["significant"] is True
    unchanged = _change(every, 3, "recall")
    assert (unchanged["delta"], unchanged["significant"], unchanged["direction"]) == (0.0, False, None)
    assert every.changes.filter(pl.col("position") == 1).is_empty()


def test_steps_say_the_config_keys_changed_and_a_corpus_change(every: History) -> None:
    second, third, fourth = every.steps
    assert second.config_changes == ({"key": "model", "previous": "m1", "current": "m2"},)
    assert (second.corpus_changed, second.versions_changed, second.shared_cases) == (False, False, 12)
    assert third.config_changes == ()  # name and created_at differ, but they are bookkeeping
    assert (fourth.corpus_changed, fourth.versions_changed, fourth.shared_cases) == (True, True, 12)
    assert _change(every, 4, "recall")["n"] == 12  # on the cases both runs hold


def test_a_corpus_version_keeps_its_runs_measured_on_its_cases(folder: Path) -> None:
    of_v1 = history(folder, corpus_version="v1", signals=["recall"])
    assert of_v1.runs.get_column("name").to_list() == ORDER
    assert of_v1.runs.get_column("cases").to_list() == [12, 12, 12, 12]
    assert _aggregate(of_v1, 4, "recall") == {"mean": 1.0, "ci_low": 1.0, "ci_high": 1.0, "n": 12}
    assert (of_v1.steps[2].corpus_changed, of_v1.steps[2].versions_changed) == (True, False)
    assert of_v1.runs.get_column("segment").to_list() == [1, 1, 1, 2]
    assert of_v1.signals == ("recall",)
    assert of_v1.changes.get_column("signal").unique().to_list() == ["recall"]


def test_a_lone_run_of_a_version_has_no_change_and_asked_signals_without_values_stay(folder: Path) -> None:
    of_v2 = history(f"{folder}/*.arrow", corpus_version="v2", signals=["recall", "grounded"])
    assert of_v2.runs.get_column("name").to_list() == ["fourth"]
    assert of_v2.runs.get_column("cases").to_list() == [4]
    assert _aggregate(of_v2, 1, "recall")["mean"] == 0.5  # n0, n1 of n0..n3
    assert _aggregate(of_v2, 1, "grounded") == {"mean": None, "ci_low": None, "ci_high": None, "n": 0}
    assert (of_v2.steps, of_v2.changes.height) == ((), 0)
    assert repr(of_v2) == "<History of 1 run of corpus version v2: 0 significant changes>"


def test_the_json_holds_each_run_with_its_change(every: History) -> None:
    document = json.loads(every.to_json())
    assert document["schema_version"] == 1
    assert (document["confidence"], document["alpha"]) == (0.95, 0.05)
    first, second = document["runs"][:2]
    assert first["change"] is None
    assert first["corpus"]["versions"] == ["v1"]
    assert second["change"]["config_changes"] == [{"key": "model", "previous": "m1", "current": "m2"}]
    recall = next(item for item in second["change"]["signals"] if item["signal"] == "recall")
    assert (recall["delta"], recall["significant"], recall["direction"]) == (1.0, True, "better")
    assert document["runs"][3]["segment"] == 2
    assert repr(every) == f"<History of 4 runs: {every.changes.get_column('significant').sum()} significant changes>"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"signals": ["recal"]}, "`signals`: unknown signal 'recal'; use any of recall, precision"),
        ({"signals": []}, "`signals` names no signal"),
        ({"corpus_version": " "}, "`corpus_version` is a source version as case ids name it"),
        ({"corpus_version": "v9"}, "no run holds cases of corpus version 'v9': the runs' cases are of v1, v2"),
    ],
)
def test_what_cannot_be_shown_is_refused(folder: Path, options: dict[str, object], message: str) -> None:
    with pytest.raises(CompareError, match=message):
        history(folder / "a-fourth.arrow", **options)  # type: ignore[arg-type]
