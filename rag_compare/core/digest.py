"""SHA-256 digests, hex: of bytes, of text, and of a value's canonical JSON (sorted keys, no spaces,
ASCII). Every fingerprint, cache key and content id of the package is one of these."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

__all__ = ["bytes_digest", "content_fingerprint", "json_digest", "text_digest"]


def bytes_digest(*pieces: bytes | bytearray | memoryview) -> str:
    """SHA-256 of ``pieces`` one after the other (a large buffer is hashed in slices, never copied)."""
    digest = hashlib.sha256()
    for piece in pieces:
        digest.update(piece)
    return digest.hexdigest()


def text_digest(text: str) -> str:
    """SHA-256 of ``text`` as UTF-8."""
    return bytes_digest(text.encode())


def json_digest(value: Any) -> str:
    """SHA-256 of the canonical JSON of ``value``: the same settings give the same digest, whatever their key order."""
    return text_digest(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True))


def content_fingerprint(frame: pl.DataFrame, key: str) -> str:
    """SHA-256 of the frame's rows as JSON lines, sorted by ``key``: the same content, the same hash."""
    return text_digest(frame.sort(key).write_ndjson())
