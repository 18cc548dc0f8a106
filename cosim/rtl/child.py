"""One Verilated block under cocotb in a child process (own process group, killed with us),
reached over the msgpack channel of :mod:`cosim.proc.channel` and supervised with
:mod:`cosim.proc.supervisor`; every wait has a deadline."""
from __future__ import annotations

import json
import os
import shutil
import time
import weakref
from pathlib import Path
from typing import Any, Sequence

from ..proc.supervisor import kill_group
from ..proc.tmpdir import private_dir
from .options import CONFIG_ENV, RtlOptions

REPO = Path(__file__).resolve().parents[2]


class ChildProcess:
    """One Verilated block under cocotb in a child process, reached over ZeroMQ.

    The process is started by the first :meth:`start` (the block's first job), not at
    construction: a process that builds the scenario but never runs the block (another
    partition, a coordinator) starts nothing."""

    def __init__(self, name: str, build_result: Any, handler: str, config: dict, *,
                 options: RtlOptions, wave_file: Path | None = None, wave_args: Sequence[str] = ()):
        self.name = name
        self.options = options
        self.build_result = build_result
        self.handler = handler
        self.config = config
        self.wave_file = wave_file
        self.wave_args = list(wave_args)   # window and scope (cosim/rtl/waves.py)
        self.tmp: Path | None = None
        self.link: Any = None
        self.proc: Any = None
        self.pid: int | None = None
        self.run_dir: Path | None = None
        self._finalizer: Any = None
        self.ready = False
        self.rtl_now = 0
        #: the last reply's ``next``: None while the block is idle
        self.rtl_next: int | None = None
        self.info: dict = {}
        self.bye: dict | None = None
        self.failed: str | None = None
        self.keep_dir = False
        self.wait_s = 0.0      # wall time spent waiting for the child
        self.closed = False
        #: answers the child's memory requests (see :meth:`request`); None: refused
        self.serve_mem: Any = None
        self.mem_round_trips = 0

    def launch(self) -> None:
        from .build import launch_tests
        from ..proc.channel import ParentLink
        if self.closed:
            raise RuntimeError("the simulator process was already stopped")
        # a folder left by a simulator killed with us (-9) is reaped by the next one made
        self.tmp = private_dir("tlm-cosim-rtl-")
        self.link = ParentLink(f"ipc://{self.tmp}/sock")
        self.run_dir = self.tmp / "run"
        cfg = {"name": self.name, "endpoint": self.link.endpoint, "parent_pid": os.getpid(),
               "handler": self.handler, **self.config}
        try:
            self.proc = launch_tests(self.build_result, "cosim.rtl.serve",
                                     test_dir=self.run_dir,
                                     extra_env={CONFIG_ENV: json.dumps(cfg)},
                                     python_paths=[REPO], waves=self.wave_file is not None,
                                     wave_file=self.wave_file, wave_args=self.wave_args)
        except Exception:
            self.link.close()
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.link = None
            raise
        self.pid = self.proc.pid
        # never leave an orphan, whatever happens to the caller (also runs at exit)
        self._finalizer = weakref.finalize(self, kill_group, self.proc)

    def alive(self) -> int | None:
        return self.proc.poll()

    def log_tail(self, lines: int = 15) -> str:
        if self.run_dir is None:
            return ""
        log = self.run_dir / "sim.log"
        from tlm.files import FileAccessError, read_tail
        try:        # the end of the log is what explains a failure; never the whole of a huge one
            text = read_tail(log, 1 << 20).decode("utf-8", "replace")
        except FileAccessError:
            return ""
        keep = [ln.rstrip() for ln in text.splitlines()
                if ln.strip() and " INFO " not in ln][-lines:]
        return "\n".join(keep) or "(nothing but start-up messages)"

    def recv(self, timeout: float, what: str) -> dict:
        t = time.perf_counter()
        try:
            return self.link.recv(timeout, self.alive, what)
        finally:
            self.wait_s += time.perf_counter() - t

    def start(self) -> None:
        """Start the child and wait for its hello (once)."""
        if self.ready:
            return
        if self.proc is None:
            self.launch()
        msg = self.recv(self.options.startup_timeout_s, "hello from the simulator")
        if "hello" not in msg:
            raise RuntimeError(f"unexpected first message {sorted(msg)}")
        self.ready = True
        self.rtl_now = int(msg["time"])
        self.info = msg.get("info") or {}

    def request(self, grant: dict, what: str = "window reply") -> dict:
        """Send a grant and return the window's reply. Memory requests the child makes
        meanwhile (``{"mem": "read"|"write", ...}``: an RTL initiator served from the TLM
        side) are answered by :attr:`serve_mem` (reads get a reply, writes are posted)."""
        self.link.send(grant)
        self.link.round_trips += 1
        reply = self.recv(self.options.timeout_s, what)
        while "mem" in reply:
            if self.serve_mem is None:
                raise RuntimeError("the block made a memory request, but nothing serves its "
                                   "initiator ports")
            answer = self.serve_mem(reply)
            if answer is not None:
                self.link.send(answer)
                self.mem_round_trips += 1
            reply = self.recv(self.options.timeout_s, what)
        if "time" not in reply:
            raise RuntimeError(f"unexpected reply {sorted(reply)}")
        self.rtl_now = int(reply["time"])
        self.rtl_next = reply.get("next")
        return reply

    def close(self) -> None:
        """Stop the child (politely: it closes its wave file; else SIGKILL its group)."""
        if self.closed:
            return
        self.closed = True
        if self.proc is None:
            return
        try:
            if self.ready and self.failed is None and self.proc.poll() is None:
                try:
                    self.link.send({"stop": True})
                    msg = self.recv(10.0, "goodbye from the simulator")
                    if "bye" in msg:
                        self.bye = msg
                    self.proc.wait(timeout=20)
                except Exception:  # noqa: BLE001 - killed below
                    pass
        finally:
            self._finalizer()     # kills the group if still running, reaps
            self.link.close()
            if self.keep_dir:
                (self.tmp / "sock").unlink(missing_ok=True)
            else:
                shutil.rmtree(self.tmp, ignore_errors=True)
