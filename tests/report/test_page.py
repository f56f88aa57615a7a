"""The interactive page: its data block's escaping, the script's hash in the policy, what is embedded, the
served page and the notebook's frame."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json

import polars as pl
import pytest

from rag_compare import Comparison
from rag_compare.compute.case_status import CASE_STATUSES
from rag_compare.compute.gate_result import ConditionResult, GateResult
from rag_compare.core.credentials import redact
from rag_compare.report.page import (
    DATA_ID,
    content_security_policy,
    data_block,
    page_script,
    script_hash,
    served_page,
)
from rag_compare.report.page_data import packed
from tests.helpers.credential_shapes import KEY_SHAPES
from tests.helpers.hostile import LARGE_ANSWER, PAGE_PAYLOAD, hostile_page_comparison
from tests.helpers.page import framed_page, page_parts

GATE = GateResult(
    (
        ConditionResult("regressed>2%", held=True, evaluated=True, numbers="4 of 34 cases (11.8%) regressed"),
        ConditionResult("failed_in_candidate", held=False, evaluated=True, numbers="2 of 34 cases; the limit is > 2"),
    ),
    alpha=0.05,
)


@pytest.fixture(scope="module")
def hostile_page() -> Comparison:
    return hostile_page_comparison()


def test_the_data_block_escapes_what_could_end_it_and_parses_back() -> None:
    payload = {"text": PAGE_PAYLOAD, "nested": [{"more": "a > b && c < d"}], "n": 1.5, "missing": None}
    block = str(data_block(payload))
    for character in "<>&\u2028\u2029":
        assert character not in block
    assert "\\u003c/script\\u003e" in block
    assert "\\u003c!--" in block
    assert json.loads(block) == payload


def test_the_packed_cases_are_the_same_bytes_for_the_same_comparison(examples: Comparison) -> None:
    assert examples.render("html") == examples.render("html")
    payload = {"cases": [{"case_id": "a", "answer": "word " * 1000}], "passages": {}}
    assert packed(payload) == packed(payload)
    assert json.loads(gzip.decompress(base64.b64decode(packed(payload)))) == payload
    assert len(packed(payload)) < 500  # a repetitive text shrinks


def test_the_data_block_shows_no_credential() -> None:
    secret = next(iter(KEY_SHAPES.values()))
    block = str(data_block({"comment": f"key {secret}"}))
    assert secret not in block
    assert json.loads(block) == {"comment": redact(f"key {secret}")}


def test_the_policy_allows_the_script_by_the_hash_of_its_exact_text(examples: Comparison) -> None:
    parts = page_parts(examples.render("html"))
    assert parts.script == page_script()
    digest = base64.b64encode(hashlib.sha256(parts.script.encode("utf-8")).digest()).decode("ascii")
    assert script_hash(parts.script) == f"'sha256-{digest}'"
    assert parts.policy == content_security_policy(served=False)
    assert f"script-src 'sha256-{digest}';" in parts.policy
    assert "unsafe-inline" not in parts.policy.split("script-src")[1].split(";")[0]
    assert "connect-src 'none'" in parts.policy
    assert "connect-src 'self'" in content_security_policy(served=True)
    for directive in ("default-src 'none'", "base-uri 'none'", "form-action 'none'"):
        assert directive in parts.policy


def test_the_static_page_embeds_the_listed_cases_in_report_order(examples: Comparison) -> None:
    data = page_parts(examples.render("html", max_cases=2)).data
    assert data["mode"] == "static"
    statuses = {status["status"]: status for status in data["statuses"]}
    assert statuses["regressed"] == {"status": "regressed", "tone": "worse", "count": 4, "listed": 2}
    assert "unchanged" not in statuses
    regressed = sorted(examples.cases.filter(pl.col("status") == "regressed").get_column("case_id"))[:2]
    embedded = [case["case_id"] for case in data["cases"]]
    assert [case for case in embedded if case in regressed] == regressed
    order = [case["status"] for case in data["cases"]]
    assert order == sorted(order, key=[status["status"] for status in data["statuses"]].index)
    assert len(embedded) == sum(status["listed"] for status in data["statuses"])
    assert [signal["name"] for signal in data["signals"]] == [signal.name for signal in examples.signals]
    abstained = next(signal for signal in data["signals"] if signal["name"] == "abstained")
    assert abstained["higher_is_better"] is False


def test_every_case_is_embedded_with_all_cases(examples: Comparison) -> None:
    data = page_parts(examples.render("html", all_cases=True, max_cases=None)).data
    assert sorted(case["case_id"] for case in data["cases"]) == sorted(examples.cases.get_column("case_id"))


def test_passage_texts_are_one_table_for_the_page(examples: Comparison) -> None:
    data = page_parts(examples.render("html")).data
    passages = [
        passage for case in data["cases"] for side in case["sides"].values() for passage in side["passages"] or []
    ]
    assert passages
    assert all(passage["text"] is None for passage in passages)
    assert {passage["passage_id"] for passage in passages} <= set(data["passages"])


def test_the_gate_verdict_and_its_numbers_are_at_the_top_of_both_reports(examples: Comparison) -> None:
    page = examples.render("html", gate=GATE)
    assert page.index('id="gate"') < page.index("<h2>Runs</h2>")
    gate = page[page.index('id="gate"') : page.index("</section>", page.index('id="gate"'))]
    assert "gate failed: 1 of 2 conditions held (alpha 0.05)" in gate
    assert '<td class="held">held</td><td>4 of 34 cases (11.8%) regressed</td>' in gate
    assert "<td>not held</td><td>2 of 34 cases; the limit is &gt; 2</td>" in gate
    markdown = examples.render("markdown", gate=GATE)
    assert markdown.index("## Release gate") < markdown.index("## Runs")
    assert "**gate failed: 1 of 2 conditions held (alpha 0.05)**" in markdown
    assert "| regressed&gt;2% | held | 4 of 34 cases (11.8%) regressed |" in markdown
    assert "Release gate" not in examples.render("markdown")
    assert 'id="gate"' not in examples.render("html")


def test_the_served_page_embeds_no_case_and_carries_its_token_and_api(examples: Comparison) -> None:
    page = served_page(examples, csrf_token="t0k3n", token="bearer-secret-1", reviewer="ana")
    parts = page_parts(page)
    assert {"name": "csrf-token", "content": "t0k3n"} in parts.metas
    data = parts.data
    assert data["mode"] == "served"
    assert "cases" not in data
    assert (data["api"], data["review"], data["reviewer"], data["token"]) == ("/api", True, "ana", "bearer-secret-1")
    assert parts.policy == content_security_policy(served=True)
    assert parts.script == page_script()
    assert "<h2>Aggregates</h2>" in page
    assert "unchanged" in [status["status"] for status in data["statuses"]]  # the server lists every case
    assert data["case_statuses"] == list(CASE_STATUSES)
    assert "listed" not in "".join(parts.text)
    assert '<meta name="csrf-token"' not in examples.render("html")


def test_hostile_text_in_the_data_stays_data(hostile_page: Comparison) -> None:
    page = hostile_page.render("html")
    parts = page_parts(page)
    assert parts.tags.count("script") == 2
    assert [attrs for attrs, _ in parts.scripts] == [{"type": "application/json", "id": DATA_ID}, {}]
    assert "img" not in parts.tags
    assert "a" not in parts.tags
    assert not [name for name, _ in parts.attributes if name.startswith("on")]
    cases = {case["case_id"]: case for case in parts.data["cases"]}
    bad = cases[f"bad{PAGE_PAYLOAD}@v1"]
    assert bad["question"] == bad["acceptance_note"] == bad["category"] == PAGE_PAYLOAD
    assert bad["sides"]["baseline"]["answer"] == PAGE_PAYLOAD
    assert parts.data["passages"]["evil"] == f"Evil {PAGE_PAYLOAD}"
    large = cases["large@v1"]
    assert large["sides"]["baseline"]["answer"] == LARGE_ANSWER
    assert large["answer_diff"] is None  # over MAX_DIFF_WORDS: shown undiffed


def test_the_notebook_shows_the_page_in_a_sandboxed_frame(examples: Comparison, hostile: Comparison) -> None:
    cell = examples._repr_html_()
    assert cell.startswith('<iframe class="rag-compare"')
    assert 'sandbox="allow-scripts"' in cell
    assert "<script" not in cell  # the page is in the frame's srcdoc, escaped
    page = framed_page(cell)
    assert page == examples.render("html")
    assert 'id="aggregates-paired"' in page
    framed = framed_page(hostile._repr_html_())
    assert page_parts(framed).tags.count("script") == 2
