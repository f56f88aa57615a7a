"""The ``rag-compare`` command line: parse, call the library, print.

``rag-compare BASELINE CANDIDATE`` is the main command (``compare``); the others are named. Every
``RagCompareError`` ends as a one-paragraph message on stderr and exit code 2 (a traceback only with
``--debug``); exit code 1 is kept for checks that ran and found something (``audit``, ``--fail-on``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import traceback
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import click

from rag_compare._version import __version__
from rag_compare.cli.capture import capture_command
from rag_compare.cli.drafts import admit_command, draft_cases_command
from rag_compare.cli.exits import EXIT_BAD_INPUT, EXIT_BROKEN_PIPE, EXIT_FOUND, EXIT_TERMINATED, interrupted, say
from rag_compare.cli.options import FORMAT, INCLUDE_UNREVIEWED, PATH, RUN_CONFIG, Command, finite_float, format_option
from rag_compare.cli.output import emit, wants_json
from rag_compare.cli.scores import fallback, import_scores_command, score
from rag_compare.core.credentials import redact
from rag_compare.core.errors import LISTED_AS_JSON, ContractError, RagCompareError
from rag_compare.core.result import DEFAULT_MAX_CASES, FORMATS, REPORT_FORMATS, terminal_safe

__all__ = ["main"]

_GROUP_FLAGS = frozenset({"--debug", "--version", "-h", "--help"})


class _Cli(click.Group):
    """A group that turns library errors into messages and exit code 2, and runs ``compare`` by default.

    Called (``main()``: the console script and ``python -m rag_compare``), it is the process's entry
    point; tests invoke ``main.main(...)`` in-process instead.
    """

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Run the command line as the process, and end the process with the command's exit code.

        SIGTERM ends a command like an error does (exit 143): ``finally`` blocks run, so no temporary
        file is left. Once the command is done and stdout and stderr are flushed, the process ends at
        once (``os._exit``): the native thread pools of Arrow and Polars are not torn down, as that
        teardown can abort an exiting process ("terminate called without an active exception", 134).
        """
        signal.signal(signal.SIGTERM, _terminate)
        try:
            self.main(*args, **kwargs)
            code = 0
        except SystemExit as exit:
            code = _exit_code(exit.code)
        except Exception:  # a bug, or an error shown with --debug
            traceback.print_exc()
            code = 1
        os._exit(_flushed(code))

    command_class = Command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Route ``rag-compare A B ...`` to ``compare`` when ``A`` names a file rather than a command."""
        words = [index for index, arg in enumerate(args) if arg not in _GROUP_FLAGS]
        if words:
            first = args[words[0]]
            if first not in self.commands and not first.startswith("-") and _looks_like_path(first):
                args = [*args[: words[0]], "compare", *args[words[0] :]]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RagCompareError as error:
            if ctx.meta.get("rag_compare.debug"):
                raise
            from rag_compare.cli.flags import as_flags

            said = partial(as_flags, group=self, command=ctx.invoked_subcommand)
            if isinstance(error, ContractError) and ctx.meta.get("rag_compare.json"):
                click.echo(redact(json.dumps(_contract_payload(error, said), indent=2, ensure_ascii=False)))
            _fail(said(error.message(LISTED_AS_JSON) if isinstance(error, ContractError) else str(error)))
        except click.UsageError as error:  # it quotes the value given, which may be a key
            raise click.UsageError(redact(error.format_message()), error.ctx) from None
        except BrokenPipeError:
            _broken_pipe()
        except KeyboardInterrupt:
            interrupted()
        except OSError as error:
            if ctx.meta.get("rag_compare.debug"):
                raise
            _fail(f"{error.filename or 'the output'}: {error.strerror or error}. Check the path and permissions.")


def _terminate(signum: int, frame: FrameType | None) -> NoReturn:
    sys.exit(EXIT_TERMINATED)


def _exit_code(code: object) -> int:
    """The process exit code of ``SystemExit(code)``, as Python itself would exit with it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _flushed(code: int) -> int:
    """Flush stdout and stderr; ``code``, or ``EXIT_BROKEN_PIPE`` when stdout's reader has left."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        code = code or EXIT_BROKEN_PIPE
    except OSError as error:
        print(f"error: the output cannot be written ({error.strerror or error}).", file=sys.stderr)
        code = code or EXIT_BAD_INPUT
    with contextlib.suppress(OSError):
        sys.stderr.flush()
    return code


def _broken_pipe() -> NoReturn:
    """The reader of stdout left (``| head``): stop quietly, as a command cut off by SIGPIPE does."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(EXIT_BROKEN_PIPE)


def _looks_like_path(word: str) -> bool:
    return "/" in word or "." in word or Path(word).exists()


def _fail(message: str) -> NoReturn:
    click.secho("error: ", fg="red", bold=True, err=True, nl=False)
    click.echo(terminal_safe(redact(message)), err=True)
    sys.exit(EXIT_BAD_INPUT)


def _contract_payload(error: ContractError, said: Callable[[str], str]) -> dict[str, Any]:
    return {
        "source": error.source,
        "valid": False,
        "problems": [{**problem.to_dict(), "expected": said(problem.expected)} for problem in error.problems],
    }


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rag-compare")
@click.option("--debug", is_flag=True, envvar="RAG_COMPARE_DEBUG", help="Show the full traceback of an error.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Compare two versions of a retrieval-augmented chatbot, case by case.

    \b
    rag-compare BASELINE CANDIDATE [OPTIONS]   compare two frozen runs (see: rag-compare compare --help)
    rag-compare COMMAND ...                    the other commands below

    Exit codes: 0 the command ran; 1 a check found something (audit violations, --fail-on); 2 bad input or usage.
    """
    ctx.meta["rag_compare.debug"] = debug


@main.command()
@click.argument("corpus", type=PATH)
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option("--passages", type=PATH, help="The knowledge base: check that required passages exist in it.")
@FORMAT
def validate(corpus: Path, strict: bool, passages: Path | None, output_format: str) -> None:
    """Check a corpus file (CSV, Parquet or JSONL) against the corpus contract.

    Every problem is listed at once (row, column, value, what was expected); exit code 2 if any.
    """
    from rag_compare.io.corpus import load_corpus

    wants_json(output_format)
    click.echo(load_corpus(corpus, strict=strict, passages=passages).render(output_format), nl=False)


@main.command()
@click.argument("old", type=PATH)
@click.argument("new", type=PATH)
@FORMAT
def audit(old: Path, new: Path, output_format: str) -> None:
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


@main.command()
@click.argument("records", type=PATH)
@click.option("--corpus", type=PATH, required=True, help="The corpus the records were run against.")
@RUN_CONFIG
@INCLUDE_UNREVIEWED
@click.option("--output", type=PATH, required=True, help="The run file to write (never overwritten).")
@FORMAT
def freeze(
    records: Path,
    corpus: Path,
    config: dict[str, Any],
    include_unreviewed: bool,
    output: Path,
    output_format: str,
) -> None:
    """Freeze RECORDS (what a pipeline did, per case) with the corpus labels and config into one file."""
    from rag_compare.io.runs import freeze_run

    wants_json(output_format)
    run = freeze_run(records, corpus, config, output=output, include_unreviewed=include_unreviewed)
    if output_format == "json":
        click.echo(run.to_json(), nl=False)
    else:
        say(f"froze {run.records.height} cases of '{run.name}' to {output} (fingerprint {run.fingerprint[:12]})")


@main.command()
@click.argument("file", type=PATH)
@FORMAT
def show(file: Path, output_format: str) -> None:
    """Show a frozen run (config, fingerprint, number of cases, counts by status) or a scores file
    (the run it scored, its evaluator, judge statuses, tokens and each signal's mean)."""
    from rag_compare.io.runs import is_scores_file, load_run
    from rag_compare.io.scores import load_scores

    wants_json(output_format)
    shown = load_scores(file) if is_scores_file(file) else load_run(file)
    click.echo(shown.render(output_format), nl=False)


def _statuses(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, ...]:
    from rag_compare.compute.comparison import CASE_STATUSES

    if not value:
        return ()
    statuses = tuple(part.strip() for part in value.split(",") if part.strip())
    unknown = [status for status in statuses if status not in CASE_STATUSES]
    if unknown:
        raise click.BadParameter(f"unknown status {', '.join(unknown)}; use any of: {', '.join(CASE_STATUSES)}.")
    return statuses


@main.command("compare")
@click.argument("baseline", type=PATH)
@click.argument("candidate", type=PATH)
@click.option(
    "--corpus",
    type=PATH,
    help="Judge both runs by this corpus' labels; its cases that neither run has are missing_in_both.",
)
@click.option(
    "--passages",
    type=PATH,
    help="The knowledge base: find required passages' text in the context of records without context_passage_ids.",
)
@click.option(
    "--k",
    type=click.IntRange(min=1),
    help="Cut both ranked lists at k [default: each run's top_k, else the list's length].",
)
@click.option(
    "--tolerance",
    type=finite_float(0),
    default=1e-9,
    show_default=True,
    help="How far a signal must move to count as changed.",
)
@format_option(
    FORMATS + REPORT_FORMATS,
    "A summary for a terminal (text), data for programs (json), or a report to read: markdown, or html "
    "(one self-contained page that opens offline).",
)
@click.option(
    "--all-cases", is_flag=True, help="Reports (markdown, html) list the unchanged cases too, not only count them."
)
@click.option(
    "--max-cases",
    type=click.IntRange(min=0),
    default=DEFAULT_MAX_CASES,
    show_default=True,
    help="Reports (markdown, html) list at most this many cases per status; 0 lists every one.",
)
@click.option("--output", type=PATH, help="Write the output to this file (replaced atomically) instead of stdout.")
@click.option(
    "--fail-on",
    callback=_statuses,
    metavar="STATUS[,STATUS...]",
    help="Exit with code 1 when any case has one of these statuses, e.g. regressed,failed_in_candidate.",
)
@click.option(
    "--baseline-scores", type=PATH, help="A scores file of BASELINE: its verdicts replace the offline judge's."
)
@click.option(
    "--candidate-scores", type=PATH, help="A scores file of CANDIDATE: its verdicts replace the offline judge's."
)
def compare_command(
    baseline: Path,
    candidate: Path,
    corpus: Path | None,
    passages: Path | None,
    k: int | None,
    tolerance: float,
    output_format: str,
    all_cases: bool,
    max_cases: int,
    output: Path | None,
    fail_on: tuple[str, ...],
    baseline_scores: Path | None,
    candidate_scores: Path | None,
) -> None:
    """Compare the frozen run CANDIDATE with BASELINE, case by case (also: rag-compare BASELINE CANDIDATE).

    Each case gets one status (missing, failed, judge_failed, improved, regressed, mixed or unchanged)
    with the signals that moved; aggregates come with 95% bootstrap intervals and Holm-adjusted
    p-values. A report for reviewers: --format html --output report.html (or --format markdown).
    LLM verdicts: score each run (rag-compare score) and pass --baseline-scores/--candidate-scores.
    """
    from rag_compare.cli.flags import as_flags
    from rag_compare.compute.compare_runs import compare

    comparison = compare(
        baseline,
        candidate,
        corpus,
        passages=passages,
        k=k,
        tolerance=tolerance,
        baseline_scores=baseline_scores,
        candidate_scores=candidate_scores,
    )
    comparison = replace(
        comparison, warnings=tuple(as_flags(warning, main, "compare") for warning in comparison.warnings)
    )
    limit = max_cases or None
    emit(lambda stream: comparison.write(stream, output_format, all_cases=all_cases, max_cases=limit), output)
    if output is not None:
        say(f"wrote the {output_format} comparison to {output}: {comparison.counts_text(', ')}")
    if any(comparison.counts[status] for status in fail_on):
        sys.exit(EXIT_FOUND)


for command in (capture_command, draft_cases_command, admit_command, score, import_scores_command, fallback):
    main.add_command(command)
