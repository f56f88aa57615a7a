"""TEMPORARY stand-in (replaced by the real module)."""

from __future__ import annotations

import polars as pl

NUMBER_PATTERN = r"[0-9]+(?:[.,][0-9]+)*"


def canonical_number(number: pl.Expr, decimal_separator: str) -> pl.Expr:
    return number.str.replace_all(",", "", literal=True)


def number_writings(canonical: pl.Expr, decimal_separator: str) -> pl.Expr:
    integer = canonical.str.extract(r"^[0-9]+", 0)
    grouped = integer.str.reverse().str.replace_all(r"[0-9]{3}", "$0,").str.strip_chars_end(",").str.reverse()
    return pl.concat_list(canonical, grouped + canonical.str.slice(integer.str.len_bytes()))
