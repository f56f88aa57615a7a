"""Drafting synthetic cases: candidate corpus cases written by a model from passages (the drafts file,
and admitting its reviewed cases as gold, are ``io.drafts_file``).

``draft_cases`` sends one chat-completions request per chosen passage (structured output, see
``prompts/drafts/draft_cases.j2``); each reply gives a question the passage answers, alternative
wordings of it, what an acceptable answer must contain, and a distractor (a question on the passage's
topic that it does not answer). They become corpus rows with ``origin=synthetic`` and
``reviewed=false``: drafts, not gold, until a person reviews them and ``admit_cases`` marks them.
Requests go through ``dispatch.send_to_endpoint``: concurrent, retried, cached.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Unpack

import polars as pl

from rag_compare.core.digest import text_digest
from rag_compare.core.errors import ConfigError, EndpointError
from rag_compare.core.nesting import load_json
from rag_compare.core.templates import template_environment
from rag_compare.io.corpus import load_corpus
from rag_compare.io.drafts_file import DraftFailure, Drafts
from rag_compare.io.passages import load_passages
from rag_compare.llm.dispatch import Outcome, send_to_endpoint
from rag_compare.llm.endpoint import endpoint_name
from rag_compare.llm.limits import LimitKeywords, Limits, limits_from
from rag_compare.llm.transport import chat_body

__all__ = [
    "DISTRACTOR_CATEGORY",
    "DISTRACTOR_NOTE",
    "WORDING_CATEGORY",
    "draft_cases",
    "draft_id",
    "reply_schema",
]

WORDING_CATEGORY = "synthetic_wording"
"""The category of a drafted question and of each of its wordings (answerable cases)."""
DISTRACTOR_CATEGORY = "distractor"
"""The category of a drafted distractor (an unanswerable case)."""
DISTRACTOR_NOTE = "The sources do not answer this question: an acceptable answer says so and does not guess."
"""The acceptance note of every distractor."""
_PROMPTS = Path(__file__).parent / "prompts" / "drafts"
_TEMPLATE = "draft_cases.j2"
_ID_HEX = 10


def reply_schema(wordings: int) -> dict[str, Any]:
    """The strict JSON schema of one drafting reply, asking for ``wordings`` alternative wordings."""

    def text(description: str) -> dict[str, Any]:
        return {"type": "string", "description": description}

    return {
        "type": "object",
        "properties": {
            "question": text("A question that the passage alone answers fully."),
            "wordings": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": wordings,
                "maxItems": wordings,
                "description": f"Exactly {wordings} other phrasings of the same question.",
            },
            "acceptance_note": text("What an acceptable answer to the question must contain."),
            "distractor": text("A question that looks relevant to the passage but that the passage does not answer."),
        },
        "required": ["question", "wordings", "acceptance_note", "distractor"],
        "additionalProperties": False,
    }


def draft_cases(
    passages: str | Path | pl.DataFrame,
    *,
    model: str,
    n: int,
    base_url: str | None = None,
    client: Any = None,
    api_key: str | None = None,
    source_version: str | None = None,
    seed: int = 0,
    wordings: int = 2,
    limits: Limits | None = None,
    cache: str | Path | bool = True,
    progress: bool = False,
    **deprecated: Unpack[LimitKeywords],
) -> Drafts:
    """Draft cases from ``n`` passages (chosen by ``seed``; of ``source_version`` when given; all of
    them when fewer exist), one request each, with ``wordings`` alternative wordings per question.

    ``passages``: the knowledge base (a path or a frame, not modified). ``base_url`` defaults to
    ``OPENAI_BASE_URL``, the key to ``OPENAI_API_KEY``; ``client`` (an ``openai.AsyncOpenAI``) replaces
    both. ``limits``: concurrency, timeout, retries and backoff (default ``Limits()``; the separate
    keywords are deprecated). ``cache``: a file path, ``True`` for the default file, ``False`` for
    none. Requests are sent at temperature 0 with ``seed``. Raises ``ConfigError`` for unusable
    settings, ``EndpointError`` when the endpoint refuses the requests or no passage could be drafted.
    """
    _check_settings(model, n, wordings)
    limits = limits_from("draft_cases", limits, Limits(), deprecated)
    chosen, available = _choose(load_passages(passages), n, source_version, seed)
    bodies = [
        _body(model, seed, reply_schema(wordings), _messages(passage_id, text, wordings))
        for passage_id, text in chosen.select("passage_id", "text").iter_rows()
    ]
    label = f"drafting from {chosen.height} passages" if progress else None
    outcomes = send_to_endpoint(
        bodies, client=client, base_url=base_url, api_key=api_key, limits=limits, cache=cache, progress=label
    )
    frame, failures, dropped = _drafted(chosen, outcomes, model)
    return Drafts(
        frame=load_corpus(frame).frame,
        failures=failures,
        requested=n,
        available=available,
        passages=chosen.height,
        model=model,
        endpoint=endpoint_name(client, base_url),
        source_version=source_version,
        seed=seed,
        wordings=wordings,
        dropped=dropped,
        **_usage(outcomes),
    )


def _drafted(
    chosen: pl.DataFrame, outcomes: Sequence[Outcome], model: str
) -> tuple[pl.DataFrame, tuple[DraftFailure, ...], int]:
    """The drafted corpus rows, the passages whose request failed, and how many texts were left out;
    ``EndpointError`` when no case could be drafted."""
    failures = tuple(
        DraftFailure(passage_id, outcome.error or "no reply")
        for passage_id, outcome in zip(chosen.get_column("passage_id"), outcomes, strict=True)
        if outcome.reply is None
    )
    texts = _texts(chosen, outcomes)
    frame = _cases(texts, model)
    if frame.is_empty():
        first = failures[0].error if failures else "every reply was blank"
        raise EndpointError(
            f"no case could be drafted from the {chosen.height} passages sent (first failure: {first}). "
            "Check `model` and `base_url`, then run again."
        )
    return frame, failures, texts.height - frame.height


def _usage(outcomes: Sequence[Outcome]) -> dict[str, int]:
    """What the requests cost, as ``Drafts`` fields: ``cached``, ``sent`` and the tokens of the replies."""
    replies = [outcome.reply for outcome in outcomes if outcome.reply]
    return {
        "cached": sum(outcome.cached for outcome in outcomes),
        "sent": sum(outcome.sent for outcome in outcomes),
        "prompt_tokens": sum(int(reply["prompt_tokens"]) for reply in replies),
        "completion_tokens": sum(int(reply["completion_tokens"]) for reply in replies),
    }


def _check_settings(model: str, n: int, wordings: int) -> None:
    if not model.strip():
        raise ConfigError("drafting needs a model: pass `model` (the name the endpoint serves).")
    if n < 1:
        raise ConfigError(f"`n` must be 1 or more (the number of passages to draft from), not {n}.")
    if wordings < 0:
        raise ConfigError(f"`wordings` must be 0 or more (alternative wordings per question), not {wordings}.")


def _choose(passages: pl.DataFrame, n: int, source_version: str | None, seed: int) -> tuple[pl.DataFrame, int]:
    """``n`` passages picked by ``seed`` (all when fewer exist), in passage id order, and how many were eligible.

    The pick depends on the set of passages, not on their order in the file.
    """
    pool = passages if source_version is None else passages.filter(pl.col("source_version") == source_version)
    if pool.is_empty():
        versions = ", ".join(sorted(passages.get_column("source_version").unique().to_list()))
        raise ConfigError(f"no passage has source version {source_version!r}. Versions found: {versions}.")
    pool = pool.sort("passage_id")
    picked = sorted(random.Random(seed).sample(range(pool.height), min(n, pool.height)))
    return pool[picked], pool.height


@functools.cache
def _template() -> Any:
    return template_environment(_PROMPTS).get_template(_TEMPLATE)


def _messages(passage_id: str, text: str, wordings: int) -> list[dict[str, str]]:
    """The system message (the template's ``system`` macro) and the user message (its body) for one passage."""
    module = _template().make_module({"passage_id": passage_id, "text": text, "wordings": wordings})
    return [
        {"role": "system", "content": str(module.system()).strip()},
        {"role": "user", "content": str(module).strip()},
    ]


def _body(model: str, seed: int, schema: Mapping[str, Any], messages: list[dict[str, str]]) -> dict[str, Any]:
    response_format = {"type": "json_schema", "json_schema": {"name": "draft_cases", "schema": schema, "strict": True}}
    return chat_body(model, messages, temperature=0, seed=seed, response_format=response_format)


def draft_id(passage_id: str, text: str, source_version: str) -> str:
    """``draft-<10 hex of sha256(passage id, text)>@<source version>``: the same text of the same
    passage always gets the same id."""
    digest = text_digest(f"{passage_id}\n{text}")[:_ID_HEX]
    return f"draft-{digest}@{source_version}"


def _texts(chosen: pl.DataFrame, outcomes: Sequence[Outcome]) -> pl.DataFrame:
    """One row per drafted text (``kind``: question, wording or distractor) of each reply that arrived."""
    columns: dict[str, list[Any]] = {
        name: [] for name in ("case_id", "question", "kind", "source_version", "passage_id", "note", "draft_group")
    }
    passages = chosen.select("passage_id", "source_version").iter_rows()
    for (passage_id, version), outcome in zip(passages, outcomes, strict=True):
        if outcome.reply is None:
            continue
        reply = load_json(outcome.reply["content"], "a reply of the drafting endpoint", line=None)
        question = reply["question"].strip()
        texts = [(question, "question"), *((text.strip(), "wording") for text in reply["wordings"])]
        texts.append((reply["distractor"].strip(), "distractor"))
        for text, kind in texts:
            columns["case_id"].append(draft_id(passage_id, text, version))
            columns["question"].append(text)
            columns["kind"].append(kind)
            columns["source_version"].append(version)
            columns["passage_id"].append(passage_id)
            columns["note"].append(reply["acceptance_note"].strip() or None)
            columns["draft_group"].append(draft_id(passage_id, question, version))
    return pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.String))


def _cases(texts: pl.DataFrame, model: str) -> pl.DataFrame:
    """Corpus rows from drafted texts: blank texts and repeats (same passage, same text) left out."""
    distractor = pl.col("kind") == "distractor"
    drafted_from = pl.concat_list("passage_id")
    return (
        texts.filter(pl.col("question") != "")
        .unique("case_id", keep="first", maintain_order=True)
        .select(
            "case_id",
            "question",
            pl.when(distractor).then(pl.lit("unanswerable")).otherwise(pl.lit("answerable")).alias("answerability"),
            "source_version",
            pl.when(distractor)
            .then(pl.lit([], dtype=pl.List(pl.String)))
            .otherwise(drafted_from)
            .alias("required_passage_ids"),
            pl.when(distractor).then(pl.lit(DISTRACTOR_NOTE)).otherwise(pl.col("note")).alias("acceptance_note"),
            pl.when(distractor).then(pl.lit(DISTRACTOR_CATEGORY)).otherwise(pl.lit(WORDING_CATEGORY)).alias("category"),
            pl.lit("synthetic").alias("origin"),
            pl.lit(False).alias("reviewed"),
            drafted_from.alias("drafted_from"),
            "draft_group",
            pl.lit(model, dtype=pl.String).alias("drafted_by"),
        )
    )
