"""Errors and their problems: where a problem is said, in file order, the first 50 listed, no credential shown."""

from __future__ import annotations

from rag_compare.core import errors
from rag_compare.core.errors import ConfigError, ContractError, Problem, RagCompareError, show_value
from tests.helpers.credential_shapes import OPENAI_KEY


def test_a_problem_says_where_it_is_and_what_was_expected() -> None:
    problem = Problem("one of: a, b", row=3, column="answerability", value="'c'")
    assert str(problem) == "row 3, column 'answerability': got 'c'; expected one of: a, b"
    assert Problem.at(3, "answerability", "c", "one of: a, b") == problem
    assert str(Problem("a header row")) == "expected a header row"
    assert problem.to_dict() == {"row": 3, "column": "answerability", "value": "'c'", "expected": "one of: a, b"}


def test_a_contract_error_lists_its_problems_in_file_order_the_first_50_only() -> None:
    problems = [Problem("x", row=row, column="b") for row in range(60, 0, -1)] + [Problem("a column", column="a")]
    error = ContractError("corpus.csv", "corpus", problems)
    assert [problem.row for problem in error.problems[:3]] == [None, 1, 2]
    message = str(error)
    assert message.startswith("corpus.csv: not a valid corpus (61 problems; nothing was loaded):\n  - column 'a'")
    assert "row 49, column 'b'" in message
    assert "row 50, column 'b'" not in message
    assert "  … and 11 more (all are in the error's `problems`)\n" in message
    assert "(all are listed with --format json)" in error.message("all are listed with --format json")


def test_a_short_value_is_quoted_and_a_long_one_cut() -> None:
    assert show_value(None) == "an empty cell"
    assert show_value(3) == "3"
    shown = show_value("x" * 100)
    assert len(shown) == 60
    assert shown.endswith("...")


def test_show_value_redacts_a_credential() -> None:
    assert show_value(OPENAI_KEY) == "'sk-…(redacted)'"
    assert show_value("plain") == "'plain'"


def test_library_errors_never_hold_a_credential() -> None:
    error = ConfigError(f"the retriever returned {OPENAI_KEY}")
    assert str(error) == "the retriever returned sk-…(redacted)"


def test_every_error_class_is_in_the_tree_of_the_module_docstring_and_exported() -> None:
    classes = {
        name for name, value in vars(errors).items() if isinstance(value, type) and issubclass(value, RagCompareError)
    }
    tree = {line.split("── ")[-1].split()[0] for line in (errors.__doc__ or "").splitlines() if "── " in line}
    assert classes - tree == {"RagCompareError"}
    assert classes <= set(errors.__all__)
