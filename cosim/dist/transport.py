"""The coordinator's transport: one ZeroMQ ROUTER that every worker's DEALERs (data and
heartbeat) connect to, msgpack headers (:mod:`cosim.dist.protocol`) and raw payload frames.

``ipc://`` in a private temporary directory by default; loopback or explicit TCP always
with CurveZMQ (only authorised worker keys are admitted; refused peers are logged).
Receives wait at most 50 ms, so the caller checks liveness and deadlines between them.
"""
from __future__ import annotations

import ipaddress
import logging
import os
import shutil
from pathlib import Path
from typing import Any

import zmq
from zmq.utils.monitor import recv_monitor_message

from ..proc.tmpdir import private_dir
from . import protocol as P
from .keys import authorized_dir, authorized_keys, coordinator_keys
from .protocol import DistributedError

__all__ = ["RouterTransport", "loopback"]

log = logging.getLogger("cosim.dist")
_NB, _MORE_NB, _RCVMORE = int(zmq.NOBLOCK), int(zmq.NOBLOCK | zmq.SNDMORE), int(zmq.RCVMORE)
#: the coordinator's private folder (ipc socket, worker logs): /tmp/tlm-cosim-<random>
TMP_PREFIX = "tlm-cosim-"
#: how long one receive waits (s): the caller's liveness checks run between receives
RECV_SLICE_MS = 50


def _host(endpoint: str) -> str:
    return endpoint[len("tcp://"):].rpartition(":")[0].strip("[]")


def loopback(endpoint: str) -> bool:
    """Whether a tcp:// endpoint listens on a loopback address only."""
    host = _host(endpoint)
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:      # a host or interface name: assume it faces the network
        return False


def _wildcard_shorthand(endpoint: str) -> bool:
    """``tcp://*:P`` and ``tcp://0:P`` listen on every interface without saying so."""
    return endpoint.startswith("tcp://") and _host(endpoint) in ("*", "0")


#: endpoints already warned about in this process (the warning is given once)
_WARNED: set[str] = set()


def warn_exposed(endpoint: str) -> None:
    """Say once per endpoint, loudly, that a coordinator listens beyond this host."""
    if endpoint in _WARNED:
        return
    _WARNED.add(endpoint)
    log.warning("WARNING: the coordinator listens on %s, reachable from the network: only "
                "workers holding a key in the --keys folder's authorized/ list get in "
                "(CurveZMQ); bind tcp://127.0.0.1:PORT or 'tcp' if every worker runs on this host",
                endpoint)


def _checked_keys(keys_dir: str | os.PathLike) -> tuple[bytes, bytes, set[bytes]]:
    """The coordinator's key pair and the z85 public keys of the authorised workers, or a
    configuration error naming what is missing. A file of ``authorized/`` that is not a
    key is a warning naming it, now (its worker would be refused at the connect timeout)."""
    d = Path(keys_dir)
    if not d.is_dir():
        raise DistributedError(f"--keys {d}: not a directory (create keys with `cosim keys {d}`)",
                               exit_code=P.EXIT_CONFIG, kind="config")
    try:
        public, secret = coordinator_keys(d)
    except (OSError, ValueError) as e:
        raise DistributedError(f"--keys {d}: {e}", exit_code=P.EXIT_CONFIG, kind="config") from None
    allowed = authorized_dir(d)
    keys, problems = authorized_keys(allowed)
    for p in problems:
        log.warning("warning: ignoring an authorised worker key: %s; that worker will be refused", p)
    if not keys:
        raise DistributedError(f"--keys {d}: no authorised worker keys in {allowed} "
                               f"(create them with `cosim keys {d}`)"
                               + (f"; not keys: {'; '.join(problems)}" if problems else ""),
                               exit_code=P.EXIT_CONFIG, kind="config")
    return public, secret, keys


class _AllowList:
    """The authenticator's credentials provider: the authorised keys, read once through the
    bounded reader (pyzmq's own ``configure_curve`` would open every ``*.key`` itself,
    following a link to /dev/zero or waiting on a FIFO)."""

    def __init__(self, keys: set[bytes]):
        self.keys = frozenset(keys)

    def callback(self, domain: str, key: bytes) -> bool:
        return key in self.keys


class _Auth:
    """A zmq ThreadAuthenticator that admits only known worker keys and logs refusals."""

    def __init__(self, ctx: zmq.Context, allowed: set[bytes]):
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

        # the caller has checked the keys: a thread started here is always stopped by stop()
        self.auth = Auth(ctx, log=logging.getLogger("cosim.dist.auth"))
        self.auth.start()
        self.auth.configure_curve_callback(domain="*", credentials_provider=_AllowList(allowed))

    def stop(self) -> None:
        self.auth.stop()


class RouterTransport:
    """The coordinator's socket: :meth:`open` binds, :meth:`send` / :meth:`recv` move
    multipart messages (identity, msgpack header, payload frames), :meth:`close` ends it."""

    def __init__(self) -> None:
        self.ctx: zmq.Context | None = None
        self.sock: zmq.Socket | None = None
        self.auth: _Auth | None = None
        self.mon: zmq.Socket | None = None
        self._refusals: dict[str, tuple[float, int]] = {}
        #: private directory (ipc socket, worker logs); removed by close()
        self.tmp: Path | None = None
        self.endpoints: list[str] = []
        self.kind = "ipc"
        #: z85 public keys of the authorised workers (CurveZMQ), None without keys
        self.expected_keys: set[str] | None = None
        #: while set, :meth:`recv` also returns the CurveZMQ key of each message's sender
        self.peer_keys = False

    def open(self, bind: str | list[str] | None, keys_dir: str | os.PathLike | None,
             max_message: int = P.DEFAULT_MAX_MESSAGE) -> None:
        """Bind: None -> ipc:// in a private temp dir; ``"tcp"`` -> loopback TCP on a free
        port; or explicit endpoint(s). TCP needs ``keys_dir`` (CurveZMQ). A peer sending a
        frame over ``max_message`` bytes is disconnected (ZMQ_MAXMSGSIZE)."""
        self.ctx = zmq.Context()
        sock = self.sock = self.ctx.socket(zmq.ROUTER)
        P.tune(sock)
        P.set_max_message(sock, max_message)
        sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
        sock.setsockopt(zmq.RCVTIMEO, RECV_SLICE_MS)  # every wait is bounded
        binds = bind
        if binds is None:
            self.tmp = private_dir(TMP_PREFIX)   # mode 0700: private; stale ones reaped
            if len(str(self.tmp)) > 90:      # a unix socket path holds at most 107 bytes
                shutil.rmtree(self.tmp)
                self.tmp = private_dir(TMP_PREFIX, "/tmp")
            binds = [f"ipc://{self.tmp}/c.sock"]
        elif binds == "tcp":
            binds = ["tcp://127.0.0.1:*"]
        elif isinstance(binds, str):
            binds = [binds]
        tcp = [b for b in binds if b.startswith("tcp://")]
        if tcp:
            self.kind = "tcp+curve"
            if keys_dir is None:
                exposed = [b for b in tcp if b != "tcp://127.0.0.1:*" and not loopback(b)]
                where = (f"{', '.join(exposed)} would be reachable from the network by anyone"
                         if exposed else "any local user could connect to it")
                raise DistributedError(f"TCP endpoints need CurveZMQ keys (--keys DIR / keys_dir, made "
                                       f"by `cosim keys DIR`): without them {where}, "
                                       "unauthenticated", exit_code=P.EXIT_CONFIG, kind="config")
            # every key is checked before the authenticator thread starts: a bad --keys
            # must end the run at once (exit 2), never leave a thread behind
            public, secret, allowed = _checked_keys(keys_dir)
            self.auth = _Auth(self.ctx, allowed)
            self.expected_keys = {k.decode() for k in allowed}
            sock.curve_server = True
            sock.curve_publickey = public
            sock.curve_secretkey = secret
            # peers failing the handshake before ZAP (no CurveZMQ, wrong server key) are
            # only visible as monitor events: log them too
            self.mon = sock.get_monitor_socket(zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
                                               | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL)
        for b in binds:
            if _wildcard_shorthand(b):
                raise DistributedError(f"refusing to bind {b}: name the address to listen on "
                                       "(tcp://0.0.0.0:PORT if you really mean every interface)",
                                       exit_code=P.EXIT_CONFIG, kind="config")
            try:
                sock.bind(b)
            except zmq.ZMQError as e:
                raise DistributedError(f"cannot bind {b}: {e}", exit_code=P.EXIT_CONFIG,
                                       kind="config") from None
            self.endpoints.append(sock.getsockopt_string(zmq.LAST_ENDPOINT))
        if self.tmp is None:      # local workers' logs, whatever the endpoint
            self.tmp = private_dir(TMP_PREFIX)
        for b in self.endpoints:
            if b.startswith("tcp://") and not loopback(b):
                warn_exposed(b)

    def close(self) -> None:
        """Close the socket and the context (the private directory stays: :meth:`cleanup`)."""
        if self.mon is not None:
            self.sock.disable_monitor()
            self.mon.close(0)
        if self.sock is not None:
            self.sock.close(0)
        if self.auth is not None:
            self.auth.stop()
        if self.ctx is not None:
            self.ctx.term()

    def cleanup(self) -> None:
        """Remove the private directory (after the workers that log into it are gone)."""
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def send(self, ident: bytes, parts: list, forward: bool = False) -> None:
        """Send ``parts`` to ``ident`` without blocking; raises zmq.ZMQError when the
        peer is gone. ``forward``: the parts are received frames, sent zero-copy."""
        # zero-copy only pays for forwarded frames; small copies are cheaper than Frame
        # objects. Plain int flags: OR-ing zmq's enum flags costs more than the send.
        send = self.sock.send
        send(ident, _MORE_NB)
        for f in parts[:-1]:
            send(f, _MORE_NB, copy=not forward)
        send(parts[-1], _NB, copy=not forward)

    def send_quietly(self, ident: bytes, message: bytes) -> None:
        """Best-effort one-frame message (pongs, refusals, aborts): errors are ignored."""
        try:
            self.sock.send_multipart([ident, message], flags=zmq.NOBLOCK)
        except zmq.ZMQError:
            pass

    def recv(self) -> tuple[bytes, Any, list] | None:
        """The next message as (identity, header, payload frames), or None when nothing
        came within :data:`RECV_SLICE_MS`. Payload frames stay zero-copy Frames. A header
        that is not msgpack comes back as :data:`cosim.dist.protocol.UNREADABLE` (the caller drops it); while
        :attr:`peer_keys` is set the header comes as ``(header, sender's z85 key or None)``."""
        sock = self.sock
        recv = sock.recv
        try:
            ident = recv()
        except zmq.Again:
            return None
        key = None
        if self.peer_keys:
            frame = recv(copy=False)
            raw = frame.bytes
            if self.expected_keys is not None:
                try:
                    key = frame.get("User-Id")
                except zmq.ZMQError:
                    key = None
        else:
            raw = recv()
        parts = []
        while sock.getsockopt(_RCVMORE):
            parts.append(recv(copy=False))
        try:
            head = P.unpack(raw)
        except Exception:  # noqa: BLE001 - any garbage from any peer: msgpack raises many kinds
            head = P.UNREADABLE
        return ident, ((head, key) if self.peer_keys else head), parts

    def log_refused(self, now: float) -> None:
        """Log peers the CurveZMQ handshake refused (once per kind per 10 s, with a count)."""
        if self.mon is None:
            return
        while True:
            try:
                ev = recv_monitor_message(self.mon, zmq.NOBLOCK)
            except zmq.Again:
                return
            name = zmq.Event(ev["event"]).name
            last, count = self._refusals.get(name, (0.0, 0))
            if now - last < 10.0:
                self._refusals[name] = (last, count + 1)
                continue
            self._refusals[name] = (now, 0)
            more = f" ({count} more attempts since the last report)" if count else ""
            log.warning("refused a peer on %s: CurveZMQ handshake failed (%s): not a CurveZMQ "
                        "client, or it holds the wrong coordinator key%s",
                        ev.get("endpoint", b"?").decode(errors="replace"), name, more)
