"""rag-compare: compare two versions of a retrieval-augmented chatbot, case by case.

The public API is what ``__all__`` lists; everything else is private and may change.
"""

from rag_compare._version import __version__
from rag_compare.compute.audit import CorpusAudit, audit_corpora
from rag_compare.compute.compare import compare
from rag_compare.compute.comparison import Comparison
from rag_compare.compute.fallback import FallbackSimulation, simulate_fallback
from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.core.errors import (
    CaptureError,
    CompareError,
    ConfigError,
    ContractError,
    EndpointError,
    InputFileError,
    JudgeError,
    Problem,
    RagCompareError,
    RunExistsError,
    RunFileError,
    RunIntegrityError,
    ScoresError,
    SecretInConfigError,
)
from rag_compare.core.protocols import (
    Case,
    CaseFailure,
    Context,
    ContextBuilder,
    Generation,
    Generator,
    Judge,
    Passage,
    Retriever,
)
from rag_compare.io.config import apply_assignments, read_config_file
from rag_compare.io.corpus import Corpus, load_corpus
from rag_compare.io.external_scores import import_scores
from rag_compare.io.passages import load_passages
from rag_compare.io.runs import Run, freeze_run, load_run
from rag_compare.io.schemas import CorpusSchema, PassagesSchema, RecordsSchema
from rag_compare.io.scores import Scores, load_scores, score_run
from rag_compare.llm.batch import batch_generate
from rag_compare.llm.chat_generator import OpenAIGenerator
from rag_compare.llm.drafts import Drafts, admit_cases, draft_cases
from rag_compare.llm.llm_judge import JudgePlan, OpenAIJudge
from rag_compare.pipeline.bm25 import BM25Retriever
from rag_compare.pipeline.context_builder import BudgetContextBuilder
from rag_compare.pipeline.extractive import ExtractiveGenerator
from rag_compare.pipeline.runner import capture

__all__ = [
    "BM25Retriever",
    "BudgetContextBuilder",
    "CaptureError",
    "Case",
    "CaseFailure",
    "CompareError",
    "Comparison",
    "ConfigError",
    "Context",
    "ContextBuilder",
    "ContractError",
    "Corpus",
    "CorpusAudit",
    "CorpusSchema",
    "Drafts",
    "EndpointError",
    "ExtractiveGenerator",
    "FallbackSimulation",
    "Generation",
    "Generator",
    "InputFileError",
    "Judge",
    "JudgeError",
    "JudgePlan",
    "LexicalJudge",
    "OpenAIGenerator",
    "OpenAIJudge",
    "Passage",
    "PassagesSchema",
    "Problem",
    "RagCompareError",
    "RecordsSchema",
    "Retriever",
    "Run",
    "RunExistsError",
    "RunFileError",
    "RunIntegrityError",
    "Scores",
    "ScoresError",
    "SecretInConfigError",
    "__version__",
    "admit_cases",
    "apply_assignments",
    "audit_corpora",
    "batch_generate",
    "capture",
    "compare",
    "draft_cases",
    "freeze_run",
    "import_scores",
    "load_corpus",
    "load_passages",
    "load_run",
    "load_scores",
    "read_config_file",
    "score_run",
    "simulate_fallback",
]
