"""The ``review`` command: two frozen runs compared, and the comparison served for review on loopback."""

from __future__ import annotations

import contextlib
import sys
import webbrowser
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_compare.cli.exits import say
from rag_compare.cli.flags import in_flags
from rag_compare.cli.options import (
    COMPARED,
    COMPARED_ON,
    JUDGED_BY,
    OFFLINE_JUDGE,
    PATH,
    Command,
    OutputPath,
    check_engine,
)

if TYPE_CHECKING:
    from rag_compare.compute.comparison import Comparison
    from rag_compare.compute.lexical_judge import LexicalJudge
    from rag_compare.serve.server import ReviewServer

__all__ = ["review_command"]


@click.command("review", cls=Command)
@click.argument("baseline", type=PATH)
@click.argument("candidate", type=PATH)
@click.option(
    "--db",
    type=OutputPath("review database", existing="updated", parameter="db"),
    required=True,
    help="The review database (SQLite) the verdicts go to, created when missing; one database holds the verdicts "
    "of many comparisons.",
)
@click.option("--reviewer", help="The name verdicts given through the page are signed with [default: the login name].")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address to serve on; any but 127.0.0.1, ::1 or localhost needs a token on every request "
    "($RAG_COMPARE_REVIEW_TOKEN, else a new one, printed in the URL).",
)
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="The port to serve on; 0: a free one."
)
@click.option("--no-browser", is_flag=True, help="Print the URL only; do not open it in a browser.")
@COMPARED
@JUDGED_BY
@COMPARED_ON
@OFFLINE_JUDGE
def review_command(
    baseline: Path,
    candidate: Path,
    db: Path,
    reviewer: str | None,
    host: str,
    port: int,
    no_browser: bool,
    engine: str,
    buckets: int | None,
    ray_address: str | None,
    offline_judge: LexicalJudge,
    **comparing: Any,
) -> None:
    """Compare CANDIDATE with BASELINE and serve the comparison for review, until Ctrl-C.

    The page lists the cases (filter, search, sort, a page at a time), queues the ones to review first
    (regressed and failed, judges that disagree, unstable, improved, then a sample of unchanged ones) and
    takes a verdict on each: whether its status is right, and labels of either side's answer. Verdicts go to
    --db, bound to both runs' fingerprints; export them with rag-compare reviews export. The JSON API the
    page uses is in the README (Review).
    """
    from rag_compare.serve.extra import require_review_extra

    require_review_extra()
    check_engine(engine, buckets, ray_address)
    if reviewer is not None and not reviewer.strip():
        raise click.BadParameter("a reviewer's name is not blank: give one, or leave out --reviewer.")
    comparing |= {"judge": offline_judge, "engine": engine, "buckets": buckets, "ray_address": ray_address}
    comparison, server = _server(baseline, candidate, db, host=host, port=port, reviewer=reviewer, comparing=comparing)
    for warning in comparison.warnings:
        say(f"warning: {warning}", err=True)
    say(_serving_line(comparison, server, db))
    sys.stdout.flush()  # the URL, at once, for a reader of a pipe
    if not no_browser:
        webbrowser.open(server.url)
    try:
        server.serve()
    except KeyboardInterrupt:  # Ctrl-C: how a review ends
        say(f"stopped the review server; every verdict given is in {db}.", err=True)


def _server(
    baseline: Path, candidate: Path, db: Path, *, host: str, port: int, reviewer: str | None, comparing: dict[str, Any]
) -> tuple[Comparison, ReviewServer]:
    """The comparison of ``candidate`` with ``baseline`` (``comparing``: ``compare``'s keywords) and its review
    server into ``db``: the address bound and an existing database opened first, so that a port in use or a
    file that is no review database is refused before the comparison is worked out (a new one is created
    only once it is)."""
    from rag_compare.compute.compare_runs import compare
    from rag_compare.io.review_db import ReviewDatabase
    from rag_compare.serve.server import ReviewServer, listen

    listener = listen(host, port)
    with contextlib.ExitStack() as undo:
        undo.callback(listener.bound.close)
        database = ReviewDatabase.open(db) if db.exists() else None
        if database is not None:
            undo.callback(database.close)
        comparison = in_flags(compare(baseline, candidate, **comparing), "review")
        if database is None:
            database = ReviewDatabase.open(db)
            undo.callback(database.close)
        server = ReviewServer.of(comparison, database, listener, reviewer=reviewer)
        undo.pop_all()
    return comparison, server


def _serving_line(comparison: Comparison, server: ReviewServer, db: Path) -> str:
    token = "" if server.shown_url == server.url else " (with the token of $RAG_COMPARE_REVIEW_TOKEN)"
    return (
        f"reviewing {comparison.n_cases} cases ({comparison.counts_text(', ')}) at {server.shown_url}{token}; "
        f"verdicts go to {db}. Ctrl-C stops the server."
    )
