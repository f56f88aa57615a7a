"""Write OpenInference traces of a LlamaIndex query engine and a LangChain chain as OTLP/JSON lines.

Run with the producers' Python: ``make_openinference.py OUTPUT_DIR``. Both pipelines answer a few cases of
``corpora/handbook.csv`` over ``corpora/handbook_passages.csv``, offline (a hashed bag-of-words embedding,
models that answer from the context they are sent, one of each that raises, and one LlamaIndex query
reranked by ``StructuredLLMRerank``), instrumented by OpenInference and traced with the OpenTelemetry SDK;
the index build's spans are traces without a query. It writes into OUTPUT_DIR:

- ``traces.jsonl``: one ``ExportTraceServiceRequest`` a line as the Collector's file exporter writes it
  (ids in hex, enums as numbers); a trace's spans are spread over several lines, as batches are.
- ``traces_base64.jsonl``: the same requests in protobuf's own JSON mapping (ids in base64, enums by name).
- ``expected.json``: what the pipelines themselves reported, case by case, from their own objects.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from google.protobuf import json_format
from langchain_core.callbacks import BaseCallbackHandler, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnablePassthrough
from llama_index.core import VectorStoreIndex
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import CompletionResponse, CompletionResponseGen, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.postprocessor import StructuredLLMRerank
from llama_index.core.schema import TextNode
from openinference.instrumentation import using_metadata
from openinference.instrumentation.langchain import LangChainInstrumentor
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

ROOT = Path(__file__).resolve().parents[2]
DIMENSIONS = 256
TOP_K = 3
SPANS_PER_LINE = 4
"""Spans per exported request: small, so that a trace's spans are spread over several lines."""

LLAMA_INDEX_CASES = ("meal-allowance-daily@2026-01", "remote-work-days@2026-01", "hotel-cap@2026-01")
LLAMA_INDEX_FAILING = "flight-class@2026-01"
LLAMA_INDEX_RERANKED = "parental-leave-weeks@2026-01"
RERANKED_TOP_N = 2
LANGCHAIN_CASES = ("bike-lease@2026-01", "public-transport-pass@2026-01", "ceo-salary@2026-01")
LANGCHAIN_FAILING = "sick-leave-certificate@2026-01"
LLM_ERROR = "the model endpoint answered 503 Service Unavailable"

CALLS: list[dict[str, Any]] = []
"""Every call of a model of this script: the prompt as the model received it, and the usage it reported."""


def words(text: str) -> list[str]:
    return "".join(char.lower() if char.isalnum() else " " for char in text).split()


def hashed_vector(text: str) -> list[float]:
    """A deterministic bag-of-words embedding: each word hashed into one of ``DIMENSIONS`` buckets."""
    vector = [0.0] * DIMENSIONS
    for word in words(text):
        vector[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % DIMENSIONS] += 1.0
    norm = math.sqrt(sum(value * value for value in vector)) or 1.0
    return [value / norm for value in vector]


def extract_answer(prompt: str) -> str:
    """The first passage of the context in ``prompt``: what an extractive model would answer."""
    body = prompt.split("---------------------\n")[1] if "---------------------\n" in prompt else prompt
    return "According to the handbook: " + next(line for line in body.splitlines() if line.strip())


class HashEmbedding(BaseEmbedding):
    """LlamaIndex's side of ``hashed_vector``."""

    def _get_query_embedding(self, query: str) -> list[float]:
        return hashed_vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return hashed_vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return hashed_vector(text)


class OfflineLLM(CustomLLM):
    """An offline completion model: each prompt and the usage it reports are kept in ``CALLS``."""

    model_name: ClassVar[str] = "offline-llm"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name=self.model_name, is_chat_model=False)

    def answer(self, prompt: str) -> str:
        raise NotImplementedError

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        CALLS.append({"prompt": prompt})
        text = self.answer(prompt)
        usage = {"prompt_tokens": len(prompt.split()), "completion_tokens": len(text.split())}
        CALLS[-1]["usage"] = usage
        return CompletionResponse(text=text, raw={"usage": usage})

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        raise NotImplementedError("this model does not stream")


class ExtractiveLLM(OfflineLLM):
    """Answers with the first passage of its context, or raises."""

    model_name: ClassVar[str] = "extractive-llm"
    fail: bool = False

    def answer(self, prompt: str) -> str:
        if self.fail:
            raise RuntimeError(LLM_ERROR)
        return extract_answer(prompt)


class RerankingLLM(OfflineLLM):
    """A model for ``StructuredLLMRerank``: the documents it is shown, as JSON, by how many of the
    question's words each holds."""

    model_name: ClassVar[str] = "overlap-reranker"

    def answer(self, prompt: str) -> str:
        question = set(words(re.search(r"Question: (.*)", prompt)[1]))
        shown = re.findall(r"Document (\d+):\n(.*?)(?=\n\nDocument \d+:|\nQuestion: )", prompt, flags=re.DOTALL)
        overlaps = {int(number): len(question & set(words(text))) for number, text in shown}
        ranked = sorted(overlaps, key=lambda number: (-overlaps[number], number))
        documents = [{"document_number": number, "relevance": min(10, 1 + overlaps[number])} for number in ranked]
        return json.dumps({"documents": documents})


class HashRetriever(BaseRetriever):
    """LangChain's retriever over the passages by ``hashed_vector``'s cosine, best first."""

    documents: list[Document]
    k: int = TOP_K

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        question = hashed_vector(query)

        def similarity(document: Document) -> float:
            return sum(a * b for a, b in zip(question, hashed_vector(document.page_content), strict=True))

        return sorted(self.documents, key=similarity, reverse=True)[: self.k]


class ExtractiveChatModel(BaseChatModel):
    """An offline chat model that answers with the first passage of its context (with token usage), or raises."""

    fail: bool = False

    @property
    def _llm_type(self) -> str:
        return "extractive-chat"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, **kwargs: Any) -> ChatResult:
        prompt = "\n".join(str(message.content) for message in messages)
        CALLS.append({"prompt": prompt})
        if self.fail:
            raise RuntimeError(LLM_ERROR)
        text = extract_answer(prompt)
        tokens = {"prompt_tokens": len(prompt.split()), "completion_tokens": len(text.split())}
        CALLS[-1]["usage"] = tokens
        usage = {
            "input_tokens": tokens["prompt_tokens"],
            "output_tokens": tokens["completion_tokens"],
            "total_tokens": sum(tokens.values()),
        }
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text, usage_metadata=usage))])


class RetrievedDocuments(BaseCallbackHandler):
    """Keeps the documents the chain's retriever returned, as LangChain hands them to its callbacks."""

    def __init__(self) -> None:
        self.documents: list[Document] = []

    def on_retriever_end(self, documents: Sequence[Document], **kwargs: Any) -> None:
        self.documents = list(documents)


def read_csv(name: str) -> list[dict[str, str]]:
    with (ROOT / "corpora" / name).open(encoding="utf-8", newline="") as file:
        return list(csv.DictReader(file))


def build_index(passages: list[dict[str, str]]) -> VectorStoreIndex:
    """A vector index of the passages, each node's id its passage id (its spans are traces without a query)."""
    nodes = [
        TextNode(
            id_=row["passage_id"],
            text=row["text"],
            metadata={"source_version": row["source_version"]},
            excluded_llm_metadata_keys=["source_version"],
        )
        for row in passages
    ]
    return VectorStoreIndex(nodes, embed_model=HashEmbedding())


def llama_index_engines(index: VectorStoreIndex) -> dict[str, BaseQueryEngine]:
    """A query engine for each case: plain, one whose model raises, one whose retrieval is reranked."""
    engines = {
        case_id: index.as_query_engine(llm=ExtractiveLLM(), similarity_top_k=TOP_K) for case_id in LLAMA_INDEX_CASES
    }
    engines[LLAMA_INDEX_FAILING] = index.as_query_engine(llm=ExtractiveLLM(fail=True), similarity_top_k=TOP_K)
    reranker = StructuredLLMRerank(llm=RerankingLLM(), top_n=RERANKED_TOP_N, choice_batch_size=TOP_K + 1)
    engines[LLAMA_INDEX_RERANKED] = index.as_query_engine(
        llm=ExtractiveLLM(), similarity_top_k=TOP_K + 1, node_postprocessors=[reranker]
    )
    return engines


def llama_index_cases(index: VectorStoreIndex, questions: dict[str, str]) -> list[dict[str, Any]]:
    """Ask each case's query engine its question under the case's metadata."""
    expected = []
    for case_id, engine in llama_index_engines(index).items():
        case: dict[str, Any] = {"case_id": case_id, "framework": "llama_index", "question": questions[case_id]}
        first_call = len(CALLS)
        with using_metadata({"case_id": case_id, "team": "handbook"}):
            try:
                response = engine.query(questions[case_id])
            except RuntimeError as error:
                case["error"] = str(error)
            else:
                case["answer"] = str(response)
                case["retrieved_passage_ids"] = [node.node.node_id for node in response.source_nodes]
                case["retrieved_scores"] = [node.score for node in response.source_nodes]
        expected.append(case | calls_of_case(CALLS[first_call:]))
    return expected


def calls_of_case(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The prompt of a case's last model call and the tokens its calls reported (None when none did)."""
    usages = [call["usage"] for call in calls if "usage" in call]
    return {
        "prompt": calls[-1]["prompt"],
        "prompt_tokens": sum(usage["prompt_tokens"] for usage in usages) if usages else None,
        "completion_tokens": sum(usage["completion_tokens"] for usage in usages) if usages else None,
    }


def langchain_cases(questions: dict[str, str], passages: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Run a retriever -> prompt -> chat model chain for each case under its metadata."""
    documents = [
        Document(
            page_content=row["text"],
            metadata={"passage_id": row["passage_id"], "source_version": row["source_version"]},
        )
        for row in passages
    ]
    retriever = HashRetriever(documents=documents)
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "Answer from the handbook passages below only.\n---------------------\n{context}"),
            ("human", "{question}"),
        ]
    )

    def join(found: list[Document]) -> str:
        return "\n\n".join(document.page_content for document in found)

    expected = []
    for case_id in (*LANGCHAIN_CASES, LANGCHAIN_FAILING):
        model = ExtractiveChatModel(fail=case_id == LANGCHAIN_FAILING)
        chain = {"context": retriever | join, "question": RunnablePassthrough()} | prompt | model | StrOutputParser()
        seen = RetrievedDocuments()
        case: dict[str, Any] = {"case_id": case_id, "framework": "langchain", "question": questions[case_id]}
        first_call = len(CALLS)
        with using_metadata({"case_id": case_id, "team": "handbook"}):
            try:
                case["answer"] = chain.invoke(questions[case_id], config={"callbacks": [seen]})
            except RuntimeError as error:
                case["error"] = str(error)
        case["retrieved_passage_ids"] = [document.metadata["passage_id"] for document in seen.documents]
        case["retrieved_scores"] = None
        expected.append(case | calls_of_case(CALLS[first_call:]))
    return expected


def requests(spans: Sequence[ReadableSpan]) -> list[ExportTraceServiceRequest]:
    """The spans as OTLP export requests of ``SPANS_PER_LINE`` spans each, as a batching exporter sends them."""
    return [encode_spans(spans[start : start + SPANS_PER_LINE]) for start in range(0, len(spans), SPANS_PER_LINE)]


def hex_ids(value: Any) -> Any:
    """``value`` (protobuf's JSON mapping of a request) with its ids in hex, as the Collector writes them."""
    if isinstance(value, list):
        return [hex_ids(item) for item in value]
    if not isinstance(value, dict):
        return value
    return {
        key: base64.b64decode(item).hex() if key in {"traceId", "spanId", "parentSpanId"} else hex_ids(item)
        for key, item in value.items()
    }


def write_lines(path: Path, values: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(value) + "\n" for value in values), encoding="utf-8")


def main(output: Path) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    LlamaIndexInstrumentor().instrument(tracer_provider=provider)
    LangChainInstrumentor().instrument(tracer_provider=provider)
    questions = {row["case_id"]: row["question"] for row in read_csv("handbook.csv")}
    passages = read_csv("handbook_passages.csv")

    index = build_index(passages)
    index_traces = {span.context.trace_id for span in exporter.get_finished_spans()}
    cases = llama_index_cases(index, questions) + langchain_cases(questions, passages)
    spans = exporter.get_finished_spans()
    expected = {
        "cases": cases,
        "traces": len({span.context.trace_id for span in spans}),
        "index_traces": len(index_traces),
    }
    batches = requests(spans)
    write_lines(output / "traces_base64.jsonl", [json_format.MessageToDict(batch) for batch in batches])
    write_lines(
        output / "traces.jsonl",
        [hex_ids(json_format.MessageToDict(batch, use_integers_for_enums=True)) for batch in batches],
    )
    (output / "expected.json").write_text(json.dumps(expected, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
