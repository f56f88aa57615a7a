"""Chart geometry, worked out by hand beside each case (label width = 7 units per character + 12)."""

from __future__ import annotations

import pytest

from rag_compare.report.charts import category_grid, delta_chart, status_chart, tone_of


@pytest.mark.parametrize(
    ("status", "tone"),
    [
        ("regressed", "worse"),
        ("improved", "better"),
        ("mixed", "mixed"),
        ("failed_in_both", "failed"),
        ("missing_in_baseline", "missing"),
        ("unchanged", "same"),
    ],
)
def test_tone_of_a_status(status: str, tone: str) -> None:
    assert tone_of(status) == tone


def test_status_bars_scale_to_the_largest_count_and_skip_empty_statuses() -> None:
    chart = status_chart({"regressed": 2, "improved": 4, "unchanged": 0, "failed_in_candidate": 1})
    # labels: "failed_in_candidate" is 19 characters -> 19 * 7 + 12 = 145
    assert chart.label_width == 145
    assert [(bar.status, bar.y, bar.width, bar.tone) for bar in chart.bars] == [
        ("regressed", 0, 180, "worse"),  # 360 * 2 / 4
        ("improved", 24, 360, "better"),
        ("failed_in_candidate", 48, 90, "failed"),
    ]
    # room for the count "4" and a space after the bars: 7 * 2 + 12 = 26
    assert (chart.width, chart.height) == (145 + 360 + 26, 72)


def test_delta_chart_places_deltas_and_intervals_on_a_symmetric_axis() -> None:
    rows = [
        {"signal": "recall", "delta": 0.1, "ci_low": 0.02, "ci_high": 0.3},
        {"signal": "abstained", "delta": 0.2, "ci_low": -0.1, "ci_high": 0.4},
        {"signal": "grounded", "delta": None, "ci_low": None, "ci_high": None},
    ]
    chart = delta_chart(rows)
    # reach 0.4 -> axis +-0.5; labels: "abstained" -> 9 * 7 + 12 = 75; half of 320 = 160; zero at 235
    assert (chart.label_width, chart.zero) == (75, 235)
    assert chart.ticks == ((75, "-0.5"), (155, "-0.25"), (235, "0"), (315, "+0.25"), (395, "+0.5"))
    recall, abstained = chart.rows  # grounded has no delta and is left out
    assert (recall.x, recall.low, recall.high) == pytest.approx((267, 241.4, 331))  # 235 + 160 * v / 0.5
    assert recall.tone == "better"  # up, and the interval is clear of zero
    assert abstained.tone == "unclear"  # the interval holds zero
    assert recall.label == "+0.100 [+0.020, +0.300]"


def test_delta_tones_follow_each_signals_good_direction() -> None:
    rows = [
        {"signal": "abstained", "delta": 0.2, "ci_low": 0.1, "ci_high": 0.3},  # abstaining more is worse
        {"signal": "context_construction_failure", "delta": -0.2, "ci_low": -0.3, "ci_high": -0.1},
        {"signal": "mrr", "delta": 0.0, "ci_low": 0.0, "ci_high": 0.0},
    ]
    assert [row.tone for row in delta_chart(rows).rows] == ["worse", "better", "same"]


@pytest.mark.parametrize(("reach", "extent"), [(0.0, 0.05), (0.05, 0.05), (0.3, 0.5), (1.0, 1.0), (3.0, 10.0)])
def test_delta_axis_extent_is_a_round_number_that_holds_every_value(reach: float, extent: float) -> None:
    chart = delta_chart([{"signal": "recall", "delta": reach, "ci_low": None, "ci_high": None}])
    assert chart.ticks[-1][0] - chart.zero == pytest.approx(chart.plot_width / 2)
    assert chart.ticks[-1][1] == (f"+{extent:g}" if extent else "0")


def test_category_grid_puts_groups_in_columns_and_signals_in_rows() -> None:
    rows = [
        {"group": "rule", "signal": "recall", "delta": 0.5},
        {"group": "faq", "signal": "recall", "delta": -0.1},
        {"group": "faq", "signal": "abstained", "delta": 0.0},
    ]
    grid = category_grid(rows)
    # columns sorted by name; rows in signal order; labels 9 * 7 + 12 = 75; header (4 * 7 + 12) * 0.6 + 12 = 36
    assert [group for _, group in grid.columns] == ["faq", "rule"]
    assert [signal for _, signal in grid.rows] == ["recall", "abstained"]
    assert (grid.label_width, grid.header_height) == (75, pytest.approx(36))
    cells = [(cell.x, cell.y, cell.tone, cell.strength, cell.label) for cell in grid.cells]
    assert cells == [
        (75 + 64, pytest.approx(36), "better", pytest.approx(0.65), "+0.50"),
        (75, pytest.approx(36), "worse", pytest.approx(0.25), "-0.10"),
        (75, pytest.approx(60), "same", 0.0, "+0.00"),
    ]
