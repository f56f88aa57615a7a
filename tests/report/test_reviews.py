"""A reviews file for a terminal: the runs, the reviewers, agreement, each label's values, the corrections."""

from __future__ import annotations

from pathlib import Path

from rag_compare.io.reviews import export_reviews
from tests.helpers.reviews import BASELINE, CANDIDATE, VERDICTS, reviewed


def test_the_summary_names_the_runs_reviewers_labels_and_corrections(tmp_path: Path) -> None:
    reviews = export_reviews(reviewed(tmp_path / "reviews.sqlite"), BASELINE, CANDIDATE, tmp_path / "r.arrow")
    text = reviews.render("text")
    assert f"reviews      {tmp_path / 'r.arrow'}" in text
    assert f"evaluator    human ({reviews.evaluator['fingerprint'][:12]})" in text
    assert "baseline     baseline (5f080d2f03f7)" in text
    assert f"exported     {reviews.created_at}\nfrom         {tmp_path / 'reviews.sqlite'}\n" in text
    assert "cases        2 (3 verdicts)" in text
    assert "reviewers    ana 1, bo 2" in text
    assert "status       agree 2, disagree 1" in text
    assert "label               side       yes  partly  no  blank" in text
    assert "grounded            baseline   0    1       0   0" in text
    assert "answer_correct      candidate  0            1   1" in text  # no "partly" for a yes/no label
    assert "Statuses people corrected" in text
    assert "regressed  unchanged  1" in text


def test_no_corrections_no_table(tmp_path: Path) -> None:
    database = reviewed(tmp_path / "reviews.sqlite", VERDICTS[:3])
    text = export_reviews(database, BASELINE, CANDIDATE).render("text")
    assert "reviews      (not written)" in text
    assert "status       agree 2, disagree 0" in text
    assert "corrected" not in text


def test_one_verdict_is_one_verdict(tmp_path: Path) -> None:
    text = export_reviews(reviewed(tmp_path / "reviews.sqlite", VERDICTS[:1]), BASELINE, CANDIDATE).render("text")
    assert "cases        1 (1 verdict)\n" in text
