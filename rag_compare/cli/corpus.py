"""The corpus commands: ``validate`` checks a corpus file, ``audit`` how a corpus changed."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from rag_compare.cli.exits import EXIT_FOUND
from rag_compare.cli.options import FORMAT, PATH, Command
from rag_compare.cli.output import wants_json

__all__ = ["audit_command", "validate_command"]


@click.command("validate", cls=Command)
@click.argument("corpus", type=PATH)
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option("--passages", type=PATH, help="The knowledge base: check that required passages exist in it.")
@FORMAT
def validate_command(corpus: Path, strict: bool, passages: Path | None, output_format: str) -> None:
    """Check a corpus file (CSV, Parquet or JSONL) against the corpus contract.

    Every problem is listed at once (row, column, value, what was expected); exit code 2 if any.
    """
    from rag_compare.io.corpus import load_corpus

    wants_json(output_format)
    click.echo(load_corpus(corpus, strict=strict, passages=passages).render(output_format), nl=False)


@click.command("audit", cls=Command)
@click.argument("old", type=PATH)
@click.argument("new", type=PATH)
@FORMAT
def audit_command(old: Path, new: Path, output_format: str) -> None:
    """Audit how a corpus changed from OLD to NEW.

    Removed cases and cases relabelled under the same id are violations (exit code 1): old cases
    are kept, and a policy change makes a new case with a new id and source version.
    """
    from rag_compare.compute.audit import audit_corpora

    wants_json(output_format)
    report = audit_corpora(old, new)
    click.echo(report.render(output_format), nl=False)
    if report.violations:
        sys.exit(EXIT_FOUND)
