"""Two answers compared word by word, for a reader who wants to see what changed between them.

``word_diff`` cuts each text into words, each with the whitespace that follows it, matches the two sequences
with ``difflib`` and gives the pieces in order: ``("=", text)`` in both, ``("-", text)`` only in the first,
``("+", text)`` only in the second. Joining the ``=`` and ``-`` pieces gives the first text exactly, the
``=`` and ``+`` pieces the second. Each run of changes is one deletion then one insertion, and the
whitespace both end with is left to the equal text after them: ``40`` → ``50``, not ``40 `` → ``50 ``.

Long texts are matched with ``difflib``'s heuristic for popular words (in texts of 200 words or more, a
word that makes over 1% of the second text is matched only next to other matches), which keeps a
5,000-word diff within a fraction of a second even for a text that repeats one word throughout.
"""

from __future__ import annotations

import difflib
import re
from typing import Literal

__all__ = ["MAX_DIFF_WORDS", "Operation", "word_diff"]

MAX_DIFF_WORDS = 5_000
"""Longer texts (in words) are not compared: a page would not show the diff, nor a reader follow it."""
_PIECES = re.compile(r"\s+|\S+\s*")
"""A word with the whitespace after it; whitespace before the first word is a piece of its own."""
_WORDS = re.compile(r"\S+")
Operation = Literal["=", "-", "+"]


def word_diff(before: str | None, after: str | None) -> list[tuple[Operation, str]] | None:
    """The pieces that turn ``before`` into ``after`` (see the module): ``[("=", before)]`` when they are
    equal; ``None`` when either is ``None`` or longer than ``MAX_DIFF_WORDS`` words."""
    if before is None or after is None:
        return None
    if before == after:
        return [("=", before)]
    if _word_count(before) > MAX_DIFF_WORDS or _word_count(after) > MAX_DIFF_WORDS:
        return None
    old, new = _PIECES.findall(before), _PIECES.findall(after)
    pieces: list[tuple[Operation, str]] = []
    for tag, old_start, old_end, new_start, new_end in difflib.SequenceMatcher(None, old, new).get_opcodes():
        if tag == "equal":
            pieces.append(("=", "".join(old[old_start:old_end])))
            continue
        if old_end > old_start:
            pieces.append(("-", "".join(old[old_start:old_end])))
        if new_end > new_start:
            pieces.append(("+", "".join(new[new_start:new_end])))
    return _spaces_left_equal(pieces)


def _word_count(text: str) -> int:
    """The words of ``text``, counted up to one past ``MAX_DIFF_WORDS``."""
    count = 0
    for _ in _WORDS.finditer(text):
        count += 1
        if count > MAX_DIFF_WORDS:
            break
    return count


def _spaces_left_equal(pieces: list[tuple[Operation, str]]) -> list[tuple[Operation, str]]:
    """``pieces`` with the whitespace that a deletion and the insertion after it both end with moved to the
    start of the equal piece that follows them (a new one at the end)."""
    moved: list[tuple[Operation, str]] = []
    carried = ""
    for index, (operation, text) in enumerate(pieces):
        if operation == "=":
            moved.append(("=", carried + text))
            carried = ""
            continue
        if operation == "-" and index + 1 < len(pieces) and pieces[index + 1][0] == "+":
            carried = _common_space(text, pieces[index + 1][1])
        moved.append((operation, text[: len(text) - len(carried)]))
    if carried:
        moved.append(("=", carried))
    return moved


def _common_space(first: str, second: str) -> str:
    """The whitespace both ``first`` and ``second`` end with, kept where either would be left empty."""
    common = ""
    while (
        len(common) < min(len(first), len(second)) - 1
        and first[-1 - len(common)] == second[-1 - len(common)]
        and first[-1 - len(common)].isspace()
    ):
        common = first[-1 - len(common)] + common
    return common
