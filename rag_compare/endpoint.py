"""Reaching an OpenAI-compatible endpoint: the client, and a name for it that holds no credentials."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from rag_compare.errors import ConfigError

__all__ = ["client_factory", "endpoint_name", "open_client"]


def open_client(base_url: str | None = None, api_key: str | None = None) -> Any:
    """An ``openai.AsyncOpenAI`` for ``base_url`` (default ``OPENAI_BASE_URL``) with ``api_key`` (default
    ``OPENAI_API_KEY``); an endpoint given by URL needs no key. Retries are left to the caller."""
    import openai

    base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
    api_key = api_key or os.environ.get("OPENAI_API_KEY")
    if not api_key:
        if base_url is None:
            raise ConfigError("no API key: set OPENAI_API_KEY, or give --base-url for an endpoint that needs none.")
        api_key = "unused"  # a local endpoint without authentication; the client insists on a value
    return openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0)


def client_factory(client: Any = None, base_url: str | None = None, api_key: str | None = None) -> Callable[[], Any]:
    """What makes the client when a request has to be sent: ``client`` as it is, else ``open_client``."""
    if client is not None:
        return lambda: client
    return lambda: open_client(base_url, api_key)


def endpoint_name(client: Any = None, base_url: str | None = None) -> str:
    """Where requests go (``client``'s URL, else ``base_url``, else ``OPENAI_BASE_URL``), without any
    ``user:pass@`` a URL might hold."""
    if client is not None:
        url = str(client.base_url)
    else:
        url = base_url or os.environ.get("OPENAI_BASE_URL") or "(the openai client's default)"
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "") if parts.hostname else parts.netloc
    return urlunsplit(parts._replace(netloc=netloc)).rstrip("/")
