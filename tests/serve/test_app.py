"""The review server's routes, over HTTP against the real server on loopback: the hand-made comparison."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from rag_compare import Comparison, compare
from tests.helpers.data import HANDMADE_RUNS, ROOT
from tests.helpers.loopback import call
from tests.helpers.review import VERDICT, ReviewClient, case_path, reviewing

SUMMARY_KEYS = {
    "case_id",
    "status",
    "stage",
    "reasons",
    "reason_stages",
    "category",
    "answerability",
    "language",
    "question",
    "deltas",
}
REGRESSED = "hotel-approval@2026-01"


@pytest.fixture(scope="module")
def handmade() -> Comparison:
    return compare(
        HANDMADE_RUNS / "baseline.arrow",
        HANDMADE_RUNS / "candidate.arrow",
        passages=ROOT / "corpora" / "handbook_passages.csv",
    )


@pytest.fixture(scope="module")
def reversed_runs() -> Comparison:
    """The same runs the other way round: other fingerprints' order, so another comparison's verdicts."""
    return compare(HANDMADE_RUNS / "candidate.arrow", HANDMADE_RUNS / "baseline.arrow")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "reviews.sqlite"


@pytest.fixture
def client(handmade: Comparison, db: Path) -> Iterator[ReviewClient]:
    with reviewing(handmade, db) as client:
        yield client


def test_the_page_is_served_with_its_policy_and_csrf_token(client: ReviewClient) -> None:
    from rag_compare.report.page import content_security_policy

    page = client.get("/")
    assert page.status == 200
    assert page.headers.get_content_type() == "text/html"
    assert page.headers["Content-Security-Policy"] == f"{content_security_policy(served=True)}; frame-ancestors 'none'"
    assert f'<meta name="csrf-token" content="{client.csrf_token}">' in page.body.decode()
    assert len(client.csrf_token) == 64


def test_a_session_says_who_reviews_what(client: ReviewClient, handmade: Comparison) -> None:
    about = client.get_json("/api/session")
    assert about["reviewer"] == "tester"
    assert about["cases"] == handmade.n_cases == 34
    assert about["baseline"] == {"name": handmade.baseline.name, "fingerprint": handmade.baseline.fingerprint}
    assert about["candidate"]["fingerprint"] == handmade.candidate.fingerprint


def test_the_first_page_lists_every_case_with_counts_and_facets(client: ReviewClient, handmade: Comparison) -> None:
    listed = client.get_json("/api/cases")
    assert (listed["page"], listed["page_size"], listed["total"]) == (1, 50, 34)
    assert len(listed["cases"]) == 34
    assert sorted(case["case_id"] for case in listed["cases"]) == sorted(handmade.cases["case_id"].to_list())
    assert {status: n for status, n in listed["counts"].items() if n} == {
        status: n for status, n in handmade.counts.items() if n
    }
    assert set(listed["facets"]["category"]) >= {"rule", "rule_exception", "unanswerable"}
    assert listed["facets"]["answerability"] == sorted(set(handmade.cases["answerability"]))
    for case in listed["cases"]:
        assert set(case) == SUMMARY_KEYS | {"review"}
        assert case["review"] == {"reviewed": False, "latest": None}


def test_filters_by_several_statuses_and_counts_every_status_the_other_filters_match(
    client: ReviewClient, handmade: Comparison
) -> None:
    listed = client.get_json("/api/cases?status=regressed&status=failed_in_candidate")
    assert listed["total"] == 6
    assert {case["status"] for case in listed["cases"]} == {"regressed", "failed_in_candidate"}
    assert {status: n for status, n in listed["counts"].items() if n} == {s: n for s, n in handmade.counts.items() if n}
    searched = client.get_json(f"/api/cases?status=regressed&q={quote(REGRESSED)}")
    assert {status: n for status, n in searched["counts"].items() if n} == {"regressed": 1}


def test_searches_the_questions_and_answers(client: ReviewClient) -> None:
    listed = client.get_json(f"/api/cases?q={quote('HOTEL')}")
    assert listed["total"] >= 1
    assert REGRESSED in [case["case_id"] for case in listed["cases"]]
    assert all("hotel" in (case["case_id"] + case["question"]).lower() for case in listed["cases"])
    assert client.get_json("/api/cases?q=no-such-text-anywhere")["total"] == 0


def test_sorts_by_a_signals_delta_with_nulls_last(client: ReviewClient) -> None:
    for order in ("asc", "desc"):
        deltas = [
            case["deltas"]["recall"] for case in client.get_json(f"/api/cases?sort=delta:recall:{order}")["cases"]
        ]
        known = [delta for delta in deltas if delta is not None]
        assert known == sorted(known, reverse=order == "desc")
        assert deltas == known + [None] * (len(deltas) - len(known))
        assert known[0] != known[-1]


def test_filters_by_what_moved(client: ReviewClient) -> None:
    down = client.get_json("/api/cases?moved=grounded:down")
    assert down["total"] == 3
    assert all(case["deltas"]["grounded"] < 0 for case in down["cases"])
    both = client.get_json("/api/cases?moved=grounded:down&moved=answer_completeness:up")["cases"]
    assert all(case["deltas"]["answer_completeness"] > 0 for case in both)
    assert len(both) < 3


def test_pages_cover_the_cases_once(client: ReviewClient) -> None:
    pages = [client.get_json(f"/api/cases?page={page}&page_size=10&sort=case_id") for page in (1, 2, 3, 4, 5)]
    ids = [case["case_id"] for page in pages for case in page["cases"]]
    assert [len(page["cases"]) for page in pages] == [10, 10, 10, 4, 0]
    assert ids == sorted(ids)
    assert len(set(ids)) == 34


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("status=fine", "status"),
        ("sort=delta:nothing:asc", "sort"),
        ("sort=sideways", "sort"),
        ("page=0", "page"),
        ("page=two", "page"),
        ("page_size=501", "page_size"),
        ("moved=recall:sideways", "moved"),
        ("colour=red", "colour"),
    ],
)
def test_a_bad_query_is_a_400_naming_the_parameter(client: ReviewClient, query: str, named: str) -> None:
    answer = client.get(f"/api/cases?{query}")
    assert answer.status == 400
    assert named in answer.error


def test_a_case_holds_its_details_and_no_verdict_yet(client: ReviewClient) -> None:
    case = client.get_json(case_path(REGRESSED))
    assert case["case_id"] == REGRESSED
    assert case["status"] == "regressed"
    assert set(case["sides"]) == {"baseline", "candidate"}
    assert case["sides"]["candidate"]["present"] is True
    assert case["verdicts"] == []
    assert case["other_verdicts"] == []


@pytest.mark.parametrize("path", ["no-such-case", "..%2F..%2Fetc%2Fpasswd", "%2Fetc%2Fpasswd", "%00", "%C3%28"])
def test_an_unknown_case_is_a_404(client: ReviewClient, path: str) -> None:
    answer = client.get(f"/api/cases/{path}")
    assert answer.status == 404
    assert "no case" in answer.error


def test_a_verdict_on_an_unknown_case_is_a_404(client: ReviewClient) -> None:
    answer = client.verdict("no-such-case")
    assert answer.status == 404
    assert answer.error == "this comparison has no case 'no-such-case': take a case_id from /api/cases."


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/api/cases/a/b", 404),
        ("GET", "/api/cases/../x", 404),
        ("GET", f"{case_path(REGRESSED)}/verdicts", 405),
        ("POST", case_path(REGRESSED), 405),
        ("PUT", f"{case_path(REGRESSED)}/verdicts", 405),
        ("GET", "/api/nothing", 404),
        ("POST", "/api/progress", 405),
    ],
)
def test_a_wrong_route_or_method_is_json_too(client: ReviewClient, method: str, path: str, status: int) -> None:
    headers = {"Origin": client.url, "X-CSRF-Token": client.csrf_token, "Content-Type": "application/json"}
    answer = call(method, f"{client.url}{path}", body=b"{}" if method != "GET" else None, headers=headers)
    assert answer.status == status
    assert answer.error


def test_a_verdict_is_stored_and_shown_with_what_it_was_given_on(client: ReviewClient, handmade: Comparison) -> None:
    answer = client.verdict(REGRESSED)
    assert answer.status == 201
    stored = answer.json()
    assert stored["case_id"] == REGRESSED
    assert stored["reviewer"] == "ana"
    assert (stored["agree"], stored["status"], stored["side"]) == (False, "unchanged", "candidate")
    assert stored["labels"] == VERDICT["labels"]
    assert stored["shown_status"] == "regressed"
    assert (
        stored["shown_signals"]["candidate_recall"] == handmade.cases.filter(case_id=REGRESSED)["candidate_recall"][0]
    )
    assert stored["baseline_fingerprint"] == handmade.baseline.fingerprint
    assert stored["supersedes"] is None
    case = client.get_json(case_path(REGRESSED))
    assert case["verdicts"] == [stored]
    listed = client.get_json("/api/cases?status=regressed")["cases"]
    assert next(case["review"] for case in listed if case["case_id"] == REGRESSED) == {
        "reviewed": True,
        "latest": stored,
    }


def test_a_newer_verdict_supersedes_and_the_history_is_kept(client: ReviewClient) -> None:
    first = client.verdict(REGRESSED).json()
    second = client.verdict(REGRESSED, agree=True, status=None, comment="On second thought, right.").json()
    assert second["supersedes"] == first["id"]
    assert [verdict["id"] for verdict in client.get_json(case_path(REGRESSED))["verdicts"]] == [
        second["id"],
        first["id"],
    ]


def test_a_verdict_without_a_reviewer_is_signed_by_the_servers(client: ReviewClient) -> None:
    body = {key: value for key, value in VERDICT.items() if key != "reviewer"}
    answer = client.post(f"{case_path(REGRESSED)}/verdicts", body)
    assert answer.status == 201
    assert answer.json()["reviewer"] == "tester"


def test_blank_labels_stay_null(client: ReviewClient) -> None:
    labels = dict.fromkeys(VERDICT["labels"])
    stored = client.verdict(REGRESSED, agree=True, status=None, labels=labels).json()
    assert stored["labels"] == labels


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"agree": "yes"}, "agree"),
        ({"side": "both"}, "side"),
        ({"status": "fine"}, "status"),
        ({"labels": {"answer_correct": "maybe"}}, "answer_correct"),
        ({"labels": {"grounded": True}}, "grounded"),
        ({"labels": {"colour": "red"}}, "colour"),
        ({"labels": ["yes"]}, "labels"),
        ({"comment": 12}, "comment"),
        ({"reviewer": ""}, "reviewer"),
    ],
)
def test_an_invalid_verdict_is_a_400_naming_the_field(
    client: ReviewClient, changes: dict[str, object], named: str
) -> None:
    answer = client.verdict(REGRESSED, **changes)
    assert answer.status == 400
    assert named in answer.error
    assert client.get_json(case_path(REGRESSED))["verdicts"] == []


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"[1, 2]", ""),
        (b"{", "not JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (b'{"agree": true, "agree": false}', "twice"),
        (b'{"agree": NaN}', "NaN"),
        (b"[" * 100 + b"]" * 100, "nest"),
        (b"", "not JSON"),
    ],
)
def test_a_malformed_body_is_a_400(client: ReviewClient, body: bytes, said: str) -> None:
    answer = client.post(f"{case_path(REGRESSED)}/verdicts", body)
    assert answer.status == 400
    assert said in answer.error


def test_a_credential_in_a_comment_is_refused(client: ReviewClient) -> None:
    answer = client.verdict(REGRESSED, comment="my key is sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2)
    assert answer.status == 400
    assert "credential" in answer.error
    assert "a1B2c3D4e5F6g7H8i9J0" not in answer.error


def test_a_write_needs_the_origin_and_the_csrf_token(client: ReviewClient) -> None:
    path = f"{case_path(REGRESSED)}/verdicts"
    assert client.post(path, VERDICT, Origin="http://evil.example").status == 403
    assert client.post(path, VERDICT, **{"X-CSRF-Token": "0" * 64}).status == 403
    assert client.get_json(case_path(REGRESSED))["verdicts"] == []


def test_the_queue_starts_with_the_regressed_and_failed_and_moves_on(client: ReviewClient) -> None:
    first = client.get_json("/api/queue/next")
    assert first["reason"] in {"regressed", "failed"}
    assert first["position"] == 1
    assert first["queued"] >= 10
    assert client.verdict(first["case_id"]).status == 201
    second = client.get_json("/api/queue/next")
    assert second["case_id"] != first["case_id"]
    after = client.get_json(f"/api/queue/next?after={quote(second['case_id'], safe='')}")
    assert after["case_id"] not in {first["case_id"], second["case_id"]}
    assert after["position"] > second["position"]


@pytest.mark.parametrize(("query", "status"), [("after=no-such-case", 404), ("later=1", 400)])
def test_a_bad_queue_query_is_refused(client: ReviewClient, query: str, status: int) -> None:
    assert client.get(f"/api/queue/next?{query}").status == status


def test_progress_counts_the_reviewed_queued_cases(client: ReviewClient) -> None:
    before = client.get_json("/api/progress")
    assert before["reviewed"] == 0
    assert before["queued"] == sum(queued for _, queued in before["by_reason"].values())
    assert before["by_reason"]["regressed"] == [0, 4]
    client.verdict(REGRESSED)
    client.verdict(REGRESSED, side="baseline")
    after = client.get_json("/api/progress")
    assert after["reviewed"] == 1
    assert after["by_reason"]["regressed"] == [1, 4]


def test_verdicts_of_other_runs_are_shown_apart_and_never_counted(
    handmade: Comparison, reversed_runs: Comparison, db: Path
) -> None:
    with reviewing(reversed_runs, db) as other:
        given = other.verdict(REGRESSED, status="regressed").json()
    with reviewing(handmade, db) as client:
        case = client.get_json(case_path(REGRESSED))
        assert case["verdicts"] == []
        assert case["other_verdicts"] == [given]
        assert client.get_json("/api/progress")["reviewed"] == 0
        assert client.get_json("/api/cases?status=regressed")["cases"][0]["review"]["reviewed"] is False


def test_verdicts_outlive_the_server(handmade: Comparison, db: Path) -> None:
    with reviewing(handmade, db) as client:
        given = client.verdict(REGRESSED).json()
    with reviewing(handmade, db) as client:
        assert client.get_json(case_path(REGRESSED))["verdicts"] == [given]


def test_a_case_id_holding_a_slash_travels_as_one_segment(hostile: Comparison, db: Path) -> None:
    slashed = next(case_id for case_id in hostile.cases["case_id"] if "/" in case_id)
    with reviewing(hostile, db) as client:
        assert client.get_json(case_path(slashed))["case_id"] == slashed
        assert client.verdict(slashed, status="regressed").json()["case_id"] == slashed
        assert client.get(f"/api/cases/{quote(slashed)}").status == 404  # its / unencoded: two segments


def test_a_bug_is_a_500_without_a_traceback(client: ReviewClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from rag_compare.serve.session import ReviewSession

    def broken(self: ReviewSession) -> dict[str, object]:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(ReviewSession, "progress", broken)
    answer = client.get("/api/progress")
    assert answer.status == 500
    assert answer.error == "the server failed on this request; its log says why."


def test_what_the_api_answers_is_redacted_like_every_output(
    client: ReviewClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "the department head")  # as if a key's value were in an answer
    answer = client.get(case_path(REGRESSED))
    assert answer.status == 200
    assert "the department head" not in answer.body.decode()
    assert "…(redacted)" in answer.body.decode()
