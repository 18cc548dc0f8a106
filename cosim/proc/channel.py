"""The msgpack channel between a parent and its child processes, over ZeroMQ.

Framing (:func:`pack` / :func:`unpack`, msgpack with binary strings; numpy scalars and
byte-likes encode as plain values) and socket tuning are shared by the distribution layer
(:mod:`cosim.distributed.protocol` builds its message kinds and batches on them) and the RTL
bridge. :class:`ParentLink` / :class:`ChildChannel` are the parent-and-one-child pair: the
parent binds a ROUTER (``ipc://`` in a private temporary directory), the child connects a
DEALER. The RTL bridge runs one per swapped block (the child is the cocotb test
:mod:`cosim.rtl.serve`; messages are the window protocol of
:mod:`cosim.rtl.adapters.driver` plus ``{"hello": ...}`` and ``{"bye": ...}``).

Every receive has a deadline. The TLM side (:class:`ParentLink`) waits in short slices,
checking that the child is still alive, so a dead child is reported at once and a stuck one
after ``timeout`` seconds of wall time, never a hang. The child side (:class:`ChildChannel`)
blocks (which freezes the simulator between windows: the lock-step) but checks every second
that its parent is alive, and ends when it is not, or after ``idle_timeout`` seconds.

This module imports neither cocotb nor the simulator: both sides use it.
"""
from __future__ import annotations

import os
import time
from typing import Any, Callable

import msgpack
import zmq

from ..canon import plain

_packer = msgpack.Packer(default=plain, use_bin_type=True)


def pack(msg: Any) -> bytes:
    """``msg`` as msgpack bytes (the wire format of every channel)."""
    return _packer.pack(msg)


def unpack(data: bytes | memoryview | zmq.Frame,
           ext_hook: Callable[[int, bytes], Any] | None = None) -> Any:
    """The value of a msgpack message (a zmq Frame is read in place); ``ext_hook``
    decodes extension types."""
    if isinstance(data, zmq.Frame):
        data = data.buffer
    if ext_hook is None:
        return msgpack.unpackb(data, raw=False, strict_map_key=False)
    return msgpack.unpackb(data, raw=False, strict_map_key=False, ext_hook=ext_hook)


def tune(sock: zmq.Socket, heartbeat_ms: int = 1000) -> None:
    """LINGER 0 (never block on close) and ZMTP heartbeats (dead TCP peers are noticed)."""
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.HEARTBEAT_IVL, heartbeat_ms)
    sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, heartbeat_ms * 3)
    sock.setsockopt(zmq.HEARTBEAT_TTL, heartbeat_ms * 3)


class ChannelError(RuntimeError):
    """The other side died, stopped answering or sent something unexpected."""


class ChannelTimeout(ChannelError):
    """No message within the deadline."""


class ChildDied(ChannelError):
    """The child process exited while a message was awaited."""

    def __init__(self, message: str, returncode: int | None):
        super().__init__(message)
        self.returncode = returncode


class ParentLink:
    """TLM side: a ROUTER bound to ``endpoint``; talks to one child (identity learnt from
    its hello)."""

    def __init__(self, endpoint: str):
        self.endpoint = endpoint
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
        self.sock.bind(endpoint)
        self.peer: bytes | None = None
        self.round_trips = 0

    def recv(self, timeout: float, alive: Callable[[], int | None] | None = None,
             what: str = "reply") -> dict:
        """The next message, within ``timeout`` s of wall time. ``alive()`` returns None
        while the child runs, its exit code once it died (checked every 50 ms)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChannelTimeout(f"no {what} within {timeout:g} s of wall time")
            if self.sock.poll(int(min(left, 0.05) * 1000) + 1):
                frames = self.sock.recv_multipart()
                ident, payload = frames[0], frames[-1]
                if self.peer is None:
                    self.peer = ident
                elif ident != self.peer:
                    continue  # a stale peer (cannot happen with one child); ignore
                return unpack(payload)
            if alive is not None:
                rc = alive()
                if rc is not None:
                    # it may have sent something just before dying
                    if self.sock.poll(0):
                        continue
                    raise ChildDied(f"the simulator process exited (code {rc}) while "
                                    f"waiting for the {what}", rc)

    def send(self, msg: dict) -> None:
        if self.peer is None:
            raise ChannelError("no child connected yet")
        try:
            self.sock.send_multipart([self.peer, pack(msg)], flags=zmq.NOBLOCK)
        except zmq.ZMQError as e:  # EHOSTUNREACH (peer gone) or EAGAIN (high-water mark)
            raise ChannelError(f"cannot send to the simulator process: {e}") from None

    def request(self, msg: dict, timeout: float, alive=None, what: str = "reply") -> dict:
        self.send(msg)
        self.round_trips += 1
        return self.recv(timeout, alive, what)

    def close(self) -> None:
        self.sock.close(0)
        self.ctx.term()


class ChildChannel:
    """Child side (cocotb test): a DEALER connected to the parent's ROUTER. ``recv()``
    blocks the simulator until the next grant; returns ``None`` (the WindowDriver's stop)
    when the parent died or nothing came for ``idle_timeout`` seconds."""

    def __init__(self, endpoint: str, identity: str, parent_pid: int,
                 idle_timeout: float = 3600.0):
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.IDENTITY, identity.encode())
        self.sock.connect(endpoint)
        self.parent_pid = parent_pid
        self.idle_timeout = idle_timeout
        self.lost: str | None = None

    def recv(self) -> dict | None:
        deadline = time.monotonic() + self.idle_timeout
        while True:
            if self.sock.poll(1000):
                return unpack(self.sock.recv())
            if os.getppid() != self.parent_pid:
                self.lost = "the scenario process died"
                return None
            if time.monotonic() > deadline:
                self.lost = f"no grant for {self.idle_timeout:g} s"
                return None

    def send(self, msg: dict) -> None:
        self.sock.send(pack(msg))

    def close(self) -> None:
        self.sock.close(0)
        self.ctx.term()
