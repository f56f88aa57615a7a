"""Pipeline parts' shared shapes: the usable cut-off k and how a callable is named in a run config."""

from __future__ import annotations

import pytest

from rag_compare.core.protocols import K_EXPECTED, MAX_K, Case, callable_name, is_k


@pytest.mark.parametrize(("value", "usable"), [(1, True), (MAX_K, True), (0, False), (MAX_K + 1, False),
                                                (True, False), (2.0, False), ("3", False), (None, False)])  # fmt: skip
def test_is_k_takes_only_a_whole_number_in_range(value: object, usable: bool) -> None:
    assert is_k(value) is usable
    assert K_EXPECTED == "a whole number from 1 to 1,000,000"


class _Part:
    def __call__(self, case: Case, top_k: int) -> list[str]:
        return []


def test_callable_name_is_a_function_s_own_else_its_class_s() -> None:
    assert callable_name(is_k) == "rag_compare.core.protocols.is_k"
    assert callable_name(_Part()) == f"{__name__}._Part"
    assert (
        callable_name(lambda case: case)
        == f"{__name__}.test_callable_name_is_a_function_s_own_else_its_class_s.<locals>.<lambda>"
    )
