"""TEMPORARY stand-in (replaced by the real module)."""

from __future__ import annotations

import polars as pl

from rag_compare.io.language_rules import Language


def detect_languages(texts: pl.Series, languages: tuple[Language, ...]) -> pl.Series:
    return pl.repeat(None, texts.len(), dtype=pl.String, eager=True)
