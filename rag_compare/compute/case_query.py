"""Pages of a comparison's cases, filtered, searched and sorted: what the review server lists.

``CaseIndex.of`` builds, once per comparison, the frame every query runs over: the cases in ``case_id``
order, each signal's delta, whether a side's repeats disagree, and the texts search reads (the question,
the language and both answers, read back from the runs a slice of cases at a time). ``CaseIndex.query``
answers a ``CaseQuery`` with a page of those rows, how many cases match, how many of them per status, and
the values each facet takes, in whole-column Polars: a query over a million cases never loops over them.

A signal's *delta* on a case is ``candidate_<signal> - baseline_<signal>`` (a flag counts 0 or 1), null
when either side has no value; with a pairwise judge's verdicts, ``preferred`` is the case's preference
(the candidate preferred +1, the baseline -1, a tie 0, else null). A signal *moved up* on a case when its
delta is above the comparison's tolerance, *down* when it is below minus the tolerance. Up is a number
going up, not a case getting better: ``abstained`` up is worse.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, TypeVar

import polars as pl

from rag_compare.compute.case_status import CASE_STATUSES
from rag_compare.compute.case_texts import TextColumns
from rag_compare.core.contract import ANSWERABILITY, LANGUAGE
from rag_compare.core.errors import QueryError
from rag_compare.core.listing import truncated
from rag_compare.core.rows import count_by
from rag_compare.core.signals import STAGES

if TYPE_CHECKING:
    from rag_compare.compute.comparison import Comparison

__all__ = [
    "FACETS",
    "FLAKY",
    "MAX_PAGE_SIZE",
    "MAX_TEXT_CHARS",
    "PARAMETERS",
    "SEARCH_COLUMNS",
    "CaseIndex",
    "CaseQuery",
    "QueryResult",
    "delta_column",
    "delta_expressions",
]

Direction = Literal["up", "down"]
DIRECTIONS: tuple[Direction, ...] = ("up", "down")
SEARCH_COLUMNS = ("question", "language", "baseline_answer", "candidate_answer")
"""The texts beside each case of the index: what search reads and a list shows."""
SEARCHED = ("case_id", "question", "baseline_answer", "candidate_answer")
"""What a query's ``text`` is looked for in."""
FACETS = ("category", "answerability", "language", "stage")
MAX_PAGE_SIZE = 500
MAX_TEXT_CHARS = 1_000
PARAMETERS = ("status", "category", "answerability", "language", "stage", "moved", "q", "sort", "page", "page_size")
"""The query-string parameters of ``CaseQuery.from_params``."""
FLAKY = "flaky"
"""The index's column saying whether either side's repeats of the case disagree (``Comparison.flaky``)."""
_PREFERENCE = {"candidate": 1.0, "baseline": -1.0, "tie": 0.0}
_READ = TextColumns(("question", LANGUAGE), ("answer",))
"""The texts an index reads of each case: what search reads and a list shows."""
_SLICE_ROWS = 100_000
"""Cases whose texts are read at a time when an index is built."""
_T = TypeVar("_T")
_REGEX_SPECIAL = frozenset("\\.+*?()|[]{}^$#&-~")


def delta_column(signal: str) -> str:
    """The index's column holding ``signal``'s delta."""
    return f"delta_{signal}"


def delta_expressions(signals: Iterable[str], *, preferred: bool) -> list[pl.Expr]:
    """Each of ``signals``' delta over a frame of ``Comparison.cases``' columns (named by ``delta_column``),
    and with ``preferred`` the preference's (see the module)."""
    deltas = [
        (pl.col(f"candidate_{name}").cast(pl.Float64) - pl.col(f"baseline_{name}").cast(pl.Float64)).alias(
            delta_column(name)
        )
        for name in signals
    ]
    if preferred:
        preference = pl.col("preferred").cast(pl.String).replace_strict(_PREFERENCE, default=None)
        deltas.append(preference.cast(pl.Float64).alias(delta_column("preferred")))
    return deltas


@dataclass(frozen=True)
class CaseQuery:
    """Which cases to list, in what order, and which page of them.

    Every filter given must hold: a case's status is one of ``statuses`` (none given: any), likewise its category,
    answerability, language and stage (where it changed, see ``case_status``); every ``(signal, direction)`` of
    ``moved`` moved that way; and ``text``, when not empty, is found (case-insensitive, as written, not a pattern)
    in its id, its question or either answer. ``sort`` is ``case_id``, or ``delta:<signal>:asc`` /
    ``delta:<signal>:desc``: by that delta, cases without one last, ties by ``case_id``. ``page`` counts from 1,
    ``page_size`` cases each.
    """

    statuses: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    answerabilities: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    stages: tuple[str, ...] = ()
    moved: tuple[tuple[str, Direction], ...] = ()
    text: str = ""
    sort: str = "case_id"
    page: int = 1
    page_size: int = 50

    def __post_init__(self) -> None:
        if isinstance(self.page, bool) or not isinstance(self.page, int) or self.page < 1:
            raise QueryError(f"`page` must be a whole number from 1; got {self.page!r}.")
        if isinstance(self.page_size, bool) or not isinstance(self.page_size, int) or self.page_size < 1:
            raise QueryError(f"`page_size` must be a whole number from 1 to {MAX_PAGE_SIZE}; got {self.page_size!r}.")
        if self.page_size > MAX_PAGE_SIZE:
            raise QueryError(f"`page_size` must be a whole number from 1 to {MAX_PAGE_SIZE}; got {self.page_size!r}.")
        if len(self.text) > MAX_TEXT_CHARS:
            raise QueryError(f"`text` is {len(self.text)} characters long; search for at most {MAX_TEXT_CHARS}.")
        for name in ("statuses", "categories", "answerabilities", "languages", "stages", "moved", "text", "sort"):
            value = getattr(self, name)
            texts = [value] if isinstance(value, str) else [text for item in value for text in _texts(item)]
            if not all(_is_text(text) for text in texts):
                raise QueryError(f"`{name}` holds a value that is not text (a lone surrogate): {value!r:.60}.")
        for signal, direction in self.moved:
            if direction not in DIRECTIONS:
                raise QueryError(f"`moved`: {signal!r} moved {direction!r}; a signal moves 'up' or 'down'.")
        _sort_key(self.sort)

    @property
    def sort_delta(self) -> tuple[str, bool] | None:
        """The signal ``sort`` orders by and whether descending; ``None`` for ``case_id`` order."""
        return _sort_key(self.sort)

    @classmethod
    def from_params(
        cls, params: Mapping[str, Sequence[str]], *, signals: Sequence[str], statuses: Sequence[str] = CASE_STATUSES
    ) -> CaseQuery:
        """The query a URL's query string asks for, its values by parameter (each may be given several
        times): ``status``, ``category``, ``answerability``, ``language``, ``stage`` (each a value a case may have),
        ``moved`` (``<signal>:up`` or ``<signal>:down``), ``q`` (the search text), ``sort``, ``page`` and
        ``page_size``. An empty value is no filter. ``signals`` are those a query may name (``CaseIndex.signals``).
        Raises ``QueryError``, naming the parameter, for an unknown parameter, status, answerability,
        stage, signal or sort, a page that is not a whole number from 1, a page size over ``MAX_PAGE_SIZE``, or a
        parameter of one value given twice."""
        unknown = sorted(set(params) - set(PARAMETERS))
        if unknown:
            raise QueryError(f"unknown parameter `{unknown[0]}`; the parameters are {', '.join(PARAMETERS)}.")
        given = {name: tuple(value for value in params.get(name, ()) if value != "") for name in PARAMETERS}
        for name, values in given.items():
            if not all(_is_text(value) for value in values):
                raise QueryError(f"`{name}` holds a value that is not text (a lone surrogate).")
        for name in ("q", "sort", "page", "page_size"):
            if len(given[name]) > 1:
                raise QueryError(f"`{name}` was given {len(given[name])} times; give it once.")
        _check_known("status", given["status"], statuses, "statuses")
        _check_known("answerability", given["answerability"], ANSWERABILITY, "answerability labels")
        _check_known("stage", given["stage"], STAGES, "stages")
        if given["q"] and len(given["q"][0]) > MAX_TEXT_CHARS:
            raise QueryError(f"`q` is {len(given['q'][0])} characters long; search for at most {MAX_TEXT_CHARS}.")
        query = cls(
            statuses=_unique(given["status"]),
            categories=_unique(given["category"]),
            answerabilities=_unique(given["answerability"]),
            languages=_unique(given["language"]),
            stages=_unique(given["stage"]),
            moved=_unique(_moved(value) for value in given["moved"]),
            text=next(iter(given["q"]), "").strip(),
            sort=next(iter(given["sort"]), "case_id"),
            page=_whole("page", next(iter(given["page"]), "1")),
            page_size=_whole("page_size", next(iter(given["page_size"]), "50")),
        )
        query.check(signals, statuses)
        return query

    def check(self, signals: Sequence[str], statuses: Sequence[str] = CASE_STATUSES) -> None:
        """Refuse (``QueryError``) a status not of ``statuses`` or a signal (moved or sorted by) not of ``signals``."""
        _check_known("statuses", self.statuses, statuses, "statuses")
        _check_known("moved", [signal for signal, _ in self.moved], signals, "signals of this comparison")
        sorted_by = self.sort_delta
        if sorted_by is not None:
            _check_known("sort", [sorted_by[0]], signals, "signals of this comparison")


@dataclass(frozen=True)
class QueryResult:
    """A page of the cases a query matched: ``rows`` (the columns of ``Comparison.cases``, then the
    texts of ``SEARCH_COLUMNS``, each delta and ``flaky``), ``total`` cases matched, ``counts`` per status
    of the cases every filter but the status one matched (every status of ``CASE_STATUSES``, zeros kept:
    what choosing that status would list), and ``facets``: the values the comparison's cases take of each
    of ``FACETS``, sorted."""

    rows: pl.DataFrame
    total: int
    counts: Mapping[str, int]
    facets: Mapping[str, tuple[str, ...]]
    case_columns: tuple[str, ...] = field(repr=False)

    @property
    def cases(self) -> pl.DataFrame:
        """The page's rows in ``Comparison.cases``' columns only."""
        return self.rows.select(self.case_columns)

    @property
    def texts(self) -> pl.DataFrame:
        """``case_id`` and the texts of ``SEARCH_COLUMNS`` of the page's rows."""
        return self.rows.select("case_id", *SEARCH_COLUMNS)


def _texts(item: str | tuple[str, str]) -> tuple[str, ...]:
    return (item,) if isinstance(item, str) else item


def _is_text(value: str) -> bool:
    """Whether ``value`` is text that UTF-8 can hold (no lone surrogate)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _sort_key(sort: str) -> tuple[str, bool] | None:
    if sort == "case_id":
        return None
    kind, _, rest = sort.partition(":")
    signal, _, order = rest.rpartition(":")
    if kind != "delta" or not signal or order not in ("asc", "desc"):
        raise QueryError(
            f"`sort`: unknown order {sort!r}; sort by 'case_id', 'delta:<signal>:asc' or 'delta:<signal>:desc'."
        )
    return signal, order == "desc"


def _check_known(name: str, values: Iterable[str], known: Sequence[str], what: str) -> None:
    unknown = [value for value in values if value not in known]
    if unknown:
        raise QueryError(f"`{name}`: unknown value {unknown[0]!r}; the {what} are {truncated(list(known), 20)}.")


def _moved(value: str) -> tuple[str, Direction]:
    signal, _, direction = value.rpartition(":")
    if not signal or direction not in DIRECTIONS:
        raise QueryError(f"`moved`: {value!r} is not '<signal>:up' or '<signal>:down'.")
    return signal, direction


def _whole(name: str, value: str) -> int:
    text = value.strip()
    if not text.isascii() or not text.isdigit() or len(text) > 12:
        raise QueryError(f"`{name}` must be a whole number; got {value[:40]!r}.")
    return int(text)


def _unique(values: Iterable[_T]) -> tuple[_T, ...]:
    return tuple(dict.fromkeys(values))


def _pattern(text: str) -> str:
    """A regular expression matching ``text`` as written, in any case."""
    return "(?i)" + "".join(f"\\{char}" if char in _REGEX_SPECIAL else char for char in text)


class CaseIndex:
    """A comparison's cases as the queries read them (see the module): ``frame``, in ``case_id`` order;
    ``signals``, those with a delta; ``tolerance``, beyond which a delta moved; ``facets``, each of
    ``FACETS``' values; ``case_columns``, the columns of ``Comparison.cases``."""

    def __init__(
        self, frame: pl.DataFrame, *, signals: Sequence[str], tolerance: float, case_columns: Sequence[str]
    ) -> None:
        self.frame = frame if frame.get_column("case_id").is_sorted() else frame.sort("case_id", maintain_order=True)
        self.signals = tuple(signals)
        self.tolerance = tolerance
        self.case_columns = tuple(case_columns)
        self.facets = {
            name: tuple(frame.get_column(name).drop_nulls().cast(pl.String).unique().sort().to_list())
            for name in FACETS
        }
        self._ids = self.frame.get_column("case_id")

    @classmethod
    def of(cls, comparison: Comparison, *, slice_rows: int = _SLICE_ROWS) -> CaseIndex:
        """The index of ``comparison``'s cases; their texts are read from the runs ``slice_rows`` cases at a
        time (``CaseTexts.beside``), each kept only in the columns search needs. Raises ``CompareError``
        when a run file has changed since it was compared."""
        keep = [*comparison.case_table.columns, *SEARCH_COLUMNS]
        if comparison.n_cases:
            slices = comparison.texts.beside(comparison.case_table, slice_rows, _READ)
            frame = pl.concat([part.select(keep) for part in slices])
        else:
            cases = comparison.cases
            texts = comparison.texts.of(cases.get_column("case_id"), _READ).drop("case_id")
            frame = pl.concat([cases, texts], how="horizontal").select(keep)
        preferred = "preferred" in frame.columns
        signals = [signal.name for signal in comparison.signals]
        flaky = comparison.flaky.get_column("case_id").implode()
        frame = frame.with_columns(
            *delta_expressions(signals, preferred=preferred), pl.col("case_id").is_in(flaky).alias(FLAKY)
        )
        names = [*signals, "preferred"] if preferred else signals
        return cls(frame, signals=names, tolerance=comparison.tolerance, case_columns=comparison.case_table.columns)

    @property
    def height(self) -> int:
        return self.frame.height

    def has(self, case_id: str) -> bool:
        """Whether the comparison has a case of this id."""
        return bool(self.positions([case_id]).len())

    def rows(self, case_ids: Sequence[str]) -> pl.DataFrame:
        """The index's rows of ``case_ids``, in that order; ids the comparison lacks are left out."""
        return self.frame[self.positions(case_ids)]

    def positions(self, case_ids: Sequence[str]) -> pl.Series:
        """The rows of ``case_ids`` that the comparison has, in that order (an id that is not text is none)."""
        ids = pl.Series("case_id", [case_id for case_id in case_ids if _is_text(case_id)], dtype=pl.String)
        found = self._ids.search_sorted(ids, side="left").alias("row")
        inside = found < self.height
        found, ids = found.filter(inside), ids.filter(inside)
        return found.filter(self._ids.gather(found) == ids)

    def query(self, query: CaseQuery) -> QueryResult:
        """The page of cases ``query`` asks for (see ``QueryResult``). Raises ``QueryError`` for a status or
        signal the comparison does not know."""
        query.check(self.signals)
        others = self.matches(replace(query, statuses=())).fill_null(False)
        status = pl.col("status").cast(pl.String)
        chosen = status.is_in(list(query.statuses)) if query.statuses else pl.lit(True)
        masks = self.frame.select(others.alias("others"), (others & chosen).alias("mask"))
        matching = masks.get_column("mask").arg_true()
        counts = count_by(self.frame.select(status.filter(masks.get_column("others"))), "status", CASE_STATUSES)
        sorted_by = query.sort_delta
        if sorted_by is not None:
            signal, descending = sorted_by
            keys = pl.DataFrame(
                {"delta": self.frame.get_column(delta_column(signal)).gather(matching), "row": matching}
            )
            ordered = keys.sort("delta", descending=descending, nulls_last=True, maintain_order=True)
            matching = ordered.get_column("row")  # ties stay in case_id order
        offset = (query.page - 1) * query.page_size
        page = matching.slice(offset, query.page_size) if offset < matching.len() else matching.clear()
        return QueryResult(self.frame[page], matching.len(), counts, self.facets, self.case_columns)

    def matches(self, query: CaseQuery) -> pl.Expr:
        """Whether a case matches every filter of ``query`` (true where none is given)."""
        conditions = [
            pl.col(column).cast(pl.String).is_in(list(values))
            for column, values in (
                ("status", query.statuses),
                ("category", query.categories),
                ("answerability", query.answerabilities),
                ("language", query.languages),
                ("stage", query.stages),
            )
            if values
        ]
        conditions.extend(self.moved(signal, direction) for signal, direction in query.moved)
        if query.text:
            pattern = _pattern(query.text)
            found = [pl.col(column).str.contains(pattern).fill_null(False) for column in SEARCHED]
            conditions.append(pl.any_horizontal(found))
        return pl.all_horizontal(conditions) if conditions else pl.repeat(True, pl.len())

    def moved(self, signal: str, direction: Direction) -> pl.Expr:
        """Whether ``signal``'s delta went ``direction`` beyond the tolerance (false without a delta)."""
        delta = pl.col(delta_column(signal))
        beyond = delta > self.tolerance if direction == "up" else delta < -self.tolerance
        return beyond.fill_null(False)
