"""The commands that draft synthetic cases and admit the reviewed ones: ``draft-cases`` and ``admit``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from rag_compare.cli.exits import interrupted, say
from rag_compare.cli.options import (
    BASE_URL,
    CACHE,
    FORMAT,
    PATH,
    Command,
    OutputPath,
    endpoint_settings,
    limit_options,
    model_option,
)
from rag_compare.cli.output import wants_json
from rag_compare.core.result import to_json

if TYPE_CHECKING:
    from rag_compare.llm.limits import Limits

__all__ = ["admit_command", "draft_cases_command"]


@click.command("draft-cases", cls=Command)
@click.option("--passages", type=PATH, required=True, help="The knowledge base (CSV, Parquet or JSONL) to draft from.")
@model_option("The model the endpoint serves.", required=True)
@click.option("--n", "n", type=click.IntRange(min=1), required=True, help="How many passages to draft from.")
@BASE_URL
@click.option("--source-version", help="Draft only from passages of this source version.")
@click.option(
    "--wordings",
    type=click.IntRange(min=0),
    default=2,
    show_default=True,
    help="Alternative wordings asked for each question.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Picks the passages; also sent to the endpoint.")
@limit_options(concurrency=8, timeout=60.0, max_retries=4, unit="request")
@CACHE
@click.option(
    "--output",
    type=OutputPath("drafts file"),
    required=True,
    help="The drafts file to write (CSV, Parquet or JSONL; never overwritten).",
)
@FORMAT
def draft_cases_command(
    passages: Path,
    model: str,
    n: int,
    base_url: str | None,
    source_version: str | None,
    wordings: int,
    seed: int,
    limits: Limits,
    cache: Path | bool,
    output: Path,
    output_format: str,
) -> None:
    """Draft candidate cases from N passages of PASSAGES with a model, into a corpus file of drafts.

    Each passage gives a question it answers, --wordings other wordings of it (answerable,
    category synthetic_wording) and a distractor it does not answer (unanswerable, category
    distractor). Every draft is origin=synthetic, reviewed=false: not gold until a person reviews
    it and marks it with rag-compare admit DRAFTS --ids ID[,ID...].
    """
    from rag_compare.io.drafts_file import check_drafts_output, write_drafts
    from rag_compare.llm.drafts import draft_cases

    wants_json(output_format)
    check_drafts_output(output)
    try:
        drafts = draft_cases(
            passages,
            model=model,
            n=n,
            source_version=source_version,
            seed=seed,
            wordings=wordings,
            **endpoint_settings(base_url, limits, cache),
        )
    except KeyboardInterrupt:
        interrupted("every reply received so far is cached")
    write_drafts(drafts, output)
    if output_format == "json":
        click.echo(to_json({"path": str(output), **drafts.to_dict()}), nl=False)
        return
    click.echo(drafts.render("text"), nl=False)
    say(f"wrote {output}")
    if drafts.failures:
        count = len(drafts.failures)
        say(
            f"warning: {count} {'passage' if count == 1 else 'passages'} could not be drafted (listed above). "
            "Run again with a new --output to retry them: the other replies are cached.",
            err=True,
        )
    say(
        "next: review every draft (edit the question or note, delete the rows you would not accept as gold), "
        f"then mark the good ones: rag-compare admit {output} --ids ID[,ID...]"
    )


def _ids(ctx: click.Context, param: click.Parameter, values: Sequence[str]) -> tuple[str, ...]:
    ids = tuple(dict.fromkeys(part.strip() for value in values for part in value.split(",") if part.strip()))
    if not ids:
        raise click.BadParameter("give at least one case id, e.g. --ids draft-0123456789@v1.")
    return ids


@click.command("admit", cls=Command)
@click.argument("drafts", type=PATH)
@click.option(
    "--ids",
    "ids",
    multiple=True,
    required=True,
    callback=_ids,
    metavar="ID[,ID...]",
    help="The case ids to mark as reviewed (gold). Repeatable.",
)
@click.option(
    "--output",
    type=OutputPath("admitted corpus"),
    help="Write the admitted corpus here (never overwritten) instead of in place.",
)
@FORMAT
def admit_command(drafts: Path, ids: tuple[str, ...], output: Path | None, output_format: str) -> None:
    """Mark the reviewed cases IDS of DRAFTS as gold (reviewed=true), all at once.

    DRAFTS is rewritten in place (atomically, same format) unless --output is given. An id that is
    not in DRAFTS refuses the whole command and leaves the file untouched.
    """
    import polars as pl

    from rag_compare.io.corpus import load_corpus
    from rag_compare.io.drafts_file import admit_cases

    wants_json(output_format)
    before = load_corpus(drafts).frame
    already = before.filter(pl.col("case_id").is_in(ids) & pl.col("reviewed")).get_column("case_id").to_list()
    frame = admit_cases(drafts, ids, output=output)
    written = drafts if output is None else output
    left = frame.filter(~pl.col("reviewed")).height
    if output_format == "json":
        payload = {
            "path": str(written),
            "cases": frame.height,
            "admitted": list(ids),
            "already_reviewed": already,
            "unreviewed": left,
        }
        click.echo(to_json(payload), nl=False)
        return
    noted = f" ({len(already)} already reviewed)" if already else ""
    say(f"admitted {len(ids)} cases as reviewed{noted}; wrote {written}")
    say(f"{left} of {frame.height} cases still await review (reviewed=false)")
