"""Imported scores: hand-made CSV/JSONL/Parquet files of the candidate example run, expected results beside them."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import Result

from rag_compare import compare, freeze_run
from rag_compare.core.errors import (
    ContractError,
    Problem,
    RagCompareError,
    RunExistsError,
    ScoresError,
    SecretInConfigError,
)
from rag_compare.io.external_scores import import_scores
from rag_compare.io.runs import Run, load_run
from rag_compare.io.scores import Scores, load_scores
from tests.helpers.credential_shapes import KEY_SHAPES, copied_as, named_with, secret_parts
from tests.helpers.data import HANDMADE_RUNS
from tests.helpers.judged import CORPUS as JUDGED_CORPUS
from tests.helpers.judged import SAMPLED_RECORDS

BASELINE, CANDIDATE = HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow"
RUN = load_run(CANDIDATE)
IDS: list[str] = RUN.records.get_column("case_id").to_list()  # 33 records, in run order
FAILED = "leave-carryover@2025-01"  # status failed in the candidate run
TIMED_OUT = "phone-allowance@2026-01"  # status timeout
LEFT_OUT = "stock-options@2026-01"  # an ok record the files below lack

# The scores file: every case of the run but LEFT_OUT; trust 0.5 unless listed here. The failed records carry a
# value too (a provider may score anything): it must not count, as there is no answer to judge.
TRUST = {
    "bike-lease@2026-01": 0.9,
    "hotel-cap@2026-01": 0.25,
    "ceo-salary@2026-01": 0.0,  # both ends of [0, 1] are accepted
    "flight-class@2026-01": 1.0,
    FAILED: 0.4,
    TIMED_OUT: 0.8,
}
ROWS = [{"case_id": case_id, "trust": TRUST.get(case_id, 0.5)} for case_id in IDS if case_id != LEFT_OUT]
# Expected: 30 ok (31 answered records minus LEFT_OUT), LEFT_OUT judge_failed, the two failed records not_judged.
EXPECTED_COUNTS = {"ok": 30, "judge_failed": 1, "not_judged": 2}
EXPECTED_TRUST = {
    "bike-lease@2026-01": (0.9, "ok"),
    "hotel-cap@2026-01": (0.25, "ok"),
    "ceo-salary@2026-01": (0.0, "ok"),
    "flight-class@2026-01": (1.0, "ok"),
    "mileage-rate@2025-01": (0.5, "ok"),
    FAILED: (None, "not_judged"),
    TIMED_OUT: (None, "not_judged"),
    LEFT_OUT: (None, "judge_failed"),
}


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    """``rows`` as CSV (cells as text, None an empty cell), JSONL or Parquet, by ``path``'s suffix."""
    if path.suffix == ".csv":
        columns = list(rows[0])
        lines = [",".join(columns)]
        lines += [",".join("" if row[name] is None else str(row[name]) for name in columns) for row in rows]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    else:
        pl.DataFrame(rows).write_parquet(path)
    return path


def by_case(scores: Scores, signal: str) -> dict[str, tuple[Any, str]]:
    return {
        case_id: (value, status)
        for case_id, value, status in scores.frame.select("case_id", signal, "judge_status").iter_rows()
    }


def imported(source: Path, mapping: Mapping[str, str] | None = None, **options: Any) -> Scores:
    return import_scores(RUN, source, evaluator="hosted", mapping=mapping or {"trust": "trustworthiness"}, **options)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_each_format_imports_the_values_onto_their_cases(tmp_path: Path, suffix: str) -> None:
    source = write_rows(tmp_path / f"trust{suffix}", ROWS)
    scores = imported(source, config={"model": "trust-v2"})
    assert scores.frame.height == RUN.records.height
    assert scores.frame.get_column("case_id").to_list() == IDS  # one row per record, in run order
    assert scores.frame.schema["trustworthiness"] == pl.Float64
    assert scores.counts == EXPECTED_COUNTS
    assert scores.signals == ("trustworthiness",)
    found = by_case(scores, "trustworthiness")
    assert {case_id: found[case_id] for case_id in EXPECTED_TRUST} == EXPECTED_TRUST
    assert dict(scores.run) == {"name": "candidate", "fingerprint": RUN.fingerprint, "path": str(CANDIDATE)}
    assert scores.evaluator["name"] == "hosted"
    assert scores.evaluator["config"] == {
        "name": "hosted",
        "mapping": {"trust": "trustworthiness"},
        "settings": {"model": "trust-v2"},
        "source": str(source),
    }
    assert scores.path is None
    assert set(tmp_path.iterdir()) == {source}  # nothing written without output


def test_a_case_the_file_lacks_is_judge_failed_with_no_score(tmp_path: Path) -> None:
    scores = imported(write_rows(tmp_path / "trust.csv", ROWS))
    row = scores.frame.filter(pl.col("case_id") == LEFT_OUT).row(0, named=True)
    assert row["judge_status"] == "judge_failed"
    assert row["trustworthiness"] is None
    assert "no score" in row["judge_error"]
    assert str(tmp_path / "trust.csv") in row["judge_error"]
    # Only that case carries an error: the failed records are not_judged, not judge_failed.
    errors = scores.frame.filter(pl.col("judge_error").is_not_null()).get_column("case_id").to_list()
    assert errors == [LEFT_OUT]


def test_a_null_value_in_a_mapped_column_fails_that_case_whole(tmp_path: Path) -> None:
    # Two mapped columns; hotel-cap@2026-01 lacks its helpfulness: none of its values count.
    rows = [{**row, "help": None if row["case_id"] == "hotel-cap@2026-01" else 0.75} for row in ROWS]
    for suffix in (".csv", ".jsonl"):
        source = write_rows(tmp_path / f"two{suffix}", rows)
        scores = imported(source, {"trust": "trustworthiness", "help": "helpfulness"})
        assert scores.signals == ("helpfulness", "trustworthiness")
        assert scores.counts == {"ok": 29, "judge_failed": 2, "not_judged": 2}
        row = scores.frame.filter(pl.col("case_id") == "hotel-cap@2026-01").row(0, named=True)
        assert (row["judge_status"], row["trustworthiness"], row["helpfulness"]) == ("judge_failed", None, None)
        assert "no score" in row["judge_error"]
        bike = scores.frame.filter(pl.col("case_id") == "bike-lease@2026-01").row(0, named=True)
        assert (bike["judge_status"], bike["trustworthiness"], bike["helpfulness"]) == ("ok", 0.9, 0.75)


def test_an_id_column_of_another_name(tmp_path: Path) -> None:
    rows = [{"id": row["case_id"], "trust": row["trust"]} for row in ROWS]
    source = write_rows(tmp_path / "trust.jsonl", rows)
    scores = imported(source, id_column="id")
    assert scores.counts == EXPECTED_COUNTS
    assert by_case(scores, "trustworthiness")["hotel-cap@2026-01"] == (0.25, "ok")
    with pytest.raises(ContractError) as caught:
        imported(source)  # the default id column, case_id, is not in the file
    assert caught.value.problems == (Problem("a column of that name", column="case_id"),)


def test_a_flag_signal_takes_true_or_false(tmp_path: Path) -> None:
    # abstained: true on ceo-salary@2026-01 only; CSV cells in any case, JSONL as booleans.
    csv_rows = [
        {"case_id": row["case_id"], "idk": "TRUE" if row["case_id"] == "ceo-salary@2026-01" else "false"}
        for row in ROWS
    ]
    json_rows = [{"case_id": row["case_id"], "idk": row["case_id"] == "ceo-salary@2026-01"} for row in ROWS]
    for source in (write_rows(tmp_path / "idk.csv", csv_rows), write_rows(tmp_path / "idk.jsonl", json_rows)):
        scores = imported(source, {"idk": "abstained"})
        assert scores.frame.schema["abstained"] == pl.Boolean
        found = by_case(scores, "abstained")
        assert found["ceo-salary@2026-01"] == (True, "ok")
        assert found["bike-lease@2026-01"] == (False, "ok")
        assert found[FAILED] == (None, "not_judged")
        assert scores.counts == EXPECTED_COUNTS
    bad = [{**row, "idk": "yes"} if row["case_id"] == "bike-lease@2026-01" else row for row in csv_rows]
    with pytest.raises(ContractError) as caught:
        imported(write_rows(tmp_path / "bad.csv", bad), {"idk": "abstained"})
    assert caught.value.problems == (Problem("true or false", row=1, column="idk", value="'yes'"),)


def test_fingerprint_follows_name_mapping_and_config_not_the_file(tmp_path: Path) -> None:
    csv = write_rows(tmp_path / "trust.csv", ROWS)
    jsonl = write_rows(tmp_path / "trust.jsonl", ROWS)
    first = imported(csv, config={"model": "trust-v2"})
    again = imported(jsonl, config={"model": "trust-v2"})
    assert first.evaluator["fingerprint"] == again.evaluator["fingerprint"]  # same evaluator, other file
    assert first.evaluator["config"]["source"] != again.evaluator["config"]["source"]
    assert len(first.evaluator["fingerprint"]) == 64
    others = [
        imported(csv, config={"model": "trust-v3"}),  # another setting
        imported(csv),  # no settings
        imported(csv, {"trust": "grounded"}, config={"model": "trust-v2"}),  # another mapping
        import_scores(RUN, csv, evaluator="other", mapping={"trust": "trustworthiness"}, config={"model": "trust-v2"}),
    ]
    fingerprints = {first.evaluator["fingerprint"], *(scores.evaluator["fingerprint"] for scores in others)}
    assert len(fingerprints) == 5


def test_config_keys_cannot_stand_in_for_the_name_or_the_mapping(tmp_path: Path) -> None:
    """A declared setting called ``name``, ``mapping`` or ``source`` (``--set mapping=v1``) must not replace the
    evaluator's own: two imports that map the column to different signals are different evaluators."""
    csv = write_rows(tmp_path / "trust.csv", ROWS)
    declared = {"mapping": "v1", "name": "trust-service", "source": "elsewhere"}
    trust = imported(csv, config=declared)
    grounded = imported(csv, {"trust": "grounded"}, config=declared)
    assert trust.evaluator["fingerprint"] != grounded.evaluator["fingerprint"]
    assert trust.evaluator["config"] == {
        "name": "hosted",
        "mapping": {"trust": "trustworthiness"},
        "settings": declared,
        "source": str(csv),
    }
    assert trust.evaluator["name"] == "hosted"


# One file with every kind of row problem; all are listed at once, in file order (row 1 is the first data row).
BAD_ROWS = [
    {"case_id": "nope@2026-01", "trust": "0.5"},  # row 1: not a case of the run
    {"case_id": "bike-lease@2026-01", "trust": "1.7"},  # row 2: above 1
    {"case_id": "hotel-cap@2026-01", "trust": "high"},  # row 3: not a number
    {"case_id": "ceo-salary@2026-01", "trust": "-0.1"},  # row 4: below 0
    {"case_id": "flight-class@2026-01", "trust": "0.2"},  # row 5: fine on its own...
    {"case_id": "flight-class@2026-01", "trust": "0.3"},  # row 6: ...but given twice
    {"case_id": "sabbatical@2026-01", "trust": "1"},  # row 7: fine
]
BAD_PROBLEMS = [
    (1, "case_id", "'nope@2026-01'", "a case id of run 'candidate'"),
    (2, "trust", "'1.7'", "a number from 0 to 1 (rescale the scores first)"),
    (3, "trust", "'high'", "a number from 0 to 1 (rescale the scores first)"),
    (4, "trust", "'-0.1'", "a number from 0 to 1 (rescale the scores first)"),
    (5, "case_id", "'flight-class@2026-01'", "a case id, given once"),
    (6, "case_id", "'flight-class@2026-01'", "a case id, given once"),
]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_every_row_problem_is_listed_at_once_and_nothing_is_written(tmp_path: Path, suffix: str) -> None:
    rows = BAD_ROWS if suffix == ".csv" else [{**row, "trust": _number(row["trust"])} for row in BAD_ROWS]
    source = write_rows(tmp_path / f"bad{suffix}", rows)
    output = tmp_path / "scores.arrow"
    with pytest.raises(ContractError) as caught:
        imported(source, output=output)
    error = caught.value
    assert isinstance(error, RagCompareError)
    assert [(p.row, p.column, p.value, p.expected) for p in error.problems] == BAD_PROBLEMS
    message = str(error)
    assert message.startswith(f"{source}: not a valid scores file (6 problems; nothing was loaded)")
    assert "row 2, column 'trust': got '1.7'; expected a number from 0 to 1" in message
    assert "row 1, column 'case_id': got 'nope@2026-01'; expected a case id of run 'candidate'" in message
    assert not output.exists()
    assert set(tmp_path.iterdir()) == {source}


def _number(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


def test_missing_mapped_columns_are_listed_together(tmp_path: Path) -> None:
    source = write_rows(tmp_path / "trust.csv", ROWS)
    with pytest.raises(ContractError) as caught:
        imported(source, {"trust": "trustworthiness", "help": "helpfulness", "ease": "query_ease"})
    assert [(p.column, p.expected) for p in caught.value.problems] == [
        ("ease", "a column of that name"),
        ("help", "a column of that name"),
    ]
    assert "column 'help'" in str(caught.value)


@pytest.mark.parametrize(
    ("evaluator", "mapping", "message"),
    [
        (
            "hosted",
            {"trust": "trust_score", "x": "bogus"},
            "unknown signal bogus, trust_score; map columns to any of: grounded",
        ),
        (
            "hosted",
            {"trust": "trustworthiness", "trust2": "trustworthiness"},
            "two columns are mapped to the same signal",
        ),
        ("hosted", {}, "map at least one column to a signal"),
        ("  ", {"trust": "trustworthiness"}, "name the evaluator"),
        ("", {"trust": "trustworthiness"}, "name the evaluator"),
    ],
)
def test_unusable_arguments_are_refused_before_reading(
    tmp_path: Path, evaluator: str, mapping: dict[str, str], message: str
) -> None:
    output = tmp_path / "scores.arrow"
    with pytest.raises(ScoresError, match=message):
        # The source does not exist: the arguments are checked first.
        import_scores(RUN, tmp_path / "absent.csv", evaluator=evaluator, mapping=mapping, output=output)
    assert not output.exists()


def test_an_existing_output_is_never_overwritten(tmp_path: Path) -> None:
    source = write_rows(tmp_path / "trust.csv", ROWS)
    output = tmp_path / "scores.arrow"
    output.write_bytes(b"keep me")
    with pytest.raises(RunExistsError, match="already exists"):
        imported(source, output=output)
    assert output.read_bytes() == b"keep me"


def test_written_scores_load_back_the_same(tmp_path: Path) -> None:
    source = write_rows(tmp_path / "trust.parquet", ROWS)
    output = tmp_path / "candidate.scores.arrow"
    made = imported(source, config={"model": "trust-v2"}, output=output)
    assert made.path == output
    loaded = load_scores(output)
    assert loaded.frame.equals(made.frame)
    assert loaded.fingerprint == made.fingerprint
    assert dict(loaded.evaluator) == dict(made.evaluator)
    assert dict(loaded.run) == dict(made.run)
    assert loaded.counts == EXPECTED_COUNTS
    loaded.check_scored(RUN)  # the run it scored: accepted
    with pytest.raises(ScoresError, match="scored run 'candidate'"):
        loaded.check_scored(load_run(BASELINE))


def test_a_comparison_uses_the_imported_scores(tmp_path: Path) -> None:
    output = imported(write_rows(tmp_path / "trust.csv", ROWS), output=tmp_path / "c.scores.arrow").path
    assert output is not None
    comparison = compare(BASELINE, CANDIDATE, candidate_scores=output)
    cases = comparison.cases
    assert "candidate_trustworthiness" in cases.columns
    values = {
        case_id: value
        for case_id, value in cases.select("case_id", "candidate_trustworthiness").iter_rows()
        if case_id in EXPECTED_TRUST
    }
    assert values == {case_id: value for case_id, (value, _) in EXPECTED_TRUST.items()}
    assert cases.filter(pl.col("case_id") == "hotel-cap@2026-01").get_column("baseline_trustworthiness").to_list() == [
        None
    ]
    judge_failed = cases.filter(pl.col("candidate_judge_status") == "judge_failed").get_column("case_id").to_list()
    assert judge_failed == [LEFT_OUT]
    assert comparison.counts["judge_failed_in_candidate"] == 1
    warning = next(text for text in comparison.warnings if "different evaluators" in text)
    assert "baseline: the offline judge" in warning
    assert "candidate: hosted" in warning


def test_a_run_object_and_a_run_path_give_the_same_scores(tmp_path: Path) -> None:
    source = write_rows(tmp_path / "trust.csv", ROWS)
    by_object, by_path = (
        imported(source),
        import_scores(CANDIDATE, source, evaluator="hosted", mapping={"trust": "trustworthiness"}),
    )
    assert isinstance(RUN, Run)
    assert by_object.frame.equals(by_path.frame)
    assert by_object.evaluator["fingerprint"] == by_path.evaluator["fingerprint"]


# -- credentials and non-finite settings, through the entry point -----------------------------------------------------


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        pytest.param(f"model={json.dumps({'names': ['x', KEY_SHAPES['aws']]})}", "holds a credential", id="key-shape"),
        pytest.param(
            'headers=[{"auth": "x"}]', "'config.settings.headers[0].auth' is named like a credential", id="key-name"
        ),
        pytest.param("calibration.scale=NaN", "not a finite number", id="nan"),
    ],
)
def test_import_scores_refuses_settings_that_cannot_be_stored(
    cli: Callable[..., Result], tmp_path: Path, assignment: str, message: str
) -> None:
    source = tmp_path / "trust.csv"
    pl.DataFrame(ROWS).write_csv(source)
    output = tmp_path / "scores.arrow"
    result = cli("import-scores", CANDIDATE, source, "--evaluator", "hosted", "--map", "trust=trustworthiness",
                 "--set", assignment, "--output", output)  # fmt: skip
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert KEY_SHAPES["aws"] not in result.output
    assert not output.exists()


SAMPLED = freeze_run(SAMPLED_RECORDS, JUDGED_CORPUS, {"name": "sampled"}, environ={})
# Scores of SAMPLED, per sample: trust 0.1 * index of the case (q0 0.0, q1 0.1, ...) in repeat 0, 0.05 more in
# repeat 1; q3@v1's repeat 1 is left out (judge_failed), failed@v1's samples are not_judged.
SAMPLE_ROWS = [
    {"case_id": case_id, "repeat": repeat, "trust": round(0.1 * index + 0.05 * repeat, 2)}
    for repeat in (0, 1)
    for index, case_id in enumerate(JUDGED_CORPUS.get_column("case_id"))
    if (case_id, repeat) != ("q3@v1", 1)
]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_scores_of_a_run_with_repeats_land_on_their_samples(tmp_path: Path, suffix: str) -> None:
    source = write_rows(tmp_path / f"trust{suffix}", SAMPLE_ROWS[::-1])  # any row order
    scores = import_scores(SAMPLED, source, evaluator="hosted", mapping={"trust": "trustworthiness"})
    assert scores.frame.select("case_id", "repeat").equals(SAMPLED.records.select("case_id", "repeat"))
    values = {(case, repeat): (value, status) for case, repeat, value, status in
              scores.frame.select("case_id", "repeat", "trustworthiness", "judge_status").rows()}  # fmt: skip
    assert values[("q1@v1", 0)] == (0.1, "ok")
    assert values[("q1@v1", 1)] == (0.15, "ok")
    assert values[("q3@v1", 0)] == (0.3, "ok")
    assert values[("q3@v1", 1)] == (None, "judge_failed")
    assert values[("failed@v1", 1)] == (None, "not_judged")
    assert scores.counts == {"ok": 15, "judge_failed": 1, "not_judged": 2}  # 16 answered samples, 1 left out


def test_a_repeat_column_of_another_name(tmp_path: Path) -> None:
    rows = [{"case_id": row["case_id"], "sample": row["repeat"], "trust": row["trust"]} for row in SAMPLE_ROWS]
    source = write_rows(tmp_path / "trust.jsonl", rows)
    scores = import_scores(
        SAMPLED, source, evaluator="hosted", mapping={"trust": "trustworthiness"}, repeat_column="sample"
    )
    assert scores.counts == {"ok": 15, "judge_failed": 1, "not_judged": 2}
    assert "sample" not in scores.frame.columns


def test_scores_without_repeats_for_a_run_with_repeats_are_refused(tmp_path: Path) -> None:
    source = write_rows(
        tmp_path / "trust.csv", [{"case_id": row["case_id"], "trust": row["trust"]} for row in SAMPLE_ROWS]
    )
    output = tmp_path / "scores.arrow"
    with pytest.raises(ScoresError, match=r"run 'sampled' holds several samples of a case .* needs a column 'repeat'"):
        import_scores(SAMPLED, source, evaluator="hosted", mapping={"trust": "trustworthiness"}, output=output)
    assert not output.exists()


def test_every_bad_sample_key_is_listed_at_once(tmp_path: Path) -> None:
    # Row 1 empty repeat, row 2 not a whole number, rows 3 and 4 the same sample, row 5 a repeat the run lacks.
    source = tmp_path / "trust.csv"
    source.write_text(
        "case_id,repeat,trust\nq0@v1,,0.5\nq0@v1,x,0.5\nq1@v1,0,0.5\nq1@v1,0,0.5\nq2@v1,5,0.5\n", encoding="utf-8"
    )
    with pytest.raises(ContractError) as caught:
        import_scores(SAMPLED, source, evaluator="hosted", mapping={"trust": "trustworthiness"})
    assert [(p.row, p.column, p.expected) for p in caught.value.problems] == [
        (1, "repeat", "a repeat of the run's samples (0, 1, ...)"),
        (2, "repeat", "a whole number"),
        (3, "case_id", "a (case id, repeat) pair given once"),
        (4, "case_id", "a (case id, repeat) pair given once"),
        (5, "case_id", "a case id of run 'sampled' with a repeat 5"),
    ]


@pytest.mark.parametrize("place", ["run", "source", "output"])
@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_a_path_holding_a_credential_is_refused_before_the_file_is_read(
    tmp_path: Path, secret: str, place: str
) -> None:
    run = shutil.copyfile(CANDIDATE, tmp_path / "candidate.arrow")
    source = write_rows(tmp_path / "trust.csv", ROWS)
    given = {
        "run": copied_as(run, secret) if place == "run" else run,
        "source": copied_as(source, secret) if place == "source" else source,
        "output": named_with(secret, tmp_path, ".arrow") if place == "output" else tmp_path / "scores.arrow",
    }
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(SecretInConfigError) as raised:
        import_scores(**given, evaluator="hosted", mapping={"trust": "trustworthiness"})
    assert str(raised.value).startswith(f"the path of `{place}` holds a credential")
    assert not any(form in str(raised.value) for form in secret_parts(secret))
    assert sorted(tmp_path.rglob("*")) == before
