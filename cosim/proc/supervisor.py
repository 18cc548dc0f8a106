"""Process supervision: spawn a child in its own process group, tie it to its parent's
life, describe how it ended, and reap or kill it -- never an unbounded wait."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Mapping, Sequence

__all__ = ["spawn", "die_with_parent", "kill_group", "reap", "exit_description", "log_tail"]


def spawn(cmd: Sequence[str], *, env: Mapping[str, str] | None = None,
          log_path: Path | None = None, cwd: str | os.PathLike[str] | None = None,
          preexec_fn: Callable[[], None] | None = None) -> subprocess.Popen[bytes]:
    """Start ``cmd`` in its own session (process group: :func:`kill_group` ends it and
    everything it started; a Ctrl-C in the terminal reaches only this process), stdin
    closed, stdout and stderr to ``log_path`` (or inherited)."""
    if log_path is None:
        return subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, env=env, cwd=cwd,
                                start_new_session=True, preexec_fn=preexec_fn)
    with open(log_path, "wb") as out:
        return subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                start_new_session=True, preexec_fn=preexec_fn)


def die_with_parent(parent_pid: int | None, exit_code: int = 1) -> None:
    """Linux: have the kernel SIGKILL this process when its parent dies (PR_SET_PDEATHSIG);
    exit with ``exit_code`` at once if the parent is already gone. Call it in the child
    (first thing in ``main``, or as a ``preexec_fn``); elsewhere it does nothing."""
    if parent_pid is None or not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(exit_code)


def kill_group(proc: subprocess.Popen[bytes], wait_s: float = 10.0) -> None:
    """SIGKILL the process group of ``proc`` (started by :func:`spawn`) if it still runs,
    and reap it (for at most ``wait_s`` s)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        pass


def reap(procs: Sequence[subprocess.Popen[bytes]], grace: float,
         wait_s: float = 3.0) -> list[subprocess.Popen[bytes]]:
    """Give ``procs`` ``grace`` s to exit, then SIGKILL the groups of those still running
    and reap them; returns the ones that did not even exit after SIGKILL (within
    ``wait_s`` s each)."""
    running = [p for p in procs if p.returncode is None]
    end = time.monotonic() + grace
    while running and time.monotonic() < end:
        running = [p for p in running if p.poll() is None]
        if running:
            time.sleep(0.02)
    for p in running:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    stuck = []
    for p in running:
        try:
            p.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            stuck.append(p)
    return stuck


def exit_description(returncode: int) -> str:
    """How a child ended, for messages: 'was killed by signal 9' / 'exited with code 3'."""
    return f"was killed by signal {-returncode}" if returncode < 0 else f"exited with code {returncode}"


def log_tail(path: Path | None, n: int = 1200) -> str:
    """The last ``n`` bytes of a child's log, stripped ('' when there is none)."""
    from tlm.files import FileAccessError, read_tail
    if path is None or not path.exists():
        return ""
    try:
        return read_tail(path, n).decode("utf-8", "replace").strip()
    except FileAccessError:
        return ""
