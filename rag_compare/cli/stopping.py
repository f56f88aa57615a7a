"""How a signal ends the process: SIGTERM with exit 143 and SIGINT (Ctrl-C) with 130, whatever thread is
blocked.

The main thread takes them as Python does (SIGTERM as ``SystemExit(143)``, SIGINT as ``KeyboardInterrupt``),
so ``finally`` blocks remove the temporaries and a command says what it kept. Python runs those handlers
only between two bytecodes of the main thread, never while it waits in native code (opening a FIFO, a
native thread pool joined). So each signal also wakes a watchdog thread (``signal.set_wakeup_fd``); when
the process is still running ``GRACE_SECONDS`` later, the watchdog removes the temporaries in use
(``core.temporaries``) and ends the process at once with the same exit code.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from types import FrameType
from typing import NoReturn

from rag_compare.cli.exits import EXIT_INTERRUPTED, EXIT_TERMINATED, interruption_line
from rag_compare.core.temporaries import end_process

__all__ = ["GRACE_SECONDS", "stop_on_signals"]

GRACE_SECONDS = 2.0
"""How long the main thread has to end by itself after a signal."""
_EXIT_CODES: dict[int, int] = {signal.SIGTERM: EXIT_TERMINATED, signal.SIGINT: EXIT_INTERRUPTED}
_STDERR = 2


def stop_on_signals() -> None:
    """Make SIGTERM and SIGINT end the process (see the module); call it once, from the main thread."""
    signal.signal(signal.SIGTERM, _terminate)
    woken, wake = os.pipe()
    os.set_blocking(wake, False)
    signal.set_wakeup_fd(wake, warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(woken,), name="rag-compare-signals", daemon=True).start()


def _terminate(signum: int, frame: FrameType | None) -> NoReturn:
    sys.exit(EXIT_TERMINATED)


def _watch(woken: int) -> None:
    """Wait for a signal's byte on ``woken``; ``GRACE_SECONDS`` after SIGTERM or SIGINT, end the process."""
    while True:
        codes = [_EXIT_CODES[number] for number in os.read(woken, 64) if number in _EXIT_CODES]
        if codes:
            time.sleep(GRACE_SECONDS)
            _end(codes[0])


def _end(code: int) -> NoReturn:
    if code == EXIT_INTERRUPTED:
        os.write(_STDERR, f"\n{interruption_line()}\n".encode())
    end_process(code)
