"""One line of counts, and the one way a long list is cut short (inline, or one item a line)."""

from __future__ import annotations

from rag_compare.core.listing import counted, counts_line, truncated


def test_counts_line() -> None:
    assert counts_line({"ok": 3, "failed": 0}) == "ok 3 · failed 0"
    assert counts_line({"ok": 3, "failed": 1}, ", ") == "ok 3, failed 1"
    assert counts_line({}) == "none"


def test_counted_is_plural_unless_one() -> None:
    assert [counted(count, "trace") for count in (0, 1, 2)] == ["0 traces", "1 trace", "2 traces"]


def test_a_short_list_is_shown_whole() -> None:
    assert truncated([]) == ""
    assert truncated(["a", 2, None]) == "a, 2, None"
    assert truncated([f"id{n}" for n in range(10)]) == ", ".join(f"id{n}" for n in range(10))


def test_a_long_list_shows_ten_and_counts_the_rest() -> None:
    assert truncated([f"id{n}" for n in range(12)]) == ", ".join(f"id{n}" for n in range(10)) + " … and 2 more"
    assert truncated(["a", "b", "c"], 2) == "a, b … and 1 more"


def test_a_list_of_lines_ends_with_a_line_saying_where_the_rest_is() -> None:
    lines = [f"  - problem {n}\n" for n in range(4)]
    cut = truncated(lines, 2, separator="", prefix="  ", suffix=" (see the JSON)\n")
    assert cut == "  - problem 0\n  - problem 1\n  … and 2 more (see the JSON)\n"
    assert truncated(["one", "two"], 1, separator="\n", prefix="\n") == "one\n… and 1 more"


def test_total_counts_items_not_passed() -> None:
    assert truncated(["a", "b"], 2, total=7) == "a, b … and 5 more"
    assert truncated(["a", "b"], 2, total=2) == "a, b"


def test_a_series_is_cut_like_its_list_and_only_the_items_shown_become_text() -> None:
    import polars as pl

    ids = pl.Series([f"c{n}" for n in range(25)])
    assert truncated(ids) == truncated(ids.to_list()) == "c0, c1, c2, c3, c4, c5, c6, c7, c8, c9 … and 15 more"
    made: list[int] = []

    class Counted:
        def __init__(self, n: int) -> None:
            self.n = n

        def __str__(self) -> str:
            made.append(self.n)
            return str(self.n)

    truncated([Counted(n) for n in range(1000)], 3)
    assert made == [0, 1, 2]
