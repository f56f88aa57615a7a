"""The pairwise judge: which of two runs' answers to the same question is better, asked of any
OpenAI-compatible chat endpoint.

``PairwiseJudge`` shows a model the question, its answerability label, the acceptance note and both
answers, each beside the context it was given, and asks which answer better answers the question for
the person who asked: correct against its own context and the note's conditions, complete, and on an
unanswerable case declining rather than guessing; ``tie`` when neither is better. Judges prefer
whichever answer comes first (or the longer one), so every pair is asked twice: once with the baseline's
answer first (``baseline_first``), once with the candidate's first (``candidate_first``). The reply is
strict JSON, ``{"better": "first" | "second" | "tie", "reason": str}``.

The judge returns both raw choices and their reasons; it decides no verdict. The caller reads them
together: the candidate wins only when the baseline-first order says ``second`` and the candidate-first
order says ``first`` (and the other way round for the baseline, ``tie`` for two ties); orders that
disagree are inconsistent, never a win. Requests go through ``dispatch`` (concurrency bound, timeout,
retries, the reply cache); an order whose request finally fails leaves the pair ``judge_failed`` with
the error, and the order that did answer keeps its choice.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare._version import __version__
from rag_compare.core.errors import ConfigError, ContractError, Problem
from rag_compare.core.signals import JUDGE_FAILED
from rag_compare.core.templates import template_environment
from rag_compare.io.pairs import CHOICES, JUDGE_INPUTS, ORDERS
from rag_compare.llm.dispatch import Outcome
from rag_compare.llm.endpoint_judge import EndpointJudge
from rag_compare.llm.judge_checks import prompt_digest
from rag_compare.llm.limits import Limits
from rag_compare.llm.plan import JudgePlan, estimated_tokens
from rag_compare.llm.pool import EndpointUsage
from rag_compare.llm.transport import chat_body

__all__ = ["PROMPT_VERSION", "PairwiseJudge"]

METHOD_VERSION = "pairwise-1"
PROMPT_VERSION = "v1"
_PROMPTS = Path(__file__).parent / "prompts" / "pairwise"
_COMPLETION_ESTIMATE = 60
"""Tokens a reply is guessed to take: a choice and a short reason."""
_SCHEMA = {
    "type": "object",
    "properties": {"better": {"type": "string", "enum": list(CHOICES)}, "reason": {"type": "string"}},
    "required": ["better", "reason"],
    "additionalProperties": False,
}
_RESPONSE_FORMAT = {"type": "json_schema", "json_schema": {"name": "pairwise", "schema": _SCHEMA, "strict": True}}
_REPLY = pl.Struct({"better": pl.String, "reason": pl.String})


@dataclass(frozen=True)
class PairwiseJudge(EndpointJudge):
    """A pairwise judge over an OpenAI-compatible chat-completions endpoint (see the module).

    ``base_url`` defaults to ``OPENAI_BASE_URL``, the key to ``OPENAI_API_KEY`` (a local endpoint given
    by ``base_url`` needs none); several URLs are a pool of endpoints serving the same model, sharing
    the concurrency bound (see ``pool``). ``client`` (an ``openai.AsyncOpenAI``) replaces both. ``limits``:
    concurrency, timeout, retries and backoff (default ``Limits()``). ``cache``: a file path, ``True``
    for the default file (``RAG_COMPARE_CACHE``), ``False`` for none. ``engine``: ``local`` sends from
    this process, ``ray`` from Ray tasks (``rag-compare[ray]``) on the cluster at ``ray_address``
    (default: a Ray started on this machine), with the same verdicts and fingerprint (see
    ``ray_dispatch``).
    """

    model: str
    base_url: str | Sequence[str] | None = None
    temperature: float | None = 0.0
    seed: int | None = None
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

    def __post_init__(self) -> None:
        if not self.model.strip():
            raise ConfigError("the pairwise judge needs a model: pass `model` (the name the endpoint serves).")
        object.__setattr__(self, "_limits", Limits() if self.limits is None else self.limits)
        object.__setattr__(self, "limits", self._limits)
        self._settle_endpoints()

    @property
    def name(self) -> str:
        return "openai-pairwise"

    @property
    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "method": METHOD_VERSION,
            "model": self.model,
            "endpoint": self._endpoint_config(),
            "temperature": self.temperature,
            "seed": self.seed,
            "prompt_version": PROMPT_VERSION,
            "prompts_sha256": prompt_digest(_PROMPTS),
            "rag_compare_version": __version__,
        }

    def plan(self, pairs: pl.DataFrame) -> JudgePlan:
        """The requests judging ``pairs`` would make (two a pair), how many are cached, and a token estimate."""
        bodies = self._bodies(_inputs(pairs))
        cached = self._cached(bodies)
        to_send = [body for body, found in zip(bodies, cached, strict=True) if not found]
        prompt = sum(estimated_tokens(json.dumps(body)) for body in to_send)
        completion = _COMPLETION_ESTIMATE * len(to_send)
        return JudgePlan(pairs.height, len(bodies), len(bodies) - len(to_send), prompt, completion)

    def judge_pairs(self, pairs: pl.DataFrame) -> pl.DataFrame:
        """Both orders' choices for each row of ``pairs``, in order: ``baseline_first`` and
        ``candidate_first`` (``first``, ``second`` or ``tie``; null where that order's request failed),
        each with its ``_reason``, ``prompt_tokens`` and ``completion_tokens`` of both replies,
        ``requests`` (HTTP requests sent now), ``judge_status`` (``ok`` or ``judge_failed``) and
        ``judge_error``.

        ``pairs``: ``case_id``, ``question``, ``answerability``, ``acceptance_note``, ``baseline_answer``,
        ``baseline_context``, ``candidate_answer``, ``candidate_context`` (text; the note and contexts may
        be null). Every row is judged: leave out the cases not to send (failed, missing, identical)."""
        inputs = _inputs(pairs)
        return _choices(self._send(self._bodies(inputs), f"judging {inputs.height} pairs in both orders"))

    def _bodies(self, inputs: pl.DataFrame) -> list[dict[str, Any]]:
        """Two request bodies a row: the baseline-first order, then the candidate-first one."""
        environment = _environment()
        system = {"role": "system", "content": environment.get_template("system.j2").render().strip()}
        compare = environment.get_template("compare.j2")
        bodies = []
        for pair in inputs.iter_rows(named=True):
            for first, second in (("baseline", "candidate"), ("candidate", "baseline")):
                prompt = compare.render(
                    question=pair["question"],
                    answerability=pair["answerability"],
                    acceptance_note=pair["acceptance_note"],
                    first_answer=pair[f"{first}_answer"],
                    first_context=pair[f"{first}_context"],
                    second_answer=pair[f"{second}_answer"],
                    second_context=pair[f"{second}_context"],
                )
                messages = [system, {"role": "user", "content": prompt.strip()}]
                body = chat_body(
                    self.model, messages, response_format=_RESPONSE_FORMAT, temperature=self.temperature, seed=self.seed
                )
                bodies.append(body)
        return bodies


@functools.cache
def _environment() -> Any:
    return template_environment(_PROMPTS)


def _inputs(pairs: pl.DataFrame) -> pl.DataFrame:
    """The columns the prompt reads, as text, a missing value as blank text."""
    schema = pairs.schema
    problems = [
        Problem("a column of text", column=name, value="no such column" if name not in schema else str(schema[name]))
        for name in JUDGE_INPUTS
        if schema.get(name) not in (pl.String, pl.Null, pl.Categorical, pl.Enum)
    ]
    if problems:
        raise ContractError("pairs", "input of the pairwise judge", problems)
    return pairs.select(pl.col(name).cast(pl.String).fill_null("") for name in JUDGE_INPUTS)


def _choices(outcomes: list[Outcome]) -> pl.DataFrame:
    """One row a pair from its two outcomes (baseline-first, candidate-first, one after the other)."""
    replies = [outcome.reply or {} for outcome in outcomes]
    sent = pl.DataFrame(
        {
            "reply": pl.Series([reply.get("content") for reply in replies], dtype=pl.String).str.json_decode(_REPLY),
            "prompt_tokens": pl.Series([int(reply.get("prompt_tokens", 0)) for reply in replies], dtype=pl.Int64),
            "completion_tokens": pl.Series(
                [int(reply.get("completion_tokens", 0)) for reply in replies], dtype=pl.Int64
            ),
            "requests": pl.Series([outcome.sent for outcome in outcomes], dtype=pl.Int64),
            "error": pl.Series([outcome.error for outcome in outcomes], dtype=pl.String),
        }
    ).unnest("reply")
    both = pl.concat(
        [sent.gather_every(2, offset).select(pl.all().name.prefix(f"{order}_")) for offset, order in enumerate(ORDERS)],
        how="horizontal",
    )
    errors = [pl.lit(f"{order}: ") + pl.col(f"{order}_error") for order in ORDERS]
    failed = pl.any_horizontal(pl.col(f"{order}_error").is_not_null() for order in ORDERS)
    return both.select(
        *(
            expression
            for order in ORDERS
            for expression in (pl.col(f"{order}_better").alias(order), pl.col(f"{order}_reason"))
        ),
        *(
            pl.sum_horizontal(f"{order}_{name}" for order in ORDERS).alias(name)
            for name in ("prompt_tokens", "completion_tokens", "requests")
        ),
        judge_status=pl.when(failed).then(pl.lit(JUDGE_FAILED)).otherwise(pl.lit("ok")),
        judge_error=pl.when(failed).then(pl.concat_str(errors, separator="; ", ignore_nulls=True)),
    )
