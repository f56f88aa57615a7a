"""Ragas' own files of a small pipeline over the example handbook, made offline (argv[1]: the output folder).

A deterministic pipeline answers five cases of ``corpora/handbook.csv``: it ranks the 2026-01 passages of
``corpora/handbook_passages.csv`` by the words they share with the question, keeps the top two, and answers
with the best one. Its generator fails on one case (an empty response: Ragas has no failure column).

Writes, with Ragas' own writers:
- ``dataset.jsonl`` (``EvaluationDataset.to_jsonl``) and ``dataset.csv`` (``to_csv``): no case ids, as
  Ragas' samples have no field for one;
- ``dataset_ids.csv`` and ``dataset_ids.jsonl``: ``to_pandas()`` with a ``case_id`` column added, saved by pandas;
- ``result.csv``, ``result.jsonl``, ``result.parquet``: ``evaluate(...).to_pandas()`` over offline metrics,
  one of which (a ``StringPresence`` that refuses an empty response) raises for one row, so it holds a NaN;
- ``expected.json``: the cases as the Ragas objects hold them, and each row's scores (NaN as null).
"""

from __future__ import annotations

import csv
import json
import math
import re
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
VERSION = "2026-01"
CASES = (
    "public-transport-pass@2026-01",
    "sick-leave-certificate@2026-01",
    "flight-class@2026-01",
    "hotel-approval@2026-01",
    "ceo-salary@2026-01",
)
"""Cases whose question no other case of the corpus asks (so they match by question text too)."""
GENERATOR_FAILS = "hotel-approval@2026-01"
TOP_K = 2
NO_REFERENCE = "The handbook does not say."


@dataclass(frozen=True)
class Answered:
    """One case as the pipeline ran it."""

    case_id: str
    question: str
    passage_ids: list[str]
    texts: list[str]
    response: str
    reference: str
    reference_ids: list[str]


def _words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z0-9]+", text.lower()) if len(word) > 3}


def _read(name: str) -> list[dict[str, str]]:
    with open(ROOT / "corpora" / name, newline="", encoding="utf-8") as stream:
        return list(csv.DictReader(stream))


def answer_cases() -> list[Answered]:
    """The pipeline's run over ``CASES``: ranked passages, the answer, and the gold passage as reference."""
    passages = [row for row in _read("handbook_passages.csv") if row["source_version"] == VERSION]
    texts = {row["passage_id"]: row["text"] for row in passages}
    corpus = {row["case_id"]: row for row in _read("handbook.csv")}
    answered = []
    for case_id in CASES:
        case = corpus[case_id]
        asked = _words(case["question"])
        ranked = sorted(passages, key=lambda row: (-len(asked & _words(row["text"])), row["passage_id"]))[:TOP_K]
        gold = [item for item in case["required_passage_ids"].split(";") if item]
        response = "" if case_id == GENERATOR_FAILS else f"According to the handbook: {ranked[0]['text']}"
        answered.append(
            Answered(
                case_id=case_id,
                question=case["question"],
                passage_ids=[row["passage_id"] for row in ranked],
                texts=[row["text"] for row in ranked],
                response=response,
                reference=texts[gold[0]] if gold else NO_REFERENCE,
                reference_ids=gold,
            )
        )
    return answered


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def main(output: Path) -> None:
    warnings.simplefilter("ignore")
    from ragas import EvaluationDataset, SingleTurnSample, evaluate
    from ragas.metrics import ExactMatch, IDBasedContextPrecision, IDBasedContextRecall, StringPresence

    class StrictStringPresence(StringPresence):  # type: ignore[misc]
        """``string_present`` that refuses an empty response, as a metric that errors on one row."""

        async def _single_turn_ascore(self, sample: Any, callbacks: Any) -> float:
            if not sample.response:
                raise ValueError("no response to look for the reference in")
            return float(await super()._single_turn_ascore(sample, callbacks))

    answered = answer_cases()
    dataset = EvaluationDataset(
        samples=[
            SingleTurnSample(
                user_input=case.question,
                retrieved_contexts=case.texts,
                retrieved_context_ids=case.passage_ids,
                response=case.response,
                reference=case.reference,
                reference_context_ids=case.reference_ids,
            )
            for case in answered
        ]
    )
    dataset.to_jsonl(output / "dataset.jsonl")
    dataset.to_csv(output / "dataset.csv")
    with_ids = dataset.to_pandas().assign(case_id=[case.case_id for case in answered])
    with_ids.to_csv(output / "dataset_ids.csv", index=False)
    with_ids.to_json(output / "dataset_ids.jsonl", orient="records", lines=True, force_ascii=False)
    result = evaluate(
        dataset,
        metrics=[IDBasedContextRecall(), IDBasedContextPrecision(), ExactMatch(), StrictStringPresence()],
        raise_exceptions=False,
        show_progress=False,
    )
    table = result.to_pandas()
    table.to_csv(output / "result.csv", index=False)
    table.to_json(output / "result.jsonl", orient="records", lines=True, force_ascii=False)
    table.to_parquet(output / "result.parquet")
    expected = {
        "cases": [
            {"case_id": case.case_id, **sample.to_dict()}
            for case, sample in zip(answered, dataset.samples, strict=True)
        ],
        "scores": [{name: _finite(value) for name, value in row.items()} for row in result.scores],
        "generator_fails": GENERATOR_FAILS,
    }
    (output / "expected.json").write_text(json.dumps(expected, indent=2, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
