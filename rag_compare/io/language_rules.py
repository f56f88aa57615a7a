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

    [abstention_parts]                    # a sentence with one of each of the first three abstains
    negations = "nicht kein keine nichts"
    nouns = "kontext* text* dokument*"    # a word ending in * stands for every word it begins
    verbs = "enthält enthalt* erwähn*"
    others = "leider"                     # words an abstention holds that do not make it an answer

    [names]                               # which capitalised words are names
    capitals = "nouns"                    # "names": capitals mark names; "nouns": every noun has one
    cues = "frau herr firma"              # a capitalised word after one of them is a name
    endings = "burg dorf"                 # so is a capitalised word ending in one of them
    piece = 6                             # unless its first or last 6 letters are in the context or question

The package ships one file per language it knows (``rag_compare/io/languages/*.toml``, see
``builtin_languages``); ``load_language`` reads a user's own, which adds a language or replaces a shipped
one of the same code. Patterns, stopwords, suffixes, parts, cues and endings are written for text as the
judge reads it: NFKC normalised, case folded, every apostrophe ``'`` and every space `` ``. A file without
``abstention_parts`` abstains by its patterns alone; one without ``names`` reads no names.
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
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
    "PART_KEYS",
    "AbstentionParts",
    "Language",
    "NameRules",
    "builtin_languages",
    "language_code",
    "languages_with",
    "load_language",
]

LANGUAGE_KEYS = ("code", "name", "decimal_separator", "plural_suffixes", "abstention_patterns", "stopwords", "letters")
PART_KEYS = ("negations", "nouns", "verbs", "others")
_OPTIONAL_KEYS = ("abstention_parts", "names")
_NAME_KEYS = ("capitals", "cues", "endings", "piece")
_CAPITALS = ("names", "nouns")
"""What a capital letter marks in a language: names only (and a sentence's first word), or every noun."""
_CODE = re.compile(r"[a-z]{2,3}")
_TAG = re.compile(LANGUAGE_TAG)
_SUFFIX = re.compile(r"[^\W\d_]{1,4}")
_PART = re.compile(r"[^\W\d_](?:[^\W\d_]|')*\*?")
_PIECES = range(4, 13)
_WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class AbstentionParts:
    """The words an abstention is built from: a sentence holding a negation, a noun for what the answer was
    given (context, passages, documents...) and a verb of holding or saying (contain, mention...) abstains;
    ``others`` are words an abstention may also hold (sorry, provided...). A word ending in ``*`` stands for
    every word it begins."""

    negations: tuple[str, ...]
    nouns: tuple[str, ...]
    verbs: tuple[str, ...]
    others: tuple[str, ...]


@dataclass(frozen=True)
class NameRules:
    """Which capitalised words of an answer are names: ``capitals`` is ``names`` where capitals mark names
    (and a sentence's first word), ``nouns`` where every noun has one; then a capitalised word is a name
    after one of ``cues`` (or after such a name), or when it ends in one of ``endings``. With ``piece``, a
    word whose first or last ``piece`` letters are in the context or the question is no name."""

    capitals: str
    cues: tuple[str, ...] = ()
    endings: tuple[str, ...] = ()
    piece: int = 0


@dataclass(frozen=True)
class Language:
    """The rules of one language: how its numbers are written, how its plurals end, how its answers say
    "I don't know" (patterns, and the parts an abstention is built from), its words that carry no claim, and
    which of its capitalised words are names."""

    code: str
    name: str
    decimal_separator: str
    plural_suffixes: tuple[str, ...]
    abstention_patterns: tuple[str, ...] = field(repr=False)
    stopwords: tuple[str, ...] = field(repr=False)
    letters: str = field(repr=False)
    abstention_parts: AbstentionParts | None = field(default=None, repr=False)
    names: NameRules | None = field(default=None, repr=False)

    @property
    def config(self) -> dict[str, Any]:
        """Everything that decides a verdict, as JSON-ready values (the judge's fingerprint holds it)."""
        parts, names = self.abstention_parts, self.names
        return {
            "decimal_separator": self.decimal_separator,
            "plural_suffixes": list(self.plural_suffixes),
            "abstention_patterns": list(self.abstention_patterns),
            "stopwords": list(self.stopwords),
            "letters": self.letters,
            "abstention_parts": None if parts is None else {key: list(getattr(parts, key)) for key in PART_KEYS},
            "names": None if names is None else {key: _json_ready(getattr(names, key)) for key in _NAME_KEYS},
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
    unknown = sorted(set(document) - set(LANGUAGE_KEYS) - set(_OPTIONAL_KEYS))
    if unknown:
        keys = ", ".join((*LANGUAGE_KEYS, *_OPTIONAL_KEYS))
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
        abstention_parts=_parts(document.get("abstention_parts"), where),
        names=_names(document.get("names"), where),
    )


def _table(value: object, where: str, key: str, keys: tuple[str, ...], required: tuple[str, ...]) -> dict[str, Any]:
    """``value`` as the table ``key`` of a language file, of ``keys`` only, each of ``required`` there."""
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: {key} must be a table ([{key}]) of {', '.join(keys)}.")
    unknown = sorted(set(value) - set(keys))
    missing = [name for name in required if name not in value]
    if unknown or missing:
        wrong = f"unknown keys {', '.join(unknown)}" if unknown else f"lacks {', '.join(missing)}"
        raise ConfigError(f"{where}: [{key}] {wrong}; it holds {', '.join(keys)}.")
    return value


def _words(value: object, where: str, key: str, stems: bool = False) -> tuple[str, ...]:
    """The words of ``value``, one string of words separated by spaces or lines, each written as the judge
    reads text (lower case, NFKC, ``'`` for an apostrophe); with ``stems``, a word may end in ``*``."""
    if not isinstance(value, str):
        raise ConfigError(f"{where}: {key} must be one string of words separated by spaces or lines.")
    words = value.split()
    pattern = _PART if stems else _WORD
    bad = [
        word for word in words if not pattern.fullmatch(word) or word != unicodedata.normalize("NFKC", word).casefold()
    ]
    if bad:
        allowed = "letters and apostrophes, a * at the end for every word it begins" if stems else "letters only"
        raise ConfigError(
            f"{where}: {key} must be words in lower case as the judge reads them ({allowed}, 'ss' for 'ß'); "
            f"not {', '.join(bad)}."
        )
    return tuple(sorted(set(words)))


def _parts(value: object, where: str) -> AbstentionParts | None:
    """The ``abstention_parts`` table, if the file has one (see ``AbstentionParts``)."""
    if value is None:
        return None
    table = _table(value, where, "abstention_parts", PART_KEYS, PART_KEYS)
    words = {key: _words(table[key], where, f"abstention_parts.{key}", stems=True) for key in PART_KEYS}
    empty = [key for key in PART_KEYS[:3] if not words[key]]
    if empty:
        raise ConfigError(f"{where}: abstention_parts.{empty[0]} is empty: an abstention needs one of each part.")
    return AbstentionParts(**words)


def _names(value: object, where: str) -> NameRules | None:
    """The ``names`` table, if the file has one (see ``NameRules``)."""
    if value is None:
        return None
    table = _table(value, where, "names", _NAME_KEYS, ("capitals",))
    if table["capitals"] not in _CAPITALS:
        raise ConfigError(f"{where}: names.capitals must be 'names' or 'nouns'; got {table['capitals']!r}.")
    piece = table.get("piece", 0)
    if isinstance(piece, bool) or not isinstance(piece, int) or (piece and piece not in _PIECES):
        raise ConfigError(f"{where}: names.piece must be 0 (none) or a number of letters from 4 to 12; got {piece!r}.")
    return NameRules(
        capitals=table["capitals"],
        cues=_words(table.get("cues", ""), where, "names.cues"),
        endings=_words(table.get("endings", ""), where, "names.endings"),
        piece=piece,
    )


def _json_ready(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def _strings(value: object, where: str, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: {key} must be a list of strings.")
    return list(value)
