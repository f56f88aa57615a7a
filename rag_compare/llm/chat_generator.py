"""A generator over any OpenAI-compatible chat-completions endpoint, its prompt a Jinja2 template.

The template renders the user message from ``question``, ``context``, ``case_id``,
``source_version``, ``passage_ids`` and ``metadata`` (a case's user columns); an optional ``system``
text goes first. The exact messages sent are returned with the answer, so the run records them, and
the template's text goes into the run config. Templates render in Jinja2's sandbox, and a variable
the template uses but no case provides is refused when the generator is made.

One call makes one request: ``capture`` retries, times out and bounds concurrency. An endpoint that
refuses the credentials, model or route stops the capture (``EndpointError``); any other 4xx fails
just its case; a rate limit, server error or dropped connection is retried.
"""

from __future__ import annotations

import asyncio
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any

from rag_compare.core.errors import ConfigError, RagCompareError
from rag_compare.core.input_paths import check_input
from rag_compare.core.protocols import Case, CaseFailure, Context, Generation
from rag_compare.core.templates import template_environment
from rag_compare.llm.endpoint import check_key_transport, endpoint_name, open_client
from rag_compare.llm.limits import Limits, limits_from, retryable
from rag_compare.llm.transport import chat_body, complete, describe, refusals, refused_error

__all__ = ["DEFAULT_PROMPT", "OpenAIGenerator"]

DEFAULT_PROMPT = Path(__file__).parent / "prompts" / "generator" / "answer.j2"
_TAGS = {"Include": "include", "Import": "import", "FromImport": "import", "Extends": "extends"}
"""The tags that would read another template, by node class name."""
_SAMPLE = {
    "question": "q",
    "context": "c",
    "case_id": "id",
    "source_version": "v",
    "passage_ids": ["p"],
    "metadata": {},
}


@dataclass(frozen=True)
class OpenAIGenerator:
    """Answers through a chat-completions endpoint (see the module).

    ``prompt_template`` is a Jinja2 file (default: ``DEFAULT_PROMPT``). ``base_url`` defaults to
    ``OPENAI_BASE_URL``, the key to ``OPENAI_API_KEY``; ``client`` (an ``openai.AsyncOpenAI``)
    replaces both. ``limits.timeout`` bounds one request, in seconds (``capture`` bounds concurrency and
    retries with its own ``limits``); the ``timeout`` argument is deprecated.
    """

    model: str
    base_url: str | None = None
    prompt_template: str | Path = DEFAULT_PROMPT
    system: str | None = None
    temperature: float | None = 0.0
    seed: int | None = None
    max_tokens: int | None = None
    timeout: InitVar[float | None] = None
    api_key: str | None = field(default=None, repr=False)
    client: Any = field(default=None, repr=False, compare=False)
    limits: Limits | None = None
    """After construction, the limits in use (never ``None``)."""
    _limits: Limits = field(init=False, repr=False, compare=False)
    template_text: str = field(init=False, repr=False, compare=False)
    _template: Any = field(init=False, repr=False, compare=False)
    _clients: dict[int, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self, timeout: float | None) -> None:
        if not self.model.strip():
            raise ConfigError("the generator needs a model: pass `model` (the name the endpoint serves).")
        object.__setattr__(
            self, "_limits", limits_from("OpenAIGenerator", self.limits, Limits(), {"timeout": timeout}, 4)
        )
        object.__setattr__(self, "limits", self._limits)
        if self.client is None:
            check_key_transport(self.base_url, self.api_key)
        path = Path(self.prompt_template)
        check_input(path, "prompt template", ConfigError, fix="Check `prompt_template`.")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            message = f"{path}: the prompt template cannot be read ({error}). Check `prompt_template`."
            raise ConfigError(message) from None
        object.__setattr__(self, "template_text", text)
        object.__setattr__(self, "_template", _compile(path, text))

    @property
    def config(self) -> dict[str, Any]:
        return {
            "kind": "openai",
            "model": self.model,
            "endpoint": endpoint_name(self.client, self.base_url),
            "prompt_template": self.template_text,
            "system": self.system,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
        }

    def messages(self, case: Case, context: Context) -> list[dict[str, str]]:
        """The messages sent for ``case`` with ``context``."""
        values = {
            "question": case.question,
            "context": context.text,
            "case_id": case.case_id,
            "source_version": case.source_version,
            "passage_ids": list(context.passage_ids or ()),
            "metadata": dict(case.metadata),
        }
        user = {"role": "user", "content": self._template.render(**values).strip()}
        return [{"role": "system", "content": self.system}, user] if self.system else [user]

    async def __call__(self, case: Case, context: Context) -> Generation:
        messages = self.messages(case, context)
        body = chat_body(self.model, messages, temperature=self.temperature, seed=self.seed, max_tokens=self.max_tokens)
        try:
            reply = await complete(self._client(), body, self._limits.timeout)
        except refusals() as error:
            raise refused_error(error) from None
        except retryable():
            raise
        except _status_error() as error:
            raise CaseFailure(describe(error)) from None
        return Generation(reply["content"], reply["prompt_tokens"], reply["completion_tokens"], messages)

    async def aclose(self) -> None:
        """Close the client this generator opened for the running event loop."""
        client = self._clients.pop(id(asyncio.get_running_loop()), None)
        if client is not None:
            await client.close()

    def _client(self) -> Any:
        if self.client is not None:
            return self.client
        loop = id(asyncio.get_running_loop())  # an async client belongs to the loop it was first used in
        if loop not in self._clients:
            self._clients[loop] = open_client(self.base_url, self.api_key)
        return self._clients[loop]


def _compile(path: Path, text: str) -> Any:
    """The sandboxed template, refused now if it reads another template or does not render for a sample case.

    A prompt template is one self-contained file: the environment has no loader, and ``include``,
    ``import`` and ``extends`` are refused by name. ``range()`` is bounded by the sandbox (100,000 items).
    """
    from jinja2 import nodes

    environment = template_environment(sandboxed=True, keep_trailing_newline=True)
    try:
        tree = environment.parse(text)
        for node in tree.find_all((nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)):
            tag = _TAGS[type(node).__name__]
            raise ConfigError(
                f"{path}: the prompt template uses {{% {tag} %}} (line {node.lineno}), but a prompt template is "
                "one self-contained file: paste in the text it would read."
            )
        template = environment.from_string(tree)
        template.render(**_SAMPLE)
    except RagCompareError:
        raise
    except Exception as error:  # a template is code from the user: any error it makes is theirs to fix
        raise ConfigError(
            f"{path}: the prompt template does not render ({type(error).__name__}: {str(error).rstrip('.')}). "
            f"It may use {', '.join(_SAMPLE)}."
        ) from None
    return template


def _status_error() -> type[BaseException]:
    import openai

    return openai.APIStatusError
