"""Numbers as every locale writes them: found whole in normalized text, read as their value, and written
back in each of the locale's ways. Babel (CLDR's number formats) is the independent reference."""

from __future__ import annotations

import re
from decimal import Decimal

import polars as pl
import pytest
from babel.numbers import format_decimal, get_decimal_symbol, parse_decimal
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_compare.compute.numbers import NUMBER_PATTERN, canonical_number, number_writings
from rag_compare.compute.words import normalized

LOCALES = ("en", "de", "fr", "es", "it", "pt", "nl")
SENTENCES = ("about {} euros.", "Il y a {}, puis", "({}%) of it", "{}", "total: {}.")


def numbers_in(text: str) -> list[str]:
    found: list[str] = normalized(pl.Series([text])).str.extract_all(NUMBER_PATTERN).item().to_list()
    return found


def canonical(numbers: list[str], decimal_separator: str) -> list[str]:
    frame = pl.DataFrame({"number": numbers}, schema={"number": pl.String})
    return frame.select(canonical_number(pl.col("number"), decimal_separator)).to_series().to_list()


def writings(value: str, decimal_separator: str) -> list[str]:
    written: list[str] = pl.select(number_writings(pl.lit(value), decimal_separator)).item().to_list()
    return written


values = st.builds(
    lambda integer, decimals: Decimal(f"{integer}.{decimals}" if decimals else integer),
    st.integers(min_value=0, max_value=10**13),
    st.text(alphabet="0123456789", max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(value=values, locale=st.sampled_from(LOCALES), sentence=st.sampled_from(SENTENCES))
def test_a_number_babel_writes_reads_as_babel_parses_it(value: Decimal, locale: str, sentence: str) -> None:
    written = format_decimal(value, locale=locale, group_separator=True, decimal_quantization=False)
    found = numbers_in(sentence.format(written))
    assert found == [normalized(pl.Series([written])).item()]
    [read] = canonical(found, get_decimal_symbol(locale))
    assert Decimal(read) == parse_decimal(written, locale=locale) == value


@pytest.mark.parametrize(
    ("written", "decimal_separator", "expected"),
    [
        ("180", ".", "180"),
        ("2026", ",", "2026"),
        ("3,000", ".", "3000"),
        ("0.35", ",", "0.35"),  # once, two digits after: a decimal in any locale
        ("1,5", ".", "1.5"),
        ("12,345,678", ",", "12345678"),  # several times: groups in any locale
        ("1.000.000", ".", "1000000"),
        ("1.000,50", ".", "1000.50"),  # both: the last is the decimal separator
        ("1,000.50", ",", "1000.50"),
        ("1 000", ",", "1000"),  # a space always groups
        ("1 000 000,5", ".", "1000000.5"),
        ("1,000", ".", "1000"),  # once, three digits after: the locale decides
        ("1,000", ",", "1.000"),
        ("1.000", ".", "1.000"),
        ("1.000", ",", "1000"),
        ("1 000,500", ".", "1000500"),
        ("1 000,500", ",", "1000.500"),
        ("1234.567", ",", "1234.567"),  # four digits cannot precede a thousands separator
        ("1234,567", ".", "1234.567"),
        ("1.50", ",", "1.50"),  # decimals as written
        ("1.5", ",", "1.5"),
        ("01", ".", "01"),
        ("1,00,000", ".", "1,00,000"),  # not a valid grouping: as written
        ("1.2.3", ",", "1.2.3"),
        ("1,000.000.5", ".", "1,000.000.5"),
    ],
)
def test_a_number_reads_as_its_value(written: str, decimal_separator: str, expected: str) -> None:
    assert canonical([written], decimal_separator) == [expected]


@pytest.mark.parametrize(
    ("written", "locale", "expected"),
    [("1,000", "en", "1000"), ("1,000", "de", "1.000"), ("1.000", "en", "1.000"), ("1.000", "de", "1000")],
)
def test_an_ambiguous_number_reads_as_babel_reads_it_in_its_locale(written: str, locale: str, expected: str) -> None:
    assert canonical([written], get_decimal_symbol(locale)) == [expected]
    assert parse_decimal(written, locale=locale) == Decimal(expected)


def rules_reference(number: str, decimal_separator: str) -> str:
    """The canonical value of ``number`` by the rules of ``canonical_number``, one number at a time."""
    separators = re.findall(r"[.,]", number)
    decimal = None
    if "." in number and "," in number:
        decimal = separators[-1]
    elif len(separators) == 1:
        before, after = number.split(separators[0])
        ambiguous = len(after) == 3 and re.fullmatch(r"[0-9]{1,3}( [0-9]{3})*", before)
        decimal = None if ambiguous and separators[0] != decimal_separator else separators[0]
    integer, decimals = number.rsplit(decimal, 1) if decimal else (number, "")
    if not re.fullmatch(r"[0-9]+|[0-9]{1,3}([ ,][0-9]{3})+|[0-9]{1,3}([ .][0-9]{3})+", integer):
        return number
    return re.sub(r"[ .,]", "", integer) + ("." + decimals if decimal else "")


digit_runs = st.lists(st.tuples(st.text(alphabet="0123456789", min_size=1, max_size=5), st.sampled_from(" .,x")))


@settings(max_examples=500, deadline=None)
@given(
    text=digit_runs.map(lambda runs: "".join(digits + after for digits, after in runs)),
    decimal_separator=st.sampled_from([".", ","]),
)
def test_every_number_found_reads_by_the_rules(text: str, decimal_separator: str) -> None:
    found = numbers_in(text)
    assert canonical(found, decimal_separator) == [rules_reference(number, decimal_separator) for number in found]


def test_nulls_stay_null_and_the_column_keeps_its_name() -> None:
    frame = pl.DataFrame({"token": ["1,5"]})
    assert frame.select(canonical_number(pl.col("token"), ",")).columns == ["token"]
    assert frame.select(number_writings(pl.col("token"), ",")).columns == ["token"]
    assert canonical([None], ".") == [None]  # type: ignore[list-item]
    frame = pl.DataFrame({"value": [None, "1000"]}, schema={"value": pl.String})
    assert frame.select(number_writings(pl.col("value"), ",")).to_series().to_list() == [
        None,
        ["1000", "1.000", "1 000"],
    ]


@pytest.mark.parametrize(
    ("value", "decimal_separator", "expected"),
    [
        # a "." before two digits is a decimal point in German too, and the last of "," and "." is the decimal one
        ("1000.50", ",", ["1000,50", "1000.50", "1.000,50", "1,000.50", "1 000,50", "1 000.50"]),
        ("1000.50", ".", ["1000.50", "1000,50", "1,000.50", "1.000,50", "1 000.50", "1 000,50"]),
        # "1.000.000" groups in English as well: a separator used twice groups
        ("12345678", ",", ["12345678", "12.345.678", "12,345,678", "12 345 678"]),
        ("1000", ",", ["1000", "1.000", "1 000"]),  # "1,000" is 1.000 in German
        ("1000.500", ",", ["1000,500", "1000.500", "1.000,500", "1,000.500", "1 000,500"]),  # "1 000.500": 1000500
        ("180", ",", ["180"]),  # fewer than four integer digits: no grouped form
        ("999.125", ".", ["999.125"]),
        ("0.35", ",", ["0,35", "0.35"]),
        ("100.500", ",", ["100,500"]),  # "100.500" is 100500 in German
        ("0123", ".", ["0123"]),  # a leading zero is no thousands group
        ("1,00,000", ".", ["1,00,000"]),  # left as written: itself only
    ],
)
def test_a_value_is_written_in_each_way_of_its_locale(value: str, decimal_separator: str, expected: list[str]) -> None:
    assert writings(value, decimal_separator) == expected


canonical_values = st.builds(
    lambda integer, decimals: f"{integer}.{decimals}" if decimals else str(integer),
    st.integers(min_value=0, max_value=10**13),
    st.text(alphabet="0123456789", max_size=4),
)


def written_every_way(integer: str, decimals: str) -> list[str]:
    """The number written plain and in groups of three by ",", "." and a space, its decimals after "." and
    after "," (the candidates, built apart from ``number_writings``)."""
    forms = [integer]
    if len(integer) > 3:
        head, rest = integer[: len(integer) % 3 or 3], integer[len(integer) % 3 or 3 :]
        groups = [head, *(rest[start : start + 3] for start in range(0, len(rest), 3))]
        forms += [separator.join(groups) for separator in (",", ".", " ")]
    if not decimals:
        return forms
    return [f"{form}{point}{decimals}" for form in forms for point in (".", ",")]


@settings(max_examples=300, deadline=None)
@given(
    integer=st.integers(min_value=1, max_value=10**10).map(str),
    decimals=st.text(alphabet="0123456789", max_size=4),
    decimal_separator=st.sampled_from([".", ","]),
)
def test_every_way_of_writing_a_value_is_among_its_writings(
    integer: str, decimals: str, decimal_separator: str
) -> None:
    value = f"{integer}.{decimals}" if decimals else integer
    candidates = written_every_way(integer, decimals)
    read = dict(zip(candidates, canonical(candidates, decimal_separator), strict=True))
    assert {text for text, reading in read.items() if reading == value} == set(writings(value, decimal_separator))


@settings(max_examples=300, deadline=None)
@given(value=canonical_values, decimal_separator=st.sampled_from([".", ","]))
def test_every_writing_is_one_number_that_reads_back_as_the_value(value: str, decimal_separator: str) -> None:
    for written in writings(value, decimal_separator):
        assert numbers_in(f"so {written} people") == [written]
        assert canonical([written], decimal_separator) == [value]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("180", ["180"]),
        ("1 080", ["1 080"]),
        ("0,80", ["0,80"]),
        ("2026-01", ["2026", "01"]),
        ("12,345,678", ["12,345,678"]),
        ("1,00,000", ["1,00,000"]),
        ("in 2024 500 people", ["2024", "500"]),  # a space joins only after a first group of 1 to 3 digits
        ("3 100 pages", ["3 100"]),
        ("1 0000", ["1", "0000"]),  # ... and only a group of exactly three digits
        ("12 345 6789", ["12 345", "6789"]),
        ("Il y a 1\u202f000\u00a0000,5 cas.", ["1 000 000,5"]),
        ("it costs 180.", ["180"]),
    ],
)
def test_numbers_are_found_whole(text: str, expected: list[str]) -> None:
    assert numbers_in(text) == expected


def test_80_is_not_found_inside_another_number() -> None:
    for text in ("180", "1 080", "0,80"):
        assert "80" not in numbers_in(f"about {text} euros")


@settings(max_examples=500, deadline=None)
@given(text=st.text(alphabet="0123456789 .,-x", max_size=40))
def test_a_number_never_starts_or_ends_inside_another(text: str) -> None:
    end = 0
    for number in numbers_in(text):
        start = text.index(number, end)  # every digit is in a number: none lies between two of them
        assert not text[end:start].strip(" .,-x")
        end = start + len(number)
        assert number[-1].isdigit()
        assert not text[start - 1 : start].isdigit()
        assert not text[end : end + 1].isdigit()
    assert not any(character.isdigit() for character in text[end:])


def test_a_decimal_separator_is_a_dot_or_a_comma() -> None:
    with pytest.raises(ValueError, match="decimal_separator"):
        canonical_number(pl.col("number"), " ")
    with pytest.raises(ValueError, match="decimal_separator"):
        number_writings(pl.col("number"), ";")
