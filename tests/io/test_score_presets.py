"""``import_scores(..., preset="ragas")`` and ``import-scores --preset ragas`` over the table Ragas' own
``evaluate(...).to_pandas()`` gives (``tests/producers/make_ragas.py``), saved as CSV, JSON lines and Parquet;
the ``deepeval`` preset over DeepEval's test run file; the ``promptfoo`` preset over the results file promptfoo's
command line writes for ``tests/producers/promptfoo/graded.yaml``.

The producer's metrics: ``id_based_context_recall`` (-> context_sufficiency), ``id_based_context_precision`` (no
signal), ``exact_match`` and ``string_present`` (both correctness: ``string_present`` is listed first, so it
wins). ``string_present`` raises on the empty response and ``id_based_context_recall`` has no reference ids on the
unanswerable case: Ragas writes NaN for both, which must be ``judge_failed``, never a low score.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import Result

from rag_compare.compute.freezing import freeze_run, import_run
from rag_compare.core.errors import ContractError, ScoresError
from rag_compare.io.external_scores import import_scores
from rag_compare.io.runs import Run, load_run
from rag_compare.io.scores import load_scores
from tests.helpers.data import EXAMPLE_CORPUS, ROOT
from tests.helpers.judged import CORPUS as JUDGED_CORPUS
from tests.helpers.judged import SAMPLED_RECORDS
from tests.helpers.producers import PRODUCERS, promptfoo_eval

NOT_IMPORTED = {
    "exact_match": "correctness comes from string_present",
    "id_based_context_precision": "no signal in preset ragas",
}


@pytest.fixture(scope="module")
def made(ragas_made: Path) -> Path:
    return ragas_made


@pytest.fixture(scope="module")
def deepeval_run(deepeval_made: Path) -> Path:
    """DeepEval's ``.latest_test_run.json`` of the same five cases (``tests/producers/make_deepeval.py``)."""
    return deepeval_made / ".deepeval" / ".latest_test_run.json"


@pytest.fixture(scope="module")
def expected(made: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((made / "expected.json").read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def run(expected: dict[str, Any]) -> Run:
    """The producer's five cases frozen against the example corpus (records from the Ragas samples)."""
    records = pl.DataFrame(
        [
            {
                "case_id": case["case_id"],
                "retrieved_passage_ids": case["retrieved_context_ids"],
                "context": "\n\n".join(case["retrieved_contexts"]),
                "answer": case["response"] or None,
            }
            for case in expected["cases"]
        ]
    )
    return freeze_run(records, EXAMPLE_CORPUS, {"name": "ragas-run"})


def by_case(frame: pl.DataFrame, *columns: str) -> dict[str, tuple[Any, ...]]:
    return {row[0]: row[1:] for row in frame.select("case_id", *columns).iter_rows()}


@pytest.mark.parametrize("name", ["result.csv", "result.jsonl", "result.parquet"])
def test_ragas_scores_land_on_their_cases_and_nan_is_judge_failed(
    made: Path, expected: dict[str, Any], run: Run, name: str
) -> None:
    scores = import_scores(run, made / name, preset="ragas")
    wanted = {}
    for case, row in zip(expected["cases"], expected["scores"], strict=True):
        recall, present = row["id_based_context_recall"], row["string_present"]
        failed = recall is None or present is None  # Ragas' NaN
        wanted[case["case_id"]] = (None, None, "judge_failed") if failed else (recall, present, "ok")
    assert by_case(scores.frame, "context_sufficiency", "correctness", "judge_status") == wanted
    # The producer: string_present raised on the empty response, and recall had no reference ids on ceo-salary.
    assert [case for case, value in wanted.items() if value[2] == "judge_failed"] == [
        "hotel-approval@2026-01",
        "ceo-salary@2026-01",
    ]
    assert scores.counts["ok"] == 3
    assert scores.evaluator["name"] == "ragas"
    assert scores.evaluator["config"]["mapping"] == {
        "id_based_context_recall": "context_sufficiency",
        "string_present": "correctness",
    }
    assert scores.evaluator["config"]["not_imported"] == NOT_IMPORTED
    assert scores.evaluator["config"]["preset"] == "ragas"


def test_the_three_formats_give_one_evaluator(made: Path, run: Run) -> None:
    fingerprints = {
        import_scores(run, made / name, preset="ragas").evaluator["fingerprint"]
        for name in ("result.csv", "result.jsonl", "result.parquet")
    }
    assert len(fingerprints) == 1


def test_an_explicit_mapping_overrides_the_preset(made: Path, expected: dict[str, Any], run: Run) -> None:
    scores = import_scores(
        run, made / "result.parquet", preset="ragas", evaluator="ragas-0.4", mapping={"exact_match": "correctness"}
    )
    assert scores.evaluator["name"] == "ragas-0.4"
    assert scores.evaluator["config"]["mapping"] == {
        "exact_match": "correctness",
        "id_based_context_recall": "context_sufficiency",
    }
    assert scores.evaluator["config"]["not_imported"]["string_present"] == "correctness comes from exact_match"
    # exact_match is 0.0 on every case (the answers add a prefix): a low score where Ragas gave one, not NaN.
    values = by_case(scores.frame, "correctness")
    assert values["public-transport-pass@2026-01"] == (0.0,)
    assert [row["exact_match"] for row in expected["scores"]] == [0.0] * 5


def test_a_table_with_case_ids_joins_by_them(made: Path, expected: dict[str, Any], run: Run, tmp_path: Path) -> None:
    ids = [case["case_id"] for case in expected["cases"]]
    table = pl.read_parquet(made / "result.parquet").with_columns(
        case_id=pl.Series(ids), user_input=pl.lit("no question of the run")
    )
    table.reverse().write_parquet(tmp_path / "ids.parquet")
    scores = import_scores(run, tmp_path / "ids.parquet", preset="ragas")
    assert by_case(scores.frame, "context_sufficiency")["flight-class@2026-01"] == (1.0,)
    assert scores.counts == import_scores(run, made / "result.parquet", preset="ragas").counts


def test_questions_match_with_whitespace_and_case_folded(made: Path, run: Run, tmp_path: Path) -> None:
    table = pl.read_parquet(made / "result.parquet").with_columns(
        user_input="  " + pl.col("user_input").str.to_uppercase().str.replace_all(" ", "\n\t")
    )
    table.write_parquet(tmp_path / "folded.parquet")
    folded = import_scores(run, tmp_path / "folded.parquet", preset="ragas")
    plain = import_scores(run, made / "result.parquet", preset="ragas")
    assert folded.frame.drop("judge_error").equals(plain.frame.drop("judge_error"))


def test_an_unmatched_or_repeated_question_is_refused_with_the_list(made: Path, run: Run, tmp_path: Path) -> None:
    table = pl.read_parquet(made / "result.parquet")
    questions = table.get_column("user_input").to_list()
    table.with_columns(
        user_input=pl.Series([questions[0], "What is the dress code?", *questions[2:4], questions[0]])
    ).write_parquet(tmp_path / "bad.parquet")
    with pytest.raises(ContractError) as raised:
        import_scores(run, tmp_path / "bad.parquet", preset="ragas")
    twice = "the question of a case no other row has (it is public-transport-pass@2026-01's)"
    assert [(problem.row, problem.column, problem.expected) for problem in raised.value.problems] == [
        (1, "user_input", twice),
        (2, "user_input", "the question of a case of run 'ragas-run'"),
        (5, "user_input", twice),
    ]


def test_a_question_of_several_cases_of_the_run_is_refused(tmp_path: Path) -> None:
    daily = "What is the daily meal allowance when I travel for work?"  # two versions of one case in the corpus
    ids = ["meal-allowance-daily@2025-01", "meal-allowance-daily@2026-01"]
    run = freeze_run(pl.DataFrame({"case_id": ids, "answer": ["40 euros.", "45 euros."]}), EXAMPLE_CORPUS)
    pl.DataFrame({"user_input": [daily], "faithfulness": [0.5]}).write_csv(tmp_path / "daily.csv")
    with pytest.raises(ContractError) as raised:
        import_scores(run, tmp_path / "daily.csv", preset="ragas")
    expected = f"the question of one case of run 'run' (it is the question of {', '.join(ids)}: add a case id column)"
    assert [problem.expected for problem in raised.value.problems] == [expected]


def test_a_nan_in_a_mapped_column_is_no_score_with_the_preset_and_refused_without(
    made: Path, run: Run, tmp_path: Path
) -> None:
    """Ragas' NaN reaches the producer's files as an empty value (pandas 3 writes it as null in every format);
    pandas 2 keeps a float NaN in Parquet, as this copy does. The preset reads it as no score; a plain import
    keeps refusing it (a NaN from an unknown evaluator is a value out of [0, 1])."""
    table = pl.read_parquet(made / "result.parquet")
    assert table.get_column("string_present").is_null().to_list() == [False, False, False, True, False]
    ids = run.records.get_column("case_id")  # the producer's case order
    table = table.with_columns(pl.col("string_present").fill_null(float("nan")), case_id=ids)
    table.write_parquet(tmp_path / "nan.parquet")
    scores = import_scores(run, tmp_path / "nan.parquet", preset="ragas")
    assert by_case(scores.frame, "correctness", "judge_status")["hotel-approval@2026-01"] == (None, "judge_failed")
    assert scores.frame.get_column("judge_error").to_list()[3] == f"no score in {tmp_path / 'nan.parquet'}"
    plain = {"evaluator": "ragas", "mapping": {"string_present": "correctness"}}
    with pytest.raises(ContractError) as raised:
        import_scores(run, tmp_path / "nan.parquet", **plain)
    assert [str(problem) for problem in raised.value.problems] == [
        "row 4, column 'string_present': got 'NaN'; expected a number from 0 to 1 (rescale the scores first)"
    ]


def test_an_unknown_preset_or_a_table_without_its_metrics_is_refused(made: Path, run: Run, tmp_path: Path) -> None:
    with pytest.raises(ScoresError, match="unknown preset 'trulens'; use one of: ragas, deepeval, promptfoo"):
        import_scores(run, made / "result.csv", preset="trulens")
    pl.read_csv(made / "dataset.csv").write_csv(tmp_path / "dataset.csv")
    with pytest.raises(ScoresError, match="preset ragas maps none of this table's columns"):
        import_scores(run, tmp_path / "dataset.csv", preset="ragas")
    with pytest.raises(ScoresError, match="name the evaluator"):
        import_scores(run, made / "result.csv", mapping={"string_present": "correctness"})


def deepeval_scores(path: Path) -> dict[str, dict[str, float | None]]:
    """Each test case's metric scores as DeepEval's own test results report them (expected.json), by case id."""
    tests = json.loads((path.parents[1] / "expected.json").read_text(encoding="utf-8"))
    return {
        test["metadata"]["case_id"]: {metric["name"]: metric["score"] for metric in test["metrics"]} for test in tests
    }


def test_deepeval_metrics_land_on_the_case_ids_of_their_metadata(deepeval_run: Path, run: Run) -> None:
    reported = deepeval_scores(deepeval_run)
    scores = import_scores(run, deepeval_run, preset="deepeval")
    assert scores.evaluator["config"]["mapping"] == {"Exact Match": "correctness"}
    assert scores.evaluator["config"]["not_imported"] == {"Reference in answer": "no signal in preset deepeval"}
    # Exact Match errored on the empty answer and on the case without an expected output: no score.
    wanted = {
        case_id: (None, "judge_failed") if metrics["Exact Match"] is None else (metrics["Exact Match"], "ok")
        for case_id, metrics in reported.items()
    }
    assert by_case(scores.frame, "correctness", "judge_status") == wanted
    assert [case_id for case_id, (_, status) in wanted.items() if status == "judge_failed"] == [
        "hotel-approval@2026-01",
        "ceo-salary@2026-01",
    ]


def test_deepeval_custom_metric_mapped_by_hand_and_cases_matched_by_input(deepeval_run: Path, run: Run) -> None:
    reported = deepeval_scores(deepeval_run)
    mapping = {"Reference in answer": "correctness"}
    scores = import_scores(run, deepeval_run, preset="deepeval", mapping=mapping, id_column="test_id")
    assert scores.evaluator["config"]["not_imported"] == {"Exact Match": "correctness comes from Reference in answer"}
    values = by_case(scores.frame, "correctness")
    assert values == {case_id: (metrics["Reference in answer"],) for case_id, metrics in reported.items()}
    assert values["hotel-approval@2026-01"] == (0.0,)  # scored, low: the answer is empty


def test_the_command_line_imports_with_a_preset_and_lists_what_it_left_out(
    cli: Callable[..., Result], made: Path, run: Run, tmp_path: Path
) -> None:
    frozen = tmp_path / "run.arrow"
    freeze_run(
        run.records.select("case_id", "retrieved_passage_ids", "context", "answer"), EXAMPLE_CORPUS, output=frozen
    )
    output = tmp_path / "ragas.scores.arrow"
    result = cli("import-scores", frozen, made / "result.csv", "--preset", "ragas", "--output", output)
    assert result.exit_code == 0, result.output
    scores = load_scores(output)
    assert result.stdout.splitlines() == [
        "imported context_sufficiency, correctness for 5 cases (ok 3, judge_failed 2)",
        "not imported: exact_match (correctness comes from string_present)",
        "not imported: id_based_context_precision (no signal in preset ragas)",
        f"wrote {output} (evaluator ragas {scores.evaluator['fingerprint'][:12]})",
    ]
    refused = cli("import-scores", frozen, made / "result.csv", "--output", tmp_path / "other.arrow")
    assert refused.exit_code == 2
    assert "--evaluator NAME" in refused.stderr


def test_a_deepeval_test_case_without_a_metrics_list_is_refused(deepeval_run: Path, run: Run, tmp_path: Path) -> None:
    data = json.loads(deepeval_run.read_text(encoding="utf-8"))
    data["testRunData"]["testCases"][2]["metricsData"] = {"name": "Exact Match"}
    edited = tmp_path / "run.json"
    edited.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ContractError) as raised:
        import_scores(run, edited, preset="deepeval")
    assert [(problem.row, problem.expected) for problem in raised.value.problems] == [
        (3, "a test case with a `metricsData` list")
    ]


def test_a_mapped_column_the_table_lacks_is_refused(made: Path, run: Run) -> None:
    with pytest.raises(ContractError) as raised:
        import_scores(run, made / "result.parquet", preset="ragas", mapping={"faithfulness": "grounded"})
    assert [(problem.column, problem.expected) for problem in raised.value.problems] == [
        ("faithfulness", "a column of that name")
    ]


# promptfoo: graded.yaml grades the echo provider's answers with promptfoo's RAG assertions, graded by grader.js.
GRADED = PRODUCERS / "promptfoo" / "graded.yaml"
PROVIDER_FAILED = "bike-lease@2026-01"  # its provider (provider.js) returned an error: no answer
GRADING_RAISED = "sick-leave-certificate@2026-01"  # its grader raised: an answer, no grades
PROMPTFOO_MAPPING = {
    "answer-relevance": "response",
    "context-faithfulness": "grounded",
    "context-recall": "context_sufficiency",
    "factuality": "correctness",
}
PROMPTFOO_NOT_IMPORTED = {
    "contains": "no signal in preset promptfoo",
    "reference_similarity": "no signal in preset promptfoo",
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return promptfoo_eval(GRADED, tmp_path_factory.mktemp("promptfoo-graded"))


@pytest.fixture(scope="module")
def graded_results(graded: Path) -> dict[str, dict[str, Any]]:
    """promptfoo's own results, by case id."""
    table = json.loads(graded.read_text(encoding="utf-8"))["results"]["results"]
    return {result["vars"]["case_id"]: result for result in table}


@pytest.fixture(scope="module")
def graded_run(graded: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run of the same results file, imported against the example corpus."""
    output = tmp_path_factory.mktemp("promptfoo-run") / "promptfoo.arrow"
    passages = ROOT / "corpora" / "handbook_passages.csv"
    import_run(graded, "promptfoo", EXAMPLE_CORPUS, {"name": "promptfoo-echo"}, passages=passages, output=output)
    return output


def component_scores(result: dict[str, Any]) -> dict[str, float]:
    """promptfoo's grade of each assertion of a result, by its metric name, else its type."""
    components = result["gradingResult"]["componentResults"]
    return {c["assertion"].get("metric", c["assertion"]["type"]): c["score"] for c in components}


def test_promptfoo_grades_land_on_their_cases(
    graded: Path, graded_results: dict[str, dict[str, Any]], graded_run: Path
) -> None:
    scores = import_scores(graded_run, graded, preset="promptfoo")
    assert scores.evaluator["name"] == "promptfoo"
    assert scores.evaluator["config"]["mapping"] == PROMPTFOO_MAPPING
    assert scores.evaluator["config"]["not_imported"] == PROMPTFOO_NOT_IMPORTED
    values = by_case(scores.frame, *PROMPTFOO_MAPPING.values(), "judge_status")
    graded_cases = [case_id for case_id in graded_results if case_id not in (PROVIDER_FAILED, GRADING_RAISED)]
    assert len(graded_cases) == 4
    for case_id in graded_cases:
        reported = component_scores(graded_results[case_id])
        assert values[case_id] == (*(reported[metric] for metric in PROMPTFOO_MAPPING), "ok")
    # grader.js: 2 passages of the 5 lines the echo answers with are in the context; the second sentence of the
    # hotel reference (the 210-euro cap) is not, so recall is 1/2 and factuality D (0).
    assert values["hotel-cap@2026-01"][1:4] == (0.4, 0.5, 0.0)
    assert scores.counts == {"ok": 4, "judge_failed": 1, "not_judged": 1}


def test_a_promptfoo_result_that_errored_has_no_score(
    graded: Path, graded_results: dict[str, dict[str, Any]], graded_run: Path
) -> None:
    """promptfoo scores an errored result 0; it is no grade. The run's record of the result whose provider failed
    is failed (not judged); the one whose grading raised kept its answer, so it is judge_failed."""
    assert [graded_results[case]["failureReason"] for case in (PROVIDER_FAILED, GRADING_RAISED)] == [2, 2]
    assert [graded_results[case]["score"] for case in (PROVIDER_FAILED, GRADING_RAISED)] == [0, 0]
    assert "the grading endpoint reset the connection" in graded_results[GRADING_RAISED]["error"]
    records = {row["case_id"]: row for row in load_run(graded_run).records.iter_rows(named=True)}
    assert records[GRADING_RAISED]["answer"] == graded_results[GRADING_RAISED]["response"]["output"]
    assert (records[GRADING_RAISED]["status"], records[PROVIDER_FAILED]["status"]) == ("ok", "failed")
    scores = import_scores(graded_run, graded, preset="promptfoo")
    failed = by_case(scores.frame, "grounded", "correctness", "judge_status", "judge_error")
    assert failed[GRADING_RAISED] == (None, None, "judge_failed", f"no score in {graded}")
    assert failed[PROVIDER_FAILED] == (None, None, "not_judged", None)
    # against a run that answered that case (the captured one), the provider's error is no score either
    captured = import_scores(ROOT / "runs" / "baseline.arrow", graded, preset="promptfoo")
    assert by_case(captured.frame, "grounded", "judge_status")[PROVIDER_FAILED] == (None, "judge_failed")
    assert by_case(captured.frame, "grounded")["hotel-cap@2026-01"] == (0.4,)


def test_a_named_promptfoo_metric_mapped_by_hand_and_results_matched_by_query(
    graded: Path, graded_results: dict[str, dict[str, Any]], graded_run: Path
) -> None:
    mapping = {"reference_similarity": "correctness"}
    scores = import_scores(graded_run, graded, preset="promptfoo", mapping=mapping, id_column="ticket")
    assert scores.evaluator["config"]["not_imported"] == {
        "contains": "no signal in preset promptfoo",
        "factuality": "correctness comes from reference_similarity",
    }
    values = by_case(scores.frame, "correctness")
    for case_id, result in graded_results.items():
        if result["namedScores"]:  # the metric's score as promptfoo reports it
            assert values[case_id] == (result["namedScores"]["reference_similarity"],)
    assert values[GRADING_RAISED] == (None,)


def test_promptfoo_metrics_shared_by_assertions_and_a_failed_grader(
    graded_run: Path, graded_results: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    """Two assertions of one metric give their mean by weight (promptfoo's ``namedScores``); an ``llm-rubric``
    that grader.js does not grade is a grader failure (``metadata.graderError``), so no score."""
    producers = PRODUCERS / "promptfoo"
    config = tmp_path / "shared.yaml"
    config.write_text(
        f"prompts: ['Passages: {{{{ context }}}} Question: {{{{ query }}}}']\n"
        "providers: [echo]\n"
        "defaultTest:\n"
        f"  options: {{provider: 'file://{producers / 'grader.js'}'}}\n"
        "  assert:\n"
        "    - {type: icontains, value: euros, metric: facts, weight: 2}\n"
        "    - {type: icontains, value: days, metric: facts}\n"
        "    - {type: llm-rubric, value: Answers from the passages}\n"
        f"tests: 'file://{producers / 'graded.csv'}'\n",
        encoding="utf-8",
    )
    results = promptfoo_eval(config, tmp_path)
    reported = {
        result["vars"]["case_id"]: result
        for result in json.loads(results.read_text(encoding="utf-8"))["results"]["results"]
    }
    rubric = reported["hotel-cap@2026-01"]["gradingResult"]["componentResults"][2]
    assert rubric["metadata"]["graderError"] is True
    scores = import_scores(graded_run, results, preset="promptfoo", mapping={"facts": "correctness"})
    values = by_case(scores.frame, "correctness")
    assert {case_id: values[case_id] for case_id in reported} == {
        case_id: (result["namedScores"]["facts"],) for case_id, result in reported.items()
    }
    assert values["meal-allowance-daily@2026-01"] == (pytest.approx(2 / 3),)  # euros (weight 2), no "days"
    assert values["remote-work-days@2026-01"] == (pytest.approx(1 / 3),)  # "days", no euros
    rubrics = import_scores(graded_run, results, preset="promptfoo", mapping={"llm-rubric": "response"})
    assert rubric["score"] == 0  # promptfoo's score of a grader that failed
    assert by_case(rubrics.frame, "response", "judge_status")["hotel-cap@2026-01"] == (None, "judge_failed")


def test_a_promptfoo_grade_that_is_no_number_is_refused(graded: Path, graded_run: Path, tmp_path: Path) -> None:
    document = json.loads(graded.read_text(encoding="utf-8"))
    table = document["results"]["results"]
    position = next(index for index, result in enumerate(table, start=1) if result["gradingResult"])
    table[position - 1]["gradingResult"]["componentResults"][0]["score"] = "high"
    table[-1]["gradingResult"] = "graded"
    edited = tmp_path / "results.json"
    edited.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ContractError) as raised:
        import_scores(graded_run, edited, preset="promptfoo")
    assert [(problem.row, problem.column, problem.expected) for problem in raised.value.problems] == [
        (position, "context-faithfulness", "a score (a number)"),
        (len(table), None, "a result whose `gradingResult` has a `componentResults` list"),
    ]


def test_the_command_line_imports_promptfoo_results(cli: Callable[..., Result], graded: Path, graded_run: Path) -> None:
    output = graded_run.parent / "promptfoo.scores.arrow"
    result = cli("import-scores", graded_run, graded, "--preset", "promptfoo", "--output", output)
    assert result.exit_code == 0, result.output
    scores = load_scores(output)
    assert result.stdout.splitlines() == [
        "imported grounded, context_sufficiency, correctness, response for 6 cases "
        "(ok 4, judge_failed 1, not_judged 1)",
        "not imported: contains (no signal in preset promptfoo)",
        "not imported: reference_similarity (no signal in preset promptfoo)",
        f"wrote {output} (evaluator promptfoo {scores.evaluator['fingerprint'][:12]})",
    ]


SAMPLED = freeze_run(SAMPLED_RECORDS, JUDGED_CORPUS, {"name": "sampled"}, environ={})


def test_a_ragas_table_of_a_run_with_repeats_needs_their_numbers(tmp_path: Path) -> None:
    """Ragas rows matched by question, one per sample: faithfulness 0.5 in repeat 0, 1.0 in repeat 1."""
    rows = [
        {"user_input": question, "repeat": repeat, "faithfulness": 0.5 + 0.5 * repeat}
        for repeat in (0, 1)
        for question in JUDGED_CORPUS.get_column("question")
    ]
    numbered = tmp_path / "ragas.csv"
    pl.DataFrame(rows).write_csv(numbered)
    scores = import_scores(SAMPLED, numbered, preset="ragas")
    grounded = scores.frame.filter(pl.col("judge_status") == "ok").group_by("repeat").agg(pl.col("grounded").unique())
    assert dict(grounded.sort("repeat").rows()) == {0: [0.5], 1: [1.0]}
    assert scores.counts == {"ok": 16, "judge_failed": 0, "not_judged": 2}
    assert "repeat" not in scores.evaluator["config"]["not_imported"]
    unnumbered = tmp_path / "unnumbered.csv"
    pl.DataFrame(rows).drop("repeat").write_csv(unnumbered)
    with pytest.raises(ScoresError, match=r"run 'sampled' holds several samples of a case .* needs a column 'repeat'"):
        import_scores(SAMPLED, unnumbered, preset="ragas")
    twice = tmp_path / "twice.csv"
    pl.DataFrame(rows).with_columns(repeat=pl.lit(0)).write_csv(twice)
    with pytest.raises(ContractError) as caught:
        import_scores(SAMPLED, twice, preset="ragas")
    assert {problem.expected for problem in caught.value.problems} == {
        f"the question of a case no other row of its repeat has (it is {case_id}'s)"
        for case_id in JUDGED_CORPUS.get_column("case_id")
    }
