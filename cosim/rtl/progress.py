"""Long RTL work says so and has a deadline: the steps of a cold build (Amaranth's Verilog
generation, Verilator, the C++ compiler through make) run under a :class:`BuildWatch`.

* A start line on stderr (any stream, not only a terminal): the block, its top, the size
  of its sources and an estimate of the build time from that size (:func:`estimate_s`).
* A heartbeat line every ``$TLM_COSIM_RTL_HEARTBEAT`` seconds (30): the time elapsed and
  what the build is at (Verilating; compiling C++: objects done of those the makefile
  lists, and the size of the generated C++).
* A final line with the wall time. A cached build prints nothing (docs/rtl.md).
* A deadline: ``$TLM_COSIM_RTL_BUILD_LIMIT`` seconds (1800) for the whole build, or the
  caller's limit; past it the step's process group (make and every compiler it started) is
  killed and :class:`RtlBuildTimeout` names the block and the limit.

Each step runs in its own session (``start_new_session``): killing its group ends
everything it started, and a Ctrl-C or ``limits.max_wall`` in this process kills it too
(an exception while waiting kills the group before it propagates).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, Callable, Iterable, Sequence

from tlm.units import fmt_bytes

LIMIT_ENV = "TLM_COSIM_RTL_BUILD_LIMIT"
HEARTBEAT_ENV = "TLM_COSIM_RTL_HEARTBEAT"
#: a cold build of the largest block seen here took 9-17 min on a busy 2-core
#: machine (a generated 1.1 MB systolic array, docs/rtl.md "Build times"): 30 min leaves room, and stops a runaway
DEFAULT_LIMIT_S = 1800.0
DEFAULT_HEARTBEAT_S = 30.0

#: The estimate of a cold build on an idle 2-core machine: FIXED_S (Verilator's runtime,
#: our main and cocotb's VPI glue are compiled into every model) plus PER_MB_S per MB of
#: HDL source, times the load factor. Fitted on cold builds measured here on 2026-11-29
#: (docs/rtl.md, "Build times"; measured time / load factor at the start): tcdm_bank
#: (2 KB) 24 s at x1.6, abb_ctrl (7.5 KB) 33 s at x1.8, rbe (35 KB) 79 s at x4.3, the
#: generated systolic array of docs/rtl.md's table (1.14 MB) 517 s at x2.5 -> 14 s fixed, 170 s per MB.
FIXED_S = 14.0
PER_MB_S = 170.0


class BuildTimeout(Exception):
    """A build step ran past its deadline; its process group was killed."""


def env_seconds(name: str, default: float) -> float:
    """``$name`` as a number of seconds > 0 (``default`` when unset); anything else is an
    error naming the variable (raised as ValueError)."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise ValueError(f"{name}={raw!r}: expected a number of seconds > 0")
    return value


@dataclass(frozen=True)
class SourceSize:
    """How much HDL a build reads: files, lines and bytes."""

    files: int
    lines: int
    bytes: int

    @classmethod
    def of(cls, paths: Iterable[Path]) -> "SourceSize":
        from tlm.files import FileAccessError, read_bytes
        files = lines = size = 0
        for p in paths:
            try:
                data = read_bytes(p, "rtl_source")
            except FileAccessError:
                continue     # the build's own source check names it
            files += 1
            lines += data.count(b"\n")
            size += len(data)
        return cls(files, lines, size)

    def __str__(self) -> str:
        return (f"{self.files} source file{'s' if self.files != 1 else ''}, "
                f"{self.lines:,} line{'s' if self.lines != 1 else ''}, {fmt_bytes(self.bytes)}")


def load_factor() -> float:
    """How much slower than idle this machine runs now (1-minute load per core, >= 1)."""
    try:
        return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    except OSError:
        return 1.0


def estimate_s(size: SourceSize, load: float = 1.0) -> float:
    """Rough wall seconds of a cold build of ``size`` of HDL at ``load`` (:func:`load_factor`)."""
    return (FIXED_S + PER_MB_S * size.bytes / 1e6) * load


def fmt_duration(seconds: float) -> str:
    """``40 s``, ``11 min``: a rough duration, rounded as an estimate should be."""
    if seconds < 90:
        return f"{max(5, round(seconds / 5) * 5):.0f} s"
    return f"{round(seconds / 60):.0f} min"


_LIST_RE = re.compile(r"^(VM_[A-Z_]+)\s*\+?=\s*\\?\s*$")


def expected_objects(build_dir: Path) -> int | None:
    """The number of object files Verilator's makefiles will compile (None before Verilator
    wrote them): with parallel builds one per class and support file, else one for all of
    them; plus Verilator's runtime files and our main."""
    from tlm.files import FileAccessError, read_bytes
    lists: dict[str, int] = {}
    parallel = False
    for name in ("Vtop_classes.mk", "Vtop.mk"):
        try:
            text = read_bytes(build_dir / name, "rtl_source").decode("utf-8", "replace")
        except FileAccessError:
            return None
        parallel = parallel or "VM_PARALLEL_BUILDS = 1" in text
        current = None
        for line in text.splitlines():
            m = _LIST_RE.match(line)
            if m:
                current = m[1]
                lists.setdefault(current, 0)
            elif current and line[:1].isspace() and line.strip() not in ("", "\\"):
                lists[current] += 1
            else:
                current = None
    own = sum(lists.get(k, 0) for k in ("VM_CLASSES_FAST", "VM_CLASSES_SLOW", "VM_SUPPORT_FAST",
                                        "VM_SUPPORT_SLOW"))
    shared = sum(lists.get(k, 0) for k in ("VM_GLOBAL_FAST", "VM_GLOBAL_SLOW", "VM_USER_CLASSES"))
    return shared + (own if parallel else 1)


def verilator_progress(build_dir: Path) -> str:
    """What a Verilator build in ``build_dir`` is at, in a few words (cheap: a directory listing)."""
    total = expected_objects(build_dir)
    if total is None:
        return "Verilating (HDL -> C++)"
    done = sum(1 for _ in build_dir.glob("*.o"))
    cpp = sum(p.stat().st_size for p in build_dir.glob("Vtop*.cpp"))
    return f"compiling C++: {min(done, total)} of {total} objects ({fmt_bytes(cpp)} of generated C++)"


class BuildWatch:
    """One build, said and bounded: :meth:`start` prints the start line, :meth:`run` runs
    each step under the shared deadline with heartbeats, :meth:`done` prints the wall time."""

    def __init__(self, what: str, *, limit_s: float | None = None, heartbeat_s: float | None = None,
                 progress: Callable[[], str] | None = None, stream: IO[str] | None = None):
        self.what = what
        self.limit_s = env_seconds(LIMIT_ENV, DEFAULT_LIMIT_S) if limit_s is None else limit_s
        self.heartbeat_s = env_seconds(HEARTBEAT_ENV, DEFAULT_HEARTBEAT_S) if heartbeat_s is None else heartbeat_s
        self.progress = progress
        self.stream = stream
        self.t0 = time.monotonic()
        self.deadline = self.t0 + self.limit_s
        self._next_beat = self.t0 + self.heartbeat_s

    def say(self, line: str) -> None:
        print(line, file=self.stream or sys.stderr, flush=True)

    def start(self, detail: str) -> None:
        """Print the start line (``detail``: sizes and estimate) and start the clock."""
        self.t0 = time.monotonic()
        self.deadline = self.t0 + self.limit_s
        self._next_beat = self.t0 + self.heartbeat_s
        self.say(f"{self.what}: {detail}; limit {self.limit_s:g} s (${LIMIT_ENV})")

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def done(self) -> None:
        self.say(f"{self.what}: done in {self.elapsed():.1f} s")

    def run(self, cmd: Sequence[str], *, cwd: str | os.PathLike[str] | None = None,
            env: dict[str, str] | None = None, stdout: IO | int | None = None) -> int:
        """Run one step (its stderr joins ``stdout`` when one is given) until it ends or the
        deadline passes; returns its exit code. Past the deadline its process group is killed
        and :class:`BuildTimeout` raised."""
        from ..proc.supervisor import die_with_parent, kill_group
        tie = (partial(die_with_parent, os.getpid(), 1)
               if threading.current_thread() is threading.main_thread() else None)
        proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=stdout,
                                stderr=None if stdout is None else subprocess.STDOUT,
                                start_new_session=True, preexec_fn=tie)
        try:
            while True:
                now = time.monotonic()
                if now >= self.deadline:
                    kill_group(proc)
                    raise BuildTimeout(f"{self.what} did not finish within {self.limit_s:g} s of wall "
                                       f"time (${LIMIT_ENV}); its processes were killed")
                try:
                    return proc.wait(timeout=max(0.01, min(self.deadline, self._next_beat) - now))
                except subprocess.TimeoutExpired:
                    pass
                if time.monotonic() >= self._next_beat:
                    self._beat()
        except BaseException:
            kill_group(proc)      # a Ctrl-C, limits.max_wall, the deadline: nothing left running
            raise

    def _beat(self) -> None:
        self._next_beat += self.heartbeat_s * max(1, int((time.monotonic() - self._next_beat) //
                                                         self.heartbeat_s) + 1)
        at = ""
        if self.progress is not None:
            try:
                at = ", " + self.progress()
            except OSError:
                at = ""
        self.say(f"{self.what}: {self.elapsed():.0f} s elapsed{at}")
