"""The offline judge against the hardest answers for a word-overlap judge, labelled by a human reader claim by
claim (tests/fixtures/strict_judge: the labels and how they were decided are in its README): entity swaps,
names kept, negation flips, paraphrases, abstentions no phrase list holds and hedges that go on to answer.

Figures are per answer. "Unsupported": an answer labelled as answering with a claim the context does not
support (``grounded`` label below 1), called so by the judge when it answers with ``grounded`` below 1.
An entity swap is caught when the judge answers with ``grounded`` below its label + ``SWAP_MARGIN`` (0 for a
swap in its only claim, 0.5 or 0 when another claim is right); a paraphrase (or a name kept) stays supported
at ``grounded`` of ``SUPPORTED`` or more. The README's table of these figures is checked against the judge.
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

import polars as pl
import pytest

from rag_compare.compute.lexical_judge import LexicalJudge
from tests.helpers.data import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "strict_judge"
README = ROOT / "README.md"
LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl")
MIN_ABSTENTION_RECALL = 0.97
MIN_ABSTENTION_PRECISION = 0.97
MIN_SWAPS_CAUGHT = 0.90
MIN_PARAPHRASES_SUPPORTED = 0.80
SWAP_MARGIN = 0.25
SUPPORTED = 0.75
_CLAIM = pl.Struct({"text": pl.String, "supported": pl.Boolean})
_SCHEMA = pl.Schema(
    [
        ("case_id", pl.String()),
        ("language", pl.String()),
        ("answerability", pl.String()),
        ("question", pl.String()),
        ("context", pl.String()),
        ("answer", pl.String()),
        ("abstained", pl.Boolean()),
        ("grounded", pl.Float64()),
        ("claims", pl.List(_CLAIM)),
        ("kind", pl.String()),
        ("why", pl.String()),
    ]
)


class Share(NamedTuple):
    """``hits`` of ``of`` answers."""

    hits: int
    of: int

    @property
    def value(self) -> float:
        return self.hits / self.of


@cache
def labelled() -> pl.DataFrame:
    """The fixture's answers and their labels, one row each, in the file's order."""
    return pl.read_ndjson(FIXTURE / "answers.jsonl", schema=_SCHEMA)


@cache
def judged(with_language: bool) -> pl.DataFrame:
    """The labels beside the default judge's verdicts (``judge_abstained``, ``judge_grounded``), and for each
    answer whether the judge answered with a claim unsupported (``judge_unsupported``) and whether it
    abstained (false where it did not judge)."""
    columns = ["answer", "context", "answerability", "question"] + (["language"] if with_language else [])
    verdicts = LexicalJudge().judge(labelled().select(columns))
    assert verdicts.height == labelled().height
    both = labelled().with_columns(
        judge_abstained=verdicts.get_column("abstained").fill_null(False),
        judge_grounded=verdicts.get_column("grounded"),
    )
    answered = ~pl.col("judge_abstained")
    return both.with_columns(
        unsupported=~pl.col("abstained") & (pl.col("grounded") < 1),
        judge_unsupported=(answered & (pl.col("judge_grounded") < 1)).fill_null(False),
        caught=(answered & (pl.col("judge_grounded") < pl.col("grounded") + SWAP_MARGIN)).fill_null(False),
        supported=(answered & (pl.col("judge_grounded") >= SUPPORTED)).fill_null(False),
    )


def share(verdicts: pl.DataFrame, hit: str, among: pl.Expr) -> Share:
    """How many of the answers ``among`` selects have ``hit`` true."""
    rows = verdicts.filter(among)
    return Share(int(rows.get_column(hit).sum()), rows.height)


def figures(with_language: bool) -> dict[str, Share]:
    """Every figure of the README's table, by its row's name."""
    verdicts = judged(with_language)
    kind = pl.col("kind")
    return {
        "abstentions found (recall)": share(verdicts, "judge_abstained", pl.col("abstained")),
        "abstentions right (precision)": share(verdicts, "abstained", pl.col("judge_abstained")),
        "entity swaps caught": share(verdicts, "caught", kind == "entity-swap"),
        "names kept still supported": share(verdicts, "supported", kind == "entity-kept"),
        "paraphrases still supported": share(verdicts, "supported", kind == "paraphrase"),
        "negation flips caught": share(verdicts, "caught", kind == "negation-flip"),
        "unsupported answers found (recall)": share(verdicts, "judge_unsupported", pl.col("unsupported")),
        "unsupported answers right (precision)": share(verdicts, "unsupported", pl.col("judge_unsupported")),
    }


def misses(verdicts: pl.DataFrame, among: pl.Expr, hit: str) -> str:
    """Each language's hits, then each miss of ``among`` with its labels and the judge's verdicts."""
    rows = verdicts.filter(among)
    shares = (
        rows.group_by("language", maintain_order=True)
        .agg(hits=pl.col(hit).sum(), answers=pl.len())
        .select(pl.format("{}: {}/{}", "language", "hits", "answers"))
        .to_series()
    )
    missed = rows.filter(~pl.col(hit)).select(
        pl.format(
            "  {} ({}): label abstained {} grounded {}, judge abstained {} grounded {}",
            "case_id",
            "kind",
            "abstained",
            pl.col("grounded").cast(pl.String).fill_null("null"),
            "judge_abstained",
            pl.col("judge_grounded").cast(pl.String).fill_null("null"),
        )
    )
    return "per language " + ", ".join(shares) + "\nmissed:\n" + "\n".join(missed.to_series())


def test_the_fixture_is_the_one_its_readme_describes() -> None:
    answers = labelled()
    assert answers.height == 182
    assert answers.get_column("case_id").is_unique().all()
    assert sorted(answers.get_column("language").unique()) == sorted(LANGUAGES)
    table = re.findall(r"^\| `([a-z-]+)` \|((?: *\d+ *\|)+)$", (FIXTURE / "README.md").read_text(), re.MULTILINE)
    documented = {kind: [int(count) for count in counts.split("|") if count.strip()] for kind, counts in table}
    counts = answers.group_by("kind", "language").len()
    for kind, row in documented.items():
        found = [counts.filter(kind=kind, language=language).get_column("len").sum() for language in LANGUAGES]
        assert [*found, sum(found)] == row, kind
    supported = answers.select(pl.col("claims").list.eval(pl.element().struct.field("supported")).list.mean())
    assert supported.to_series().equals(answers.get_column("grounded"), check_names=False)


@pytest.mark.parametrize("with_language", [True, False], ids=["language-column", "language-detected"])
def test_abstentions_are_found_and_right(with_language: bool) -> None:
    verdicts = judged(with_language)
    found = figures(with_language)
    recall, precision = found["abstentions found (recall)"], found["abstentions right (precision)"]
    assert recall.value >= MIN_ABSTENTION_RECALL, f"abstention recall {recall}\n" + misses(
        verdicts, pl.col("abstained"), "judge_abstained"
    )
    assert precision.value >= MIN_ABSTENTION_PRECISION, f"abstention precision {precision}\n" + misses(
        verdicts, pl.col("judge_abstained"), "abstained"
    )


@pytest.mark.parametrize("with_language", [True, False], ids=["language-column", "language-detected"])
def test_entity_swaps_are_caught(with_language: bool) -> None:
    caught = figures(with_language)["entity swaps caught"]
    assert caught.value >= MIN_SWAPS_CAUGHT, f"entity swaps caught {caught}\n" + misses(
        judged(with_language), pl.col("kind") == "entity-swap", "caught"
    )


@pytest.mark.parametrize("with_language", [True, False], ids=["language-column", "language-detected"])
def test_paraphrases_stay_supported(with_language: bool) -> None:
    supported = figures(with_language)["paraphrases still supported"]
    assert supported.value >= MIN_PARAPHRASES_SUPPORTED, f"paraphrases supported {supported}\n" + misses(
        judged(with_language), pl.col("kind") == "paraphrase", "supported"
    )


def test_the_readmes_figures_are_the_judges() -> None:
    """The README's table of the judge on this set (the offline judge's section) holds exactly what the judge
    gives, with the ``language`` column and with the language detected."""
    text = README.read_text(encoding="utf-8")
    rows = re.findall(r"^\| ([a-z ()]+) \| (\d+) of (\d+) \| (\d+) of (\d+) \|$", text, re.MULTILINE)
    documented = {name: (Share(int(a), int(b)), Share(int(c), int(d))) for name, a, b, c, d in rows}
    expected = {name: (given, figures(False)[name]) for name, given in figures(True).items()}
    assert documented == expected
