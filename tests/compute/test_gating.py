"""Release gates: every form of condition parsed, every mistake refused with its message, and each kind
decided on a small hand-built comparison (its cases and aggregate rows written out below)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest

from rag_compare import Comparison, Gate, GateError, GateResult, compare, load_gate
from rag_compare.compute.case_status import CASE_STATUSES
from rag_compare.compute.case_table import CaseTable
from rag_compare.compute.gate_grammar import GATE_GRAMMAR, ErrorRateLimit, SignalLimit, StatusLimit
from rag_compare.compute.gate_result import ConditionResult
from tests.helpers.data import HANDMADE_RUNS

# Ten cases: (status, candidate record status, candidate judge status).
CASES = [
    ("regressed", "ok", None),
    ("regressed", "ok", None),
    ("regressed", "ok", None),
    ("failed_in_candidate", "timeout", None),  # error_rate: failed
    ("missing_in_candidate", None, None),  # error_rate: missing
    ("judge_failed_in_candidate", "ok", "judge_failed"),  # error_rate: judge_failed
    ("failed_in_baseline", "ok", "judge_failed"),  # error_rate: judge_failed (the candidate side counts)
    ("missing_in_baseline", "ok", None),
    ("unchanged", "ok", None),
    ("unchanged", "ok", None),
]
# Aggregate rows: (signal, scope, baseline, candidate, delta, ci_low, ci_high, p_adjusted, n).
AGGREGATES = [
    ("recall", "paired", 0.9, 0.8, -0.1, -0.2, -0.05, 0.01, 8),  # worse at alpha 0.05, not at 0.005
    ("recall", "all_cases", 0.85, 0.8, -0.05, -0.15, 0.02, 0.3, 10),  # CI reaches above 0: not worse
    ("context_construction_failure", "paired", 0.1, 0.3, 0.2, 0.1, 0.3, 0.02, 8),  # lower is better: worse
    ("grounded", "paired", 0.9, 0.8, -0.1, -0.3, -0.1, 0.2, 8),  # CI below 0 but p 0.2: not worse
    ("abstained", "paired", 0.5, 0.2, -0.3, -0.5, -0.1, 0.001, 8),  # lower is better: this is better
    ("answer_completeness", "paired", None, None, None, None, None, None, 0),  # no value on both sides
]


@pytest.fixture(scope="module")
def handmade() -> Comparison:
    return compare(HANDMADE_RUNS / "baseline.arrow", HANDMADE_RUNS / "candidate.arrow")


@pytest.fixture(scope="module")
def comparison(handmade: Comparison) -> Comparison:
    """The hand-made comparison with the ten cases and the aggregate rows above in place of its own."""
    cases = pl.DataFrame(
        CASES,
        schema={"status": pl.Enum(CASE_STATUSES), "candidate_status": pl.String, "candidate_judge_status": pl.String},
        orient="row",
    )
    columns = ["signal", "scope", "baseline", "candidate", "delta", "ci_low", "ci_high", "p_adjusted", "n"]
    aggregates = pl.DataFrame(AGGREGATES, schema=columns, orient="row")
    return replace(handmade, case_table=CaseTable.held(cases), aggregates=aggregates)


def _decided(comparison: Comparison, condition: str, alpha: float = 0.05) -> ConditionResult:
    (result,) = Gate.parse([condition], alpha).evaluate(comparison).conditions
    return result


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("regressed", StatusLimit("regressed", "regressed", ">", 0, share=False)),
        ("regressed>=3", StatusLimit("regressed>=3", "regressed", ">=", 3, share=False)),
        (" missing_in_candidate > 0 ", StatusLimit("missing_in_candidate > 0", "missing_in_candidate", ">", 0, False)),
        ("regressed>2.5%", StatusLimit("regressed>2.5%", "regressed", ">", 2.5, share=True)),
        ("regressed <= 10 %", StatusLimit("regressed <= 10 %", "regressed", "<=", 10, share=True)),
        ("recall:worse", SignalLimit("recall:worse", "paired", "recall", "worse", ">", 0.0)),
        (
            "all_cases . recall : worse",
            SignalLimit("all_cases . recall : worse", "all_cases", "recall", "worse", ">", 0),
        ),
        ("grounded:delta<-0.02", SignalLimit("grounded:delta<-0.02", "paired", "grounded", "delta", "<", -0.02)),
        (
            "abstention_correct:candidate<.9",
            SignalLimit("abstention_correct:candidate<.9", "paired", "abstention_correct", "candidate", "<", 0.9),
        ),
        (
            "paired.helpfulness:baseline>=1",
            SignalLimit("paired.helpfulness:baseline>=1", "paired", "helpfulness", "baseline", ">=", 1),
        ),
        ("error_rate>5%", ErrorRateLimit("error_rate>5%", ">", 5)),
        ("regressed[stage=answer]", StatusLimit("regressed[stage=answer]", "regressed", ">", 0, False, "answer")),
        (
            " mixed [ stage = context ] >= 10% ",
            StatusLimit("mixed [ stage = context ] >= 10%", "mixed", ">=", 10, True, "context"),
        ),
    ],
)
def test_every_form_parses(text: str, parsed: object) -> None:
    assert Gate.parse([text]).conditions == (parsed,)


def test_a_string_may_hold_several_conditions_and_alpha_is_kept() -> None:
    gate = Gate.parse(["regressed, failed_in_candidate", "recall:worse"], alpha=0.01)
    assert [condition.text for condition in gate.conditions] == ["regressed", "failed_in_candidate", "recall:worse"]
    assert gate.alpha == 0.01


@pytest.mark.parametrize(
    ("conditions", "message"),
    [
        ([""], "gate conditions '': no condition. An empty condition checks nothing"),
        ([" , "], "gate conditions ' , ': no condition."),
        ([",,"], "gate conditions ',,': no condition."),
        (["regressed", "  "], "gate conditions '  ': no condition."),
        (["regressed,"], "gate conditions 'regressed,': an empty condition between commas"),
        ([", regressed"], "gate conditions ', regressed': an empty condition between commas"),
        (["regressed,,recall:worse"], "an empty condition between commas"),
        ([], "a gate needs at least one condition (`conditions` is empty)"),
    ],
)
def test_an_empty_condition_or_gate_is_refused(conditions: list[str], message: str) -> None:
    with pytest.raises(GateError) as raised:
        Gate.parse(conditions)
    assert message in str(raised.value)


@pytest.mark.parametrize("conditions", [(), []])
def test_a_gate_without_conditions_cannot_be_made(conditions: tuple[()]) -> None:
    with pytest.raises(GateError, match="a gate needs at least one condition"):
        Gate(conditions)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("regresed", "unknown status regresed; use any of: missing_in_baseline, missing_in_candidate"),
        ("recal:worse", "unknown signal recal; use any of: recall, precision"),
        ("x.recall:worse", "unknown scope x; use paired (the default) or all_cases"),
        ("recall:wrose", "unknown measure wrose; use one of: worse, delta, candidate, baseline"),
        ("paired.recall", "no measure; use one of: worse, delta, candidate, baseline"),
        ("recall", "a signal needs a measure: recall:worse"),
        ("recall:worse<0", "recall:worse takes no limit"),
        ("recall:delta", "recall:delta needs a limit"),
        ("grounded:delta<2%", "the limit of grounded:delta is a plain number such as -0.02, not '2%'"),
        ("grounded:delta<1e-3", "not '1e-3'"),
        ("regressed>2.5", "a count is a whole number of 0 or more, not '2.5' (a share ends with %)"),
        ("regressed>-1", "a count is a whole number of 0 or more, not '-1'"),
        ("regressed>", "a count is a whole number of 0 or more, not ''"),
        ("regressed>101%", "a share is a number from 0 to 100 followed by %, not '101%'"),
        ("error_rate>5", "error_rate is a share of all compared cases: give a limit in %"),
        ("error_rate", "error_rate is a share of all compared cases"),
        ("regressed=2", "not a condition this grammar reads"),
        ("regressed > 2 cases", "not a condition this grammar reads"),
        ("regressed[stage=model]", "unknown stage model; use one of: retrieval_rank, retrieval_coverage, context"),
        ("regressed[stage=failure]", "unknown stage failure"),
        ("failed_in_candidate[stage=answer]", "only a status of regressed, improved, mixed, unstable takes a stage"),
        ("regressed[stage=answer]>1.5", "a count is a whole number of 0 or more, not '1.5'"),
        ("regressed[phase=answer]", "not a condition this grammar reads"),
    ],
)
def test_a_bad_condition_is_named_with_what_is_wrong_and_the_grammar(text: str, message: str) -> None:
    with pytest.raises(GateError) as raised:
        Gate.parse([text])
    assert str(raised.value).startswith(f"gate condition {text!r}: ")
    assert message in str(raised.value)
    assert str(raised.value).endswith(GATE_GRAMMAR)


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5, float("nan"), True, "0.05"])
def test_alpha_must_be_between_zero_and_one(alpha: object) -> None:
    with pytest.raises(GateError, match="`alpha` must be a number between 0 and 1"):
        Gate.parse(["recall:worse"], alpha)  # type: ignore[arg-type]


@pytest.mark.parametrize(("conditions", "message"), [("regressed", "not one string"), ([3], "not int")])
def test_conditions_must_be_a_list_of_strings(conditions: object, message: str) -> None:
    with pytest.raises(GateError, match=message):
        Gate.parse(conditions)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("condition", "held", "numbers"),
    [
        # 3 of 10 cases regressed = 30%.
        ("regressed", True, "3 of 10 cases (30%) regressed; the limit is > 0"),
        ("regressed>=3", True, "3 of 10 cases (30%) regressed; the limit is >= 3"),
        ("regressed>3", False, "3 of 10 cases (30%) regressed; the limit is > 3"),
        ("regressed>25%", True, "3 of 10 cases (30%) regressed; the limit is > 25%"),
        ("regressed>30%", False, "3 of 10 cases (30%) regressed; the limit is > 30%"),
        ("regressed<=30%", True, "3 of 10 cases (30%) regressed; the limit is <= 30%"),
        ("improved", False, "0 of 10 cases (0%) improved; the limit is > 0"),
    ],
)
def test_status_counts_and_shares(comparison: Comparison, condition: str, held: bool, numbers: str) -> None:
    assert _decided(comparison, condition) == ConditionResult(condition, held, True, numbers)


def test_a_share_shows_the_digits_that_set_it_apart_from_its_limit(handmade: Comparison) -> None:
    # 4 of 34 cases regressed = 11.76...%; at 3 significant digits 11.8, which differs from 11.9 only at the third.
    assert _decided(handmade, "regressed>11.9%").numbers == "4 of 34 cases (11.8%) regressed; the limit is > 11.9%"
    # 11.76% against 11.8%: shown with a fourth digit.
    assert _decided(handmade, "regressed>11.8%").numbers.startswith("4 of 34 cases (11.76%)")


@pytest.mark.parametrize(
    ("condition", "held", "numbers"),
    [
        # handmade: regressed 4, all at the answer; mixed 3, 2 at the answer and 1 at the context.
        ("regressed[stage=answer]", True, "4 of 34 cases (11.8%) regressed at the answer; the limit is > 0"),
        ("regressed[stage=context]", False, "0 of 34 cases (0%) regressed at the context; the limit is > 0"),
        ("mixed[stage=context]>=1", True, "1 of 34 cases (2.94%) mixed at the context; the limit is >= 1"),
        ("mixed[stage=answer]>5%", True, "2 of 34 cases (5.88%) mixed at the answer; the limit is > 5%"),
        ("improved[stage=retrieval_rank]", False, "0 of 34 cases (0%) improved rank only; the limit is > 0"),
    ],
)
def test_a_status_at_a_stage_counts_only_its_cases_that_changed_there(
    handmade: Comparison, condition: str, held: bool, numbers: str
) -> None:
    assert _decided(handmade, condition) == ConditionResult(condition, held, True, numbers)


def test_error_rate_counts_the_candidate_side_whatever_the_status(comparison: Comparison) -> None:
    # failed 1 (timeout), judge_failed 2 (one of them failed_in_baseline), missing 1: 4 of 10 = 40%.
    listed = "failed, were judge-failed or are missing in the candidate (failed 1, judge_failed 2, missing 1)"
    assert _decided(comparison, "error_rate>35%") == ConditionResult(
        "error_rate>35%", True, True, f"4 of 10 cases (40%) {listed}; the limit is > 35%"
    )
    assert not _decided(comparison, "error_rate>40%").held
    assert _decided(comparison, "error_rate>=40%").held


@pytest.mark.parametrize(
    ("condition", "alpha", "held", "numbers"),
    [
        (
            "recall:worse",
            0.05,
            True,
            "paired recall delta -0.1, 95% CI [-0.2, -0.05] (entirely below 0), p (Holm) 0.01 < alpha 0.05; n 8",
        ),
        (
            "recall:worse",
            0.005,
            False,
            "paired recall delta -0.1, 95% CI [-0.2, -0.05] (entirely below 0), p (Holm) 0.01 >= alpha 0.005; n 8",
        ),
        ("paired.recall:worse", 0.05, True, "paired recall delta -0.1"),
        (
            "all_cases.recall:worse",
            0.5,
            False,
            "all_cases recall delta -0.05, 95% CI [-0.15, 0.02] (not entirely below 0), p (Holm) 0.3 < alpha 0.5; n 10",
        ),
        (
            "context_construction_failure:worse",
            0.05,
            True,
            "paired context_construction_failure delta 0.2, "
            "95% CI [0.1, 0.3] (entirely above 0), p (Holm) 0.02 < alpha 0.05; n 8",
        ),
        ("grounded:worse", 0.05, False, "(entirely below 0), p (Holm) 0.2 >= alpha 0.05; n 8"),
        ("abstained:worse", 0.05, False, "paired abstained delta -0.3, 95% CI [-0.5, -0.1] (not entirely above 0)"),
    ],
)
def test_worse_needs_the_interval_on_the_worse_side_and_the_holm_p_under_alpha(
    comparison: Comparison, condition: str, alpha: float, held: bool, numbers: str
) -> None:
    result = _decided(comparison, condition, alpha)
    assert (result.held, result.evaluated) == (held, True)
    assert numbers in result.numbers


@pytest.mark.parametrize(
    ("condition", "held", "numbers"),
    [
        (
            "grounded:delta<-0.02",
            True,
            "paired grounded delta -0.1 (baseline 0.9, candidate 0.8, n 8); the limit is < -0.02",
        ),
        (
            "grounded:delta<-0.1",
            False,
            "paired grounded delta -0.1 (baseline 0.9, candidate 0.8, n 8); the limit is < -0.1",
        ),
        ("grounded:delta<=-0.1", True, "the limit is <= -0.1"),
        (
            "grounded:candidate<0.9",
            True,
            "paired grounded candidate 0.8 (baseline 0.9, delta -0.1, n 8); the limit is < 0.9",
        ),
        ("grounded:candidate<0.8", False, "the limit is < 0.8"),
        (
            "grounded:baseline>=0.9",
            True,
            "paired grounded baseline 0.9 (candidate 0.8, delta -0.1, n 8); the limit is >= 0.9",
        ),
        ("all_cases.recall:candidate>0.8", False, "all_cases recall candidate 0.8 (baseline 0.85, delta -0.05, n 10)"),
    ],
)
def test_delta_candidate_and_baseline_limits(comparison: Comparison, condition: str, held: bool, numbers: str) -> None:
    result = _decided(comparison, condition)
    assert (result.held, result.evaluated) == (held, True)
    assert numbers in result.numbers


@pytest.mark.parametrize(
    ("condition", "numbers"),
    [
        (
            "answer_completeness:worse",
            "no paired answer_completeness: no case has a value of answer_completeness on both sides",
        ),
        (
            "helpfulness:delta<0",
            "no paired helpfulness: the comparison has no value of helpfulness (a scores signal needs scores with it)",
        ),
        ("all_cases.grounded:worse", "no all_cases grounded: the comparison has no value of grounded"),
    ],
)
def test_a_signal_without_values_is_not_evaluated(comparison: Comparison, condition: str, numbers: str) -> None:
    result = _decided(comparison, condition)
    assert (result.held, result.evaluated) == (False, False)
    assert numbers in result.numbers


def test_a_share_of_no_cases_is_not_evaluated_and_a_count_is(comparison: Comparison) -> None:
    empty = replace(comparison, case_table=CaseTable.held(comparison.cases.clear()))
    share, count, rate = Gate.parse(["regressed>1%", "regressed>=0", "error_rate>0%"]).evaluate(empty).conditions
    assert share == ConditionResult(
        "regressed>1%", False, False, "no cases were compared: 0 regressed; the limit is > 1%"
    )
    assert (count.held, count.evaluated) == (True, True)
    assert (rate.held, rate.evaluated) == (False, False)


def test_the_gate_result_lists_every_condition_in_order(comparison: Comparison) -> None:
    result = Gate.parse(["improved", "regressed>25%", "helpfulness:delta<0"]).evaluate(comparison)
    assert isinstance(result, GateResult)
    assert [condition.condition for condition in result.held] == ["regressed>25%"]
    assert not result.passed
    assert result.to_dict()["conditions"][2] == {
        "condition": "helpfulness:delta<0",
        "held": False,
        "evaluated": False,
        "numbers": "no paired helpfulness: the comparison has no value of helpfulness (a scores signal needs "
        "scores with it)",
    }
    text = result.render()
    assert text.startswith("gate failed: 1 of 3 conditions held (alpha 0.05)\n")
    assert "improved             not held       0 of 10 cases (0%) improved; the limit is > 0" in text
    assert "helpfulness:delta<0  not evaluated" in text


def test_load_gate_reads_the_gate_table(tmp_path: Path) -> None:
    path = tmp_path / "gate.toml"
    path.write_text('[other]\nx = 1\n[gate]\nfail_on = ["regressed>2%", "recall:worse,error_rate>5%"]\nalpha = 0.01\n')
    gate = load_gate(path)
    assert [condition.text for condition in gate.conditions] == ["regressed>2%", "recall:worse", "error_rate>5%"]
    assert gate.alpha == 0.01
    path.write_text('[gate]\nfail_on = ["regressed"]\n')
    assert load_gate(path) == Gate.parse(["regressed"], 0.05)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[gate\n", "is not valid TOML"),
        ("[other]\nfail_on = []\n", 'has no [gate] table; write one, e.g. [gate] then fail_on = ["regressed>2%"]'),
        ("gate = 3\n", "has a 'gate' that is not a table"),
        (
            '[gate]\nfail_on = ["regressed"]\nfail = 1\nalfa = 0.1\n',
            "[gate] has unknown keys alfa, fail; use fail_on and alpha",
        ),
        ("[gate]\nalpha = 0.1\n", "[gate] fail_on must be a list of conditions"),
        ('[gate]\nfail_on = "regressed"\n', "[gate] fail_on must be a list of conditions"),
        ("[gate]\nfail_on = [1]\n", "[gate] fail_on must be a list of conditions"),
        (
            '[gate]\nfail_on = ["regressed"]\nalpha = "0.05"\n',
            "[gate] alpha must be a number between 0 and 1 (both excluded), e.g. alpha = 0.05; got '0.05'",
        ),
        (
            '[gate]\nfail_on = ["regressed"]\nalpha = 1.5\n',
            "[gate] alpha must be a number between 0 and 1 (both excluded), e.g. alpha = 0.05; got 1.5",
        ),
        (
            '[gate]\nfail_on = ["regressed"]\nalpha = nan\n',
            "[gate] alpha must be a number between 0 and 1 (both excluded), e.g. alpha = 0.05; got nan",
        ),
        ('[gate]\nfail_on = ["regresed"]\n', "[gate]: gate condition 'regresed': unknown status regresed"),
        ("[gate]\nfail_on = []\n", "[gate] fail_on is empty: a gate without a condition passes every comparison"),
        ('[gate]\nfail_on = ["regressed", ""]\n', "[gate]: gate conditions '': no condition."),
        ('[gate]\nfail_on = [" , "]\n', "[gate]: gate conditions ' , ': no condition."),
    ],
)
def test_a_bad_gate_file_names_the_file_and_the_key(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "gate.toml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(GateError) as raised:
        load_gate(path)
    assert str(raised.value).startswith(f"{path}: ")
    assert message in str(raised.value)


def test_a_missing_or_undecodable_gate_file(tmp_path: Path) -> None:
    with pytest.raises(GateError, match="no such gate file"):
        load_gate(tmp_path / "nowhere.toml")
    path = tmp_path / "latin1.toml"
    path.write_bytes(b"[gate]\nfail_on = ['r\xe9']\n")
    with pytest.raises(GateError, match="is not UTF-8 text"):
        load_gate(path)
