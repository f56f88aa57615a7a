"""Pages of a comparison's cases: the hand-made comparison filtered, searched, sorted and paged, with the
expected cases written beside each query; the parameters of a query string checked, each refusal naming
its parameter; and, over indexes drawn at random, paging that lists every matching case once, counts that
add up to the total, and filters that commute."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_compare import QueryError, compare, freeze_run
from rag_compare.compute.case_query import MAX_PAGE_SIZE, CaseIndex, CaseQuery, delta_column
from rag_compare.compute.case_status import CASE_STATUSES
from rag_compare.io.pairs import judge_pairs
from tests.helpers.case_index import index_of
from tests.helpers.data import HANDMADE_RUNS, PAYLOAD, ROOT, SCRIPT
from tests.helpers.pairs import BASELINE, CANDIDATE, CORPUS, ScriptedPairJudge

PASSAGES = ROOT / "corpora" / "handbook_passages.csv"
RUNS = [HANDMADE_RUNS / f"{side}.arrow" for side in ("baseline", "candidate")]


@pytest.fixture(scope="module")
def index() -> CaseIndex:
    return CaseIndex.of(compare(*RUNS, passages=PASSAGES), slice_rows=7)


def ids(index: CaseIndex, query: CaseQuery) -> list[str]:
    return index.query(query).rows.get_column("case_id").to_list()


def params(index: CaseIndex, **given: str | Sequence[str]) -> CaseQuery:
    values = {name: [value] if isinstance(value, str) else list(value) for name, value in given.items()}
    return CaseQuery.from_params(values, signals=index.signals)


def test_the_index_holds_every_case_in_id_order_with_its_texts_deltas_and_facets(index: CaseIndex) -> None:
    comparison = compare(*RUNS, passages=PASSAGES)
    cases = comparison.cases
    assert index.frame.select(cases.columns).equals(cases)
    texts = comparison.with_texts(cases)
    for name in ("question", "baseline_answer", "candidate_answer"):
        assert index.frame.get_column(name).equals(texts.get_column(name))
    row = index.rows(["meal-allowance-client-meal@2026-01"]).row(0, named=True)
    assert (row["delta_recall"], row["delta_grounded"], row["delta_full_coverage"]) == (0.5, -1.0, 1.0)
    assert index.rows(["leave-carryover@2025-01"]).item(0, "delta_recall") is None  # failed in the candidate
    assert index.rows(["sabbatical@2026-01"]).item(0, "delta_abstention_correct") == -1.0
    assert index.signals == tuple(signal.name for signal in comparison.signals)
    assert index.facets == {
        "category": ("distractor", "rule", "rule_exception", "unanswerable", "version_conflict"),
        "answerability": ("answerable", "conflict", "unanswerable"),
        "language": (),
        "stage": ("answer", "context", "failure"),
    }


def test_the_first_page_is_the_first_cases_by_id_and_the_counts_are_the_comparisons(index: CaseIndex) -> None:
    result = index.query(CaseQuery(page_size=3))
    assert result.rows.get_column("case_id").to_list() == [
        "bike-lease@2025-01",
        "bike-lease@2026-01",
        "ceo-salary@2026-01",
    ]
    assert result.total == 34
    assert {status: count for status, count in result.counts.items() if count} == {
        "missing_in_candidate": 1,
        "failed_in_baseline": 1,
        "failed_in_candidate": 2,
        "improved": 5,
        "regressed": 4,
        "mixed": 3,
        "unchanged": 18,
    }
    assert list(result.counts) == list(CASE_STATUSES)
    assert result.cases.columns == list(index.case_columns)
    assert result.texts.columns == ["case_id", "question", "language", "baseline_answer", "candidate_answer"]


def test_statuses_sorted_by_a_delta_descending_put_nulls_last_and_ties_by_id(index: CaseIndex) -> None:
    result = index.query(params(index, status=["regressed", "mixed"], sort="delta:recall:desc"))
    assert result.rows.get_column("case_id").to_list() == [
        "equipment-budget@2026-01",  # recall +0.5
        "meal-allowance-client-meal@2026-01",
        "parental-leave-weeks@2025-01",
        "hotel-approval@2026-01",  # 0
        "parental-leave-weeks@2026-01",
        "remote-abroad-days@2026-01",
        "sabbatical@2026-01",  # unanswerable: no recall
    ]
    assert (result.total, result.counts["regressed"], result.counts["mixed"]) == (7, 4, 3)
    assert result.counts["improved"] == 5  # what choosing it would list, beside the statuses chosen


def test_ascending_sort_by_grounded_puts_the_largest_drop_first(index: CaseIndex) -> None:
    found = ids(index, params(index, sort="delta:grounded:asc", page_size="3"))
    assert found == [
        "meal-allowance-client-meal@2026-01",
        "parental-leave-weeks@2025-01",
        "parental-leave-weeks@2026-01",
    ]


def test_moved_filters_must_all_hold(index: CaseIndex) -> None:
    assert ids(index, params(index, moved="grounded:down")) == [
        "meal-allowance-client-meal@2026-01",
        "parental-leave-weeks@2025-01",
        "parental-leave-weeks@2026-01",
    ]
    assert ids(index, params(index, moved=["grounded:down", "recall:up"])) == [
        "meal-allowance-client-meal@2026-01",
        "parental-leave-weeks@2025-01",
    ]
    assert ids(index, params(index, moved="grounded:up")) == ["mileage-rate@2026-01"]
    assert ids(index, params(index, moved="context_coverage:down")) == []


def test_category_and_answerability_filter_and_several_values_are_either(index: CaseIndex) -> None:
    assert ids(index, params(index, category="version_conflict")) == [
        "leave-carryover@2026-01",
        "mileage-rate@2026-01",
    ]
    found = ids(index, params(index, answerability=["unanswerable", "conflict"], category="unanswerable"))
    assert found == [
        "bike-lease@2025-01",
        "ceo-salary@2026-01",
        "pension-match@2025-01",
        "sabbatical@2026-01",
        "stock-options@2026-01",
    ]


def test_the_stage_filters_where_cases_changed_beside_the_status(index: CaseIndex) -> None:
    # handmade: regressed 4 at the answer; mixed 3, 2 at the answer and equipment-budget@2026-01 at the context.
    assert ids(index, params(index, stage="context")) == ["equipment-budget@2026-01"]
    at_answer = index.query(params(index, stage="answer"))
    assert {status: count for status, count in at_answer.counts.items() if count} == {
        "improved": 5,
        "regressed": 4,
        "mixed": 2,
    }
    assert ids(index, params(index, stage=["answer", "context"], status="mixed")) == [
        "equipment-budget@2026-01",
        "meal-allowance-client-meal@2026-01",
        "parental-leave-weeks@2025-01",
    ]
    failures = index.query(CaseQuery(stages=("failure",)))
    assert failures.total == 4
    with pytest.raises(QueryError, match="`stage`: unknown value 'model'; the stages are retrieval_rank"):
        params(index, stage="model")


def test_search_is_literal_and_case_insensitive_over_ids_questions_and_both_answers(index: CaseIndex) -> None:
    texts = index.frame.select("case_id", "question", "baseline_answer", "candidate_answer").rows()
    for needle in ("EURO", "hotel-", "120 euros per night", "@2025", "Paid parental"):
        expected = [row[0] for row in texts if any(needle.lower() in (text or "").lower() for text in row)]
        assert expected, needle
        assert ids(index, CaseQuery(text=needle, page_size=MAX_PAGE_SIZE)) == expected
    assert ids(index, CaseQuery(text="120 EUROS PER NIGHT")) == ["hotel-approval@2026-01"]  # the candidate's answer
    assert ids(index, CaseQuery(text="hotel.cap")) == []  # a dot is a dot
    assert ids(index, CaseQuery(text="(")) == ids(index, CaseQuery(text="(", page_size=MAX_PAGE_SIZE))


def test_pages_cut_the_matching_cases_and_a_page_past_the_last_is_empty(index: CaseIndex) -> None:
    everything = ids(index, CaseQuery(page_size=MAX_PAGE_SIZE))
    pages = [ids(index, CaseQuery(page=page, page_size=10)) for page in (1, 2, 3, 4)]
    assert [len(page) for page in pages] == [10, 10, 10, 4]
    assert [case_id for page in pages for case_id in page] == everything
    past = index.query(CaseQuery(page=99, page_size=10))
    assert (past.rows.height, past.total) == (0, 34)
    assert past.rows.columns == index.frame.columns
    assert index.query(CaseQuery(page=10**9, page_size=MAX_PAGE_SIZE)).rows.height == 0


def test_has_and_rows_find_cases_by_id_only(index: CaseIndex) -> None:
    assert index.has("sabbatical@2026-01")
    assert not any(
        index.has(case_id) for case_id in ("", "sabbatical", "sabbatical@2026-01 ", "zzz", "SABBATICAL@2026-01")
    )
    found = index.rows(["stock-options@2026-01", "nope", "bike-lease@2025-01", "stock-options@2026-01"])
    assert found.get_column("case_id").to_list() == [
        "stock-options@2026-01",
        "bike-lease@2025-01",
        "stock-options@2026-01",
    ]
    assert index.rows([]).height == 0
    assert not index.has("\ud800")  # not text: no case
    assert index.rows(["\udcff", "bike-lease@2025-01"]).get_column("case_id").to_list() == ["bike-lease@2025-01"]


def test_the_preference_is_a_delta_of_plus_one_minus_one_or_zero() -> None:
    baseline, candidate = freeze_run(BASELINE, CORPUS, {"name": "b"}), freeze_run(CANDIDATE, CORPUS, {"name": "c"})
    index = CaseIndex.of(compare(baseline, candidate, pairs=judge_pairs(baseline, candidate, ScriptedPairJudge())))
    assert index.signals[-1] == "preferred"
    preference = dict(index.frame.select("case_id", delta_column("preferred")).iter_rows())
    assert preference == {
        "a_better@v1": 1.0,
        "b_worse@v1": -1.0,
        "c_tie@v1": 0.0,
        "d_first@v1": None,  # inconsistent
        "e_same@v1": 0.0,
        "f_failed@v1": None,
        "g_missing@v1": None,
        "h_judgefail@v1": None,
        "i_halftie@v1": None,
    }
    assert ids(index, params(index, moved="preferred:up")) == ["a_better@v1"]
    assert ids(index, params(index, sort="delta:preferred:asc"))[:3] == ["b_worse@v1", "c_tie@v1", "e_same@v1"]


def test_the_streaming_engine_gives_the_same_index() -> None:
    held = CaseIndex.of(compare(*RUNS, passages=PASSAGES))
    spilled = CaseIndex.of(compare(*RUNS, passages=PASSAGES, engine="streaming", buckets=3), slice_rows=5)
    assert spilled.frame.equals(held.frame)


def test_an_index_of_cases_in_any_order_holds_them_in_id_order() -> None:
    index = index_of([{"case_id": "b", "recall": 1.0}, {"case_id": "c"}, {"case_id": "a", "recall": 1.0}])
    assert index.frame.get_column("case_id").to_list() == ["a", "b", "c"]
    assert [index.has(case_id) for case_id in ("a", "b", "c", "d")] == [True, True, True, False]
    assert ids(index, CaseQuery(sort="delta:recall:desc")) == ["a", "b", "c"]


def test_a_delta_moved_only_beyond_the_tolerance() -> None:
    deltas = {"a": 0.25, "b": 0.2500001, "c": -0.25, "d": -0.2500001, "e": 0.0, "f": None}
    index = index_of([{"case_id": case_id, "recall": delta} for case_id, delta in deltas.items()], tolerance=0.25)
    assert ids(index, CaseQuery(moved=(("recall", "up"),))) == ["b"]
    assert ids(index, CaseQuery(moved=(("recall", "down"),))) == ["d"]


def test_an_empty_comparison_answers_every_query_with_nothing() -> None:
    index = index_of([])
    result = index.query(CaseQuery(statuses=("regressed",), text="x", sort="delta:recall:desc"))
    assert (result.rows.height, result.total, sum(result.counts.values())) == (0, 0, 0)
    assert not index.has("a")


def test_hostile_text_is_searched_as_text(hostile: Any) -> None:
    index = CaseIndex.of(hostile)
    assert ids(index, CaseQuery(text=SCRIPT.upper())) == ["a@v1", f"b{SCRIPT}@v1"]  # the question; the id
    assert ids(index, CaseQuery(text="[link](javascript:alert(1)) `tick`\nSECOND")) == ["a@v1"]  # the answer
    assert ids(index, CaseQuery(text="**")) == ["a@v1"]
    assert ids(index, CaseQuery(text="Q?")) == [f"b{SCRIPT}@v1", "c@v1"]
    assert index.has(f"b{SCRIPT}@v1")
    assert PAYLOAD in index.rows(["a@v1"]).item(0, "question")


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"stauts": ["regressed"]}, "unknown parameter `stauts`; the parameters are status, category"),
        ({"status": ["regresed"]}, "`status`: unknown value 'regresed'; the statuses are missing_in_baseline"),
        ({"answerability": ["maybe"]}, "`answerability`: unknown value 'maybe'"),
        ({"moved": ["recall"]}, "`moved`: 'recall' is not '<signal>:up' or '<signal>:down'"),
        ({"moved": ["recall:sideways"]}, "`moved`: 'recall:sideways' is not '<signal>:up'"),
        ({"moved": ["helpfulness:up"]}, "`moved`: unknown value 'helpfulness'; the signals of this comparison are"),
        ({"sort": ["recall"]}, "`sort`: unknown order 'recall'; sort by 'case_id', 'delta:<signal>:asc'"),
        ({"sort": ["delta:recall:up"]}, "`sort`: unknown order 'delta:recall:up'"),
        ({"sort": ["delta:nope:asc"]}, "`sort`: unknown value 'nope'"),
        ({"sort": ["case_id", "delta:recall:asc"]}, "`sort` was given 2 times; give it once"),
        ({"page": ["0"]}, "`page` must be a whole number from 1; got 0"),
        ({"page": ["-1"]}, "`page` must be a whole number; got '-1'"),
        ({"page": ["2.5"]}, "`page` must be a whole number; got '2.5'"),
        ({"page": ["9" * 5000]}, "`page` must be a whole number; got '9999"),
        ({"page": ["\u0661"]}, "`page` must be a whole number; got '\u0661'"),  # an Arabic-Indic one
        ({"page_size": ["501"]}, "`page_size` must be a whole number from 1 to 500; got 501"),
        ({"page_size": ["0"]}, "`page_size` must be a whole number from 1 to 500; got 0"),
        ({"q": ["x" * 1001]}, "`q` is 1001 characters long; search for at most 1000"),
        ({"q": ["a", "b"]}, "`q` was given 2 times; give it once"),
        ({"language": ["\udcff"]}, "`language` holds a value that is not text (a lone surrogate)"),
    ],
)
def test_a_bad_parameter_is_refused_naming_it(index: CaseIndex, given: Mapping[str, list[str]], message: str) -> None:
    with pytest.raises(QueryError) as raised:
        CaseQuery.from_params(given, signals=index.signals)
    assert message in str(raised.value)


def test_parameters_become_the_query_and_empty_values_filter_nothing(index: CaseIndex) -> None:
    query = params(
        index,
        status=["regressed", "", "regressed"],
        category="",
        moved=["recall:up", "recall:up"],
        q="  euro  ",
        sort="delta:recall:asc",
        page=" 2 ",
        page_size="20",
    )
    assert query == CaseQuery(
        statuses=("regressed",), moved=(("recall", "up"),), text="euro", sort="delta:recall:asc", page=2, page_size=20
    )
    assert CaseQuery.from_params({}, signals=()) == CaseQuery()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"page": 0}, "`page` must be a whole number from 1"),
        ({"page": True}, "`page` must be a whole number from 1"),
        ({"page_size": 501}, "`page_size` must be a whole number from 1 to 500"),
        ({"text": "x" * 1001}, "`text` is 1001 characters long"),
        ({"moved": (("recall", "left"),)}, "`moved`: 'recall' moved 'left'"),
        ({"sort": "status"}, "`sort`: unknown order 'status'"),
        ({"text": "\ud800"}, "`text` holds a value that is not text"),
        ({"categories": ("rule", "\ud800")}, "`categories` holds a value that is not text"),
    ],
)
def test_a_query_made_in_python_is_checked_too(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(QueryError, match=message.replace("(", r"\(")):
        CaseQuery(**fields)


def test_an_index_refuses_a_query_naming_what_it_lacks(index: CaseIndex) -> None:
    with pytest.raises(QueryError, match="`statuses`: unknown value 'fine'"):
        index.query(CaseQuery(statuses=("fine",)))
    with pytest.raises(QueryError, match="`sort`: unknown value 'helpfulness'"):
        index.query(CaseQuery(sort="delta:helpfulness:desc"))


STATUSES = ("regressed", "improved", "unchanged", "failed_in_candidate")
DELTAS = st.one_of(st.none(), st.sampled_from([-1.0, -0.5, -1e-12, 0.0, 1e-12, 0.25, 1.0]))
CASES = st.lists(
    st.fixed_dictionaries(
        {
            "case_id": st.text(alphabet="ab@é1", min_size=1, max_size=4),
            "status": st.sampled_from(STATUSES),
            "category": st.sampled_from(["rule", "distractor", None]),
            "question": st.sampled_from(["Is it A?", "is it b?", None]),
            "recall": DELTAS,
            "grounded": DELTAS,
        }
    ),
    max_size=40,
    unique_by=lambda case: case["case_id"],
)
QUERIES = st.builds(
    CaseQuery,
    statuses=st.lists(st.sampled_from(STATUSES), max_size=2, unique=True).map(tuple),
    categories=st.lists(st.sampled_from(["rule", "distractor"]), max_size=1).map(tuple),
    moved=st.lists(st.tuples(st.sampled_from(["recall", "grounded"]), st.sampled_from(["up", "down"])), max_size=2).map(
        tuple
    ),
    text=st.sampled_from(["", "A", "b?", "@", "é"]),
    sort=st.sampled_from(["case_id", "delta:recall:asc", "delta:grounded:desc"]),
    page_size=st.integers(1, 7),
)


def matched(index: CaseIndex, query: CaseQuery) -> list[str]:
    """Every case ``query`` matches, in its order, page by page."""
    found: list[str] = []
    for page in range(1, index.height + 2):
        rows = ids(index, CaseQuery(**{**query.__dict__, "page": page}))
        if not rows:
            return found
        found.extend(rows)
    return found


@given(CASES, QUERIES)
def test_paging_lists_every_matching_case_once_in_order_and_counts_add_up(
    cases: list[dict[str, Any]], query: CaseQuery
) -> None:
    index = index_of(cases)
    result = index.query(query)
    found = matched(index, query)
    assert len(found) == len(set(found)) == result.total
    by_id = {case["case_id"]: case for case in cases}
    expected = [case_id for case_id in sorted(by_id) if _matches(by_id[case_id], query)]
    assert sorted(found) == expected
    any_status = [case for case in cases if _matches(case, replace(query, statuses=()))]
    for status in STATUSES:
        assert result.counts[status] == sum(case["status"] == status for case in any_status)
    if query.sort_delta is not None:
        signal, descending = query.sort_delta
        keys = [(by_id[case_id][signal] is None, by_id[case_id][signal]) for case_id in found]
        with_values = [value for missing, value in keys if not missing]
        assert with_values == sorted(with_values, reverse=descending)
        assert [missing for missing, _ in keys] == sorted(missing for missing, _ in keys)


@given(CASES, QUERIES, QUERIES)
def test_filters_commute_and_together_match_what_each_matches(
    cases: list[dict[str, Any]], first: CaseQuery, second: CaseQuery
) -> None:
    index = index_of(cases)
    together = CaseQuery(
        statuses=first.statuses, categories=second.categories, moved=first.moved + second.moved, text=second.text
    )
    swapped = CaseQuery(
        statuses=first.statuses, categories=second.categories, moved=second.moved + first.moved, text=second.text
    )
    assert matched(index, together) == matched(index, swapped)
    each = [
        CaseQuery(statuses=first.statuses),
        CaseQuery(categories=second.categories),
        CaseQuery(moved=first.moved),
        CaseQuery(moved=second.moved),
        CaseQuery(text=second.text),
    ]
    assert set(matched(index, together)) == set.intersection(*(set(matched(index, query)) for query in each))


def _matches(case: Mapping[str, Any], query: CaseQuery) -> bool:
    """Whether ``case`` matches ``query``, worked out case by case."""
    texts = [case["case_id"], case["question"]]
    return (
        (not query.statuses or case["status"] in query.statuses)
        and (not query.categories or case["category"] in query.categories)
        and all(
            case[signal] is not None and (case[signal] > 1e-9 if direction == "up" else case[signal] < -1e-9)
            for signal, direction in query.moved
        )
        and (not query.text or any(query.text.lower() in (text or "").lower() for text in texts))
    )


def test_the_corpus_language_is_a_facet_and_a_filter() -> None:
    corpus = CORPUS.head(3).with_columns(language=pl.Series(["en", "de", None]))
    runs = [freeze_run(frame.head(3), corpus, {"name": name}) for frame, name in ((BASELINE, "b"), (CANDIDATE, "c"))]
    index = CaseIndex.of(compare(*runs))
    assert index.facets["language"] == ("de", "en")
    assert ids(index, CaseQuery(languages=("de",))) == ["b_worse@v1"]
    assert ids(index, CaseQuery(languages=("en", "de"))) == ["a_better@v1", "b_worse@v1"]
