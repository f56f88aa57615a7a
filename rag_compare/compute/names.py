"""Names in answers, for the offline judge: the words a language's rules (``io.language_rules.NameRules``)
read as names in an answer as written, capitals kept.

A word is a run of Unicode letters, marks and digits. It is capitalised when a letter of it is upper
case. It opens its sentence when it is the answer's first word, or the first after a ``.``, ``!`` or
``?`` and a space, or after a line break: where the judge's claims start. A sentence without a lower-case
letter (written in capitals) holds no names, and neither does a word its rules do not name:

- a word with a capital after its first letter (``IBM``, ``JobRad``) is a name wherever it stands;
- where capitals mark names (``capitals = "names"``), a capitalised word is a name unless it opens its
  sentence (of ``New York`` opening one, ``York`` is a name, ``New`` is not);
- where every noun is capitalised (``"nouns"``), a capital alone makes no name;
- in either, a capitalised word is a name after one of the rules' ``cues`` (``Frau``, ``Firma``,
  ``Haus``), and so is every capitalised word that follows it in its sentence without a break (``Firma
  Engelbert Strauss``); one ending in one of its ``endings`` (by two letters or more: ``Regensburg``) is
  a name wherever it stands.

The judge then keeps those of a claim that neither the context nor the question holds, and, with the
rules' ``piece``, those whose first and last ``piece`` letters neither holds (``shares_piece``).
"""

from __future__ import annotations

import polars as pl

from rag_compare.compute.words import normalized
from rag_compare.io.language_rules import NameRules

__all__ = ["names_of", "shares_piece"]

_WORD = r"[\p{L}\p{M}\p{N}]+"
_TOKEN = rf"(?:[.!?]\s+|\n)[^\p{{L}}\p{{M}}\p{{N}}]*{_WORD}|{_WORD}"
"""A word, with what opens its sentence before it when it opens one (the text read starts with a line break)."""
_MAY_NAME = r"[^.!?\s]\s+[^\p{L}\p{M}\p{N}\s]*\p{Lu}|[\p{L}\p{M}\p{N}][^\p{L}\p{M}\p{N}\s]+\p{Lu}|\p{L}\p{M}*\p{Lu}"
"""A capital that does not open a sentence, or one after a letter: a text without one holds no name where
capitals mark names."""
_SCHEMA = {"pos": pl.UInt32, "token": pl.String}


def names_of(written: pl.Series, rules: NameRules) -> pl.DataFrame:
    """``pos`` (a row of ``written``) and ``token`` (the word as the judge reads it, ``words.normalized``) of
    each word that ``rules`` read as a name in each answer (see the module); each once a row."""
    may = written.str.contains(r"\p{Lu}" if rules.capitals == "nouns" else _MAY_NAME).fill_null(False)
    rows = may.arg_true()
    if rows.len() == 0:
        return pl.DataFrame(schema=_SCHEMA)
    words = (
        pl.DataFrame({"pos": rows.cast(pl.UInt32), "text": written.gather(rows)})
        .select("pos", token=("\n" + pl.col("text")).str.extract_all(_TOKEN))
        .explode("token")
        .drop_nulls("token")
        .select(
            "pos", opens=~pl.col("token").str.contains(rf"^{_WORD}"), word=pl.col("token").str.extract(f"({_WORD})$")
        )
    )
    word, tail = pl.col("word"), pl.col("word").str.slice(1)
    words = words.with_columns(
        token=normalized(words.get_column("word")),
        capital=word != word.str.to_lowercase(),
        inner=tail != tail.str.to_lowercase(),
        quiet=word != word.str.to_uppercase(),
        sentence=pl.col("opens").cum_sum().over("pos"),
    )
    named = words.filter(pl.col("quiet").any().over("pos", "sentence")).with_columns(
        name=pl.col("capital") & (pl.col("inner") | _named(rules))
    )
    return named.filter("name").select("pos", "token").unique(maintain_order=True)


def _named(rules: NameRules) -> pl.Expr:
    """Whether a capitalised word of a sentence with a lower-case letter is a name by ``rules`` (the word
    with a capital past its first letter aside)."""
    capital, opens, token = pl.col("capital"), pl.col("opens"), pl.col("token")
    cue = token.is_in(list(rules.cues))
    after_cue = capital & ~cue & cue.shift(1).over("pos").fill_null(False)
    run = (~capital | opens).cum_sum().over("pos")
    named = (after_cue.cast(pl.UInt8).cum_max().over("pos", run) == 1) & ~cue
    for suffix in rules.endings:
        named = named | (token.str.ends_with(suffix) & (token.str.len_chars() >= len(suffix) + 2))
    return named | ~opens if rules.capitals == "names" else named


def shares_piece(token: pl.Expr, hay: pl.Expr, piece: int) -> pl.Expr:
    """Whether ``hay`` (text read as the judge reads it) holds ``token``'s first or last ``piece`` letters
    (the whole token when it is shorter): a stem or a compound part of it; false where ``hay`` is null."""
    first, last = token.str.slice(0, piece), token.str.slice(-piece)
    return (hay.str.contains(first, literal=True) | hay.str.contains(last, literal=True)).fill_null(False)
