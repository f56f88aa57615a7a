"""The ``rag-compare`` command group: the entry point and the error funnel; the commands live in
their families' modules (compare, review, corpus, runs, capture, drafts, scores).

``rag-compare BASELINE CANDIDATE`` is the main command (``compare``); the others are named. Every
``RagCompareError`` ends as a one-paragraph message on stderr and exit code 2 (a traceback only with
``--debug``); exit code 1 is kept for checks that ran and found something (``audit``, a comparison's
gate: ``--fail-on``, ``--gate``).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

import click

from rag_compare._version import __version__
from rag_compare.cli.agreement import agreement_command
from rag_compare.cli.capture import capture_command
from rag_compare.cli.compare import compare_command
from rag_compare.cli.corpus import audit_command, validate_command
from rag_compare.cli.drafts import admit_command, draft_cases_command
from rag_compare.cli.exits import EXIT_BAD_INPUT, EXIT_BROKEN_PIPE, interrupted, say
from rag_compare.cli.history import history_command
from rag_compare.cli.pairs import judge_pairs_command
from rag_compare.cli.review import review_command
from rag_compare.cli.reviews import reviews
from rag_compare.cli.runs import freeze_command, import_run_command, merge_repeats_command, show_command
from rag_compare.cli.scores import fallback, import_scores_command, score
from rag_compare.cli.stopping import stop_on_signals
from rag_compare.core.credentials import redact
from rag_compare.core.errors import LISTED_AS_JSON, ContractError, RagCompareError

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
        file is left; SIGTERM and SIGINT end it too when its main thread is stuck (see ``stopping``).
        Once the command is done and stdout and stderr are flushed, the process ends at once
        (``os._exit``): the native thread pools of Arrow and Polars are not torn down, as that teardown
        can abort an exiting process ("terminate called without an active exception", 134).
        """
        stop_on_signals()
        try:
            self.main(*args, **kwargs)
            code = 0
        except SystemExit as exit:
            code = _exit_code(exit.code)
        except Exception:  # a bug, or an error shown with --debug
            traceback.print_exc()
            code = 1
        os._exit(_flushed(code))

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
    say(message, err=True)
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

    Exit codes: 0 the command ran; 1 a check found something (audit violations, a gate held); 2 bad input or usage.
    """
    ctx.meta["rag_compare.debug"] = debug


for command in (
    validate_command,
    audit_command,
    freeze_command,
    import_run_command,
    merge_repeats_command,
    show_command,
    compare_command,
    review_command,
    capture_command,
    draft_cases_command,
    admit_command,
    score,
    import_scores_command,
    judge_pairs_command,
    fallback,
    reviews,
    agreement_command,
    history_command,
):
    main.add_command(command)
