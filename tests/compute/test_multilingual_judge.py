"""The offline judge against answers in seven languages labelled by a human reader
(tests/fixtures/multilingual: the labels and how they were decided are in its README)."""

from __future__ import annotations

import re
from functools import cache

import polars as pl
import pytest

from rag_compare.compute.lexical_judge import LexicalJudge
from tests.helpers.data import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "multilingual"
LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl")
KINDS_IN_EVERY_LANGUAGE = (
    "abstention",
    "wrong-abstention",
    "negation",
    "copied",
    "changed-number",
    "half-supported",
    "two-of-three",
    "locale-number",
    "trap-word-piece",
    "trap-accented-capital",
)
MIN_ABSTENTION_ACCURACY = 0.95
MIN_GROUNDED_AGREEMENT = 0.90
GROUNDED_TOLERANCE = 0.25
_SCHEMA = {
    "case_id": pl.String,
    "language": pl.String,
    "answerability": pl.String,
    "question": pl.String,
    "context": pl.String,
    "answer": pl.String,
    "abstained": pl.Boolean,
    "grounded": pl.Float64,
    "kind": pl.String,
    "why": pl.String,
}


@cache
def labelled() -> pl.DataFrame:
    """The fixture's answers and their labels, one row each, in the file's order."""
    return pl.read_ndjson(FIXTURE / "answers.jsonl", schema=_SCHEMA)


@cache
def judged(with_language: bool) -> pl.DataFrame:
    """The labels beside the default judge's verdicts (``judge_abstained``, ``judge_grounded``) and whether
    each verdict agrees with its label (``abstention_hit``, ``grounded_hit``).

    ``grounded_hit``: for a labelled abstention (no grounded label), the judge abstained too; otherwise the
    judge gave a grounded value within ``GROUNDED_TOLERANCE`` of the label. A case the judge left unjudged
    (null verdicts) agrees with no label.
    """
    columns = ["answer", "context", "answerability", "question"] + (["language"] if with_language else [])
    verdicts = LexicalJudge().judge(labelled().select(columns))
    assert verdicts.height == labelled().height
    both = labelled().with_columns(
        judge_abstained=verdicts.get_column("abstained"), judge_grounded=verdicts.get_column("grounded")
    )
    close = (pl.col("judge_grounded") - pl.col("grounded")).abs() <= GROUNDED_TOLERANCE
    grounded_hit = pl.when(pl.col("grounded").is_null()).then(pl.col("judge_abstained")).otherwise(close)
    return both.with_columns(
        abstention_hit=(pl.col("judge_abstained") == pl.col("abstained")).fill_null(False),
        grounded_hit=grounded_hit.fill_null(False),
    )


def report(verdicts: pl.DataFrame, hit: str, label: pl.Expr, judge: pl.Expr) -> str:
    """Each language's share of hits, then each miss with its label and the judge's value (as text)."""
    shares = (
        verdicts.group_by("language", maintain_order=True)
        .agg(hits=pl.col(hit).sum(), answers=pl.len())
        .select(pl.format("{}: {}/{}", "language", "hits", "answers"))
        .to_series()
    )
    misses = verdicts.filter(~pl.col(hit)).select(
        pl.format("  {} ({}): label {}, judge {}", "case_id", "kind", label, judge)
    )
    return "per language " + ", ".join(shares) + "\nmissed:\n" + "\n".join(misses.to_series())


def abstained_text(abstained: str) -> pl.Expr:
    """``abstained`` as text; ``not judged`` when null."""
    return pl.col(abstained).cast(pl.String).fill_null("not judged")


def grounded_text(grounded: str, abstained: str) -> pl.Expr:
    """``grounded`` as text: ``abstained`` when the ``abstained`` column says so, ``not judged`` when that
    is null."""
    value = pl.col(grounded).cast(pl.String).fill_null("null")
    return (
        pl.when(pl.col(abstained).is_null())
        .then(pl.lit("not judged"))
        .when(pl.col(abstained))
        .then(pl.lit("abstained"))
        .otherwise(value)
    )


def test_every_language_has_each_kind_and_consistent_labels() -> None:
    answers = labelled()
    assert answers.get_column("case_id").is_unique().all()
    for case_id, language in answers.select("case_id", "language").iter_rows():
        assert re.fullmatch(rf"[a-z0-9-]+-{language}@v1", case_id), case_id
    assert sorted(answers.get_column("language").unique()) == sorted(LANGUAGES)
    for language in LANGUAGES:
        rows = answers.filter(pl.col("language") == language)
        assert rows.height >= 8, language
        assert set(KINDS_IN_EVERY_LANGUAGE) <= set(rows.get_column("kind")), language
        abstentions = rows.filter(pl.col("kind") == "abstention")
        assert abstentions.height >= 3, language
        assert abstentions.get_column("answer").is_unique().all(), language
    assert answers.filter(pl.col("kind") == "trap-sharp-s").get_column("language").to_list() == ["de", "de"]
    assert answers.get_column("answerability").is_in(["answerable", "unanswerable"]).all()
    for kind, answerability in [("abstention", "unanswerable"), ("wrong-abstention", "answerable")]:
        assert answers.filter(kind=kind).get_column("answerability").unique().to_list() == [answerability], kind
    assert (answers.get_column("grounded").is_null() == answers.get_column("abstained")).all()
    assert answers.get_column("grounded").drop_nulls().is_between(0.0, 1.0).all()
    fixed = [
        ("negation", 1.0),
        ("copied", 1.0),
        ("changed-number", 0.0),
        ("half-supported", 0.5),
        ("two-of-three", 2 / 3),
    ]
    for kind, grounded in fixed:
        assert answers.filter(pl.col("kind") == kind).get_column("grounded").to_list() == [grounded] * 7, kind


def test_readme_counts_are_the_fixtures() -> None:
    table = re.findall(r"^\| `([a-z-]+)` \|((?: *\d+ *\|)+)$", (FIXTURE / "README.md").read_text(), re.MULTILINE)
    documented = {kind: [int(count) for count in counts.split("|") if count.strip()] for kind, counts in table}
    counts = labelled().group_by("kind", "language").len()
    expected = {}
    for kind in labelled().get_column("kind").unique():
        row = [counts.filter(kind=kind, language=language).get_column("len").sum() for language in LANGUAGES]
        expected[kind] = [*row, sum(row)]
    assert documented == expected


@pytest.mark.parametrize("with_language", [True, False], ids=["language-column", "language-detected"])
def test_abstentions_agree_with_the_labels(with_language: bool) -> None:
    verdicts = judged(with_language)
    accuracy: float = verdicts.select(pl.col("abstention_hit").mean()).item()
    assert accuracy >= MIN_ABSTENTION_ACCURACY, f"abstention accuracy {accuracy:.3f}\n" + report(
        verdicts, "abstention_hit", abstained_text("abstained"), abstained_text("judge_abstained")
    )


@pytest.mark.parametrize("with_language", [True, False], ids=["language-column", "language-detected"])
def test_grounded_agrees_with_the_labels(with_language: bool) -> None:
    verdicts = judged(with_language)
    agreement: float = verdicts.select(pl.col("grounded_hit").mean()).item()
    assert agreement >= MIN_GROUNDED_AGREEMENT, (
        f"grounded within {GROUNDED_TOLERANCE} of its label: {agreement:.3f}\n"
        + report(
            verdicts,
            "grounded_hit",
            grounded_text("grounded", "abstained"),
            grounded_text("judge_grounded", "judge_abstained"),
        )
    )
