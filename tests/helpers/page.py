"""Reading an interactive page back: its scripts, its data block and its Content-Security-Policy."""

from __future__ import annotations

import base64
import gzip
import html
import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any


@dataclass
class PageParts(HTMLParser):
    """The elements a browser would build from a page: its tags, attributes, scripts and visible text."""

    tags: list[str] = field(default_factory=list)
    attributes: list[tuple[str, str | None]] = field(default_factory=list)
    scripts: list[tuple[dict[str, str | None], list[str]]] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    metas: list[dict[str, str | None]] = field(default_factory=list)
    _in_script: bool = False

    def __post_init__(self) -> None:
        super().__init__()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += attrs
        if tag == "script":
            self.scripts.append((dict(attrs), []))
            self._in_script = True
        if tag == "meta":
            self.metas.append(dict(attrs))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1][1].append(data)
        else:
            self.text.append(data)

    @property
    def data(self) -> dict[str, Any]:
        """The page's data block, parsed, with what it holds packed (the static page's cases and passages)
        unpacked beside the rest."""
        block = next("".join(text) for attrs, text in self.scripts if attrs.get("type") == "application/json")
        parsed: dict[str, Any] = json.loads(block)
        if "packed" in parsed:
            parsed |= json.loads(gzip.decompress(base64.b64decode(parsed.pop("packed"))))
        return parsed

    @property
    def script(self) -> str:
        """The text of the page's one script that runs."""
        (text,) = ["".join(text) for attrs, text in self.scripts if "type" not in attrs]
        return text

    @property
    def policy(self) -> str:
        """The page's Content-Security-Policy."""
        return next(str(meta["content"]) for meta in self.metas if meta.get("http-equiv") == "Content-Security-Policy")


def page_parts(page: str) -> PageParts:
    parts = PageParts()
    parts.feed(page)
    parts.close()
    return parts


def framed_page(notebook_html: str) -> str:
    """The page inside a notebook output's ``<iframe srcdoc>``."""
    match = re.search(r'srcdoc="([^"]*)"', notebook_html)
    assert match is not None, notebook_html[:200]
    return html.unescape(match.group(1))
