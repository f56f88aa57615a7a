"""The public API is exactly what ``__all__`` lists, and the README documents each name."""

from __future__ import annotations

import inspect
import re

import rag_compare
from tests.helpers.data import ROOT


def _readme_api_names() -> set[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Python API", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)(?:\(|`)", section))


def test_all_names_exist() -> None:
    for name in rag_compare.__all__:
        assert hasattr(rag_compare, name), name


def test_readme_documents_exactly_the_public_api() -> None:
    documented = {
        name
        for name in _readme_api_names()
        if hasattr(rag_compare, name) and not inspect.ismodule(getattr(rag_compare, name))
    }
    assert documented == set(rag_compare.__all__)


def test_errors_share_one_root() -> None:
    errors = [getattr(rag_compare, name) for name in rag_compare.__all__ if name.endswith("Error")]
    assert len(errors) == 13
    assert all(issubclass(error, rag_compare.RagCompareError) for error in errors)
