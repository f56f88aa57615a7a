"""The progress bar: drawn only on a terminal, counting each advance; elsewhere silent."""

from __future__ import annotations

import pytest

from rag_compare.core.progress import progress_bar


@pytest.mark.parametrize(("label", "total"), [("judging", 3), (None, 3), ("judging", 0)])
def test_off_a_terminal_or_without_work_nothing_is_drawn(
    capsys: pytest.CaptureFixture[str], label: str | None, total: int
) -> None:
    with progress_bar(label, total) as advance:
        for _ in range(3):
            advance()
    assert capsys.readouterr() == ("", "")


def test_on_a_terminal_the_bar_counts_each_advance_on_stderr_never_on_stdout(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    with progress_bar("judging", 3) as advance:
        for _ in range(3):
            advance()
    drawn = capsys.readouterr()
    assert drawn.out == ""  # stdout carries the command's output (JSON, a report)
    assert "judging" in drawn.err
    assert "3/3" in drawn.err


def test_an_advance_of_several_steps_counts_them_all(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    with progress_bar("comparing", 10) as advance:
        advance(4)
        advance(6)
    assert "10/10" in capsys.readouterr().err
