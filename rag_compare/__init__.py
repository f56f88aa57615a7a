"""rag-compare: compare two versions of a retrieval-augmented chatbot, case by case.

The public API is what ``__all__`` lists; everything else is private and may change. Names are
imported on first use, so ``import rag_compare`` loads no heavy dependency (the errors, standard
library only, are imported at once).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from rag_compare._version import __version__
from rag_compare.core.errors import (
    AgreementError,
    CaptureError,
    CompareError,
    ConfigError,
    ContractError,
    EndpointError,
    EngineError,
    GateError,
    InputFileError,
    JudgeError,
    NestingError,
    PairsError,
    Problem,
    QueryError,
    RagCompareError,
    ReviewError,
    RunExistsError,
    RunFileError,
    RunIntegrityError,
    ScoresError,
    SecretInConfigError,
)

if TYPE_CHECKING:
    from rag_compare.compute.agreement import Agreement, agreement
    from rag_compare.compute.audit import CorpusAudit, audit_corpora
    from rag_compare.compute.compare_many import compare_many
    from rag_compare.compute.compare_runs import compare
    from rag_compare.compute.comparison import Comparison
    from rag_compare.compute.fallback import FallbackSimulation, simulate_fallback
    from rag_compare.compute.freezing import freeze_run, import_run
    from rag_compare.compute.gate_result import GateResult
    from rag_compare.compute.gating import Gate, load_gate
    from rag_compare.compute.history import History, history
    from rag_compare.compute.lexical_judge import LexicalJudge
    from rag_compare.compute.merging import merge_repeats
    from rag_compare.compute.multi_comparison import MultiComparison
    from rag_compare.core.protocols import (
        Case,
        CaseFailure,
        Context,
        ContextBuilder,
        Generation,
        Generator,
        Judge,
        PairJudge,
        Passage,
        Retriever,
    )
    from rag_compare.io.config import apply_assignments, read_config_file
    from rag_compare.io.corpus import Corpus, load_corpus
    from rag_compare.io.drafts_file import Drafts, admit_cases
    from rag_compare.io.external_scores import import_scores
    from rag_compare.io.language_rules import Language, languages_with, load_language
    from rag_compare.io.pairs import Pairs, judge_pairs, load_pairs
    from rag_compare.io.passages import load_passages
    from rag_compare.io.reviews import Reviews, export_reviews, load_reviews
    from rag_compare.io.run_import import ImportedRun, read_records
    from rag_compare.io.runs import Run, load_run
    from rag_compare.io.schemas import CorpusSchema, PassagesSchema, RecordsSchema
    from rag_compare.io.scores import Scores, load_scores, score_run
    from rag_compare.llm.batch import batch_generate
    from rag_compare.llm.chat_generator import OpenAIGenerator
    from rag_compare.llm.drafts import draft_cases
    from rag_compare.llm.limits import Limits
    from rag_compare.llm.llm_judge import OpenAIJudge
    from rag_compare.llm.pairwise_judge import PairwiseJudge
    from rag_compare.llm.plan import JudgePlan
    from rag_compare.pipeline.bm25 import BM25Retriever
    from rag_compare.pipeline.context_builder import BudgetContextBuilder
    from rag_compare.pipeline.extractive import ExtractiveGenerator
    from rag_compare.pipeline.runner import capture

__all__ = [
    "Agreement",
    "AgreementError",
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
    "EngineError",
    "ExtractiveGenerator",
    "FallbackSimulation",
    "Gate",
    "GateError",
    "GateResult",
    "Generation",
    "Generator",
    "History",
    "ImportedRun",
    "InputFileError",
    "Judge",
    "JudgeError",
    "JudgePlan",
    "Language",
    "LexicalJudge",
    "Limits",
    "MultiComparison",
    "NestingError",
    "OpenAIGenerator",
    "OpenAIJudge",
    "PairJudge",
    "Pairs",
    "PairsError",
    "PairwiseJudge",
    "Passage",
    "PassagesSchema",
    "Problem",
    "QueryError",
    "RagCompareError",
    "RecordsSchema",
    "Retriever",
    "ReviewError",
    "Reviews",
    "Run",
    "RunExistsError",
    "RunFileError",
    "RunIntegrityError",
    "Scores",
    "ScoresError",
    "SecretInConfigError",
    "__version__",
    "admit_cases",
    "agreement",
    "apply_assignments",
    "audit_corpora",
    "batch_generate",
    "capture",
    "compare",
    "compare_many",
    "draft_cases",
    "export_reviews",
    "freeze_run",
    "history",
    "import_run",
    "import_scores",
    "judge_pairs",
    "languages_with",
    "load_corpus",
    "load_gate",
    "load_language",
    "load_pairs",
    "load_passages",
    "load_reviews",
    "load_run",
    "load_scores",
    "merge_repeats",
    "read_config_file",
    "read_records",
    "score_run",
    "simulate_fallback",
]

_LAZY = {
    "Agreement": "rag_compare.compute.agreement",
    "BM25Retriever": "rag_compare.pipeline.bm25",
    "BudgetContextBuilder": "rag_compare.pipeline.context_builder",
    "Case": "rag_compare.core.protocols",
    "CaseFailure": "rag_compare.core.protocols",
    "Comparison": "rag_compare.compute.comparison",
    "Context": "rag_compare.core.protocols",
    "ContextBuilder": "rag_compare.core.protocols",
    "Corpus": "rag_compare.io.corpus",
    "CorpusAudit": "rag_compare.compute.audit",
    "CorpusSchema": "rag_compare.io.schemas",
    "Drafts": "rag_compare.io.drafts_file",
    "ExtractiveGenerator": "rag_compare.pipeline.extractive",
    "FallbackSimulation": "rag_compare.compute.fallback",
    "Gate": "rag_compare.compute.gating",
    "GateResult": "rag_compare.compute.gate_result",
    "Generation": "rag_compare.core.protocols",
    "Generator": "rag_compare.core.protocols",
    "History": "rag_compare.compute.history",
    "ImportedRun": "rag_compare.io.run_import",
    "Judge": "rag_compare.core.protocols",
    "JudgePlan": "rag_compare.llm.plan",
    "Language": "rag_compare.io.language_rules",
    "LexicalJudge": "rag_compare.compute.lexical_judge",
    "Limits": "rag_compare.llm.limits",
    "MultiComparison": "rag_compare.compute.multi_comparison",
    "OpenAIGenerator": "rag_compare.llm.chat_generator",
    "OpenAIJudge": "rag_compare.llm.llm_judge",
    "PairJudge": "rag_compare.core.protocols",
    "Pairs": "rag_compare.io.pairs",
    "PairwiseJudge": "rag_compare.llm.pairwise_judge",
    "Passage": "rag_compare.core.protocols",
    "PassagesSchema": "rag_compare.io.schemas",
    "RecordsSchema": "rag_compare.io.schemas",
    "Retriever": "rag_compare.core.protocols",
    "Reviews": "rag_compare.io.reviews",
    "Run": "rag_compare.io.runs",
    "Scores": "rag_compare.io.scores",
    "admit_cases": "rag_compare.io.drafts_file",
    "agreement": "rag_compare.compute.agreement",
    "apply_assignments": "rag_compare.io.config",
    "audit_corpora": "rag_compare.compute.audit",
    "batch_generate": "rag_compare.llm.batch",
    "capture": "rag_compare.pipeline.runner",
    "compare": "rag_compare.compute.compare_runs",
    "compare_many": "rag_compare.compute.compare_many",
    "draft_cases": "rag_compare.llm.drafts",
    "export_reviews": "rag_compare.io.reviews",
    "freeze_run": "rag_compare.compute.freezing",
    "history": "rag_compare.compute.history",
    "import_run": "rag_compare.compute.freezing",
    "import_scores": "rag_compare.io.external_scores",
    "judge_pairs": "rag_compare.io.pairs",
    "load_pairs": "rag_compare.io.pairs",
    "languages_with": "rag_compare.io.language_rules",
    "load_gate": "rag_compare.compute.gating",
    "load_language": "rag_compare.io.language_rules",
    "load_corpus": "rag_compare.io.corpus",
    "load_passages": "rag_compare.io.passages",
    "load_reviews": "rag_compare.io.reviews",
    "load_run": "rag_compare.io.runs",
    "load_scores": "rag_compare.io.scores",
    "merge_repeats": "rag_compare.compute.merging",
    "read_config_file": "rag_compare.io.config",
    "read_records": "rag_compare.io.run_import",
    "score_run": "rag_compare.io.scores",
    "simulate_fallback": "rag_compare.compute.fallback",
}
"""Each lazily imported public name and the module defining it."""


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its module on first use (then kept in this module)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
