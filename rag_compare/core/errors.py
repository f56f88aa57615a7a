"""Errors raised by rag-compare, and the problems they carry.

Every error a user can cause is a ``RagCompareError``; its message says what is wrong and how to
fix it. A message names a Python parameter in backticks (`` `k` ``, `` `strict=True` ``) and a call
to make in backticks too (`` `admit_cases('drafts.csv', ids=['a@v1'])` ``); the command line turns
each into exit code 2 without a traceback, saying the flag or the command in their place.

    RagCompareError
    ├── InputFileError          a file cannot be read as a table (missing, not UTF-8, empty, ...)
    ├── ContractError           a table breaks its file contract; carries every Problem at once
    ├── NestingError            a document, a line of one, a value or a column nests too deep to read
    ├── ConfigError             a run config cannot be read or is unsafe to store
    │   └── SecretInConfigError     a key or value looks like a credential
    ├── RunFileError            a frozen run cannot be written or loaded
    │   ├── RunExistsError          the output file already exists (it is never replaced)
    │   └── RunIntegrityError       the file was changed or cut short after it was frozen
    ├── CompareError            two runs cannot be compared as asked (a case id twice, a bad k)
    ├── GateError               a release gate cannot be read (a malformed condition, a bad gate file)
    ├── ScoresError             scores cannot be made, read or used (another run's scores, an unknown signal)
    ├── PairsError              pairs cannot be made, read or used (pairs of other runs, runs with repeats)
    ├── EndpointError           a model endpoint refuses every request (a bad key, an unknown model)
    │   └── JudgeError              ... the judge's endpoint
    ├── CaptureError            a capture cannot start or resume (its checkpoint belongs to other settings)
    ├── QueryError              a query of a comparison's cases cannot be answered (an unknown status, a bad page)
    ├── ReviewError             a verdict, a review database or a reviews file cannot be made, read or used
    ├── AgreementError          judges cannot be measured against people's labels (other runs, no label to compare)
    └── EngineError             an engine cannot start (Ray not installed, no cluster at the address)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rag_compare.core.credentials import redact
from rag_compare.core.listing import truncated

__all__ = [
    "AgreementError",
    "CaptureError",
    "CompareError",
    "ConfigError",
    "ContractError",
    "EndpointError",
    "EngineError",
    "GateError",
    "InputFileError",
    "JudgeError",
    "NestingError",
    "PairsError",
    "Problem",
    "QueryError",
    "RagCompareError",
    "ReviewError",
    "RunExistsError",
    "RunFileError",
    "RunIntegrityError",
    "ScoresError",
    "SecretInConfigError",
]

_MAX_VALUE_CHARS = 60
_MAX_PROBLEMS_SHOWN = 50


@dataclass(frozen=True)
class Problem:
    """One broken rule: where it is (row, column), what was found and what was expected.

    ``row`` counts data rows from 1 (the first row after a CSV header is row 1); ``None`` when the
    problem concerns the whole file or a whole column.
    """

    expected: str
    row: int | None = None
    column: str | None = None
    value: str | None = None

    @classmethod
    def at(cls, row: int, column: str, value: object, expected: str) -> Problem:
        """The problem of the cell at data row ``row`` of ``column``, quoting its ``value`` (see ``show_value``)."""
        return cls(expected, row=int(row), column=column, value=show_value(value))

    def __str__(self) -> str:
        where = []
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column is not None:
            where.append(f"column '{self.column}'")
        found = f"got {self.value}; " if self.value is not None else ""
        prefix = ", ".join(where)
        return f"{prefix}: {found}expected {self.expected}" if prefix else f"{found}expected {self.expected}"

    def to_dict(self) -> dict[str, Any]:
        return {"row": self.row, "column": self.column, "value": self.value, "expected": self.expected}


def show_value(value: object) -> str:
    """A short, quoted rendering of an offending value for a message, any credential in it redacted."""
    if value is None:
        return "an empty cell"
    text = repr(redact(value)) if isinstance(value, str) else redact(repr(value))
    if len(text) > _MAX_VALUE_CHARS:
        text = text[: _MAX_VALUE_CHARS - 3] + "..."
    return text


LISTED_AS_JSON = "all are listed with --format json"
"""Where a report (and the command line) says the problems past the first 50 are."""


def problem_lines(problems: Sequence[Problem], listed: str = LISTED_AS_JSON) -> str:
    """Problems as an indented list, the first 50 only, then how many more and where they are ``listed``."""
    lines = [f"  - {problem}\n" for problem in problems[:_MAX_PROBLEMS_SHOWN]]
    suffix = f" ({listed})\n"
    return truncated(lines, _MAX_PROBLEMS_SHOWN, separator="", prefix="  ", suffix=suffix, total=len(problems))


def sorted_problems(problems: Iterable[Problem]) -> list[Problem]:
    """Problems in file order: by row (file-wide ones first), then column."""
    return sorted(problems, key=lambda problem: (problem.row or 0, problem.column or ""))


class RagCompareError(Exception):
    """Root of every error a user can cause; the message names the problem and the fix, and never shows a
    credential (see ``credentials.redact``)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact(arg) if isinstance(arg, str) else arg for arg in args))


class InputFileError(RagCompareError):
    """A file cannot be read as a table: missing, unknown format, not UTF-8, empty, unparsable."""


class ContractError(RagCompareError):
    """A table breaks its contract. Holds every problem found, so all can be fixed in one pass."""

    def __init__(self, source: str, what: str, problems: Sequence[Problem]) -> None:
        self.source = source
        self.what = what
        self.problems = tuple(sorted_problems(problems))
        super().__init__(self.message())

    def message(self, listed: str = "all are in the error's `problems`") -> str:
        """The message, past the first 50 problems saying where all of them are ``listed``."""
        count = len(self.problems)
        noun = "problem" if count == 1 else "problems"
        return (
            f"{self.source}: not a valid {self.what} ({count} {noun}; nothing was loaded):\n"
            f"{problem_lines(self.problems, listed)}"
            "Fix these and run again; the file format is described in the README."
        )


class NestingError(RagCompareError):
    """A document (a JSON or TOML file, a line of JSON lines), a value or a table's column nests lists and
    objects deeper than rag-compare reads (``core.nesting.MAX_DEPTH``)."""


class ConfigError(RagCompareError):
    """A run config cannot be read, or holds a value that cannot be stored."""


class SecretInConfigError(ConfigError):
    """A config key or value looks like a credential; credentials never enter a run file."""


class RunFileError(RagCompareError):
    """A frozen run file cannot be written or read, or a report cannot be written."""


class RunExistsError(RunFileError):
    """The output path already exists; frozen runs are never overwritten."""


class RunIntegrityError(RunFileError):
    """A frozen run file does not match its fingerprint: changed or cut short after freezing."""


class CompareError(RagCompareError):
    """Two runs cannot be compared as asked: a case id appears twice in a run, or k is not usable."""


class GateError(RagCompareError):
    """A release gate cannot be read: an unknown status or signal, a malformed condition, a bad `alpha`
    or gate file."""


class ScoresError(RagCompareError):
    """Scores cannot be made, read or used: scores of another run, an unknown signal, a bad imported file."""


class PairsError(RagCompareError):
    """Pairs cannot be made, read or used: pairs of other runs, runs with repeats, a changed pairs file."""


class EndpointError(RagCompareError):
    """A model endpoint refuses the requests themselves (a bad key, an unknown model): no request can succeed."""


class JudgeError(EndpointError):
    """The judge's endpoint refuses the requests themselves (a bad key, an unknown model): no case can be judged."""


class CaptureError(RagCompareError):
    """A capture cannot start or resume: its checkpoint belongs to other settings or another corpus."""


class QueryError(RagCompareError):
    """A query over a comparison's cases asks for what it cannot: an unknown status, signal or sort, a page
    out of range, a parameter given twice or not known."""


class ReviewError(RagCompareError):
    """A verdict, a review database or a reviews file cannot be made, read or used: a malformed verdict, a file
    that is no review database, a database of a newer rag-compare, a changed reviews file."""


class AgreementError(RagCompareError):
    """Judges cannot be measured against people's labels: labels of other runs, a judge without the signal a
    label maps to, no label any judge can be compared on."""


class EngineError(RagCompareError):
    """An engine cannot start: Ray is not installed, or there is no Ray cluster at the address given."""
