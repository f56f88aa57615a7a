"""Pairs files: both orders combined into a verdict, every case kept, frozen, verified, tied to their two runs,
holding no credential."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import polars as pl
import pytest

from rag_compare import freeze_run
from rag_compare.core.errors import PairsError, RunExistsError, RunFileError, RunIntegrityError, SecretInConfigError
from rag_compare.io.pairs import JUDGE_INPUTS, PAIRS_SCHEMA, Pairs, judge_pairs, load_pairs, pairs_to_judge
from rag_compare.io.runs import FORMAT_VERSION, PAIRS_FORMAT, Run, frozen_format, load_run
from tests.helpers.credential_shapes import KEY_SHAPES, OPENAI_KEY, copied_as, legacy_run, named_with, secret_parts
from tests.helpers.judged import CORPUS as JUDGED_CORPUS
from tests.helpers.judged import SAMPLED_RECORDS
from tests.helpers.pairs import BASELINE, CANDIDATE, CORPUS, EXPECTED_COUNTS, FAILURE, IDS, ScriptedPairJudge

# The verdict of each case, worked out in tests/helpers/pairs.py.
EXPECTED_VERDICTS = {
    "a_better@v1": "candidate",
    "b_worse@v1": "baseline",
    "c_tie@v1": "tie",
    "d_first@v1": "inconsistent",
    "e_same@v1": "tie",
    "f_failed@v1": None,
    "g_missing@v1": None,
    "h_judgefail@v1": None,
    "i_halftie@v1": "inconsistent",
}
ASKED = ["a_better@v1", "b_worse@v1", "c_tie@v1", "d_first@v1", "h_judgefail@v1", "i_halftie@v1"]


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Run, Run]:
    return (
        freeze_run(BASELINE, CORPUS, {"name": "base"}, output=tmp_path / "base.arrow"),
        freeze_run(CANDIDATE, CORPUS, {"name": "cand"}, output=tmp_path / "cand.arrow"),
    )


def test_both_orders_make_one_verdict_and_every_case_is_kept(runs: tuple[Run, Run]) -> None:
    judge = ScriptedPairJudge()
    pairs = judge_pairs(*runs, judge)
    frame = pairs.frame
    assert frame.schema == pl.Schema(PAIRS_SCHEMA)
    assert frame.get_column("case_id").to_list() == IDS
    assert dict(zip(IDS, frame.get_column("verdict").to_list(), strict=True)) == EXPECTED_VERDICTS
    assert pairs.counts == EXPECTED_COUNTS
    statuses = dict(zip(IDS, frame.get_column("judge_status").to_list(), strict=True))
    assert statuses["f_failed@v1"] == statuses["g_missing@v1"] == "not_judged"
    assert statuses["h_judgefail@v1"] == "judge_failed"
    assert frame.filter(pl.col("case_id") == "h_judgefail@v1").item(0, "judge_error") == f"candidate_first: {FAILURE}"
    # The order that answered keeps its choice when the other failed.
    assert frame.filter(pl.col("case_id") == "h_judgefail@v1").item(0, "baseline_first") == "second"
    # Identical answers (after stripping whitespace) are a tie without a request; so are no others.
    assert frame.filter(pl.col("identical")).get_column("case_id").to_list() == ["e_same@v1"]
    assert frame.filter(pl.col("case_id") == "e_same@v1").row(0, named=True)["requests"] == 0


def test_only_cases_answered_differently_on_both_sides_are_asked(runs: tuple[Run, Run]) -> None:
    judge = ScriptedPairJudge()
    judge_pairs(*runs, judge)
    assert len(judge.asked) == 1
    asked = judge.asked[0]
    assert asked.columns == list(JUDGE_INPUTS)
    assert asked.get_column("case_id").to_list() == ASKED
    first = asked.row(0, named=True)
    assert first["baseline_answer"] == "Leave is 3 days."
    assert first["candidate_answer"] == "Leave is 3 days; part-timers get 5 days."
    assert first["question"] == "How long is leave (a)?"
    assert first["candidate_context"] == "[p] Leave is 3 days. Part-timers get 5 days."
    assert pairs_to_judge(*runs).equals(asked)


def test_a_judge_that_always_picks_the_first_answer_wins_nothing(runs: tuple[Run, Run]) -> None:
    always_first = ScriptedPairJudge(dict.fromkeys(ASKED, ("first", "first")))
    pairs = judge_pairs(*runs, always_first)
    counts = pairs.counts
    assert counts["candidate"] == counts["baseline"] == 0
    assert counts["inconsistent"] == len(ASKED)
    assert counts["tie"] == 1  # the identical answers, never asked


def test_a_pairs_file_round_trips_and_refuses_changes(runs: tuple[Run, Run], tmp_path: Path) -> None:
    output = tmp_path / "pairs.arrow"
    made = judge_pairs(*runs, ScriptedPairJudge(), output=output)
    loaded = load_pairs(output)
    assert loaded.frame.equals(made.frame)
    assert loaded.fingerprint == made.fingerprint
    assert loaded.baseline["fingerprint"] == runs[0].fingerprint
    assert loaded.candidate["fingerprint"] == runs[1].fingerprint
    assert loaded.evaluator["name"] == "scripted"
    assert loaded.to_dict()["usage"] == {"prompt_tokens": 220, "completion_tokens": 55, "requests": 12}
    assert frozen_format(output) == PAIRS_FORMAT
    assert frozen_format(runs[0].path or "") == FORMAT_VERSION
    data = bytearray(output.read_bytes())
    data[len(data) // 2] ^= 0xFF
    changed = tmp_path / "changed.arrow"
    changed.write_bytes(bytes(data))
    with pytest.raises((RunIntegrityError, RunFileError)):
        load_pairs(changed)


def test_an_existing_output_is_refused_before_any_request(runs: tuple[Run, Run], tmp_path: Path) -> None:
    output = tmp_path / "pairs.arrow"
    output.write_text("keep me")
    judge = ScriptedPairJudge()
    with pytest.raises(RunExistsError):
        judge_pairs(*runs, judge, output=output)
    assert judge.asked == []
    assert output.read_text() == "keep me"


def test_pairs_are_refused_with_other_runs_or_the_runs_swapped(runs: tuple[Run, Run]) -> None:
    pairs = judge_pairs(*runs, ScriptedPairJudge())
    baseline, candidate = (run.fingerprint for run in runs)
    pairs.check_paired(baseline, candidate)
    with pytest.raises(PairsError, match="the other way round"):
        pairs.check_paired(candidate, baseline)
    with pytest.raises(PairsError, match="not"):
        pairs.check_paired(baseline, "0" * 64)


def test_files_of_one_kind_are_refused_as_another(runs: tuple[Run, Run], tmp_path: Path) -> None:
    output = tmp_path / "pairs.arrow"
    judge_pairs(*runs, ScriptedPairJudge(), output=output)
    with pytest.raises(RunFileError, match="is a pairs file, not a run"):
        load_run(output)
    with pytest.raises(PairsError, match="is not a pairs file"):
        load_pairs(runs[0].path or "")


def test_runs_with_repeats_are_refused() -> None:
    sampled = freeze_run(SAMPLED_RECORDS, JUDGED_CORPUS, {"name": "sampled"})
    judge = ScriptedPairJudge()
    with pytest.raises(PairsError, match="several samples of a case"):
        judge_pairs(sampled, sampled, judge)
    assert judge.asked == []


def test_a_judge_returning_the_wrong_rows_is_refused(runs: tuple[Run, Run]) -> None:
    class Short(ScriptedPairJudge):
        def judge_pairs(self, pairs: pl.DataFrame) -> pl.DataFrame:
            return super().judge_pairs(pairs).head(2)

    class Unknown(ScriptedPairJudge):
        def judge_pairs(self, pairs: pl.DataFrame) -> pl.DataFrame:
            return super().judge_pairs(pairs).with_columns(baseline_first=pl.lit("left"))

    with pytest.raises(PairsError, match="returned 2 rows for 6 pairs"):
        judge_pairs(*runs, Short())
    with pytest.raises(PairsError, match="a choice other than first/second/tie"):
        judge_pairs(*runs, Unknown())


def test_a_reason_holding_a_credential_is_never_written(runs: tuple[Run, Run], tmp_path: Path) -> None:
    class Leaky(ScriptedPairJudge):
        def judge_pairs(self, pairs: pl.DataFrame) -> pl.DataFrame:
            return super().judge_pairs(pairs).with_columns(baseline_first_reason=pl.lit(f"key {OPENAI_KEY}"))

    output = tmp_path / "pairs.arrow"
    with pytest.raises(PairsError, match="hold credentials") as raised:
        judge_pairs(*runs, Leaky(), output=output)
    assert OPENAI_KEY not in str(raised.value)
    assert not output.exists()


def test_a_run_compared_with_itself_is_all_ties_without_a_request(runs: tuple[Run, Run]) -> None:
    judge = ScriptedPairJudge({})
    pairs = judge_pairs(runs[0], runs[0], judge)
    assert judge.asked == []
    assert isinstance(pairs, Pairs)
    assert pairs.counts["tie"] == len(IDS)


@pytest.mark.parametrize("place", ["baseline", "candidate", "output", "name"])
@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_what_a_pairs_file_records_holds_no_credential_and_is_checked_before_any_request(
    runs: tuple[Run, Run], tmp_path: Path, secret: str, place: str
) -> None:
    paths = [cast(Path, run.path) for run in runs]
    given: dict[str, Any] = {
        "baseline": copied_as(paths[0], secret) if place == "baseline" else paths[0],
        "candidate": copied_as(paths[1], secret) if place == "candidate" else paths[1],
        "output": named_with(secret, tmp_path, ".arrow") if place == "output" else tmp_path / "pairs.arrow",
    }
    if place == "name":
        given["baseline"] = legacy_run(paths[0], secret, tmp_path / "old.arrow")
    judge, before = ScriptedPairJudge(), sorted(tmp_path.rglob("*"))
    with pytest.raises(SecretInConfigError) as raised:
        judge_pairs(given["baseline"], given["candidate"], judge, output=given["output"])
    said = "'baseline.name' holds" if place == "name" else f"the path of `{place}` holds"
    assert said in str(raised.value)
    assert not any(form in str(raised.value) for form in secret_parts(secret))
    assert judge.asked == []
    assert sorted(tmp_path.rglob("*")) == before
