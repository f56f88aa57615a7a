"""Every notebook in notebooks/ runs top to bottom without an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.data import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SHOWS = {
    "corpus_and_runs.ipynb": "violations: 0",
    "compare_retrieval_configs.ipynb": "cases changed, failed or missing: 3",
}
"""A line each notebook's output must hold: proof that it ran to its point, not only without errors."""


def test_every_notebook_says_what_it_must_show() -> None:
    assert [path.name for path in NOTEBOOKS] == sorted(SHOWS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.name for path in NOTEBOOKS])
def test_notebook_executes(path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    assert any(SHOWS[path.name] in output.get("text", "") for output in outputs)
