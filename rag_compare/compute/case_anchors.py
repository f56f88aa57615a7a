"""A case's address on the review page: ``#case=`` and its id, as the page writes and reads it."""

from __future__ import annotations

import urllib.parse

import polars as pl

__all__ = ["anchors"]

_URI_SAFE = "-_.!~*'()"
"""What JavaScript's encodeURIComponent leaves as it is: the review page reads its anchors so."""
_NOT_KEPT = r"[^A-Za-z0-9\-_.!~*'()]"
"""A character encodeURIComponent escapes."""


def anchors(case_ids: pl.Series) -> pl.Series:
    """Each case's anchor on the review page, ``#case=`` and its id as JavaScript's ``encodeURIComponent``
    writes it: the ASCII characters it escapes that the ids hold replaced column-wide, an id holding any other
    character quoted by Python."""
    ids = case_ids.to_frame("case_id")
    present = ids.select(pl.col("case_id").str.extract_all(_NOT_KEPT).explode().unique().drop_nulls()).to_series()
    escaped = sorted((character for character in present if " " <= character <= "~"), key=lambda c: c != "%")
    encoded = pl.col("case_id")
    for character in escaped:  # % first, so no escape is escaped again
        encoded = encoded.str.replace_all(character, f"%{ord(character):02X}", literal=True)
    ascii_only = pl.col("case_id").str.contains(r"^[\x20-\x7e]*$")
    frame = ids.select(pl.when(ascii_only).then(encoded).alias("encoded"), "case_id")
    others = frame.filter(pl.col("encoded").is_null()).get_column("case_id")
    quoted = dict(zip(others, (urllib.parse.quote(case_id, safe=_URI_SAFE) for case_id in others), strict=True))
    filled = frame.select(pl.coalesce("encoded", pl.col("case_id").replace_strict(quoted, default=None)))
    return ("#case=" + filled.to_series()).alias("anchor")
