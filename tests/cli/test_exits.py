"""How a command ends: the shell's exit codes, the one interruption line, messages made safe for a terminal and
without a credential."""

from __future__ import annotations

import signal

import pytest

from rag_compare.cli.exits import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_TERMINATED, interrupted, say
from tests.helpers.credential_shapes import KEY_SHAPES, secret_parts


def test_the_exit_codes_of_a_signal_are_the_shell_s() -> None:
    assert EXIT_INTERRUPTED == 128 + signal.SIGINT
    assert EXIT_BROKEN_PIPE == 128 + signal.SIGPIPE
    assert EXIT_TERMINATED == 128 + signal.SIGTERM


@pytest.mark.parametrize(
    ("kept", "said"),
    [
        (None, "interrupted: no output was left half-written."),
        ("3 cases kept in run.arrow.checkpoint.jsonl", "interrupted: 3 cases kept in run.arrow.checkpoint.jsonl; "
         "run the same command again to resume."),
    ],
)  # fmt: skip
def test_interrupted_says_what_was_kept_and_exits_130(
    capsys: pytest.CaptureFixture[str], kept: str | None, said: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        interrupted(kept)
    assert exited.value.code == 130
    assert capsys.readouterr() == ("", f"\n{said}\n")


def test_say_escapes_control_characters_on_the_stream_asked(capsys: pytest.CaptureFixture[str]) -> None:
    say("froze 'a\x1b[31m'")
    say("warning", err=True)
    assert capsys.readouterr() == ("froze 'a\\x1b[31m'\n", "warning\n")


@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_say_redacts_every_credential(capsys: pytest.CaptureFixture[str], secret: str) -> None:
    say(f"wrote runs/x-{secret}.arrow")
    say(f"froze 3 cases of 'fk_{secret}'", err=True)
    out, err = capsys.readouterr()
    assert out.startswith("wrote runs/x-")
    assert "(redacted)" in out
    assert not any(part in out + err for part in secret_parts(secret))
