"""Agreement conditions of a release gate: parsed, decided on an agreement, not evaluated on too few labels,
and never mixed with a comparison's conditions."""

from __future__ import annotations

from dataclasses import replace

import polars as pl
import pytest

from rag_compare.compute.agreement import agreement
from rag_compare.compute.freezing import freeze_run
from rag_compare.compute.gate_grammar import AgreementLimit, parse_condition
from rag_compare.compute.gating import Gate
from rag_compare.core.errors import GateError
from rag_compare.io.runs import Run
from tests.helpers.judged import CORPUS, RECORDS


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return freeze_run(
        RECORDS, CORPUS, {"name": "judged"}, output=tmp_path_factory.mktemp("run") / "r.arrow", environ={}
    )


# People's grounded on the six answers q0..q5: q5 is not; the offline judge finds all six grounded (1.0).
LABELS = pl.DataFrame({"case_id": [f"q{index}@v1" for index in range(6)], "grounded": ["yes"] * 5 + ["no"]})


def test_an_agreement_condition_parses() -> None:
    assert parse_condition(" kappa[ grounded ] < 0.6") == AgreementLimit(
        "kappa[ grounded ] < 0.6", "kappa", "grounded", "<", 0.6
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kapa[grounded]<0.6", "unknown agreement measure kapa"),
        ("kappa[tone]<0.6", "unknown label tone"),
        ("kappa[grounded]", "needs a limit"),
        ("kappa[grounded]<60%", "a plain number"),
    ],
)
def test_a_bad_agreement_condition_is_named(text: str, message: str) -> None:
    with pytest.raises(GateError, match=message):
        parse_condition(text)


def test_too_few_labels_leave_a_condition_not_evaluated(run: Run) -> None:
    decided = Gate.parse(["accuracy[grounded]<0.9"]).evaluate(agreement(LABELS, [run])).conditions[0]
    assert (decided.held, decided.evaluated) == (False, False)
    assert "accuracy 0.833 on n 6, under 20: too few labelled answers to decide" in decided.numbers


def test_a_condition_on_enough_labels_is_decided(run: Run) -> None:
    result = replace(agreement(LABELS, [run]), min_n=5)
    held = Gate.parse(["accuracy[grounded]<0.9"]).evaluate(result).conditions[0]
    assert (held.held, held.evaluated) == (True, True)
    assert held.numbers == "offline judge of 'judged': accuracy 0.833 (n 6); the limit is < 0.9"
    kept = Gate.parse(["accuracy[grounded]<0.8"]).evaluate(result).conditions[0]
    assert (kept.held, kept.evaluated) == (False, True)
    undefined = Gate.parse(["sensitivity[preferred]<0.5"]).evaluate(result).conditions[0]
    assert (undefined.evaluated, undefined.numbers) == (False, "no judge was measured on preferred")


def test_conditions_of_the_other_kind_are_refused(run: Run) -> None:
    result = agreement(LABELS, [run])
    with pytest.raises(GateError, match="decided on a comparison"):
        Gate.parse(["regressed"]).evaluate(result)
