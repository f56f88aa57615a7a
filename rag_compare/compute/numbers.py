"""What a number is, for the offline judge and answer completeness, in every locale.

Numbers are read in normalized text (``compute.words.normalized``: every space a plain space). A number
as written (``NUMBER_PATTERN``) is read as its value (``canonical_number``: ``1.000,50`` in German and
``1,000.50`` in English are both ``1000.50``), and a value is searched in a context in each of the ways
its locale writes it (``number_writings``).
"""

from __future__ import annotations

import re

import polars as pl

__all__ = ["NUMBER_PATTERN", "canonical_number", "number_writings"]

NUMBER_PATTERN = r"[0-9]{1,3}(?: [0-9]{3}(?-u:\b))+(?:[.,][0-9]+)*|[0-9]+(?:[.,][0-9]+)*"
"""A number as written (Rust regex syntax): digits with ``.``, ``,`` or a space between groups.

``180``, ``3,000``, ``0.35``, ``12,345,678``, ``1.000,50``, ``1 000``, ``1 000 000,5``, ``2026``. A ``.``
or a ``,`` joins any digits that follow it (``1.2.3`` is one number). A space joins only a group of
exactly three digits that ends there (no ASCII letter, digit or ``_`` right after it), after a first
group of one to three digits: ``3 100 pages`` is 3100, but ``in 2024 500 people`` is 2024 and 500,
``1 0000`` is 1 and 0000 and ``1 000km`` is 1 and 000. A number never starts or ends inside another:
``str.extract_all`` finds ``180`` in ``180``, never ``80``.
"""

_CANONICAL = r"^[0-9]+(?:\.[0-9]+)?$"
_DIGITS = "0123456789"
_INTEGER = r"^(?:[0-9]+|[0-9]{1,3}(?:[ ,][0-9]{3})+|[0-9]{1,3}(?:[ .][0-9]{3})+)[.,]?$"
"""Integer digits, ungrouped or in groups of three after a first group of one to three digits, each
group after a space or after one same separator (``.`` or ``,``) throughout; then the decimal separator,
if the number has decimals."""


def canonical_number(number: pl.Expr, decimal_separator: str) -> pl.Expr:
    """The value of ``number`` (as ``NUMBER_PATTERN`` finds it), as canonical text: its integer digits
    without grouping, then ``.`` and its decimals as written (``1000.50``, ``1000``, ``0.35``; ``1.50`` and
    ``1.5`` stay different). Nulls stay null.

    Which separator is the decimal one, ``decimal_separator`` (``.`` or ``,``) being the locale's:

    - a space always groups thousands (``1 000`` is 1000);
    - ``.`` and ``,`` both present: the last one is the decimal separator, the other groups
      (``1.000,50`` and ``1,000.50`` are 1000.50 in any locale);
    - one of them used several times: it groups (``12,345,678``, ``1.000.000``);
    - one of them used once, with exactly three digits after it and one to three digits before it (or
      space-grouped digits, ``1 000,500``): ambiguous, the locale decides: the decimal separator if it
      is ``decimal_separator``, else a thousands separator (``1,000`` is 1000 in English and 1.000 in
      German; ``1.000`` is 1.000 in English and 1000 in German);
    - one of them used once otherwise: the decimal separator (``1,5`` is 1.5 and ``0.35`` is 0.35 in any
      locale; ``1234.567`` is 1234.567, since four digits cannot precede a thousands separator).

    A number whose grouping is not valid (groups not of three digits after a first of one to three, or
    separators mixed, as ``1,00,000``, ``1.2.3``, ``1,000.000.5``) is left as written: it then matches
    only itself. Such a number always has a ``,``, a space or two ``.``, so it never reads as the
    canonical text of another.
    """
    field = pl.field  # each step is a struct field, computed once: eager Polars repeats a shared sub-expression
    parts = pl.struct(number=number).struct.with_fields(
        has_decimals=field("number").str.contains(_has_decimals(decimal_separator))
    )
    parts = parts.struct.with_fields(
        integer=pl.when(field("has_decimals"))
        .then(field("number").str.strip_chars_end(_DIGITS))
        .otherwise(field("number"))
    )
    point = pl.when(field("has_decimals")).then(pl.lit(".")).otherwise(pl.lit(""))
    parts = parts.struct.with_fields(
        value=pl.concat_str(
            field("integer").str.replace_all(r"[ .,]", ""), point, field("number").str.strip_prefix(field("integer"))
        ),
        valid=field("integer").str.contains(_INTEGER),
    )
    parts = parts.struct.with_fields(canonical=pl.when(field("valid")).then(field("value")).otherwise(field("number")))
    return _named_as(parts.struct.field("canonical"), number)


def _has_decimals(decimal_separator: str) -> str:
    """A regex for the numbers whose last separator is their decimal separator, in a locale whose
    decimal separator is ``decimal_separator`` (see ``canonical_number``)."""
    thousands = re.escape(_thousands_separator(decimal_separator))
    decimal = re.escape(decimal_separator)
    return "|".join(
        [
            r"\..*,|,.*\.",  # both
            rf"^[0-9 ]+{decimal}[0-9]+$",  # the locale's decimal separator, once
            rf"^[0-9 ]+{thousands}(?:[0-9]{{1,2}}|[0-9]{{4,}})$",  # the other once, not three digits after
            rf"^[0-9]{{4,}}{thousands}[0-9]{{3}}$",  # ... or three digits after four or more
        ]
    )


def number_writings(canonical: pl.Expr, decimal_separator: str) -> pl.Expr:
    """Every way a text in a locale whose decimal separator is ``decimal_separator`` may write the value
    ``canonical`` (as ``canonical_number`` gives it), a list to search a context for. In German
    (``,``), 1000.5 is ``1000,5``, ``1.000,5``, ``1 000,5``, and also ``1000.5``, ``1,000.5`` and
    ``1 000.5``, which ``canonical_number`` reads as 1000.5 in German too (a ``.`` before one digit is
    a decimal point in any locale; where both separators appear the last one is the decimal one).

    The integer part is written plain, or grouped in threes with ``,``, ``.`` or a space (only four digits
    or more, not starting with ``0``, have grouped forms; grouping with the locale's decimal separator
    needs two separators, ``1.000.000`` in English); the decimals follow either separator. Only the
    writings that read back as ``canonical`` in that locale are kept, plain first, then grouped with the
    locale's thousands separator, then with a space. A number left as written (``1,00,000``) has just
    itself. Nulls stay null.
    """
    thousands = _thousands_separator(decimal_separator)
    field = pl.field  # each step a struct field, as in canonical_number
    parts = pl.struct(canonical=canonical).struct.with_fields(
        fraction=field("canonical").str.strip_chars_start(_DIGITS)
    )
    parts = parts.struct.with_fields(
        integer=field("canonical").str.strip_suffix(field("fraction")),
        decimals=field("fraction").str.strip_prefix("."),
    )
    parts = parts.struct.with_fields(
        by_thousands=_grouped(field("integer"), thousands), by_decimal=_grouped(field("integer"), decimal_separator)
    )
    integer, decimals = field("integer"), field("decimals")
    by_space = field("by_thousands").str.replace_all(thousands, " ", literal=True)
    groups = (integer.str.len_bytes() >= 4) & ~integer.str.starts_with("0")
    fraction = decimals.str.len_bytes() > 0
    three_decimals = decimals.str.len_bytes() == 3
    by_thousands, by_decimal = field("by_thousands"), field("by_decimal")
    as_integer = [  # (whether it reads back as the value, the writing)
        (pl.lit(True), integer),
        (groups, by_thousands),
        (groups & (integer.str.len_bytes() >= 7), by_decimal),
        (groups, by_space),
    ]
    with_decimals = [
        (pl.lit(True), integer + pl.lit(decimal_separator) + decimals),
        (~three_decimals | (integer.str.len_bytes() >= 4), integer + pl.lit(thousands) + decimals),
        (groups, by_thousands + pl.lit(decimal_separator) + decimals),
        (groups, by_decimal + pl.lit(thousands) + decimals),
        (groups, by_space + pl.lit(decimal_separator) + decimals),
        (groups & ~three_decimals, by_space + pl.lit(thousands) + decimals),
    ]
    parts = parts.struct.with_fields(
        writings=pl.when(~field("canonical").str.contains(_CANONICAL))
        .then(field("canonical"))
        .when(fraction)
        .then(_listed(with_decimals))
        .otherwise(_listed(as_integer))
    )
    return _named_as(parts.struct.field("writings").str.split("|"), canonical)


def _listed(candidates: list[tuple[pl.Expr, pl.Expr]]) -> pl.Expr:
    """The writings of ``candidates`` whose condition holds, joined by ``|``."""
    kept = [pl.when(holds).then(writing + pl.lit("|")).otherwise(pl.lit("")) for holds, writing in candidates]
    return pl.concat_str(kept).str.strip_chars_end("|")


def _thousands_separator(decimal_separator: str) -> str:
    """The thousands separator of a locale whose decimal separator is ``decimal_separator``."""
    if decimal_separator not in (".", ","):
        raise ValueError(f"decimal_separator must be '.' or ','; got {decimal_separator!r}")
    return "," if decimal_separator == "." else "."


def _grouped(integer: pl.Expr, separator: str) -> pl.Expr:
    """``integer`` digits (not starting with ``0``) in groups of three from the right, ``separator``
    between them: left-padded with zeros to whole groups, each group followed by ``separator``, then the
    padding and the last separator dropped. (A literal replacement of the thousand three-digit texts is
    six times as fast on millions of numbers, but building it costs 20 ms a call: the judge groups only
    the few numbers it did not find as written.)"""
    padded = integer.str.pad_start((integer.str.len_bytes() + 2) // 3 * 3, "0")
    grouped = padded.str.replace_all(r"[0-9]{3}", "${0}" + separator)
    return grouped.str.strip_chars_start("0").str.strip_chars_end(separator)


def _named_as(result: pl.Expr, source: pl.Expr) -> pl.Expr:
    """``result`` under the output name of ``source``, as a string operation on it would be."""
    name = source.meta.output_name(raise_if_undetermined=False)
    return result if name is None else result.alias(name)
