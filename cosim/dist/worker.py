"""A worker: simulates one partition in lock-step with the coordinator's windows.

    python -m cosim.dist.worker --connect ipc:///tmp/.../c.sock          (started locally)
    cosim worker --connect tcp://HOST:PORT --keys DIR --name worker0     (remote host)

The worker says HELLO, receives the builder, the configuration and its partition, builds
the whole platform, activates its partition and then loops: GRANT [start, end) -> post the
incoming link events, run everything before ``end``, REPORT (next event time, last activity
time, outgoing events batched per destination). FINISH -> RESULT; ABORT -> exit 4.

It never outlives its coordinator: a local worker asks the kernel for SIGKILL when its
parent dies (prctl PR_SET_PDEATHSIG), and a heartbeat thread with its own socket exits the
process when the coordinator stops answering pings (or never answers, or refuses our key).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import signal
import socket as pysocket
import sys
import threading
import time
import traceback

import zmq
from zmq.utils.monitor import recv_monitor_message

from tlm import CausalityError, Link, Simulator, SimulationError, fmt_time
from tlm.units import fmt_bytes

from ..proc.supervisor import die_with_parent
from . import protocol as P
from .partition import Assignment, activate, build, check_builder_allowed, collect
from ..limits import rss_bytes
from ..results import EventHasher, error_records, state_digest
from .results import partition_stats, split_link_paths

_RCVMORE = int(zmq.RCVMORE)
#: environment variable carrying the secret a local worker presents in its HELLO
SECRET_ENV = "TLM_COSIM_WORKER_SECRET"

__all__ = ["worker_main", "Worker", "advance", "StopNotSupported"]


class StopNotSupported(SimulationError):
    """``sim.stop()`` was called in a distributed run (it is single-process only)."""


def advance(sim: Simulator, until: int | None, allow_stop: bool = False) -> tuple[int, bool]:
    """Run all activity strictly before ``until`` (everything, if None). Returns
    (``sim.last_activity``: time of the last live activity so far, 0 if none; whether
    ``sim.stop()`` ended the run early). Raises :class:`StopNotSupported` on a stop unless
    ``allow_stop`` (stop is single-process only: it would make the result depend on the
    partition)."""
    nxt = sim.next_event_time()
    if nxt is not None and (until is None or nxt < until):
        sim.run(until)      # leaves now == until: posts for the next window are not late
        if sim.stopped and sim.next_event_time() is not None:
            if not allow_stop:
                raise StopNotSupported("sim.stop() is single-process only; in a distributed "
                                       "run use a max time or let the platform go quiet",
                                       None, sim.now)
            return sim.last_activity, True
    return sim.last_activity, False


def _fatal(msg: str, code: int) -> None:
    try:
        sys.stderr.write(f"cosim worker {os.getpid()}: {msg}\n")
        sys.stderr.flush()
    finally:
        os._exit(code)


#: handshakes dropped in a row before a worker gives up on a coordinator key
HANDSHAKE_DROPS = 3


class Heartbeat(threading.Thread):
    """Pings the coordinator on its own socket; exits the process when the coordinator
    is silent for ``timeout`` s (or never answered within ``connect_timeout`` s, or the
    CurveZMQ handshake was refused)."""

    def __init__(self, ctx: zmq.Context, endpoint: str, token: bytes, curve: tuple | None,
                 interval: float, timeout: float, connect_timeout: float):
        super().__init__(daemon=True, name="cosim-heartbeat")
        self.ctx, self.endpoint, self.token, self.curve = ctx, endpoint, token, curve
        self.interval, self.timeout, self.connect_timeout = interval, timeout, connect_timeout
        self.stopped = threading.Event()
        self.last_pong: float | None = None

    def run(self) -> None:
        try:
            self._beat()
        except Exception as e:  # noqa: BLE001 - without a heartbeat nobody would notice us die
            _fatal(f"heartbeat thread failed: {type(e).__name__}: {e}", P.EXIT_COORDINATOR_LOST)

    def _beat(self) -> None:
        sock = self.ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.IDENTITY, b"h:" + self.token)
        P.tune(sock)
        P.set_max_message(sock, 1024)      # it only ever receives PONGs
        _apply_curve(sock, self.curve)
        mon = sock.get_monitor_socket(zmq.EVENT_HANDSHAKE_FAILED_AUTH | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
                                      | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL)
        dropped = 0     # handshakes the coordinator dropped without a reason (wrong server key)
        sock.connect(self.endpoint)
        start = time.monotonic()
        ping = P.pack([P.PING])
        poller = zmq.Poller()
        poller.register(sock, zmq.POLLIN)
        poller.register(mon, zmq.POLLIN)
        try:
            while not self.stopped.is_set():
                try:
                    sock.send(ping, zmq.NOBLOCK)
                except zmq.Again:
                    pass
                end = time.monotonic() + self.interval
                while (left := end - time.monotonic()) > 0 and not self.stopped.is_set():
                    ready = dict(poller.poll(int(left * 1000) + 1))
                    if mon in ready:
                        ev = recv_monitor_message(mon)
                        if ev["event"] == zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL:
                            # a server that cannot decrypt our HELLO just drops us and zmq
                            # retries forever: a few in a row is a wrong coordinator key
                            dropped += 1
                            if dropped < HANDSHAKE_DROPS:
                                continue
                            _fatal(f"the coordinator at {self.endpoint} dropped the CurveZMQ "
                                   f"handshake {dropped} times in a row: wrong server key (is "
                                   "--server-key / KEYS/coordinator.key this coordinator's public "
                                   "key?)", P.EXIT_COORDINATOR_LOST)
                        _fatal(f"the coordinator at {self.endpoint} refused the connection "
                               f"(CurveZMQ handshake failed, event {ev['event']}, value "
                               f"{ev['value']}): wrong or unauthorised key?", P.EXIT_COORDINATOR_LOST)
                    if sock in ready:
                        while True:
                            try:
                                sock.recv(zmq.NOBLOCK)
                            except zmq.Again:
                                break
                            self.last_pong = time.monotonic()
                            dropped = 0
                now = time.monotonic()
                if self.last_pong is None and now - start > self.connect_timeout:
                    _fatal(f"no answer from the coordinator at {self.endpoint} within "
                           f"{self.connect_timeout:g} s (not running, unreachable, or our key "
                           "was refused)", P.EXIT_COORDINATOR_LOST)
                if self.last_pong is not None and now - self.last_pong > self.timeout:
                    _fatal(f"the coordinator at {self.endpoint} stopped answering for "
                           f"{self.timeout:g} s: it is gone; exiting", P.EXIT_COORDINATOR_LOST)
        finally:
            sock.disable_monitor()
            mon.close(0)
            sock.close(0)


def _apply_curve(sock: zmq.Socket, curve: tuple | None) -> None:
    if curve is not None:
        public, secret, server = curve
        sock.curve_publickey = public
        sock.curve_secretkey = secret
        sock.curve_serverkey = server


class Worker:
    """One partition's simulator driven by the coordinator's windows."""

    def __init__(self, endpoint: str, *, curve: tuple | None = None, index_hint: int | None = None,
                 connect_timeout: float = 20.0, secret: str | None = None,
                 max_message: int = P.DEFAULT_MAX_MESSAGE):
        self.endpoint = endpoint
        self.curve = curve
        self.index_hint = index_hint
        self.connect_timeout = connect_timeout
        self.secret = secret
        self.max_message = max_message      # what we accept (ZMQ_MAXMSGSIZE)
        self.send_limit = max_message       # what the coordinator accepts (from SETUP)
        self.max_memory: int | None = None  # resident-size limit (from SETUP)
        self.token = f"{pysocket.gethostname()}-{os.getpid()}-{os.urandom(4).hex()}".encode()
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.IDENTITY, b"w:" + self.token)
        P.tune(self.sock)
        P.set_max_message(self.sock, max_message)
        self.sock.setsockopt(zmq.RCVTIMEO, 200)
        _apply_curve(self.sock, curve)
        self.hb: Heartbeat | None = None
        self.sim: Simulator | None = None
        self.index = -1
        self.name = "w?"
        self.last_time: int | None = None
        self.outbox: dict[int, list] = {}
        self.dropped = 0        # malformed messages received (logged, then ignored)

    # ----- plumbing ---------------------------------------------------------------------------
    def _send(self, parts: list) -> None:
        size = P.too_big(parts, self.send_limit)
        if size is not None:
            # the coordinator would drop the connection (ZMQ_MAXMSGSIZE) and wait in vain:
            # say so instead, in a message that fits
            kind = P.KIND_NAMES[P.unpack(parts[0])[0]]
            msg = P.size_error(f"worker {self.name}'s {kind}", size, self.send_limit)
            sys.stderr.write(f"cosim worker {self.name}: {msg}\n")
            parts = [P.pack([P.ERROR, "size", msg, self.sim.now if self.sim else None, ""])]
        # zero-copy only for messages carrying payload frames (small copies are cheaper)
        if len(parts) == 1:
            self.sock.send(parts[0])
        else:
            self.sock.send_multipart(parts, copy=False)

    def _recv(self) -> tuple[list, list]:
        """Next message from the coordinator: (header, payload frames). Waits as long as the
        heartbeat thread says the coordinator is alive (it ends the process otherwise)."""
        sock = self.sock
        while True:
            try:
                raw = sock.recv()        # blocks up to RCVTIMEO
            except zmq.Again:
                continue
            frames = []
            while sock.getsockopt(_RCVMORE):
                frames.append(sock.recv(copy=False))
            try:
                head = P.unpack(raw)
            except Exception:  # noqa: BLE001 - garbage: msgpack raises many kinds
                head = P.UNREADABLE
            why = P.check_from_coordinator(head, len(frames))
            if why is None:
                return head, frames
            self.dropped += 1
            if self.dropped <= 5:
                sys.stderr.write(f"cosim worker {self.name}: dropped a message from the coordinator "
                                 f"at {self.endpoint}: {why}\n")

    def _error(self, kind: str, message: str, t: int | None) -> int:
        tb = traceback.format_exc()
        sys.stderr.write(f"cosim worker {self.name}: {kind}: {message}\n")
        self._send([P.pack([P.ERROR, kind, message, t, tb if tb.strip() != "NoneType: None" else ""])])
        return P.EXIT_MODEL_ERROR

    # ----- phases -------------------------------------------------------------------------------
    def run(self) -> int:
        self.sock.connect(self.endpoint)
        self.hb = Heartbeat(self.ctx, self.endpoint, self.token, self.curve, 0.25, 3.0,
                            self.connect_timeout)
        self.hb.start()
        try:
            self._send([P.pack([P.HELLO, P.PROTOCOL_VERSION, self.token, os.getpid(),
                                pysocket.gethostname()[:P.MAX_NAME], self.index_hint, self.secret,
                                self.max_message])])
            return self._serve()
        finally:
            if self.sim is not None:
                self.sim.discard()   # processes that never started (run aborted early)
            self.hb.stopped.set()
            self.hb.join(timeout=1.0)
            self.sock.close(linger=2000)  # let a final RESULT/ERROR reach the coordinator
            self.ctx.term()

    def _serve(self) -> int:
        head, _ = self._recv()
        if head[0] == P.ABORT:
            sys.stderr.write(f"cosim worker: {head[1]}\n")
            return P.EXIT_ABORT_RECEIVED
        if head[0] != P.SETUP:
            return self._error("protocol", f"expected SETUP, got {P.KIND_NAMES[head[0]]}", None)
        setup = head[1]
        self.send_limit = setup["max_message"]
        self.max_memory = setup.get("max_memory") if isinstance(setup.get("max_memory"), int) else None
        self.hb.interval = setup["heartbeat_interval"]
        self.hb.timeout = setup["heartbeat_timeout"]
        try:
            self._build(setup)
        except Exception as e:  # noqa: BLE001 - reported to the coordinator, which aborts
            return self._error("setup", f"{type(e).__name__}: {e}", None)
        self._send([P.pack([P.READY, self.sim.next_event_time(), self.links_digest])])
        while True:
            head, frames = self._recv()
            kind = head[0]
            if kind == P.GRANT:
                rc = self._window(head, frames)
                if rc is not None:
                    return rc
            elif kind == P.FINISH:
                try:
                    result = self._result(head[1])
                except Exception as e:  # noqa: BLE001 - reported to the coordinator, which aborts
                    return self._error("result", f"{type(e).__name__}: {e}", self.sim.now)
                self._send([P.pack([P.RESULT, result])])
                self._close_built()
                return P.EXIT_OK
            elif kind == P.ABORT:
                sys.stderr.write(f"cosim worker {self.name}: run aborted by the coordinator: {head[1]}\n")
                return P.EXIT_ABORT_RECEIVED
            else:
                return self._error("protocol", f"unexpected {P.KIND_NAMES[kind]}", self.sim.now)

    def _build(self, setup: dict) -> None:
        self.index = setup["index"]
        self.name = f"w{self.index}"
        self.asg = Assignment(setup["groups"])
        check_builder_allowed(setup["builder"])     # before anything is imported
        sim, self.built = build(setup["builder"], setup["config"])
        self.sim = sim
        self.links: list[Link] = list(sim.links)
        self.links_digest = hashlib.sha256("\n".join(lk.path for lk in self.links).encode()).hexdigest()
        index_of = {lk.path: i for i, lk in enumerate(self.links)}
        owner = self.asg.owner

        def remote_for(link: Link):
            li = index_of[link.path]
            box_a = self.outbox.setdefault(owner(link.side_of["b"]), [])  # a sends to b's owner
            box_b = self.outbox.setdefault(owner(link.side_of["a"]), [])

            def remote(_link, from_side, t, key, channel, message, _li=li):
                if from_side == "a":
                    box_a.append([t, _li, 0, key[2], channel, message])
                else:
                    box_b.append([t, _li, 1, key[2], channel, message])
            return remote

        activate(sim, self.asg, self.index, remote_for)
        self.hasher = EventHasher().install(sim)
        self.split = split_link_paths(sim, owner)
        sim.elaborate()

    def _window(self, head: list, msg: list) -> int | None:
        """One window: post the incoming batches (``msg``: their frames), run, report."""
        sim = self.sim
        _, window, start, end, batches = head
        pos = 0
        links = self.links
        post = sim.post
        for nframes in batches:
            try:
                events = P.decode_batch(msg[pos], msg[pos + 1:pos + 1 + nframes])
            except Exception as e:  # noqa: BLE001 - a malformed batch from another worker
                return self._error("protocol", f"malformed batch of link events in window {window} "
                                   f"({type(e).__name__}: {e})", sim.now)
            pos += 1 + nframes
            for ev in events:
                try:
                    t, li, side, seq, channel, message = ev
                    link = links[li]
                    key = (link.path, P.SIDES[side], seq)
                except (TypeError, ValueError, IndexError):
                    # dropping it would silently change the result: end the run, clearly
                    return self._error("protocol", f"malformed link event in window {window}: "
                                       f"{P.short(ev)}", sim.now)
                try:
                    post(t, key, link.deliver, channel, message)
                except CausalityError:
                    return self._error("causality", f"link {link.path}: an event for {fmt_time(t)} "
                                       f"arrived in worker {self.name}'s past (now "
                                       f"{fmt_time(sim.now)})", sim.now)
        try:
            last, _ = advance(sim, end)
        except SimulationError as e:
            return self._error(type(e).__name__, str(e), e.time if e.time is not None else sim.now)
        except Exception as e:  # noqa: BLE001 - a model bug: reported, then abort
            return self._error(type(e).__name__, f"{type(e).__name__}: {e}", sim.now)
        if last is not None:
            self.last_time = last
        if self.max_memory is not None:
            rss = rss_bytes()
            if rss > self.max_memory:
                return self._error("memory", f"limits.max_memory ({fmt_bytes(self.max_memory)}) exceeded at "
                                   f"simulated time {fmt_time(sim.now)}: worker {self.name} holds "
                                   f"{fmt_bytes(rss)}", sim.now)
        parts = [None]
        desc = []
        for dest, box in self.outbox.items():
            if not box:
                continue
            tmin = min(ev[0] for ev in box)
            if end is not None and tmin < end:
                ev = min(box, key=lambda e: e[0])
                return self._error("causality", f"link {links[ev[1]].path}: an event sent in window "
                                   f"[{fmt_time(start)}, {fmt_time(end)}) is due at {fmt_time(tmin)}, "
                                   f"inside the window (a negative send delay?): it would arrive in "
                                   f"the receiver's past", self.last_time)
            frames = P.encode_batch(box)
            desc.append([dest, tmin, len(box), len(frames) - 1])
            parts += frames
            box.clear()
        parts[0] = P.pack([P.REPORT, window, sim.next_event_time(), self.last_time, desc])
        self._send(parts)
        return None

    def _close_built(self) -> None:
        close = getattr(getattr(self, "built", None), "close", None)
        if callable(close):
            close()

    def _result(self, end: int | None) -> dict:
        sim = self.sim
        owner = self.asg.owner
        idx = self.index
        if end is not None:
            sim.settle_at(end)       # time-integrated statistics (energy) end where the run did
        return {"stats": partition_stats(sim, owner, idx, self.split),
                "collected": collect(self.built, lambda c: owner(c) == idx
                                     or (owner(c) is None and idx == 0)),
                "errors": error_records(sim),
                "memories": state_digest(sim, lambda p: owner(p) == idx or (owner(p) is None and idx == 0)),
                "last": self.last_time, "next": sim.next_event_time(),
                "acc": self.hasher.acc.to_bytes(32, "big"), "count": self.hasher.count}


def load_curve(key_file: str | None, server_key_file: str | None) -> tuple | None:
    """(public, secret, server public) from zmq.auth certificate files, or None."""
    if key_file is None and server_key_file is None:
        return None
    if not key_file or not server_key_file:
        raise SystemExit("cosim worker: CurveZMQ needs both --key (this worker's *.key_secret) "
                         "and --server-key (the coordinator's public coordinator.key)")
    from .keys import load_key      # through the bounded reader: /dev/zero or a FIFO refused at once
    public, secret = load_key(key_file)
    if secret is None:
        raise SystemExit(f"cosim worker: {key_file} holds no secret key (use the *.key_secret file)")
    server, _ = load_key(server_key_file)
    return public, secret, server


def worker_main(argv: list[str] | None = None) -> int:
    """Entry point of ``cosim worker`` and ``python -m cosim.dist.worker``."""
    ap = argparse.ArgumentParser(prog="cosim worker",
                                 description="Run one partition of a distributed simulation "
                                             "for the coordinator at --connect.")
    ap.add_argument("--connect", required=True, metavar="ENDPOINT",
                    help="coordinator endpoint: tcp://HOST:PORT (CurveZMQ keys required) or ipc://PATH")
    ap.add_argument("--keys", metavar="DIR", help="key directory made by `cosim keys` "
                    "(uses DIR/NAME.key_secret and DIR/coordinator.key)")
    ap.add_argument("--name", default="worker0", help="key name inside --keys (default worker0)")
    ap.add_argument("--key", metavar="FILE", help="this worker's secret key file (*.key_secret)")
    ap.add_argument("--server-key", metavar="FILE", help="the coordinator's public key (coordinator.key)")
    ap.add_argument("--connect-timeout", type=float, default=20.0,
                    help="give up when the coordinator does not answer within this many s")
    ap.add_argument("--max-message", type=int, default=P.DEFAULT_MAX_MESSAGE, metavar="BYTES",
                    help="largest frame accepted from the coordinator (default "
                         f"{P.DEFAULT_MAX_MESSAGE // 2**20} MiB; match the coordinator's)")
    ap.add_argument("--index", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--parent-pid", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    # Linux: SIGKILL this process when the parent (the coordinator) dies
    die_with_parent(args.parent_pid, P.EXIT_COORDINATOR_LOST)
    key, server = args.key, args.server_key
    if args.keys:
        key = key or os.path.join(args.keys, f"{args.name}.key_secret")
        server = server or os.path.join(args.keys, "coordinator.key")
    if args.connect.startswith("tcp://") and not (key and server):
        ap.error("tcp:// needs CurveZMQ keys: --keys DIR [--name NAME] or --key and --server-key")
    try:
        curve = load_curve(key, server)
    except (OSError, ValueError) as e:      # tlm.files.FileAccessError is a ValueError
        ap.error(f"cannot read keys: {e}")
    # SIGTERM/SIGINT: exit at once, non-zero (the coordinator sees the worker vanish)
    signal.signal(signal.SIGTERM, lambda s, f: os._exit(P.EXIT_SIGTERM))
    # a worker started by a local coordinator proves it with this secret (never in argv,
    # which every user can read); removed so that nothing this worker starts inherits it
    secret = os.environ.pop(SECRET_ENV, None)
    return Worker(args.connect, curve=curve, index_hint=args.index,
                  connect_timeout=args.connect_timeout, secret=secret,
                  max_message=args.max_message).run()


if __name__ == "__main__":
    sys.exit(worker_main())
