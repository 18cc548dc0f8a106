"""SIGINT (Ctrl-C) and SIGTERM in one process, handled the same way.

Within :func:`interruptible`, SIGINT raises :class:`KeyboardInterrupt` (Python's default) and
SIGTERM raises :class:`Terminated`, a subclass of it, so one ``except KeyboardInterrupt``
handles both: during the simulation the runner stops and reports what was simulated
(status ``interrupted``), before it the CLI exits at once with one line. Exit codes follow
the shell's convention, 128 + the signal: 130 for SIGINT, 143 for SIGTERM.
:func:`exit_early_on_signals` covers the CLI's own imports, before :func:`interruptible`.
"""
from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .exitcodes import EXIT_INTERRUPTED, EXIT_TERMINATED


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C raises KeyboardInterrupt (one code path for both)."""


def signal_name(exc: BaseException) -> str:
    """'SIGTERM' for :class:`Terminated`, else 'SIGINT'."""
    return "SIGTERM" if isinstance(exc, Terminated) else "SIGINT"


def exit_code(exc: BaseException) -> int:
    """143 for :class:`Terminated`, else 130."""
    return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED


def _raise_terminated(_signum: int, _frame: Any) -> None:
    raise Terminated()


@contextmanager
def interruptible() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt and SIGTERM :class:`Terminated` inside the block;
    the previous handlers come back after it. A no-op outside the main thread (where
    Python cannot install handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)


def _exit_now(signum: int, _frame: Any) -> None:
    sys.stderr.write(f"interrupted by {signal.Signals(signum).name}\n")
    # SystemExit unwinds any import in progress without a traceback
    raise SystemExit(128 + signum)


def exit_early_on_signals() -> None:
    """Until :func:`interruptible` takes over: SIGINT/SIGTERM exit at once with 130/143
    and one line (the CLI's imports take a noticeable time; a signal then must not print
    a traceback)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _exit_now)
        signal.signal(signal.SIGTERM, _exit_now)
