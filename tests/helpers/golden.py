"""Golden (snapshot) files: the output of the hand-made comparison, checked byte for byte, or rewritten on purpose
(``pytest --update-golden``)."""

from __future__ import annotations

from tests.helpers.data import ROOT

GOLDEN = ROOT / "tests" / "golden"
HANDMADE_COMPARISON = (
    "tests/fixtures/handmade/baseline.arrow",
    "tests/fixtures/handmade/candidate.arrow",
    "--passages",
    "corpora/handbook_passages.csv",
)
"""The arguments of ``rag-compare`` that compare the hand-made runs, relative to the repository root (the
output names the run files by the paths they were opened with)."""


def check_golden(name: str, output: str, *, update: bool) -> None:
    """Fail unless ``output`` is the content of ``tests/golden/NAME``; with ``update``, first write it there."""
    path = GOLDEN / name
    if update:
        path.write_text(output, encoding="utf-8", newline="")
    assert output == path.read_text(encoding="utf-8"), (
        f"{name} changed; if on purpose, run `pytest --update-golden` and review the diff"
    )
