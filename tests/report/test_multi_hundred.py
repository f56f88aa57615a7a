"""A hundred candidates against one baseline: they are compared, and the text and the Markdown stay readable (a
candidate is a row, never a column; a changed case names five candidates of a group, then how many more)."""

from __future__ import annotations

import pytest

from rag_compare import compare_many
from rag_compare.compute.multi_comparison import MultiComparison
from rag_compare.io.runs import load_run, write_run
from tests.helpers.data import ROOT

COUNT = 100
NAMES = [f"candidate-{number:03d}" for number in range(COUNT)]


@pytest.fixture(scope="module")
def hundred(tmp_path_factory: pytest.TempPathFactory) -> MultiComparison:
    """The example baseline against a hundred candidates: the example candidate's records and the stopwords run's
    in turn, each under a name of its own. Compared away from the runs' knowledge base, so their stored signals
    are read (the judge does not run a hundred times)."""
    folder = tmp_path_factory.mktemp("hundred")
    sources = [load_run(ROOT / "runs" / name) for name in ("candidate.arrow", "stopwords.arrow")]
    paths = []
    for number, name in enumerate(NAMES):
        source = sources[number % 2]
        paths.append(write_run(source.records, {**source.config, "name": name}, folder / f"{name}.arrow").path)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        return compare_many(ROOT / "runs" / "baseline.arrow", paths)


def test_a_hundred_candidates_are_each_compared(hundred: MultiComparison) -> None:
    assert list(hundred.names) == NAMES
    candidate, stopwords = hundred.counts["candidate-000"], hundred.counts["candidate-001"]
    assert candidate != stopwords
    assert all(hundred.counts[name] == (candidate, stopwords)[number % 2] for number, name in enumerate(NAMES))
    assert hundred.ranking.best is None
    assert hundred.ranking.reason.startswith("no clear winner: candidate-000 and candidate-002 tie on recall")


def test_the_text_gives_a_candidate_a_row_in_each_table_and_says_a_warning_once(hundred: MultiComparison) -> None:
    lines = hundred.render("text").splitlines()
    warnings = [line for line in lines if line.startswith("warning: ")]
    rows = [line.split() for line in lines if line not in warnings and line != hundred.ranking.reason]
    for name in NAMES:
        found = [row for row in rows if name in row]
        assert len(found) == 2 + len(hundred.ranking.rank_by), name  # the runs, the statuses, each leaderboard
    assert len(warnings) == len(set(hundred.comparisons[0].warnings) | set(hundred.comparisons[1].warnings))
    assert "warning: candidate-000, candidate-002, candidate-004, candidate-006, candidate-008 … and 45 more: " in (
        "\n".join(warnings)
    )
    assert max(len(line) for line in lines if line not in warnings) < 160  # the tables: a candidate is no column


def test_the_markdown_names_five_candidates_of_a_group_then_how_many_more(hundred: MultiComparison) -> None:
    markdown = hundred.render("markdown", max_cases=None)
    lines = markdown.splitlines()
    assert max(len(line) for line in lines) < 300
    changed = [line for line in lines if line.startswith("| ") and " more " in line]
    assert changed
    for line in changed:
        for cell in line.split(" | ")[1:]:
            if " more" in cell:
                named, more = cell.rsplit(" … and ", 1)
                assert len(named.split(", ")) == 5
                assert int(more.split()[0]) > 0
    statuses = hundred.status_matrix
    assert statuses.width == 1 + COUNT  # every candidate's status is kept, for the JSON and the page
