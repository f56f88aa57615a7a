"""The ``reviews`` commands: ``reviews export`` freezes the verdicts of a review database on two runs."""

from __future__ import annotations

from pathlib import Path

import click

from rag_compare.cli.exits import say
from rag_compare.cli.options import FORMAT, PATH, FreezingCommand, OutputPath
from rag_compare.cli.output import wants_json
from rag_compare.core.listing import counted

__all__ = ["reviews"]


@click.group()
def reviews() -> None:
    """Reviews: what people decided on a comparison's cases, kept in a review database (rag-compare review
    --db), frozen in a reviews file."""


@reviews.command("export", cls=FreezingCommand)
@click.argument("baseline", type=PATH)
@click.argument("candidate", type=PATH)
@click.option("--db", type=PATH, required=True, help="The review database the verdicts were given in.")
@click.option(
    "--output", type=OutputPath("reviews file"), required=True, help="The reviews file to write (never overwritten)."
)
@FORMAT
def export_command(baseline: Path, candidate: Path, db: Path, output: Path, output_format: str) -> None:
    """Freeze the latest verdict on each case and side of BASELINE and CANDIDATE in --db as a reviews file:
    fingerprinted, the human evaluator judges are measured against. rag-compare show REVIEWS.arrow shows it."""
    from rag_compare.io.reviews import export_reviews

    wants_json(output_format)
    exported = export_reviews(db, baseline, candidate, output)
    if output_format == "json":
        click.echo(exported.to_json(), nl=False)
        return
    cases = counted(exported.frame.get_column("case_id").n_unique(), "case")
    reviewers = counted(len(exported.reviewers), "reviewer")
    say(
        f"exported {counted(exported.frame.height, 'verdict')} on {cases} by {reviewers} to {output} "
        f"(fingerprint {exported.fingerprint[:12]})"
    )
