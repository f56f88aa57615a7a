"""Write the LangSmith runs of a LangChain retrieval chain as JSON lines, one root run with its child runs a line.

Run with the producers' Python: ``make_langsmith.py OUTPUT_DIR``. The chain (a vector-store retriever over
``corpora/handbook_passages.csv`` with a bag-of-words embedding, a chat prompt, a fake chat model,
a string parser) answers a few cases of ``corpora/handbook.csv`` offline, each invoked with
``metadata={"case_id": ...}``; for one case the chat model raises. LangSmith's own tracer
(``LangChainTracer``) records the runs, posting them to a ``langsmith.Client`` whose HTTP session answers
locally; each root run is kept with its child runs and written as the SDK's ``Run`` (the object
``Client.read_run(..., load_child_runs=True)`` returns) serialises. It writes into OUTPUT_DIR:

- ``runs.jsonl``: one root run a line (``Run.model_dump_json()``).
- ``expected.json``: what the runs themselves hold, case by case.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import re
import sys
from operator import itemgetter
from pathlib import Path
from typing import Any

import requests
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnablePassthrough
from langchain_core.tracers import LangChainTracer
from langchain_core.tracers.schemas import Run as RunTree
from langchain_core.vectorstores import InMemoryVectorStore
from langsmith import Client, schemas

ROOT = Path(__file__).resolve().parents[2]
TOP_K = 3
DIMENSIONS = 256
ANSWERS = {
    "meal-allowance-daily@2026-01": "The daily meal allowance on a business trip is 45 euros.",
    "remote-work-days@2026-01": "You can work from home up to 3 days per week, agreed with your line manager.",
    "hotel-cap@2026-01": "Hotel stays are capped at 150 euros per night, including taxes.",
    "sick-leave-certificate@2026-01": "You need a medical certificate from the fourth day of sick leave.",
    "ceo-salary@2026-01": "I do not know: the handbook does not say.",
}
FAILING = "bike-lease@2026-01"
TWO_RETRIEVALS = "flight-class@2026-01"
"""Its chain first retrieves broadly (``BROAD_K`` candidates, not sent), then the passages it sends."""
BROAD_K = 6
TWO_RETRIEVALS_ANSWER = "Book economy; business class is allowed on flights over 6 hours, with approval."
PROMPT = ChatPromptTemplate.from_messages(
    [
        ("system", "Answer the question from the handbook passages below.\n\nPassages:\n{context}"),
        ("human", "{question}"),
    ]
)


class LocalSession(requests.Session):
    """An HTTP session that accepts every request the LangSmith client makes, without a network."""

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
        response = requests.Response()
        response.status_code = 200
        response._content = b"{}"
        response.url = str(url)
        response.headers["Content-Type"] = "application/json"
        return response


class KeepingTracer(LangChainTracer):
    """LangSmith's tracer, also keeping each finished root run with its child runs."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.roots: list[RunTree] = []

    def _persist_run(self, run: RunTree) -> None:
        self.roots.append(run)


class WordsEmbedding(Embeddings):
    """A deterministic bag of words: each word of four letters or more hashed into one of ``DIMENSIONS``
    buckets, normalised."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        vector = [0.0] * DIMENSIONS
        for word in re.findall(r"[a-z0-9]{4,}", text.lower()):
            vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIMENSIONS] += 1.0
        norm = math.sqrt(sum(value * value for value in vector)) or 1.0
        return [value / norm for value in vector]


class UnreachableChatModel(GenericFakeChatModel):
    """A chat model whose endpoint cannot be reached."""

    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        raise ConnectionError("the model endpoint is unreachable (connection refused)")


def main(output: Path) -> None:
    output.mkdir(parents=True, exist_ok=True)
    cases = {row["case_id"]: row for row in _rows(ROOT / "corpora" / "handbook.csv")}
    documents = [
        Document(id=row["passage_id"], page_content=row["text"], metadata={"source_version": row["source_version"]})
        for row in _rows(ROOT / "corpora" / "handbook_passages.csv")
    ]
    store = InMemoryVectorStore(WordsEmbedding())
    store.add_documents(documents)
    retriever = store.as_retriever(search_kwargs={"k": TOP_K}).with_config(run_name="context_retriever")
    broad = store.as_retriever(search_kwargs={"k": BROAD_K}).with_config(run_name="broad_retriever")
    client = Client(
        api_url="http://langsmith.local", api_key="offline", session=LocalSession(), auto_batch_tracing=False
    )
    tracer = KeepingTracer(client=client, project_name="handbook")
    answers = [*ANSWERS.items(), (FAILING, None), (TWO_RETRIEVALS, TWO_RETRIEVALS_ANSWER)]
    for number, (case_id, answer) in enumerate(answers):
        usage = {"input_tokens": 180 + number, "output_tokens": 12 + number, "total_tokens": 192 + 2 * number}
        model = (
            UnreachableChatModel(messages=iter([]))
            if answer is None
            else GenericFakeChatModel(messages=iter([AIMessage(content=answer, usage_metadata=usage)]))
        )
        chain = _chain(retriever, model, broad if case_id == TWO_RETRIEVALS else None)
        config: Any = {"callbacks": [tracer], "metadata": {"case_id": case_id}}
        try:
            chain.invoke({"question": cases[case_id]["question"]}, config=config)
        except ConnectionError:
            if answer is not None:
                raise
    runs = [_exported(root) for root in tracer.roots]
    (output / "runs.jsonl").write_text("".join(run.model_dump_json() + "\n" for run in runs), encoding="utf-8")
    expected = [_expected(json.loads(run.model_dump_json())) for run in runs]
    (output / "expected.json").write_text(json.dumps(expected, indent=2), encoding="utf-8")


def _chain(
    retriever: Runnable[Any, Any], model: GenericFakeChatModel, broad: Runnable[Any, Any] | None
) -> Runnable[Any, Any]:
    """question -> (broad candidates, kept aside) -> passages -> prompt -> model -> text."""
    passages = itemgetter("question") | retriever | (lambda found: "\n\n".join(doc.page_content for doc in found))
    steps: Runnable[Any, Any] = RunnablePassthrough.assign(context=passages)
    if broad is not None:
        steps = RunnablePassthrough.assign(candidates=itemgetter("question") | broad) | steps
    return steps | PROMPT | model | StrOutputParser()


def _exported(tree: RunTree) -> schemas.Run:
    """The run as LangSmith hands it back: the SDK's ``Run`` with its child runs nested."""
    children = [_exported(child) for child in tree.child_runs]
    return schemas.Run(**tree.model_dump(), child_runs=children, child_run_ids=[child.id for child in children])


def _expected(root: dict[str, Any]) -> dict[str, Any]:
    """What the run holds: its case id, question, retrieved documents, the messages sent, answer, error."""
    runs = list(_flattened(root))
    retriever = next(run for run in runs if run["name"] == "context_retriever")
    model = next(run for run in runs if run["run_type"] == "llm")
    usage = (model["extra"].get("metadata") or {}).get("usage_metadata") or {}
    return {
        "id": root["id"],
        "case_id": root["extra"]["metadata"]["case_id"],
        "question": root["inputs"]["question"],
        "retrieved_passage_ids": [doc["id"] for doc in retriever["outputs"]["documents"]],
        "retrieved_texts": [doc["page_content"] for doc in retriever["outputs"]["documents"]],
        "retrievers": [run["name"] for run in runs if run["run_type"] == "retriever"],
        "messages": [message["kwargs"]["content"] for message in model["inputs"]["messages"][0]],
        "answer": (root.get("outputs") or {}).get("output"),
        "error": model["error"],
        "failed_run_type": "llm" if model["error"] else None,
        "prompt_tokens": usage.get("input_tokens"),
        "completion_tokens": usage.get("output_tokens"),
        "start_time": root["start_time"],
        "end_time": root["end_time"],
    }


def _flattened(run: dict[str, Any]) -> Any:
    yield run
    for child in run.get("child_runs") or []:
        yield from _flattened(child)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
