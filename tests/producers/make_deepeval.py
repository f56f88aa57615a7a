"""DeepEval's own test run files of the pipeline of ``make_ragas.py``, made offline (argv[1]: the output folder).

``deepeval.evaluate`` runs the five cases of ``make_ragas.answer_cases`` as ``LLMTestCase``s (the case id
in ``additional_metadata``) with two deterministic metrics that need no model: a custom one (the reference
passage found in the answer) and DeepEval's ``ExactMatchMetric``. Both raise on the unanswerable case, which
has no expected output, so DeepEval records each metric's error. DeepEval writes, in the folder it runs in (the output folder):
- ``.deepeval/.latest_test_run.json``: the test run under the key ``testRunData``;
- ``.deepeval/.latest_run_full.json``: the test run itself.
``expected.json`` holds the test cases as DeepEval reported them (``evaluate(...).test_results``), with the
pipeline's passage ids beside them (DeepEval keeps texts only).
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_ragas import NO_REFERENCE, answer_cases


def main(output: Path) -> None:
    warnings.simplefilter("ignore")
    from deepeval import evaluate
    from deepeval.evaluate import AsyncConfig, DisplayConfig, ErrorConfig
    from deepeval.metrics import BaseMetric, ExactMatchMetric
    from deepeval.test_case import LLMTestCase

    class ReferenceInAnswer(BaseMetric):  # type: ignore[misc]
        """1 when the expected output (the gold passage) is in the answer, else 0; offline and deterministic."""

        def __init__(self) -> None:
            self.threshold = 0.5

        def measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float:
            if test_case.expected_output is None:
                raise ValueError("no expected output to look for")
            self.score = 1.0 if test_case.expected_output in (test_case.actual_output or "") else 0.0
            self.reason = "the expected output is in the answer" if self.score else "it is not"
            self.success = self.score >= self.threshold
            return self.score

        async def a_measure(self, test_case: Any, *args: Any, **kwargs: Any) -> float:
            return self.measure(test_case)

        def is_successful(self) -> bool:
            return bool(self.success)

        @property
        def __name__(self) -> str:
            return "Reference in answer"

    answered = answer_cases()
    test_cases = [
        LLMTestCase(
            name=case.case_id.split("@")[0],
            input=case.question,
            actual_output=case.response,
            expected_output=None if case.reference == NO_REFERENCE else case.reference,
            retrieval_context=case.texts,
            additional_metadata={"case_id": case.case_id},
        )
        for case in answered
    ]
    result = evaluate(
        test_cases=test_cases,
        metrics=[ReferenceInAnswer(), ExactMatchMetric()],
        error_config=ErrorConfig(ignore_errors=True),
        async_config=AsyncConfig(run_async=False),
        display_config=DisplayConfig(show_indicator=False, print_results=False),
    )
    expected = [
        {
            "name": test.name,
            "input": test.input,
            "actual_output": test.actual_output,
            "retrieval_context": test.retrieval_context,
            "metadata": test.metadata,
            "retrieved_ids": case.passage_ids,  # the pipeline's own ids, which DeepEval does not keep
            "success": test.success,
            "metrics": [
                {"name": metric.name, "score": metric.score, "success": metric.success, "error": metric.error}
                for metric in test.metrics_data
            ],
        }
        for test, case in zip(sorted(result.test_results, key=lambda test: test.index), answered, strict=True)
    ]
    (output / "expected.json").write_text(json.dumps(expected, indent=2, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
