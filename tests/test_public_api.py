"""The public API is exactly what ``__all__`` lists, and the README documents each name."""

from __future__ import annotations

import inspect
import re
import tomllib

import pytest

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
    assert len(errors) == 16
    assert all(issubclass(error, rag_compare.RagCompareError) for error in errors)


def test_version_is_pyprojects() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert rag_compare.__version__ == pyproject["project"]["version"]


def test_public_names_are_listed_and_an_unknown_one_is_refused() -> None:
    from rag_compare import OpenAIJudge, load_run
    from rag_compare.llm.llm_judge import OpenAIJudge as defined

    assert OpenAIJudge is defined
    assert callable(load_run)
    assert set(rag_compare.__all__) <= set(dir(rag_compare))
    with pytest.raises(AttributeError, match="module 'rag_compare' has no attribute 'nope'"):
        rag_compare.nope  # noqa: B018
