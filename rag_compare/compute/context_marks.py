"""Where a case's required passages are in the context that was sent, for a reader checking it by eye.

``context_segments`` cuts a context into consecutive pieces whose texts join back to it exactly: a piece
with a ``passage_id`` is where that required passage's text was found (whitespace runs in either text match
any whitespace run in the other), every other piece has none. A passage found several times is marked at
each place. A passage not found whole may be **cut**: only a leading part of it is there, because the
context ended (the leading part runs to the context's end, at least ``MIN_CUT_CHARS`` long) or because the
piece was shortened before the next one was added (the leading part is at least half the passage and
``MIN_CUT_CHARS`` long); that leading part is marked ``cut``. Where two found passages overlap, the
earlier keeps the shared text and the later starts after it; a passage found inside another one's piece is
not marked again.

The search works on the context with each whitespace run made one space, a few ``str.find`` calls per
passage, so a context of a megabyte takes milliseconds.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MIN_CUT_CHARS", "context_segments"]

MIN_CUT_CHARS = 16
"""The shortest leading part of a passage (whitespace runs counted as one character) marked as cut: a
shorter one could be any text that happens to start the same way."""
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class _Span:
    """Where a passage is in the context (original offsets, end exclusive), and whether it is cut there."""

    start: int
    end: int
    passage_id: str
    cut: bool


def context_segments(context: str | None, passages: Mapping[str, str | None]) -> list[dict[str, Any]] | None:
    """``context`` cut into pieces ``{"text", "passage_id", "cut"}`` (see the module) where the texts of
    ``passages`` (required passage id → its text, ``None`` when unknown) are found; ``None`` when
    ``context`` is; no piece for an empty one."""
    if context is None:
        return None
    squeezed = _Squeezed.of(context)
    spans = [
        span
        for passage_id, text in passages.items()
        if text is not None and text.strip()
        for span in squeezed.spans(passage_id, _SPACES.sub(" ", text.strip()))
    ]
    return _segments(context, _without_overlaps(spans))


@dataclass(frozen=True)
class _Squeezed:
    """A context with each whitespace run made one space, and the way back to the original offsets."""

    original: str
    text: str
    runs: list[int]
    """The squeezed offset of each whitespace run, in order."""
    ends: list[int]
    """The original offset just past each whitespace run."""

    @classmethod
    def of(cls, context: str) -> _Squeezed:
        runs, ends, removed = [], [], 0
        for match in _SPACES.finditer(context):
            runs.append(match.start() - removed)
            ends.append(match.end())
            removed += match.end() - match.start() - 1
        return cls(context, _SPACES.sub(" ", context), runs, ends)

    def original_offset(self, offset: int) -> int:
        """The original offset of the character at squeezed ``offset`` (not inside a whitespace run)."""
        index = bisect.bisect_right(self.runs, offset) - 1
        if index < 0:
            return offset
        return self.ends[index] + offset - self.runs[index] - 1

    def span(self, start: int, length: int, passage_id: str, *, cut: bool) -> _Span:
        """The original span of the squeezed text at ``start`` of ``length`` characters."""
        return _Span(self.original_offset(start), self.original_offset(start + length - 1) + 1, passage_id, cut)

    def spans(self, passage_id: str, text: str) -> list[_Span]:
        """Each place ``text`` (squeezed) is whole in the context, else the place of its cut leading part."""
        found = []
        start = self.text.find(text)
        while start >= 0:
            found.append(self.span(start, len(text), passage_id, cut=False))
            start = self.text.find(text, start + len(text))
        if found:
            return found
        cut = self._cut_at_end(text) or self._cut_inside(text)
        return [] if cut is None else [self.span(cut[0], cut[1], passage_id, cut=True)]

    def _cut_at_end(self, text: str) -> tuple[int, int] | None:
        """The start and length of the longest leading part of ``text`` that ends the context."""
        tail = self.text.rstrip()
        head = text[:MIN_CUT_CHARS]
        start = tail.find(head, max(0, len(tail) - len(text)))
        while start >= 0:
            if text.startswith(tail[start:]):
                return start, len(tail) - start
            start = tail.find(head, start + 1)
        return None

    def _cut_inside(self, text: str) -> tuple[int, int] | None:
        """The start and length of the longest leading part of ``text`` found anywhere, when it is at least
        half of ``text`` (a binary search: a leading part found means every shorter one is)."""
        shortest = max(MIN_CUT_CHARS, (len(text) + 1) // 2)
        if shortest >= len(text) or self.text.find(text[:shortest]) < 0:
            return None
        low, high = shortest, len(text) - 1  # found, not found: text is not whole in the context
        while low < high:
            middle = (low + high + 1) // 2
            if self.text.find(text[:middle]) >= 0:
                low = middle
            else:
                high = middle - 1
        length = len(text[:low].rstrip())
        return self.text.find(text[:length]), length


def _without_overlaps(spans: list[_Span]) -> list[_Span]:
    """``spans`` in context order, each one that overlaps an earlier one starting where that one ends (and
    left out when nothing of it remains)."""
    kept: list[_Span] = []
    for span in sorted(spans, key=lambda span: (span.start, -span.end, span.passage_id)):
        start = max(span.start, kept[-1].end) if kept else span.start
        if start < span.end:
            kept.append(_Span(start, span.end, span.passage_id, span.cut))
    return kept


def _segments(context: str, spans: list[_Span]) -> list[dict[str, Any]]:
    """The pieces of ``context``: each span, and the text between them."""
    segments: list[dict[str, Any]] = []
    position = 0
    for span in spans:
        if span.start > position:
            segments.append({"text": context[position : span.start], "passage_id": None, "cut": False})
        segments.append({"text": context[span.start : span.end], "passage_id": span.passage_id, "cut": span.cut})
        position = span.end
    if position < len(context):
        segments.append({"text": context[position:], "passage_id": None, "cut": False})
    return segments
