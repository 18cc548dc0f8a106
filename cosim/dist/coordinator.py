"""The coordinator: conservative windows with idle skipping (YAWNS) over ZeroMQ.

Each window: T = the earliest pending activity anywhere (next event times reported by the
workers, and the times of link events the coordinator holds for them); every worker with
something before U = T + L (L = the smallest min_latency of the cut links) is granted
[T, U) together with its pending link events, one message each; each answers with one
REPORT (its next event time and its outgoing events, batched per destination). Events sent
in [T, U) are due at >= U, so nobody ever receives an event in its past. The run ends at
global quiescence (nothing pending anywhere) or at the max time; both are partition-
invariant. Without cut links the workers are independent and run to the end in one window.

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
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import zmq
from zmq.utils.monitor import recv_monitor_message

from tlm import fmt_time, parse_time

from . import protocol as P
from .keys import authorized_dir, coordinator_keys
from .partition import (PartitionError, PartitionPlan, auto_partition, build,
                        builder_name, check_quiet, collect, normalize_partition, plan)
from .protocol import DistributedError
from ..results import (MASK, EventHasher, error_records, merge_stats, run_manifest, sort_errors,
                       state_digest)
from .results import make_result
from .worker import advance

__all__ = ["DistOptions", "WorkerInfo", "Coordinator", "run_distributed", "run_local",
           "prepare", "coordinator_main"]

log = logging.getLogger("cosim.dist")
_NB, _MORE_NB, _RCVMORE = int(zmq.NOBLOCK), int(zmq.NOBLOCK | zmq.SNDMORE), int(zmq.RCVMORE)


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
    round_timeout: float = 300.0
    connect_timeout: float = 20.0
    setup_timeout: float = 120.0
    python: str = sys.executable
    handle_signals: bool = True
    on_abort: Callable[[DistributedError], None] | None = None
    on_start: Callable[[list["WorkerInfo"]], None] | None = None


@dataclass
class WorkerInfo:
    index: int
    name: str
    components: list[str]
    pid: int | None = None
    host: str | None = None
    local: bool = False


@dataclass
class _W:
    info: WorkerInfo
    proc: subprocess.Popen | None = None
    log_path: Path | None = None
    ident: bytes | None = None
    hb_ident: bytes | None = None
    last_seen: float = 0.0
    ready: bool = False
    next_time: int | None = None
    last_time: int | None = None
    pending: list = field(default_factory=list)       # [(nframes, [frames...]), ...]
    pending_min: int | None = None
    result: dict | None = None

    def eff_next(self) -> int | None:
        a, b = self.next_time, self.pending_min
        if a is None:
            return b
        return a if b is None or a <= b else b


def _loopback(endpoint: str) -> bool:
    host = endpoint[len("tcp://"):].rpartition(":")[0].strip("[]")
    return host in ("127.0.0.1", "localhost", "::1")


class _Auth:
    """A zmq ThreadAuthenticator that admits only known worker keys and logs refusals."""

    def __init__(self, ctx: zmq.Context, allowed: Path):
        from zmq.auth.thread import ThreadAuthenticator

        refused = self.refused = []

        class Auth(ThreadAuthenticator):
            async def handle_zap_message(self, msg):  # remember the peer address for the log
                self._peer = msg[3].decode("utf-8", "replace") if len(msg) > 3 else "?"
                await super().handle_zap_message(msg)

            async def _authenticate_curve(self, domain, client_key):
                ok, reason = await super()._authenticate_curve(domain, client_key)
                if not ok:
                    from zmq.utils import z85
                    key = z85.encode(client_key).decode()
                    peer = getattr(self, "_peer", "?")
                    first = (peer, key) not in refused
                    refused.append((peer, key))
                    if first:   # a refused peer retries every 100 ms: log it once
                        log.warning("refused a peer from %s: CurveZMQ key %s is not authorised "
                                    "(%s)", peer, key, reason.decode())
                return ok, reason

        self.auth = Auth(ctx, log=logging.getLogger("cosim.dist.auth"))
        self.auth.start()
        if not any(allowed.glob("*.key")):
            raise DistributedError(f"no authorised worker keys in {allowed} (run `cosim keys`)",
                                   exit_code=P.EXIT_CONFIG, kind="config")
        self.auth.configure_curve(domain="*", location=str(allowed))

    def stop(self) -> None:
        self.auth.stop()


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
        self._by_ident: dict[bytes, _W] = {}
        self.ctx: zmq.Context | None = None
        self.sock: zmq.Socket | None = None
        self.auth: _Auth | None = None
        self.mon: zmq.Socket | None = None
        self._refusals: dict[str, tuple[float, int]] = {}
        self.tmp: Path | None = None
        self.endpoints: list[str] = []
        self.safe_time = 0          # all activity before this time is done everywhere
        self.windows = 0
        self.events_routed = 0
        self._signal: int | None = None
        self._old_handlers: dict = {}
        self._next_health = 0.0
        self._aborted = False
        self.transport = "ipc"

    # ----- setup / teardown -----------------------------------------------------------------
    def _open(self) -> None:
        opt = self.opt
        self.ctx = zmq.Context()
        sock = self.sock = self.ctx.socket(zmq.ROUTER)
        P.tune(sock)
        sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
        sock.setsockopt(zmq.RCVTIMEO, 50)  # every wait is bounded: liveness checks between
        binds = opt.bind
        if binds is None:
            self.tmp = Path(tempfile.mkdtemp(prefix="tlm-cosim-"))   # mode 0700: private
            if len(str(self.tmp)) > 90:      # a unix socket path holds at most 107 bytes
                shutil.rmtree(self.tmp)
                self.tmp = Path(tempfile.mkdtemp(prefix="tlm-cosim-", dir="/tmp"))
            binds = [f"ipc://{self.tmp}/c.sock"]
        elif binds == "tcp":
            binds = ["tcp://127.0.0.1:*"]
        elif isinstance(binds, str):
            binds = [binds]
        tcp = [b for b in binds if b.startswith("tcp://")]
        if tcp:
            self.transport = "tcp+curve"
            if opt.keys_dir is None:
                raise DistributedError("TCP endpoints need CurveZMQ keys: pass keys_dir (made "
                                       "by `cosim keys DIR`)", exit_code=P.EXIT_CONFIG, kind="config")
            if self.tmp is None:
                self.tmp = Path(tempfile.mkdtemp(prefix="tlm-cosim-"))
            self.auth = _Auth(self.ctx, authorized_dir(opt.keys_dir))
            public, secret = coordinator_keys(opt.keys_dir)
            sock.curve_server = True
            sock.curve_publickey = public
            sock.curve_secretkey = secret
            # peers failing the handshake before ZAP (no CurveZMQ, wrong server key) are
            # only visible as monitor events: log them too
            self.mon = sock.get_monitor_socket(zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
                                               | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL)
        for b in binds:
            if b.startswith("tcp://") and b.split("//")[1].startswith("*"):
                raise DistributedError(f"refusing to bind {b}: name the address to listen on "
                                       "(tcp://0.0.0.0:PORT if you really mean every interface)",
                                       exit_code=P.EXIT_CONFIG, kind="config")
            try:
                sock.bind(b)
            except zmq.ZMQError as e:
                raise DistributedError(f"cannot bind {b}: {e}", exit_code=P.EXIT_CONFIG,
                                       kind="config") from None
            self.endpoints.append(sock.getsockopt_string(zmq.LAST_ENDPOINT))
        for b in self.endpoints:
            if b.startswith("tcp://") and not _loopback(b):
                log.info("coordinator listening on %s (explicit non-loopback bind)", b)

    def _close(self) -> None:
        self._restore_signals()
        if self.mon is not None:
            self.sock.disable_monitor()
            self.mon.close(0)
        if self.sock is not None:
            self.sock.close(0)
        if self.auth is not None:
            self.auth.stop()
        if self.ctx is not None:
            self.ctx.term()
        self._reap(grace=2.0)
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)

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
        ep = self.endpoints[0]
        if ep.startswith("tcp://0.0.0.0:"):
            ep = "tcp://127.0.0.1:" + ep.rpartition(":")[2]
        env = dict(os.environ)
        paths = [p for p in sys.path if p and os.path.isdir(p)]
        pkg_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([pkg_root, os.getcwd(), *paths]))
        for w in self.workers:
            i = w.info.index
            cmd = [self.opt.python, "-m", "cosim.dist.worker", "--connect", ep, "--index", str(i),
                   "--parent-pid", str(os.getpid())]
            if ep.startswith("tcp://"):
                cmd += ["--keys", str(self.opt.keys_dir), "--name", f"worker{i}"]
            w.log_path = self.tmp / f"{w.info.name}.log"
            with open(w.log_path, "wb") as out:
                # own session: a Ctrl-C in the terminal reaches the coordinator only, which
                # then stops the workers cleanly; PR_SET_PDEATHSIG covers a killed coordinator
                w.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                          stderr=subprocess.STDOUT, env=env, start_new_session=True)
            w.info.pid = w.proc.pid
            w.info.local = True

    def _reap(self, grace: float) -> None:
        procs = [w for w in self.workers if w.proc is not None and w.proc.returncode is None]
        end = time.monotonic() + grace
        while procs and time.monotonic() < end:
            procs = [w for w in procs if w.proc.poll() is None]
            if procs:
                time.sleep(0.02)
        for w in procs:
            try:
                os.killpg(w.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for w in procs:
            try:
                w.proc.wait(timeout=3.0)
            except subprocess.TimeoutExpired:
                log.error("worker %s (pid %s) did not exit after SIGKILL", w.info.name, w.proc.pid)

    def _log_tail(self, w: _W, n: int = 1200) -> str:
        if w.log_path is None or not w.log_path.exists():
            return ""
        data = w.log_path.read_bytes()[-n:].decode("utf-8", "replace").strip()
        return f"; its last output:\n{data}" if data else ""

    # ----- messaging ------------------------------------------------------------------------------
    def _send(self, w: _W, parts: list, forward: bool = False) -> None:
        # zero-copy only pays for forwarded frames; small copies are cheaper than Frame
        # objects. Plain int flags: OR-ing zmq's enum flags costs more than the send.
        send = self.sock.send
        try:
            send(w.ident, _MORE_NB)
            for f in parts[:-1]:
                send(f, _MORE_NB, copy=not forward)
            send(parts[-1], _NB, copy=not forward)
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

    def _log_refused(self) -> None:
        while True:
            try:
                ev = recv_monitor_message(self.mon, zmq.NOBLOCK)
            except zmq.Again:
                return
            name = zmq.Event(ev["event"]).name
            # a refused peer retries every 100 ms: log once per kind per 10 s, with a count
            now = time.monotonic()
            last, count = self._refusals.get(name, (0.0, 0))
            if now - last < 10.0:
                self._refusals[name] = (last, count + 1)
                continue
            self._refusals[name] = (now, 0)
            more = f" ({count} more attempts since the last report)" if count else ""
            log.warning("refused a peer on %s: CurveZMQ handshake failed (%s): not a CurveZMQ "
                        "client, or it holds the wrong coordinator key%s",
                        ev.get("endpoint", b"?").decode(errors="replace"), name, more)

    def _health(self, now: float) -> None:
        if self.mon is not None:
            self._log_refused()
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
                if rc is not None:
                    how = f"was killed by signal {-rc}" if rc < 0 else f"exited with code {rc}"
                    raise self._err(w, f"died: its process (pid {w.proc.pid}) {how}{self._log_tail(w)}",
                                    "died")
            if w.ident is not None and now - w.last_seen > self.opt.heartbeat_timeout:
                raise self._err(w, f"stopped responding: no heartbeat for "
                                f"{now - w.last_seen:.1f} s (hung, stopped or unreachable)", "hung")

    def _next(self, deadline: float | None, doing: str | Callable[[], str]) -> tuple[_W | None, bytes, list, list]:
        """Next non-heartbeat message: (worker or None, ident, header, frames after the
        header). Answers pings,
        checks liveness every 50 ms, and raises at ``deadline``."""
        sock = self.sock
        recv = sock.recv
        while True:
            try:
                ident = recv()        # blocks up to RCVTIMEO (50 ms)
            except zmq.Again:
                now = time.monotonic()
                if now >= self._next_health:
                    self._next_health = now + 0.05
                    self._health(now)
                if deadline is not None and now > deadline:
                    what = doing() if callable(doing) else doing
                    raise DistributedError(f"timed out {what}", time=self.safe_time, kind="timeout")
                continue
            # header as bytes; forwarded payload frames stay zero-copy Frames
            head = P.unpack(recv())
            parts = []
            while sock.getsockopt(_RCVMORE):
                parts.append(recv(copy=False))
            w = self._by_ident.get(ident)
            now = time.monotonic()
            if w is not None:
                w.last_seen = now
            if head[0] == P.PING:
                try:
                    sock.send_multipart([ident, P.pack([P.PONG])], flags=zmq.NOBLOCK)
                except zmq.ZMQError:
                    pass
                continue
            if now >= self._next_health:
                self._next_health = now + 0.05
                self._health(now)
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
                      "heartbeat_timeout": max(opt.heartbeat_timeout, 3 * opt.heartbeat_interval)}
        setup_deadline = None
        while not all(w.ready for w in self.workers):
            if free:
                missing = ", ".join(self.workers[i].info.name for i in free)
                doing = f"waiting for worker(s) {missing} to connect to {', '.join(self.endpoints)}"
                dl = deadline
            else:
                if setup_deadline is None:
                    setup_deadline = time.monotonic() + opt.setup_timeout
                doing, dl = "waiting for workers to build the platform", setup_deadline
            w, ident, head, parts = self._next(dl, doing)
            kind = head[0]
            if kind == P.HELLO and w is None:
                _, version, token, pid, host, hint = head
                if version != P.PROTOCOL_VERSION:
                    log.warning("ignoring a worker (pid %s on %s) speaking protocol %s", pid, host, version)
                    continue
                if not free:
                    self.sock.send_multipart([ident, P.pack([P.ABORT, "no partition left for this "
                                                             "worker"])], flags=zmq.NOBLOCK)
                    continue
                idx = hint if hint in free else free[0]
                free.remove(idx)
                w = self.workers[idx]
                w.ident = ident
                w.hb_ident = b"h:" + bytes(token)
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
                w.next_time = nxt
                w.ready = True
        if self.opt.on_start is not None:
            self.opt.on_start([w.info for w in self.workers])

    def _window_loop(self) -> None:
        L = self.plan.lookahead
        max_time = self.max_time
        workers = self.workers
        round_timeout = self.opt.round_timeout
        while True:
            nexts = [t for t in (w.eff_next() for w in workers) if t is not None]
            if not nexts:
                return
            T = min(nexts)
            if max_time is not None and T >= max_time:
                return
            U = T + L if L is not None else None
            if max_time is not None and (U is None or U > max_time):
                U = max_time
            granted = []
            for w in workers:
                t = w.eff_next()
                if t is not None and (U is None or t < U):
                    frames = []
                    counts = []
                    for nf, seg in w.pending:
                        counts.append(nf)
                        frames += seg
                    w.pending = []
                    w.pending_min = None
                    self._send(w, [P.pack([P.GRANT, self.windows, T, U, counts]), *frames],
                               forward=bool(frames))
                    granted.append(w)
            waiting = {id(w) for w in granted}
            deadline = time.monotonic() + round_timeout
            while waiting:
                w, ident, head, parts = self._next(deadline, lambda: f"for window {self.windows} "
                                                   f"[{fmt_time(T)}, {fmt_time(U) if U is not None else 'end'})")
                if w is None or head[0] != P.REPORT:
                    continue
                _, win, nxt, last, desc = head
                w.next_time = nxt
                if last is not None:
                    w.last_time = last
                pos = 0
                for dest, tmin, count, nframes in desc:
                    d = workers[dest]
                    d.pending.append((nframes, parts[pos:pos + 1 + nframes]))
                    if d.pending_min is None or tmin < d.pending_min:
                        d.pending_min = tmin
                    pos += 1 + nframes
                    self.events_routed += count
                waiting.discard(id(w))
            self.safe_time = U if U is not None else max(
                [w.last_time or 0 for w in workers] + [self.safe_time])
            self.windows += 1

    def end_time(self, pending: bool) -> int:
        """Where the run ends: the time limit if work was left, else the last activity."""
        if pending and self.max_time is not None:
            return self.max_time
        return max([w.last_time or 0 for w in self.workers])

    def _collect(self, end: int) -> list[dict]:
        for w in self.workers:
            self._send(w, [P.pack([P.FINISH, end])])
        deadline = time.monotonic() + self.opt.round_timeout
        while not all(w.result is not None for w in self.workers):
            w, ident, head, parts = self._next(deadline, "collecting results")
            if w is not None and head[0] == P.RESULT:
                w.result = head[1]
        return [w.result for w in self.workers]

    def _abort(self, err: DistributedError) -> None:
        if self._aborted:
            return
        self._aborted = True
        if err.time is None:
            err.time = self.safe_time
            err.args = (err._format(),)
        if self.sock is not None:
            msg = P.pack([P.ABORT, str(err)])
            for w in self.workers:
                if w.ident is not None and w.result is None:
                    try:
                        self.sock.send_multipart([w.ident, msg], flags=zmq.NOBLOCK)
                    except zmq.ZMQError:
                        pass
        self._reap(grace=0.5)
        log.error("%s", err)
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
            self._open()
            self._launch()
            self._handshake()
            t_loop = time.perf_counter()
            self._window_loop()
            t_loop = time.perf_counter() - t_loop
            pending = any(w.eff_next() is not None for w in self.workers)
            results = self._collect(self.end_time(pending))
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
        facts = {"windows": self.windows, "events_routed": self.events_routed,
                 "wall_time_s": round(time.perf_counter() - t0, 6), "pending": pending,
                 "window_loop_s": round(t_loop, 6),
                 "transport": self.transport,
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
    plan_, digest = prepare(builder, config, partition, processes=processes, weights=weights)
    coord = Coordinator(builder, config, plan_, max_time=max_time, options=options,
                        links_digest=digest)
    results, facts = coord.run()
    pending = facts.pop("pending")
    stats = merge_stats([r["stats"] for r in results], set(plan_.cut_links))
    errors = sort_errors(e for r in results for e in r["errors"])
    memories: dict[str, str] = {}
    for r in results:
        memories.update(r["memories"])
    acc = sum(int.from_bytes(r["acc"], "big") for r in results) & MASK
    last = max((r["last"] for r in results if r["last"] is not None), default=0)
    out = make_result(time=last, stopped="max_time" if pending else "quiescence", stats=stats,
                      errors=errors, memories=memories, event_acc=acc,
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
    """``python -m cosim.dist.coordinator --builder pkg.mod:fn [--config JSON]
    (--partition 'a|b' | --processes N) [--max-time '10 us'] [--bind EP --keys DIR]
    [--out result.json]``: prints the hash; exit codes as documented."""
    ap = argparse.ArgumentParser(prog="python -m cosim.dist.coordinator")
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
