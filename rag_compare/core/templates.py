"""The one way Jinja2 environments are made: for the package's prompt and report templates, and
sandboxed for a user's prompt template. A variable a template uses but is not given is an error."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

__all__ = ["template_environment"]


def template_environment(
    folder: Path | None = None,
    *,
    sandboxed: bool = False,
    autoescape: bool = False,
    finalize: Callable[..., Any] | None = None,
    trim_blocks: bool = False,
    keep_trailing_newline: bool = False,
    filters: Mapping[str, Callable[..., Any]] | None = None,
) -> jinja2.Environment:
    """A Jinja2 environment with ``StrictUndefined``, loading templates from ``folder`` (none without).

    ``sandboxed``: Jinja2's immutable sandbox, for a template written by a user. ``autoescape`` for
    HTML (plain text for a model is not markup); ``finalize`` applied to every expression's value (given
    the template's context first when marked ``jinja2.pass_context``); ``trim_blocks`` also strips the
    whitespace before a block tag on its line; ``filters`` added by name.
    """
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    kind = ImmutableSandboxedEnvironment if sandboxed else jinja2.Environment
    environment = kind(
        loader=None if folder is None else jinja2.FileSystemLoader(folder),
        undefined=jinja2.StrictUndefined,
        autoescape=autoescape,
        finalize=finalize,
        trim_blocks=trim_blocks,
        lstrip_blocks=trim_blocks,
        keep_trailing_newline=keep_trailing_newline,
    )
    environment.filters.update(filters or {})
    return environment
