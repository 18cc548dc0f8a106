"""The coordinator: runs the conservative window loop (:mod:`cosim.distributed.windows`) over the
ZeroMQ transport (:mod:`cosim.distributed.transport`), with local workers started and watched by
the process supervisor (:mod:`cosim.proc.supervisor`). Each window is one GRANT per
granted worker and one REPORT back (see :mod:`cosim.distributed.protocol`).

Liveness: workers ping on a separate socket, the coordinator answers; a worker silent for
``heartbeat_timeout`` s, a local worker process that exits, a worker reporting an error,
a round longer than ``round_timeout`` s, or SIGINT/SIGTERM abort the run: ABORT to every
worker, SIGKILL to local process groups that do not exit at once, ``on_abort`` called (flush
partial outputs there), then :class:`DistributedError` naming the worker, its components
and the last simulated time.
"""
from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import logging
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import zmq

from tlm import fmt_time, parse_time

from ..proc import supervisor
from . import protocol as P
from .partition import (PartitionError, PartitionPlan, auto_partition, build,
                        builder_name, check_builder_allowed, check_quiet, collect, normalize_partition, plan)
from .protocol import DistributedError
from ..results import (MASK, EventHasher, error_records, merge_stats, run_manifest, sort_errors,
                       state_digest)
from .results import make_result
from .transport import RouterTransport
from .windows import Window, WindowLoop
from .worker import SECRET_ENV, advance

__all__ = ["DistOptions", "WorkerInfo", "Coordinator", "run_distributed", "run_local",
           "prepare", "coordinator_main"]

log = logging.getLogger("cosim.distributed")


@dataclass
class DistOptions:
    """How to run: where to listen, whether to start workers, deadlines and hooks.

    ``bind``: None -> ipc:// in a private temp dir and local workers; ``"tcp"`` -> loopback
    TCP on a free port; or explicit endpoint(s) (``tcp://10.0.0.1:5555``; binding anything
    but loopback must be spelled out). TCP always uses CurveZMQ keys from ``keys_dir``
    (made by ``cosim keys``). ``launch``: start local worker processes (default: yes when
    ``bind`` is None or ``"tcp"``; no for explicit endpoints, where workers started elsewhere
    connect with ``cosim worker``)."""

    bind: str | list[str] | None = None
    launch: bool | None = None
    keys_dir: str | os.PathLike | None = None
    heartbeat_interval: float = 0.25
    heartbeat_timeout: float = 2.0
    round_timeout: float | None = None     # None: ROUND_TIMEOUT
    #: wall-time limit of the whole window loop (seconds): past it no new window starts and
    #: the run ends where every worker is (``stopped == "max_wall"``); None: none
    max_wall: float | None = None
    #: resident-size limit of each worker process (bytes; checked after each window, over it
    #: the run aborts with kind ``memory``); None: none
    max_memory: int | None = None
    connect_timeout: float = 20.0
    setup_timeout: float = 120.0
    python: str = sys.executable
    handle_signals: bool = True
    on_abort: Callable[[DistributedError], None] | None = None
    on_start: Callable[[list["WorkerInfo"]], None] | None = None
    #: bound on one frame in either direction (ZMQ_MAXMSGSIZE); local workers get the same
    max_message: int = P.DEFAULT_MAX_MESSAGE


@dataclass
class WorkerInfo:
    index: int
    name: str
    components: list[str]
    pid: int | None = None
    host: str | None = None
    local: bool = False


def _window_name(win: Window) -> str:
    end = fmt_time(win.end) if win.end is not None else "end"
    return f"for window {win.number} [{fmt_time(win.start)}, {end})"


#: seconds a window (or the final collection) may take when DistOptions.round_timeout is None
ROUND_TIMEOUT = 300.0
#: malformed messages logged per peer (then they are dropped silently)
DROP_LOG_LIMIT = 5


@dataclass
class _W:
    """A worker as the coordinator sees it: identity, connection, local process, result."""

    info: WorkerInfo
    proc: subprocess.Popen | None = None
    log_path: Path | None = None
    ident: bytes | None = None
    hb_ident: bytes | None = None
    last_seen: float = 0.0
    ready: bool = False
    result: dict | None = None
    #: the secret a local worker must present in its HELLO (given through its environment)
    secret: str | None = None
    #: the CurveZMQ key (z85) of the worker bound to this partition, if any
    key: str | None = None
    #: the largest frame the worker accepts (from its HELLO)
    max_message: int = P.DEFAULT_MAX_MESSAGE


class Coordinator:
    """Runs one distributed simulation; use :func:`run_distributed`."""

    def __init__(self, builder: str, config: dict, plan_: PartitionPlan, *,
                 max_time: int | None = None, options: DistOptions | None = None,
                 links_digest: str = ""):
        self.builder = builder
        self.config = config
        self.plan = plan_
        self.max_time = max_time
        self.opt = options or DistOptions()
        self.links_digest = links_digest
        self.workers = [_W(WorkerInfo(i, f"w{i}", sorted(g))) for i, g in enumerate(plan_.groups)]
        self.loop = WindowLoop(len(self.workers), plan_.lookahead, max_time)
        self.net = RouterTransport()
        self._by_ident: dict[bytes, _W] = {}
        self._signal: int | None = None
        self._old_handlers: dict = {}
        self._next_health = 0.0
        self._aborted = False
        self._finishing = False     # FINISH sent: a worker exiting 0 has sent its RESULT
        self.wall_exceeded = False  # the window loop stopped at DistOptions.max_wall
        self._launched = False      # partitions go only to the workers we started
        self._dropped: dict[bytes, int] = {}    # malformed messages per peer (log limit)
        self._last_key: str | None = None       # CurveZMQ key of the last message's sender
        self._accepting = False     # in the handshake: HELLOs from new peers are expected

    @property
    def safe_time(self) -> int:
        """All activity before this time is done everywhere."""
        return self.loop.safe_time

    # ----- setup / teardown -----------------------------------------------------------------
    def _close(self) -> None:
        self._restore_signals()
        self.net.close()
        self._reap(grace=2.0)
        self.net.cleanup()

    def _install_signals(self) -> None:
        if not self.opt.handle_signals or threading.current_thread() is not threading.main_thread():
            return
        for s in (signal.SIGINT, signal.SIGTERM):
            self._old_handlers[s] = signal.signal(s, self._on_signal)

    def _on_signal(self, signum: int, _frame: Any) -> None:
        self._signal = signum

    def _restore_signals(self) -> None:
        for s, h in self._old_handlers.items():
            signal.signal(s, h)
        self._old_handlers.clear()

    # ----- local workers ------------------------------------------------------------------------
    def _launch(self) -> None:
        launch = self.opt.launch
        if launch is None:
            launch = self.opt.bind is None or self.opt.bind == "tcp"
        if not launch:
            return
        ep = self.net.endpoints[0]
        if ep.startswith("tcp://0.0.0.0:"):
            ep = "tcp://127.0.0.1:" + ep.rpartition(":")[2]
        env = dict(os.environ)
        paths = [p for p in sys.path if p and os.path.isdir(p)]
        pkg_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([pkg_root, os.getcwd(), *paths]))
        self._launched = True
        for w in self.workers:
            i = w.info.index
            cmd = [self.opt.python, "-m", "cosim.distributed.worker", "--connect", ep, "--index", str(i),
                   "--parent-pid", str(os.getpid()), "--max-message", str(self.opt.max_message)]
            if ep.startswith("tcp://"):
                cmd += ["--keys", str(self.opt.keys_dir), "--name", f"worker{i}"]
            w.log_path = self.net.tmp / f"{w.info.name}.log"
            # the worker proves it is ours with this secret in its HELLO: through the
            # environment, which (unlike argv) other users cannot read in /proc
            w.secret = secrets.token_hex(16)
            # own session: a Ctrl-C in the terminal reaches the coordinator only, which
            # then stops the workers cleanly; PR_SET_PDEATHSIG covers a killed coordinator
            w.proc = supervisor.spawn(cmd, env={**env, SECRET_ENV: w.secret}, log_path=w.log_path)
            w.info.pid = w.proc.pid
            w.info.local = True

    def _reap(self, grace: float) -> None:
        procs = {id(w.proc): w for w in self.workers if w.proc is not None}
        for p in supervisor.reap([w.proc for w in procs.values()], grace):
            log.error("worker %s (pid %s) did not exit after SIGKILL", procs[id(p)].info.name, p.pid)

    def _log_tail(self, w: _W) -> str:
        data = supervisor.log_tail(w.log_path)
        return f"; its last output:\n{data}" if data else ""

    # ----- messaging ------------------------------------------------------------------------------
    def _send(self, w: _W, parts: list, forward: bool = False) -> None:
        if w.max_message < self.opt.max_message or not forward:
            # forwarded frames passed our own limit; check only what could exceed theirs
            size = P.too_big(parts, w.max_message)
            if size is not None:
                kind = P.KIND_NAMES[P.unpack(parts[0])[0]]
                raise self._err(w, P.size_error(f"a message for it ({kind})", size, w.max_message), "size")
        try:
            self.net.send(w.ident, parts, forward)
        except zmq.ZMQError as e:
            # the connection went away: a dead local process explains it best
            if w.proc is not None:
                end = time.monotonic() + 0.5
                while w.proc.poll() is None and time.monotonic() < end:
                    time.sleep(0.01)
                self._health(time.monotonic())
            raise self._err(w, f"cannot be reached: its connection is gone ({e})", "lost") from None

    def _err(self, w: _W, reason: str, kind: str = "worker") -> DistributedError:
        return DistributedError(reason, worker=w.info.name, components=w.info.components,
                                time=self.safe_time, kind=kind)

    def _health(self, now: float) -> None:
        self.net.log_refused(now)
        if self._signal is not None:
            name = signal.Signals(self._signal).name
            code = P.EXIT_SIGINT if self._signal == signal.SIGINT else P.EXIT_SIGTERM
            raise DistributedError(f"interrupted by {name}", time=self.safe_time, exit_code=code,
                                   kind="interrupted")
        for w in self.workers:
            if w.result is not None:
                continue
            if w.proc is not None:
                rc = w.proc.poll()
                # exit code 0 comes only after the RESULT went out (flushed at close): it is
                # in the socket, behind the message being handled; the heartbeat check below
                # still bounds the wait for it
                if rc is not None and not (rc == 0 and self._finishing):
                    how = supervisor.exit_description(rc)
                    raise self._err(w, f"died: its process (pid {w.proc.pid}) {how}{self._log_tail(w)}",
                                    "died")
            if w.ident is not None and now - w.last_seen > self.opt.heartbeat_timeout:
                raise self._err(w, f"stopped responding: no heartbeat for "
                                f"{now - w.last_seen:.1f} s (hung, stopped or unreachable)", "hung")

    def _drop(self, ident: bytes, w: _W | None, why: str, key: str | None = None) -> None:
        """Log a message that is dropped (malformed, or a HELLO nobody expected) with its
        sender: the first few per peer, then a note that the rest go uncounted."""
        n = self._dropped[ident] = self._dropped.get(ident, 0) + 1
        if n > DROP_LOG_LIMIT:
            return
        who = f"worker {w.info.name}" if w is not None else "an unknown peer"
        more = ("; further drops from this peer are not logged" if n == DROP_LOG_LIMIT else "")
        log.warning("dropped a message from %s (identity %r%s): %s%s", who, ident[:40],
                    f", CurveZMQ key {key}" if key else "", why, more)

    def _next(self, deadline: float, doing: str | Callable[[], str]) -> tuple[_W | None, bytes, list, list]:
        """Next non-heartbeat message: (worker or None, ident, header, frames after the
        header). Answers pings, checks liveness every 50 ms, and raises at ``deadline``."""
        net = self.net
        while True:
            msg = net.recv()        # waits up to 50 ms
            now = time.monotonic()
            usable = False
            if msg is not None:
                ident, head, parts = msg
                key = None
                if net.peer_keys:
                    head, key = head
                w = self._by_ident.get(ident)
                why = P.check_from_worker(head, len(parts), len(self.workers))
                if why is None and w is None and head[0] not in (P.PING, P.HELLO if self._accepting else -1):
                    why = f"{P.KIND_NAMES[head[0]]} from a peer that holds no partition"
                usable = why is None
                if not usable and w is not None and not self._finishing:
                    # one of our own workers broke the protocol: dropping its message would
                    # leave the window waiting for it until round_timeout
                    raise self._err(w, f"sent a malformed message: {why}", "protocol")
                if not usable:
                    self._drop(ident, w, why, key)
            if not usable:   # nothing usable came: liveness and the deadline
                if now >= self._next_health:
                    self._next_health = now + 0.05
                    self._health(now)
                if now > deadline:
                    what = doing() if callable(doing) else doing
                    raise DistributedError(f"timed out {what}", time=self.safe_time, kind="timeout")
                continue
            if w is not None:
                w.last_seen = now
            if head[0] == P.PING:
                net.send_quietly(ident, P.pack([P.PONG]))
                continue
            if now >= self._next_health:
                self._next_health = now + 0.05
                self._health(now)
            self._last_key = key
            if head[0] == P.ERROR and w is not None:
                _, kind, message, t, tb = head
                detail = f"\n{tb.rstrip()}" if tb and log.isEnabledFor(logging.DEBUG) else ""
                err = self._err(w, f"raised ({kind}): {message}{detail}", "raised")
                if t is not None:
                    err.time = t
                    err.args = (err._format(),)
                raise err
            return w, ident, head, parts

    # ----- phases --------------------------------------------------------------------------------
    def _handshake(self) -> None:
        opt = self.opt
        n = len(self.workers)
        deadline = time.monotonic() + opt.connect_timeout
        free = list(range(n))
        setup_base = {"builder": self.builder, "config": self.config, "groups": self.plan.groups,
                      "heartbeat_interval": opt.heartbeat_interval,
                      "heartbeat_timeout": max(opt.heartbeat_timeout, 3 * opt.heartbeat_interval),
                      "max_message": opt.max_message, "max_memory": opt.max_memory}
        # with CurveZMQ, learn each HELLO's key: a partition goes to an expected key, once
        self.net.peer_keys = self.net.expected_keys is not None
        self._accepting = True
        try:
            self._await_workers(free, setup_base, deadline)
        finally:
            self.net.peer_keys = self._accepting = False
        if self.opt.on_start is not None:
            self.opt.on_start([w.info for w in self.workers])

    def _partition_for(self, head: list, key: str | None, free: list[int]) -> tuple[int | None, str]:
        """The partition a HELLO gets, or (None, why not). Partitions go only to the workers
        this coordinator started (each proves it with its own secret), or, for workers
        started elsewhere over CurveZMQ, to the authorised keys, one partition per key.
        Without either (remote workers over ipc://) the socket's folder permissions are
        the only guard."""
        secret, hint = head[6], head[5]
        if self._launched:
            for w in self.workers:
                if (secret is not None and w.secret is not None
                        and hmac.compare_digest(w.secret.encode(), secret.encode())):
                    if w.info.index in free:
                        return w.info.index, ""
                    return None, f"partition {w.info.name} is already bound"
            return None, ("no valid run secret (partitions go only to the workers this "
                          "coordinator started)")
        if self.net.expected_keys is not None:
            if key is None or key not in self.net.expected_keys:
                return None, f"CurveZMQ key {key} is not one of the expected worker keys"
            if any(w.key == key for w in self.workers):
                return None, f"CurveZMQ key {key} already holds a partition"
        if not free:
            return None, "no partition left for this worker"
        return (hint if hint in free else free[0]), ""

    def _await_workers(self, free: list[int], setup_base: dict, deadline: float) -> None:
        """HELLO -> SETUP for each partition, then READY from every worker."""
        opt = self.opt
        setup_deadline = None
        while not all(w.ready for w in self.workers):
            if free:
                missing = ", ".join(self.workers[i].info.name for i in free)
                doing = f"waiting for worker(s) {missing} to connect to {', '.join(self.net.endpoints)}"
                dl = deadline
            else:
                if setup_deadline is None:
                    setup_deadline = time.monotonic() + opt.setup_timeout
                doing, dl = "waiting for workers to build the platform", setup_deadline
            w, ident, head, parts = self._next(dl, doing)
            kind = head[0]
            if kind == P.HELLO and w is None:
                _, _version, token, pid, host, _hint, _secret, max_message = head
                idx, why = self._partition_for(head, self._last_key, free)
                if idx is None:
                    self._drop(ident, None, f"HELLO (pid {pid} on {host!r}) refused: {why}", self._last_key)
                    self.net.send_quietly(ident, P.pack([P.ABORT, f"refused by the coordinator: {why}"]))
                    continue
                free.remove(idx)
                w = self.workers[idx]
                w.ident = ident
                w.hb_ident = b"h:" + bytes(token)
                w.key = self._last_key
                w.max_message = max_message
                w.info.pid, w.info.host = pid, host
                w.last_seen = time.monotonic()
                self._by_ident[ident] = w
                self._by_ident[w.hb_ident] = w
                self._send(w, [P.pack([P.SETUP, {**setup_base, "index": idx}])])
            elif kind == P.READY and w is not None:
                _, nxt, digest = head
                if digest != self.links_digest:
                    raise self._err(w, "built a different platform (its links differ from the "
                                    "coordinator's: non-deterministic builder or a different code "
                                    "version on that host)", "mismatch")
                self.loop.peers[w.info.index].next_time = nxt
                w.ready = True

    def _window_loop(self) -> None:
        loop, workers = self.loop, self.workers
        round_timeout = self.opt.round_timeout or ROUND_TIMEOUT
        wall_end = time.monotonic() + self.opt.max_wall if self.opt.max_wall else None
        while True:
            if wall_end is not None and time.monotonic() > wall_end:
                self.wall_exceeded = True       # checked before a window takes its batches
                break
            win = loop.next_window()
            if win is None:
                break
            for g in win.grants:
                self._send(workers[g.index], [P.pack([P.GRANT, win.number, win.start, win.end,
                                                      g.counts]), *g.frames],
                           forward=bool(g.frames))
            waiting = {g.index for g in win.grants}
            deadline = time.monotonic() + round_timeout

            def stuck() -> str:     # the timeout names who never reported, and their parts
                late = ", ".join(f"worker {workers[i].info.name} (components: "
                                 f"{', '.join(workers[i].info.components) or '-'})"
                                 for i in sorted(waiting))
                return (f"{_window_name(win)} after {round_timeout:g} s (round_timeout): "
                        f"no report from {late}")
            while waiting:
                w, ident, head, parts = self._next(deadline, stuck)
                if w is None or head[0] != P.REPORT:
                    continue
                _, _win, nxt, last, desc = head
                loop.report(w.info.index, nxt, last, desc, parts)
                waiting.discard(w.info.index)
            loop.close(win)

    def _collect(self, end: int) -> list[dict]:
        self._finishing = True
        for w in self.workers:
            self._send(w, [P.pack([P.FINISH, end])])
        deadline = time.monotonic() + (self.opt.round_timeout or ROUND_TIMEOUT)
        while not all(w.result is not None for w in self.workers):
            w, ident, head, parts = self._next(deadline, "collecting results")
            if w is not None and head[0] == P.RESULT:
                w.result = head[1]
        return [w.result for w in self.workers]

    def _abort(self, err: DistributedError) -> None:
        if self._aborted:
            return
        self._aborted = True
        if err.time is None and err.kind != "config":   # nothing ran before a config error
            err.time = self.safe_time
            err.args = (err._format(),)
        if self.net.sock is not None:
            msg = P.pack([P.ABORT, str(err)])
            for w in self.workers:
                if w.ident is not None and w.result is None:
                    self.net.send_quietly(w.ident, msg)
        self._reap(grace=0.5)
        # the caller gets the error (the CLI prints it once): the log keeps it at INFO
        log.info("%s", err)
        if self.opt.on_abort is not None:
            try:
                self.opt.on_abort(err)
            except Exception:  # noqa: BLE001 - a failing flush must not mask the abort
                log.exception("on_abort hook failed")

    def run(self) -> tuple[list[dict], dict]:
        """Run to the end; returns (per-worker results, run facts). Raises DistributedError."""
        t0 = time.perf_counter()
        try:
            self._install_signals()
            self.net.open(self.opt.bind, self.opt.keys_dir, self.opt.max_message)
            self._launch()
            self._handshake()
            t_loop = time.perf_counter()
            self._window_loop()
            t_loop = time.perf_counter() - t_loop
            pending = self.loop.pending()
            results = self._collect(self.loop.safe_time if self.wall_exceeded else self.loop.end_time(pending))
            self._reap(grace=5.0)
        except DistributedError as e:
            self._abort(e)
            raise
        except BaseException as e:
            err = DistributedError(f"the coordinator failed: {type(e).__name__}: {e}",
                                   time=self.safe_time, kind="coordinator")
            self._abort(err)
            raise err from e
        finally:
            self._close()
        facts = {"windows": self.loop.windows, "events_routed": self.loop.events_routed,
                 "wall_time_s": round(time.perf_counter() - t0, 6), "pending": pending,
                 "max_wall": self.wall_exceeded,
                 "window_loop_s": round(t_loop, 6),
                 "transport": self.net.kind,
                 "workers": [{"name": w.info.name, "components": w.info.components,
                              "host": w.info.host, "pid": w.info.pid} for w in self.workers]}
        return results, facts


# ----- public entry points -------------------------------------------------------------------------
def _links_digest(sim) -> str:
    return hashlib.sha256("\n".join(lk.path for lk in sim.links).encode()).hexdigest()


def prepare(builder: str | Callable, config: dict, partition: Any = None, *,
            processes: int | None = None, weights: dict[str, float] | None = None
            ) -> tuple[PartitionPlan, str]:
    """Build the platform once here and check the partition (explicit ``partition`` or
    automatic over ``processes``): every error surfaces before any process starts."""
    try:
        P.pack(config)
    except TypeError as e:
        raise PartitionError(f"the configuration must be plain data (msgpack): {e}") from None
    sim, built = build(builder, config)
    try:
        if partition is None:
            if processes is None:
                raise PartitionError("give a partition or a number of processes")
            partition = auto_partition(sim, processes, weights)
        p = plan(sim, normalize_partition(partition))
        check_quiet(sim)
        sim.elaborate()      # unbound sockets and other elaboration errors, here and now
    finally:
        sim.discard()        # never run: this copy of the platform only served the checks
        close = getattr(built, "close", None)
        if callable(close):
            close()
    return p, _links_digest(sim)


def run_distributed(builder: str, config: dict, partition: Any = None, *,
                    processes: int | None = None, weights: dict[str, float] | None = None,
                    max_time: int | None = None, options: DistOptions | None = None) -> dict:
    """Run the platform made by ``builder`` (``"pkg.mod:function"``, called as
    ``fn(sim, config)`` in every process) split by ``partition`` (``"a,b|c"`` or groups)
    or automatically over ``processes``; returns the same result dict as :func:`run_local`.
    Raises PartitionError (before anything starts) or DistributedError (run aborted)."""
    if not isinstance(builder, str):
        raise PartitionError("a distributed run needs the builder as an importable "
                             "'package.module:function' string")
    check_builder_allowed(builder)      # the workers would refuse it: say so before they start
    plan_, digest = prepare(builder, config, partition, processes=processes, weights=weights)
    coord = Coordinator(builder, config, plan_, max_time=max_time, options=options,
                        links_digest=digest)
    results, facts = coord.run()
    pending = facts.pop("pending")
    by_wall = facts.pop("max_wall")
    stats = merge_stats([r["stats"] for r in results], set(plan_.cut_links))
    errors = sort_errors(e for r in results for e in r["errors"])
    memories: dict[str, str] = {}
    for r in results:
        memories.update(r["memories"])
    acc = sum(int.from_bytes(r["acc"], "big") for r in results) & MASK
    last = max((r["last"] for r in results if r["last"] is not None), default=0)
    out = make_result(time=last, stopped="max_wall" if by_wall else "max_time" if pending else "quiescence",
                      stats=stats, errors=errors, memories=memories, event_acc=acc,
                      event_count=sum(r["count"] for r in results),
                      manifest=run_manifest(builder_name(builder), config, plan_, max_time, facts))
    out["collected"] = [r["collected"] for r in results]
    return out


def run_local(builder: str | Callable, config: dict, max_time: int | None = None) -> dict:
    """The single-process run, with the same result structure as :func:`run_distributed`
    (``sim.stop()`` is honoured here only: ``stopped == "stop"``)."""
    t0 = time.perf_counter()
    sim, built = build(builder, config)
    hasher = EventHasher().install(sim)
    last, stopped = advance(sim, max_time, allow_stop=True)
    pending = sim.next_event_time() is not None
    how = "stop" if stopped else ("max_time" if pending else "quiescence")
    if not stopped:
        sim.settle_at(max_time if pending and max_time is not None else last or 0)
    facts = {"windows": 0, "events_routed": 0, "transport": "in-process",
             "wall_time_s": round(time.perf_counter() - t0, 6)}
    out = make_result(time=last or 0, stopped=how, stats=sim.stats.as_dict(),
                      errors=error_records(sim), memories=state_digest(sim),
                      event_acc=hasher.acc, event_count=hasher.count,
                      manifest=run_manifest(builder_name(builder), config, None, max_time, facts))
    out["collected"] = [collect(built, lambda _c: True)]
    return out


# ----- a small command line (tests, scripts; the `cosim` CLI wraps the functions above) --------
def coordinator_main(argv: list[str] | None = None) -> int:
    """``python -m cosim.distributed.coordinator --builder pkg.mod:fn [--config JSON]
    (--partition 'a|b' | --processes N) [--max-time '10 us'] [--bind EP --keys DIR]
    [--out result.json]``: prints the hash; exit codes as documented."""
    ap = argparse.ArgumentParser(prog="python -m cosim.distributed.coordinator")
    ap.add_argument("--builder", required=True)
    ap.add_argument("--config", default="{}", help="JSON object")
    ap.add_argument("--partition")
    ap.add_argument("--processes", type=int)
    ap.add_argument("--max-time")
    ap.add_argument("--bind", action="append", help="endpoint(s); default: local ipc")
    ap.add_argument("--keys", help="CurveZMQ key directory (tcp)")
    ap.add_argument("--no-launch", action="store_true", help="wait for remote workers")
    ap.add_argument("--heartbeat-timeout", type=float, default=2.0)
    ap.add_argument("--connect-timeout", type=float, default=20.0)
    ap.add_argument("--out", help="write the result (or the abort) as JSON here")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s", stream=sys.stderr)
    out = Path(args.out) if args.out else None

    def flush(err: DistributedError) -> None:
        if out is not None:
            out.write_text(json.dumps({"aborted": err.as_dict()}, indent=1))

    opts = DistOptions(bind=(args.bind[0] if args.bind and len(args.bind) == 1 else args.bind),
                       keys_dir=args.keys, launch=False if args.no_launch else None,
                       heartbeat_timeout=args.heartbeat_timeout,
                       connect_timeout=args.connect_timeout, on_abort=flush,
                       on_start=lambda ws: print("workers: " + " ".join(
                           f"{w.name}={w.pid}" for w in ws), file=sys.stderr, flush=True))
    try:
        result = run_distributed(args.builder, json.loads(args.config),
                                 args.partition, processes=args.processes,
                                 max_time=parse_time(args.max_time) if args.max_time else None,
                                 options=opts)
    except PartitionError as e:
        print(f"error: {e}", file=sys.stderr)
        return P.EXIT_CONFIG
    except DistributedError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    if out is not None:
        out.write_text(json.dumps(result, indent=1, sort_keys=True))
    print(f"hash {result['hash']}  time {fmt_time(result['time'])}  windows "
          f"{result['manifest']['windows']}")
    return P.EXIT_OK


if __name__ == "__main__":
    sys.exit(coordinator_main())
