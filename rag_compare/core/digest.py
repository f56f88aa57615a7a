"""SHA-256 digests, hex: of bytes, of text, and of a value's canonical JSON (sorted keys, no spaces,
ASCII), and of text in base64 as a Content-Security-Policy names a script (``text_digest_base64``). Every
fingerprint, cache key and content id of the package is one of these; and ``case_hash``, the stable 64-bit
hash of a case id that buckets runs and weighs cases in the bootstrap."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "bytes_digest",
    "case_hash",
    "content_fingerprint",
    "json_digest",
    "streamed_digest",
    "text_digest",
    "text_digest_base64",
]


def bytes_digest(*pieces: bytes | bytearray | memoryview) -> str:
    """SHA-256 of ``pieces`` one after the other (a large buffer is hashed in slices, never copied)."""
    return streamed_digest(pieces)


def streamed_digest(pieces: Iterable[bytes | bytearray | memoryview]) -> str:
    """SHA-256 of ``pieces`` one after the other, taken as they come (a file read a slice at a time)."""
    digest = hashlib.sha256()
    for piece in pieces:
        digest.update(piece)
    return digest.hexdigest()


def text_digest(text: str) -> str:
    """SHA-256 of ``text`` as UTF-8."""
    return bytes_digest(text.encode())


def text_digest_base64(text: str) -> str:
    """SHA-256 of ``text`` as UTF-8, its 32 bytes in base64 (not hex)."""
    return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode("ascii")


def json_digest(value: Any) -> str:
    """SHA-256 of the canonical JSON of ``value``: the same settings give the same digest, whatever their key order."""
    return text_digest(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True))


def content_fingerprint(frame: pl.DataFrame, key: str) -> str:
    """SHA-256 of the frame's rows as JSON lines, sorted by ``key``: the same content, the same hash."""
    return text_digest(frame.sort(key).write_ndjson())


def case_hash(case_ids: pl.Series) -> pl.Series:
    """The stable hash of each case id: the first 8 bytes of the SHA-256 of its UTF-8, read as a big-endian
    unsigned 64-bit integer (``UInt64``, named ``case_hash``; null for a null id).

    Any language computes it the same way, and no library version changes it (unlike Polars' ``hash``).
    """
    import numpy as np
    import polars as pl

    texts = case_ids.cast(pl.String)
    present = texts.drop_nulls().to_list()
    prefixes = b"".join(hashlib.sha256(case_id.encode()).digest()[:8] for case_id in present)
    hashed = pl.Series("case_hash", np.frombuffer(prefixes, dtype=">u8").astype(np.uint64), dtype=pl.UInt64)
    if texts.null_count() == 0:
        return hashed
    nulls = pl.repeat(None, texts.len(), dtype=pl.UInt64, eager=True)
    return nulls.scatter(texts.is_not_null().arg_true(), hashed).alias("case_hash")
