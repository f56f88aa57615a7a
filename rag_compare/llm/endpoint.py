"""Reaching an OpenAI-compatible endpoint: the client, and a name for it that holds no credentials."""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from rag_compare.core.errors import ConfigError

__all__ = ["INSECURE_KEY_ENV", "check_key_transport", "client_factory", "endpoint_name", "open_client"]

INSECURE_KEY_ENV = "RAG_COMPARE_ALLOW_INSECURE_KEY"
"""Set to ``1`` to send an API key over plain ``http://`` to a host that is not this machine."""


def open_client(base_url: str | None = None, api_key: str | None = None) -> Any:
    """An ``openai.AsyncOpenAI`` for ``base_url`` (default ``OPENAI_BASE_URL``) with ``api_key`` (default
    ``OPENAI_API_KEY``); an endpoint given by URL needs no key. Retries are left to the caller.

    A key is never sent in the clear (see ``check_key_transport``).
    """
    import openai

    base_url, api_key = check_key_transport(base_url, api_key)
    if not api_key:
        if base_url is None:
            raise ConfigError("no API key: set OPENAI_API_KEY, or give `base_url` for an endpoint that needs none.")
        api_key = "unused"  # a local endpoint without authentication; the client insists on a value
    return openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0)


def check_key_transport(base_url: str | None = None, api_key: str | None = None) -> tuple[str | None, str | None]:
    """The endpoint and key a client would use (defaults ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``), refused
    with a ``ConfigError`` when the endpoint is not an ``http(s)://`` URL with a host, or when a key would
    go over plain ``http://`` to a host that is not loopback (``localhost``, 127.0.0.0/8, ``::1``) and
    ``INSECURE_KEY_ENV`` is not ``1``."""
    base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
    api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
    if base_url is not None:
        _check_url(base_url)
    if api_key and base_url is not None and _in_the_clear(base_url) and os.environ.get(INSECURE_KEY_ENV) != "1":
        raise ConfigError(
            f"{endpoint_name(base_url=base_url)}: plain http to another machine would send OPENAI_API_KEY "
            f"unencrypted. Use an https URL, or set {INSECURE_KEY_ENV}=1 to send it anyway."
        )
    return base_url, api_key


def _check_url(url: str) -> None:
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018  (reading it checks the port)
    except ValueError as error:
        problem = str(error)
    else:
        if parts.scheme.lower() in ("http", "https") and parts.hostname:
            return
        problem = "not an http:// or https:// URL with a host"
    raise ConfigError(
        f"the endpoint {endpoint_name(base_url=url)!r} is not usable ({problem}). "
        "Give a URL such as http://localhost:8000/v1 or https://api.example.com/v1."
    )


def _in_the_clear(url: str) -> bool:
    """Whether ``url`` is plain http to a host that is not this machine."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() != "http":
        return False
    host = (parts.hostname or "").rstrip(".")
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True


def client_factory(client: Any = None, base_url: str | None = None, api_key: str | None = None) -> Callable[[], Any]:
    """What makes the client when a request has to be sent: ``client`` as it is, else ``open_client``
    (whose endpoint and key are checked now, before anything starts)."""
    if client is not None:
        return lambda: client
    check_key_transport(base_url, api_key)
    return lambda: open_client(base_url, api_key)


def endpoint_name(client: Any = None, base_url: str | None = None) -> str:
    """Where requests go (``client``'s URL, else ``base_url``, else ``OPENAI_BASE_URL``), without any
    ``user:pass@`` a URL might hold."""
    if client is not None:
        url = str(client.base_url)
    else:
        url = base_url or os.environ.get("OPENAI_BASE_URL") or "(the openai client's default)"
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL at all: show it without a user:password@
        return re.sub(r"//[^/]*@", "//", url).rstrip("/")
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=netloc)).rstrip("/")
