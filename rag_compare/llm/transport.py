"""One attempt at one chat-completions request, and what its failure means.

``complete`` sends a body once and gives the validated reply (JSON matching the body's ``json_schema``
response format, when it has one); a reply that arrived but cannot be used raises ``BadReply``.
``refusals`` are the errors after which no request to the endpoint can succeed, ``refused_error`` the
error that then stops everything, and ``describe`` a failure's one-line account (credentials redacted).
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from rag_compare.core.credentials import redact
from rag_compare.core.errors import ConfigError, EndpointError, NestingError
from rag_compare.core.nesting import load_json

__all__ = ["BadReply", "chat_body", "complete", "describe", "refusals", "refused_error"]


def chat_body(model: str, messages: Sequence[Mapping[str, str]], **settings: Any) -> dict[str, Any]:
    """A chat-completions request body: ``model``, ``messages``, then each of ``settings`` (temperature,
    seed, max_tokens, response_format, ...) that is not ``None``. ``ConfigError`` for a float setting
    that is not finite (JSON has no NaN or infinity)."""
    unusable = {
        name: value for name, value in settings.items() if isinstance(value, float) and not math.isfinite(value)
    }
    if unusable:
        shown = ", ".join(f"{name}={value!r}" for name, value in unusable.items())
        raise ConfigError(f"{shown}: a setting sent to the endpoint must be a finite number.")
    return {"model": model, "messages": list(messages)} | {
        name: value for name, value in settings.items() if value is not None
    }


async def complete(client: Any, body: Mapping[str, Any], timeout: float) -> dict[str, Any]:
    """One attempt at ``body`` through the ``openai.AsyncOpenAI`` ``client``: the validated reply's
    ``content``, ``prompt_tokens`` and ``completion_tokens``; raises what the attempt raised."""
    from openai.types.chat import ChatCompletion

    # ``post`` sends the body as it is: ``chat.completions.create`` would first convert it into its
    # typed parameters, a quarter of the client's time per request.
    request = client.post("/chat/completions", body=dict(body), cast_to=ChatCompletion, options={"timeout": timeout})
    try:
        response = await asyncio.wait_for(request, timeout)
        content = response.choices[0].message.content if response.choices else None
    except (ValueError, AttributeError, TypeError, IndexError) as error:  # a body that is no chat completion
        raise BadReply(f"the reply is not a chat completion ({_short(str(error), 100)})") from None
    if content is None:
        raise BadReply("the reply has no message content")
    _check_reply(body, content)
    usage = response.usage
    return {
        "content": content,
        "prompt_tokens": 0 if usage is None else int(usage.prompt_tokens or 0),
        "completion_tokens": 0 if usage is None else int(usage.completion_tokens or 0),
    }


class BadReply(Exception):
    """A reply that arrived but cannot be used; another attempt may do better."""


def _check_reply(body: Mapping[str, Any], content: str) -> None:
    """Refuse content that is not JSON matching the ``json_schema`` response format ``body`` asked for."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") != "json_schema":
        return
    try:
        reply = load_json(content, "the reply", line=None)
    except json.JSONDecodeError as error:
        raise BadReply(f"the reply is not JSON ({error.msg} at character {error.pos})") from None
    except NestingError as error:
        raise BadReply(str(error)) from None
    schema = response_format["json_schema"]["schema"]
    mismatch = next(iter(_validator(json.dumps(schema, sort_keys=True)).iter_errors(reply)), None)
    if mismatch is not None:
        raise BadReply(f"the reply does not match the schema: {_short(mismatch.message, 200)}")


@functools.lru_cache(maxsize=64)
def _validator(schema: str) -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(json.loads(schema))


def refused_error(
    error: BaseException, kind: type[EndpointError] = EndpointError, endpoint: str | None = None
) -> EndpointError:
    """The error that stops everything when the endpoint (named when it is one of a pool) refuses the
    credentials, model or route."""
    which = "the endpoint" if endpoint is None else f"the endpoint {endpoint}"
    return kind(
        f"{which} refused the request: {describe(error)}. Check OPENAI_API_KEY, "
        "`model` and `base_url` (the endpoint's chat completions route)."
    )


def refusals() -> tuple[type[BaseException], ...]:
    """The ``openai`` errors that mean no request to this endpoint can succeed."""
    import openai

    return (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError)


def describe(error: BaseException) -> str:
    """A short, one-line account of a failed request."""
    import openai

    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}: {_short(error.message)}"
    if isinstance(error, openai.APITimeoutError | TimeoutError):
        return "no reply within the timeout"
    if isinstance(error, openai.APIConnectionError):
        return f"connection failed: {_short(str(error.__cause__ or error))}"
    return _short(str(error))


def _short(text: str, limit: int = 300) -> str:
    text = redact(text)  # an endpoint may echo the key it was sent
    return text if len(text) <= limit else text[: limit - 3] + "..."
