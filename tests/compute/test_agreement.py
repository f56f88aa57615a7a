"""Judges measured against people's labels: a hand-worked fixture, cross-checked with scikit-learn and
statsmodels, and every way the labels and the judges may not fit."""

from __future__ import annotations

import json
import math
import urllib.parse
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, confusion_matrix, roc_auc_score
from statsmodels.stats.contingency_tables import mcnemar

from rag_compare.compute.agreement import Agreement, agreement
from rag_compare.compute.case_anchors import anchors
from rag_compare.compute.freezing import freeze_run
from rag_compare.core.errors import AgreementError
from rag_compare.io.pairs import judge_pairs
from rag_compare.io.runs import Run
from rag_compare.io.scores import Scores, make_scores
from tests.helpers.judged import CORPUS, RECORDS, SAMPLED_RECORDS
from tests.helpers.pairs import BASELINE as PAIRS_BASELINE
from tests.helpers.pairs import CANDIDATE as PAIRS_CANDIDATE
from tests.helpers.pairs import CORPUS as PAIRS_CORPUS
from tests.helpers.pairs import IDS as PAIRS_IDS
from tests.helpers.pairs import ScriptedPairJudge

# The run of tests.helpers.judged: q0..q5 answerable, none@v1 unanswerable (abstains), nocontext@v1 answerable,
# failed@v1 failed. An LLM-like judge's scores of it, per case in that order:
GROUNDED = [1.0, 1.0, 0.5, 0.0, 1.0, 0.8, None, 0.0, None]
CORRECTNESS = [0.9, 0.2, 0.45, 0.1, 0.6, 0.55, 0.8, 0.3, None]
ABSTENTION_CORRECT = [None] * 6 + [True, None, None]
# People's labels, and one for a case the run does not have (unknown@v1).
LABELS = pl.DataFrame(
    {
        "case_id": [*CORPUS["case_id"], "unknown@v1"],
        "grounded": ["yes", "yes", "partly", "no", "partly", "yes", None, "no", None, None],
        "answer_correct": ["yes", "no", "yes", "no", "yes", "no", "yes", "no", "no", "yes"],
        "abstention_correct": [None] * 6 + ["yes", "yes", None, None],
        "comment": [None, "wrong rule", None, None, None, None, None, None, None, None],
    }
)
# Worked by hand.
# grounded (threshold 1: 1 is yes, 0 no, between partly), over the 7 answers both called:
#   people yes: q0 (judge yes), q1 (yes), q5 (0.8: partly)  -> [2, 1, 0]
#   people partly: q2 (0.5: partly), q4 (1: yes)           -> [1, 1, 0]
#   people no: q3 (0: no), nocontext (0: no)               -> [0, 0, 2]
#   accuracy 5/7; p_o 5/7, p_e (3*3 + 2*2 + 2*2) / 49 = 17/49, kappa (35 - 17) / (49 - 17) = 18/32 = 0.5625.
#   yes against the rest: people's yes q0 q1 q5, the judge's q0 q1 q4: sensitivity 2/3, specificity 3/4, base
#   rate 3/7. AUC: people's yes scored 1, 1, 0.8 against 0.5, 0, 1, 0: 3.5 + 3.5 + 3 of 12 pairs = 10/12.
GROUNDED_TABLE = ((2, 1, 0), (1, 1, 0), (0, 0, 2))
# answer_correct (correctness >= 0.5), over 8 answers (failed@v1 not answered, unknown@v1 no record):
#   TP q0 q4 none, FN q2 (0.45), FP q5 (0.55), TN q1 q3 nocontext: accuracy 6/8, sensitivity 3/4, specificity
#   3/4, base rate 4/8; p_e (4*4 + 4*4) / 64 = 1/2, kappa (3/4 - 1/2) / (1/2) = 1/2.
#   AUC: 0.9, 0.6 and 0.8 beat all four of 0.2, 0.1, 0.55, 0.3; 0.45 beats three: 15/16.


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Scores]:
    folder = tmp_path_factory.mktemp("judged")
    run = freeze_run(RECORDS, CORPUS, {"name": "judged"}, output=folder / "run.arrow", environ={})
    frame = pl.DataFrame(
        {
            "case_id": RECORDS["case_id"],
            "judge_status": ["ok"] * 8 + ["not_judged"],
            "judge_error": [None] * 9,
            "grounded": GROUNDED,
            "correctness": CORRECTNESS,
            "abstention_correct": ABSTENTION_CORRECT,
        },
        schema_overrides={"judge_error": pl.String, "abstention_correct": pl.Boolean},
    )
    scores = make_scores(run, frame, {"name": "llm", "fingerprint": "f" * 64, "config": {}}, output=folder / "s.arrow")
    return run, scores


SIDES = {"baseline": PAIRS_BASELINE, "candidate": PAIRS_CANDIDATE}


def _row(result: Agreement, judge: str, label: str) -> Any:
    return next(row for row in result.rows if row.judge.startswith(judge) and row.label == label)


def test_the_hand_worked_fixture(judged: tuple[Run, Scores]) -> None:
    result = agreement(LABELS, [judged[1]])
    grounded = _row(result, "llm", "grounded")
    assert grounded.confusion == GROUNDED_TABLE
    assert grounded.n == 7
    assert grounded.accuracy.value == pytest.approx(5 / 7)
    assert grounded.kappa.value == pytest.approx(0.5625)
    assert grounded.base_rate == pytest.approx(3 / 7)
    assert (grounded.sensitivity.hits, grounded.sensitivity.trials) == (2, 3)
    assert (grounded.specificity.hits, grounded.specificity.trials) == (3, 4)
    assert grounded.auc.value == pytest.approx(10 / 12)
    answer = _row(result, "llm", "answer_correct")
    assert answer.signal == "correctness"
    assert (answer.n, answer.accuracy.value, answer.kappa.value, answer.base_rate) == (8, 0.75, pytest.approx(0.5), 0.5)
    assert answer.sensitivity.value == answer.specificity.value == 0.75
    assert answer.auc.value == pytest.approx(15 / 16)
    assert dict(answer.not_comparable) == {"not answered": 1, "no record": 1}
    assert answer.disagreements.select("case_id", "human", "judge", "judge_value").rows() == [
        ("q2@v1", "yes", "no", 0.45),
        ("q5@v1", "no", "yes", 0.55),
    ]


def test_against_scikit_learn(judged: tuple[Run, Scores]) -> None:
    """Each label's confusion matrix, kappa (weighted too) and AUC equal scikit-learn's on the same calls."""
    result = agreement(LABELS, [judged[1]])
    calls = {
        "grounded": (
            ["yes", "yes", "partly", "no", "partly", "yes", "no"],
            ["yes", "yes", "partly", "no", "yes", "partly", "no"],
        ),
    }
    people, judge = calls["grounded"]
    grounded = _row(result, "llm", "grounded")
    classes = ["yes", "partly", "no"]
    assert np.array_equal(np.array(grounded.confusion), confusion_matrix(people, judge, labels=classes))
    assert grounded.kappa.value == pytest.approx(cohen_kappa_score(people, judge))
    ordinal = {"yes": 2, "partly": 1, "no": 0}
    for weights in ("linear", "quadratic"):
        expected = cohen_kappa_score([ordinal[c] for c in people], [ordinal[c] for c in judge], weights=weights)
        assert grounded.weighted_kappa[weights].value == pytest.approx(expected)
    scores = [1.0, 1.0, 0.5, 0.0, 1.0, 0.8, 0.0]
    assert grounded.auc.value == pytest.approx(roc_auc_score([c == "yes" for c in people], scores))


def test_a_label_where_the_signal_does_not_apply_is_not_comparable(judged: tuple[Run, Scores]) -> None:
    abstention = _row(agreement(LABELS, [judged[1]]), "llm", "abstention_correct")
    assert (abstention.n, dict(abstention.not_comparable)) == (1, {"does not apply": 1})
    assert abstention.disagreements.is_empty()


def test_a_single_class_on_both_sides_leaves_kappa_undefined_with_its_reason(judged: tuple[Run, Scores]) -> None:
    labels = pl.DataFrame({"case_id": ["q0@v1", "q1@v1", "q4@v1"], "grounded": ["yes"] * 3})
    result = agreement(labels, [judged[1]])
    grounded = _row(result, "llm", "grounded")
    assert grounded.kappa.value is None
    assert "single class" in (grounded.kappa.undefined or "")
    document = json.loads(result.to_json())
    assert document["agreement"][0]["kappa"]["value"] is None
    assert "NaN" not in result.to_json()


def test_judges_of_the_same_answers_are_compared_by_exact_mcnemar(judged: tuple[Run, Scores]) -> None:
    run, scores = judged
    result = agreement(LABELS, [run, scores])
    test = next(item for item in result.tests if item.label == "grounded")
    offline, llm = _row(result, "offline", "grounded"), _row(result, "llm", "grounded")
    assert test.n == min(offline.n, llm.n)
    table = [[0, test.first_only_right], [test.second_only_right, 0]]
    assert test.p == pytest.approx(mcnemar(table, exact=True).pvalue)


def test_a_judge_without_the_mapped_signal_is_not_measured_on_that_label(judged: tuple[Run, Scores]) -> None:
    result = agreement(LABELS, [judged[0]])
    reasons = {item.label: item.reason for item in result.unmeasured}
    assert "no signal correctness" in reasons["answer_correct"]
    remapped = agreement(LABELS, [judged[0]], mapping={"answer_correct": "context_coverage"})
    assert _row(remapped, "offline", "answer_correct").signal == "context_coverage"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mapping": {"tone": "grounded"}}, "unknown label 'tone'"),
        ({"mapping": {"grounded": "vibes"}}, "unknown signal 'vibes'"),
        ({"thresholds": {"grounded": 1.5}}, "from 0 to 1"),
        ({"target": ("accuracy", 0.9)}, "('precision', P)"),
    ],
)
def test_bad_settings_are_refused(judged: tuple[Run, Scores], kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(AgreementError, match=message.replace("(", r"\(").replace(")", r"\)")):
        agreement(LABELS, [judged[1]], **kwargs)


def test_labels_of_cases_no_judge_has_are_refused(judged: tuple[Run, Scores]) -> None:
    labels = pl.DataFrame({"case_id": ["elsewhere@v1"], "grounded": ["yes"]})
    with pytest.raises(AgreementError, match="are these labels of other runs"):
        agreement(labels, [judged[1]])


def test_a_threshold_is_found_for_a_target(judged: tuple[Run, Scores]) -> None:
    answer = _row(agreement(LABELS, [judged[1]], target=("precision", 1.0)), "llm", "answer_correct")
    assert answer.target is not None
    assert answer.target.found is not None
    # At 0.6 the judge says yes to q0 (0.9), q4 (0.6) and none (0.8), all people's yes: the lowest such threshold.
    assert answer.target.found.threshold == pytest.approx(0.6)
    assert answer.target.found.precision == 1.0


def test_the_json_is_strict(judged: tuple[Run, Scores], tmp_path: Path) -> None:
    text = agreement(LABELS, list(judged)).to_json()
    document = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in the JSON"))
    assert {row["judge"] for row in document["agreement"]} == {"llm of 'judged'", "offline judge of 'judged'"}
    assert all(not isinstance(value, float) or math.isfinite(value) for value in _numbers(document))


def _numbers(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [number for item in value.values() for number in _numbers(item)]
    if isinstance(value, list):
        return [number for item in value for number in _numbers(item)]
    return [value]


@given(st.lists(st.text(min_size=1, max_size=12), max_size=20))
def test_anchors_are_what_encode_uri_component_writes(case_ids: list[str]) -> None:
    """The page reads ``#case=`` and the id as JavaScript's encodeURIComponent writes it (UTF-8, percent-encoded,
    ``-_.!~*'()`` kept): ``urllib.parse.quote`` with that safe set writes the same."""
    expected = ["#case=" + urllib.parse.quote(case_id, safe="-_.!~*'()") for case_id in case_ids]
    assert anchors(pl.Series(case_ids, dtype=pl.String)).to_list() == expected


def test_the_json_lists_every_disagreement_with_its_judge_and_label(judged: tuple[Run, Scores]) -> None:
    result = agreement(LABELS, [judged[1]])
    document = json.loads(result.to_json())
    listed = [(item["label"], item["case_id"], item["human"], item["judge_call"]) for item in document["disagreements"]]
    assert ("answer_correct", "q2@v1", "yes", "no") in listed
    assert len(listed) == sum(row.disagreements.height for row in result.rows)
    assert document == json.loads(json.dumps(result.to_dict()))


def test_breakdowns_take_the_corpus_then_the_labels_then_the_runs(judged: tuple[Run, Scores]) -> None:
    labels = LABELS.with_columns(category=pl.lit("from the labels"))
    answer = _row(agreement(labels, list(judged)), "llm", "answer_correct")  # the run gives its answerability
    assert [group.value for group in answer.breakdowns["category"]] == ["from the labels"]
    # By answerability (the run's, as neither the labels nor the scores have one): answerable q0 q1 q2 q3 q4 q5 nocontext, 5 of 7 agree
    # (q2 and q5 do not); unanswerable none@v1 agrees.
    by_answerability = {group.value: (group.n, group.accuracy.hits) for group in answer.breakdowns["answerability"]}
    assert by_answerability == {"answerable": (7, 5), "unanswerable": (1, 1)}
    corpus = CORPUS.with_columns(category=pl.lit("from the corpus"))
    from_corpus = _row(agreement(labels, [judged[1]], corpus=corpus), "llm", "answer_correct")
    assert [group.value for group in from_corpus.breakdowns["category"]] == ["from the corpus"]


def test_a_pairwise_judge_against_people_s_preference(tmp_path: Path) -> None:
    """The pairs of tests.helpers.pairs against people's preference, worked by hand: a, b and c agree; e (people:
    candidate; judge: tie, identical answers) does not; d and i are inconsistent, f not answered, h judge failed.
    Confusion (rows people baseline, tie, candidate): [1, 0, 0], [0, 1, 0], [0, 1, 1]; p_o 3/4, p_e (1*1 + 1*2 +
    2*1) / 16 = 5/16, kappa (12 - 5) / (16 - 5) = 7/11."""
    runs = [freeze_run(frame, PAIRS_CORPUS, {"name": name}, environ={}) for name, frame in SIDES.items()]
    pairs = judge_pairs(*runs, ScriptedPairJudge(), output=tmp_path / "pairs.arrow")
    preferred = ["candidate", "baseline", "tie", "candidate", "candidate", "baseline", None, "candidate", "tie"]
    labels = pl.DataFrame({"case_id": PAIRS_IDS, "preferred": preferred, "answer_correct": ["yes"] * 9})
    result = agreement(labels, [pairs])
    row = _row(result, "scripted", "preferred")
    assert row.confusion == ((1, 0, 0), (0, 1, 0), (0, 1, 1))
    assert row.kappa.value == pytest.approx(7 / 11)
    assert dict(row.not_comparable) == {"inconsistent": 2, "not answered": 1, "judge failed": 1}
    assert set(row.weighted_kappa) == {"linear", "quadratic"}
    assert (row.sensitivity, row.specificity, row.base_rate) == (None, None, None)
    assert row.disagreements.select("case_id", "human", "judge").rows() == [("e_same@v1", "candidate", "tie")]
    assert [row.label for row in result.rows] == ["preferred"]  # a pairwise judge is measured on preference only
    assert result.unmeasured == ()


def test_labels_of_each_sample_of_a_run_with_repeats(tmp_path: Path) -> None:
    """A run with repeats (tests.helpers.judged: repeat 1 answers q0 "9 days", which its context does not
    support) is measured on labels of each sample; labels without ``repeat`` are refused with the fix."""
    run = freeze_run(SAMPLED_RECORDS, CORPUS, {"name": "sampled"}, output=tmp_path / "run.arrow", environ={})
    labels = pl.DataFrame(
        {"case_id": ["q0@v1", "q0@v1", "q1@v1"], "repeat": [0, 1, 0], "grounded": ["yes", "no", "yes"]}
    )
    grounded = _row(agreement(labels, [run]), "offline", "grounded")
    assert grounded.n == 3
    assert grounded.accuracy.hits == 3  # the judge finds the "9 days" of repeat 1 unsupported, as people do
    with pytest.raises(AgreementError, match="label each sample, with a `repeat` column"):
        agreement(labels.drop("repeat").unique("case_id", keep="first"), [run])
    single = freeze_run(RECORDS, CORPUS, {"name": "single"}, output=tmp_path / "single.arrow", environ={})
    with pytest.raises(AgreementError, match="judged one sample a case: leave the column out"):
        agreement(labels, [single])
