"""The LLM judge: checks of grounding and usefulness asked of any OpenAI-compatible chat endpoint.

``OpenAIJudge`` sends one request per case and enabled check (see ``judge_checks``), each with JSON-schema
structured output, through the ``openai`` client: concurrently up to a bound, with a timeout, retries
and a reply cache on disk (see ``dispatch``, ``limits`` and ``cache``). Abstention is decided as the offline
judge decides it (the abstention phrasings and parts of its language files), so it stays deterministic and
label-scored. A case where a check finally fails is ``judge_failed`` with the error, and none of its
verdicts count; a check whose inputs are missing (no context recorded, no acceptance note) is skipped
and its score is null.

Prompts are rendered case by case: each is a request of its own anyway.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare._version import __version__
from rag_compare.compute.claims import CLAIM_TYPE
from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.core.contract import record_ok
from rag_compare.core.errors import ConfigError, ContractError, Problem
from rag_compare.core.nesting import load_json
from rag_compare.core.signals import JUDGE_FAILED, SCORED_SIGNALS
from rag_compare.llm.dispatch import Outcome
from rag_compare.llm.endpoint_judge import EndpointJudge
from rag_compare.llm.judge_checks import (
    CHECKS,
    DEFAULT_CHECKS,
    PROMPT_VERSION,
    Check,
    claim_verdicts,
    prompt_digest,
    render_messages,
)
from rag_compare.llm.limits import Limits, limits_from
from rag_compare.llm.plan import JudgePlan, estimated_tokens, tokens_of
from rag_compare.llm.pool import EndpointUsage
from rag_compare.llm.transport import chat_body

__all__ = ["OpenAIJudge"]

METHOD_VERSION = "llm-1"
_INPUTS = ("status", "question", "answer", "context", "acceptance_note", "answerability")
_COMPLETION_ESTIMATE = 80
"""Tokens a verdict's reply is guessed to take; groundedness adds the length of the answer (its claims)."""


@dataclass(frozen=True)
class _Request:
    row: int
    check: Check
    body: dict[str, Any]
    answer_chars: int


@dataclass(frozen=True)
class OpenAIJudge(EndpointJudge):
    """An LLM judge over an OpenAI-compatible chat-completions endpoint (see the module).

    ``base_url`` defaults to ``OPENAI_BASE_URL``, the key to ``OPENAI_API_KEY`` (a local endpoint given
    by ``base_url`` needs none); several URLs are a pool of endpoints serving the same model, sharing
    the concurrency bound (see ``pool``). ``client`` (an ``openai.AsyncOpenAI``) replaces both. ``limits``:
    concurrency, timeout, retries and backoff (default ``Limits()``; the separate ``concurrency``,
    ``timeout``, ``max_retries`` and ``backoff`` arguments are deprecated). ``cache``: a file path,
    ``True`` for the default file (``RAG_COMPARE_CACHE``), ``False`` for none. ``engine``: ``local``
    sends from this process, ``ray`` from Ray tasks (``rag-compare[ray]``) on the cluster at
    ``ray_address`` (default: a Ray started on this machine), with the same verdicts and fingerprint
    (see ``ray_dispatch``).
    """

    model: str
    base_url: str | Sequence[str] | None = None
    checks: Sequence[str] = DEFAULT_CHECKS
    temperature: float | None = 0.0
    seed: int | None = None
    concurrency: InitVar[int | None] = None
    timeout: InitVar[float | None] = None
    max_retries: InitVar[int | None] = None
    backoff: InitVar[float | None] = None
    cache: str | Path | bool = True
    progress: bool = False
    api_key: str | None = field(default=None, repr=False)
    client: Any = field(default=None, repr=False, compare=False)
    limits: Limits | None = None
    """After construction, the limits the judge sends with (never ``None``)."""
    engine: str = "local"
    ray_address: str | None = None
    _limits: Limits = field(init=False, repr=False, compare=False)
    _usage: dict[str, EndpointUsage] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(
        self, concurrency: int | None, timeout: float | None, max_retries: int | None, backoff: float | None
    ) -> None:
        if not self.model.strip():
            raise ConfigError("the judge needs a model: pass `model` (the name the endpoint serves).")
        unknown = [name for name in self.checks if name not in CHECKS]
        if unknown or not self.checks:
            raise ConfigError(f"unknown check {', '.join(unknown) or '(none given)'}; use any of: {', '.join(CHECKS)}.")
        object.__setattr__(self, "checks", tuple(dict.fromkeys(self.checks)))
        deprecated = {"concurrency": concurrency, "timeout": timeout, "max_retries": max_retries, "backoff": backoff}
        object.__setattr__(self, "_limits", limits_from("OpenAIJudge", self.limits, Limits(), deprecated, 4))
        object.__setattr__(self, "limits", self._limits)
        self._settle_endpoints()

    @property
    def name(self) -> str:
        return "openai"

    @property
    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "method": METHOD_VERSION,
            "model": self.model,
            "endpoint": self._endpoint_config(),
            "checks": list(self.checks),
            "temperature": self.temperature,
            "seed": self.seed,
            "prompt_version": PROMPT_VERSION,
            "prompts_sha256": prompt_digest(),
            "rag_compare_version": __version__,
        }

    def plan(self, cases: pl.DataFrame) -> JudgePlan:
        """The requests judging ``cases`` would make, how many are cached, and a token estimate."""
        requests = self._requests(_inputs(cases))
        cached = self._cached([request.body for request in requests])
        to_send = [request for request, found in zip(requests, cached, strict=True) if not found]
        prompt = sum(estimated_tokens(json.dumps(request.body)) for request in to_send)
        completion = sum(
            _COMPLETION_ESTIMATE + (tokens_of(request.answer_chars) if request.check.name == "groundedness" else 0)
            for request in to_send
        )
        return JudgePlan(cases.height, len(requests), len(requests) - len(to_send), prompt, completion)

    def judge(self, cases: pl.DataFrame) -> pl.DataFrame:
        """Verdicts for each row of ``cases`` (run records), in order: ``abstained``, ``abstention_correct``, each
        check's signal and ``<check>_explanation``, ``claims`` with groundedness (``claims.CLAIM_TYPE``:
        every claim, supported or not, and what it cited), ``prompt_tokens``, ``completion_tokens``,
        ``requests`` (HTTP requests sent now), ``judge_status`` and ``judge_error``."""
        inputs = _inputs(cases)
        requests = self._requests(inputs)
        outcomes = self._send([request.body for request in requests], f"judging {inputs.height} cases")
        return self._verdicts(inputs, requests, outcomes)

    def _requests(self, inputs: pl.DataFrame) -> list[_Request]:
        requests = []
        for row, case in enumerate(inputs.iter_rows(named=True)):
            if case["status"] != "ok":
                continue
            for name in self.checks:
                check = CHECKS[name]
                if any(not (case[need] or "").strip() for need in check.needs):
                    continue
                if check.skip_abstentions and case["abstained"]:
                    continue
                requests.append(_Request(row, check, self._body(check, case), len(case["answer"] or "")))
        return requests

    def _body(self, check: Check, case: Mapping[str, Any]) -> dict[str, Any]:
        messages = render_messages(check, {**case, "answer": case["answer"] or ""})
        return chat_body(
            self.model, messages, response_format=check.response_format, temperature=self.temperature, seed=self.seed
        )

    def _verdicts(self, inputs: pl.DataFrame, requests: list[_Request], outcomes: list[Outcome]) -> pl.DataFrame:
        height = inputs.height
        columns: dict[str, list[Any]] = {}
        for name in self.checks:
            columns[CHECKS[name].signal] = [None] * height
            columns[f"{name}_explanation"] = [None] * height
        if "groundedness" in self.checks:
            columns["claims"] = [None] * height
        prompt_tokens, completion_tokens, sent = [0] * height, [0] * height, [0] * height
        errors: list[list[str]] = [[] for _ in range(height)]
        for request, outcome in zip(requests, outcomes, strict=True):
            row, check = request.row, request.check
            sent[row] += outcome.sent
            if outcome.reply is None:
                errors[row].append(f"{check.name}: {outcome.error}")
                continue
            prompt_tokens[row] += int(outcome.reply["prompt_tokens"])
            completion_tokens[row] += int(outcome.reply["completion_tokens"])
            reply = load_json(outcome.reply["content"], "a reply of the judge's endpoint", line=None)
            columns[check.signal][row] = check.score(reply)
            columns[f"{check.name}_explanation"][row] = reply["explanation"]
            if check.name == "groundedness":
                columns["claims"][row] = claim_verdicts(reply, inputs.item(row, "context") or "")
        failed = pl.Series([bool(found) for found in errors], dtype=pl.Boolean)
        frame = pl.DataFrame(
            {
                "abstained": inputs.get_column("abstained"),
                "abstention_correct": inputs.get_column("abstention_correct"),
                **{name: pl.Series(name, values, dtype=_dtype(name)) for name, values in columns.items()},
                "prompt_tokens": pl.Series(prompt_tokens, dtype=pl.Int64),
                "completion_tokens": pl.Series(completion_tokens, dtype=pl.Int64),
                "requests": pl.Series(sent, dtype=pl.Int64),
                "judge_error": pl.Series(["; ".join(found) or None for found in errors], dtype=pl.String),
            }
        )
        answered = pl.lit(inputs.select(record_ok()).to_series())
        return frame.with_columns(
            *(
                pl.when(~pl.lit(failed)).then(pl.col(name)).alias(name)
                for name in frame.columns
                if name in SCORED_SIGNALS
            ),
            judge_status=pl.when(~answered)
            .then(pl.lit("not_judged"))
            .when(pl.lit(failed))
            .then(pl.lit(JUDGE_FAILED))
            .otherwise(pl.lit("ok")),
        ).select(*frame.columns[:-1], "judge_status", "judge_error")


def _dtype(name: str) -> pl.DataType:
    if name == "claims":
        return pl.List(CLAIM_TYPE)
    return pl.String() if name.endswith("_explanation") else pl.Float64()


def _inputs(cases: pl.DataFrame) -> pl.DataFrame:
    """The columns the checks read, typed, with the offline judge's abstention verdicts."""
    problems = [
        Problem("a column of text", column=name)
        for name in _INPUTS
        if cases.schema.get(name) not in (pl.String, pl.Null, pl.Categorical, pl.Enum)
    ]
    if problems:
        raise ContractError("cases", "input of the LLM judge", problems)
    typed = cases.select(pl.col(name).cast(pl.String) for name in _INPUTS)
    return pl.concat([typed, LexicalJudge().abstentions(typed)], how="horizontal")
