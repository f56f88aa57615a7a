"""A history as text and as an HTML page: the changes marked, a corpus change said and drawn as a break, the trend
chart's geometry worked by hand, and every value from data escaped under a policy that runs no script."""

from __future__ import annotations

import dataclasses
import html
import io
import json
import re
from pathlib import Path

import polars as pl
import pytest

from rag_compare.compute.history import History, HistoryStep
from rag_compare.io.run_listing import Skipped
from rag_compare.report.history import CONTENT_SECURITY_POLICY, TrendValue, history_text, trend_chart, write_history
from tests.helpers.data import PAYLOAD, SCRIPT

# Three runs of recall: 0.5 [0.375, 0.625], 0.25 [0.125, 0.375] (significantly worse than the first), 0.75
# [0.625, 0.875] on another corpus (segment 2: the trend breaks before it). HOSTILE_RESULT: the second run's name is
# hostile.
RUNS = pl.DataFrame(
    {
        "position": [1, 2, 3],
        "name": ["first", "second", "third"],
        "path": ["runs/1.arrow", "runs/2.arrow", "runs/3.arrow"],
        "fingerprint": ["1" * 64, "2" * 64, "3" * 64],
        "created_at": ["2027-01-15T08:00:00+00:00", "2027-01-15T09:00:00+00:00", "2027-01-15T10:00:00+00:00"],
        "corpus_fingerprint": ["a" * 64, "a" * 64, "b" * 64],
        "corpus_path": ["corpus.csv", "corpus.csv", "corpus-v2.csv"],
        "corpus_versions": [["v1"], ["v1"], ["v1", "v2"]],
        "cases": [4, 4, 6],
        "segment": [1, 1, 2],
    }
)
AGGREGATES = pl.DataFrame(
    {
        "position": [1, 2, 3],
        "signal": ["recall"] * 3,
        "mean": [0.5, 0.25, 0.75],
        "ci_low": [0.375, 0.125, 0.625],
        "ci_high": [0.625, 0.375, 0.875],
        "n": [4, 4, 6],
    }
)
CHANGES = pl.DataFrame(
    {
        "position": [2, 3],
        "signal": ["recall"] * 2,
        "previous": [0.5, 0.25],
        "current": [0.25, 0.5],
        "delta": [-0.25, 0.25],
        "ci_low": [-0.375, -0.125],
        "ci_high": [-0.125, 0.5],
        "p_value": [0.001, 0.5],
        "p_adjusted": [0.004, 1.0],
        "n": [4, 3],
        "significant": [True, False],
        "direction": ["worse", "better"],
    }
)
STEPS = (
    HistoryStep(2, ({"key": "prompt", "previous": "Say\n\nit", "current": SCRIPT},), False, False, 4),
    HistoryStep(3, (), True, True, 3),
)
RESULT = History(RUNS, AGGREGATES, CHANGES, STEPS, ("recall",), None, (Skipped(Path("runs/r.arrow"), "reviews file"),))
HOSTILE_RESULT = dataclasses.replace(
    RESULT, runs=RUNS.with_columns(name=pl.Series(["first", f"{PAYLOAD} \x1b[31mred", "third"]))
)
# The chart, by hand: 3 runs on a plot 360 wide (at least 360; 48 a run) from x 48: x = 48 + 120 * (i + 0.5) = 108,
# 228, 348. The y axis holds 0.125 to 0.875 within tenths: 0.1 to 0.9, 160 high from y 12: y(v) = 12 + 200 * (0.9 - v):
# means 92, 142, 42; the first stretch's band, its highs left to right then its lows right to left: (108, 67),
# (228, 117), (228, 167), (108, 117). The third run is alone on its corpus: no line to join, a whisker; the break
# is halfway between the second and the third run, at 288.


def test_the_trend_chart_breaks_where_the_corpus_changes() -> None:
    values = [
        TrendValue(row["position"], row["segment"], row["mean"], row["ci_low"], row["ci_high"], tone, "")
        for row, tone in zip(RUNS.join(AGGREGATES, on="position").to_dicts(), ["same", "worse", "same"], strict=True)
    ]
    chart = trend_chart(values)
    assert (chart.width, chart.height, chart.left, chart.right, chart.top, chart.bottom) == (424, 200, 48, 408, 12, 172)
    assert [(round(point.x, 6), round(point.y, 6)) for point in chart.points] == [(108, 92), (228, 142), (348, 42)]
    assert chart.lines == ("108.0,92.0 228.0,142.0", "348.0,42.0")
    assert chart.bands == ("108.0,67.0 228.0,117.0 228.0,167.0 108.0,117.0",)
    assert [point.lone for point in chart.points] == [False, False, True]
    assert [point.tone for point in chart.points] == ["same", "worse", "same"]
    assert chart.breaks == pytest.approx((288,))
    assert [label for _, label in chart.y_ticks] == ["0.1", "0.3", "0.5", "0.7", "0.9"]
    assert [round(y, 6) for y, _ in chart.y_ticks] == [172, 132, 92, 52, 12]
    assert [label for _, label in chart.x_ticks] == ["#1", "#2", "#3"]


def test_a_run_without_a_value_breaks_the_line_too() -> None:
    values = [TrendValue(1, 1, 0.5, 0.5, 0.5, "same", ""), TrendValue(2, 1, None, None, None, "same", "")]
    values.append(TrendValue(3, 1, 0.5, 0.5, 0.5, "same", ""))
    chart = trend_chart(values)
    assert (len(chart.lines), chart.bands, chart.breaks) == (2, (), ())
    assert [label for _, label in chart.y_ticks] == ["0.5", "0.525", "0.55", "0.575", "0.6"]  # a tenth at least


def test_the_text_marks_significant_changes_and_says_where_the_corpus_changed() -> None:
    text = history_text(RESULT)
    assert "History of 3 runs in creation order, on every corpus version." in text
    assert "Skipped, not runs: runs/r.arrow (reviews file)." in text
    assert '  config: prompt "Say\\n\\nit" → "<script>window.__pwned = 1</script>"' in text
    assert "  significant: recall worse -0.250 [-0.375, -0.125], p (Holm) 0.004" in text
    corpus = (
        "  the corpus changed (fingerprint aaaaaaaaaaaa → bbbbbbbbbbbb) and the cases are of other source versions "
        "(v1 → v1, v2): compared on the 3 cases both runs hold; the trend breaks here"
    )
    assert corpus in text
    assert "1  first" in text
    assert "0.500  [0.375, 0.625]  4" in text
    assert "worse: -0.250 [-0.375, -0.125], p (Holm) 0.004" in text
    assert "(corpus changed) +0.250 [-0.125, +0.500], p (Holm) 1.000" in text
    written = io.StringIO()
    write_history(HOSTILE_RESULT, written, "text")
    assert "\\x1b[31mred" in written.getvalue()  # the escape a terminal would obey, shown instead
    assert "\x1b" not in written.getvalue()


def test_the_page_escapes_every_value_and_runs_no_script() -> None:
    written = io.StringIO()
    write_history(HOSTILE_RESULT, written, "html")
    page = written.getvalue()
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', page)
    assert policy is not None
    assert html.unescape(policy.group(1)) == CONTENT_SECURITY_POLICY
    assert "script-src" not in CONTENT_SECURITY_POLICY  # default-src 'none': no script of any kind
    assert "<script" not in page
    assert "<img" not in page
    # The name in the runs, the changes, the signal's table and its dot's tooltip; the prompt in the changes.
    assert page.count("&lt;script&gt;window.__pwned = 1&lt;/script&gt;") == 5
    assert '<polyline class="trend" points="108.0,92.0 228.0,142.0"/>' in page
    assert '<polygon class="band" points="108.0,67.0 228.0,117.0 228.0,167.0 108.0,117.0"/>' in page
    assert page.count('<line class="break"') == 1
    assert '<circle class="mark worse" cx="228.0" cy="142.0" r="3.5">' in page


def test_a_history_renders_itself_through_the_report_floor() -> None:
    assert RESULT.render("text") == history_text(RESULT).replace("\x1b", "\\x1b")
    assert "<svg" in RESULT.render("html")
    assert json.loads(RESULT.render("json"))["runs"][2]["segment"] == 2
    assert RESULT._repr_html_().startswith("<pre>History of 3 runs")
    with pytest.raises(ValueError, match="unknown format 'markdown'"):
        RESULT.render("markdown")
