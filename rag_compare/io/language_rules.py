"""Language files: what the offline judge knows of a language, read from a TOML file.

    code = "de"                           # the primary BCP 47 subtag cases are tagged with
    name = "German"
    decimal_separator = ","               # "1,5" is one and a half; then "." (and a space) group thousands
    plural_suffixes = ["en", "er", "e", "n", "s"]
    abstention_patterns = ['\\bich weiß (?:es |das )?nicht\\b']
    stopwords = '''
    aber alle als ...
    '''
    letters = "äöüß"                      # letters that mark text as this language (detection)

The package ships one file per language it knows (``rag_compare/io/languages/*.toml``, see
``builtin_languages``); ``load_language`` reads a user's own, which adds a language or replaces a shipped
one of the same code. Patterns, stopwords and suffixes are written for text as the judge reads it: NFKC
normalised, case folded, every apostrophe ``'`` and every space `` ``.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import polars as pl

from rag_compare.core.contract import LANGUAGE_TAG
from rag_compare.core.errors import ConfigError
from rag_compare.core.input_paths import check_input
from rag_compare.core.nesting import load_toml

__all__ = [
    "LANGUAGE_KEYS",
    "Language",
    "builtin_languages",
    "language_code",
    "languages_with",
    "load_language",
]

LANGUAGE_KEYS = ("code", "name", "decimal_separator", "plural_suffixes", "abstention_patterns", "stopwords", "letters")
_CODE = re.compile(r"[a-z]{2,3}")
_TAG = re.compile(LANGUAGE_TAG)
_SUFFIX = re.compile(r"[^\W\d_]{1,4}")


@dataclass(frozen=True)
class Language:
    """The rules of one language: how its numbers are written, how its plurals end, how its answers say
    "I don't know", and its words that carry no claim."""

    code: str
    name: str
    decimal_separator: str
    plural_suffixes: tuple[str, ...]
    abstention_patterns: tuple[str, ...] = field(repr=False)
    stopwords: tuple[str, ...] = field(repr=False)
    letters: str = field(repr=False)

    @property
    def config(self) -> dict[str, Any]:
        """Everything that decides a verdict, as JSON-ready values (the judge's fingerprint holds it)."""
        return {
            "decimal_separator": self.decimal_separator,
            "plural_suffixes": list(self.plural_suffixes),
            "abstention_patterns": list(self.abstention_patterns),
            "stopwords": list(self.stopwords),
            "letters": self.letters,
        }


def language_code(tag: str) -> str:
    """The primary subtag of a BCP 47 ``tag``, lower case: ``de`` for ``de-CH``; raises ``ValueError`` for
    text that is not a tag."""
    if not _TAG.fullmatch(tag):
        raise ValueError(f"{tag!r} is not a BCP 47 language tag such as 'en', 'de' or 'pt-BR'")
    return re.split(r"[-_]", tag)[0].lower()


def load_language(path: str | Path) -> Language:
    """The language of a TOML language file (see the module); raises ``ConfigError`` naming the file and
    the key for anything it cannot use."""
    path = Path(path)
    check_input(path, "language file", ConfigError)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: is not UTF-8 text. Save the language file as UTF-8.") from None
    return _parsed(text, str(path))


@cache
def builtin_languages() -> tuple[Language, ...]:
    """The languages the package ships: English first (a text the detector finds as much English as
    another language in is English), then the others by code."""
    folder = resources.files("rag_compare.io").joinpath("languages")
    files = sorted(
        (item for item in folder.iterdir() if item.name.endswith(".toml")),
        key=lambda item: (item.name != "en.toml", item.name),
    )
    return tuple(_parsed(item.read_text(encoding="utf-8"), f"rag_compare/io/languages/{item.name}") for item in files)


def languages_with(paths: Iterable[str | Path]) -> tuple[Language, ...]:
    """The shipped languages, each language file of ``paths`` added, or in place of the shipped language of
    its code; two files of one code are refused."""
    given = [load_language(path) for path in paths]
    codes = [language.code for language in given]
    twice = sorted({code for code in codes if codes.count(code) > 1})
    if twice:
        raise ConfigError(f"several language files are for {', '.join(twice)}: give one file per language.")
    replaced = {language.code: language for language in given}
    shipped = tuple(replaced.pop(language.code, language) for language in builtin_languages())
    return shipped + tuple(replaced.values())


def _parsed(text: str, where: str) -> Language:
    try:
        document = load_toml(text, where)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{where}: is not valid TOML ({error}). Fix the syntax and load it again.") from None
    unknown = sorted(set(document) - set(LANGUAGE_KEYS))
    if unknown:
        keys = ", ".join(LANGUAGE_KEYS)
        raise ConfigError(f"{where}: unknown keys {', '.join(unknown)}; a language file holds {keys}.")
    missing = [key for key in LANGUAGE_KEYS if key not in document]
    if missing:
        raise ConfigError(f"{where}: lacks {', '.join(missing)}; a language file holds {', '.join(LANGUAGE_KEYS)}.")
    code, name, decimal = document["code"], document["name"], document["decimal_separator"]
    if not isinstance(code, str) or not _CODE.fullmatch(code):
        raise ConfigError(f"{where}: code must be a primary BCP 47 subtag in lower case, such as 'de'; got {code!r}.")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}: name must be the language's name, such as 'German'; got {name!r}.")
    if decimal not in (".", ","):
        raise ConfigError(f"{where}: decimal_separator must be '.' or ','; got {decimal!r}.")
    suffixes = _strings(document["plural_suffixes"], where, "plural_suffixes")
    bad = [suffix for suffix in suffixes if not _SUFFIX.fullmatch(suffix) or suffix != suffix.casefold()]
    if bad:
        raise ConfigError(f"{where}: plural_suffixes must be 1 to 4 lower-case letters each; not {', '.join(bad)}.")
    patterns = _strings(document["abstention_patterns"], where, "abstention_patterns")
    if not patterns:
        raise ConfigError(f"{where}: abstention_patterns is empty: give at least one regex.")
    for pattern in patterns:
        try:
            pl.Series([""]).str.contains(pattern)
        except pl.exceptions.ComputeError as error:
            raise ConfigError(f"{where}: abstention_patterns: {pattern!r} is not a valid regex: {error}") from None
    stopwords = document["stopwords"]
    if not isinstance(stopwords, str):
        raise ConfigError(f"{where}: stopwords must be one string of words separated by spaces or lines.")
    letters = document["letters"]
    if not isinstance(letters, str) or any(not letter.isalpha() or letter != letter.casefold() for letter in letters):
        raise ConfigError(f"{where}: letters must be one string of lower-case letters, such as 'äöü'; got {letters!r}.")
    return Language(
        code=code,
        name=name.strip(),
        decimal_separator=decimal,
        plural_suffixes=tuple(sorted(set(suffixes), key=lambda suffix: (-len(suffix), suffix))),
        abstention_patterns=tuple(patterns),
        stopwords=tuple(sorted(set(stopwords.split()))),
        letters="".join(sorted(set(letters))),
    )


def _strings(value: object, where: str, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: {key} must be a list of strings.")
    return list(value)
