"""Links: the only connections that may be cut between partitions.

A :class:`Link` joins two sides (``a`` and ``b``, each named after the component that
owns it). It has a declared minimum latency (the lookahead of the distributed
simulation) and an actual latency (a function of time, e.g. cycles of two clocks of a
dual-clock FIFO) that must never be smaller.

Everything crossing a link is a *message*: plain data (ints, strings, bytes) that can be
msgpack-encoded. Messages are delivered through :meth:`Simulator.post` with the key
``(link path, direction, sequence)``, so their order at equal times does not depend on
which process produced them. In one process the message goes straight to the other side's
handler; when the sides live in different processes, :attr:`Link.remote` is set and the
message goes to the distribution layer instead. Either way the receiving side sees a
freshly decoded payload: the in-process path is the same path.

Channels over a link:

* :meth:`Link.transport` — TLM ``b_transport`` from initiators on one side to a target on
  the other. The request arrives at ``t + delay + latency``; the target's answer returns
  ``latency`` after the target finished; the initiator's ``b_transport`` returns then, with
  a delay of 0 (time has advanced).
* :meth:`Link.signal` — a wire: ``write(v)`` on one side becomes a ``Signal.write`` on the
  other ``latency`` later.
* :meth:`Link.event` — ``notify()`` on one side notifies an event on the other ``latency``
  later (interrupt lines, end-of-job events).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .errors import CausalityError, ElaborationError, SimulationError
from .kernel import Event
from .module import Module
from .payload import INCOMPLETE, Command, GenericPayload, Status
from .signal import Signal
from .sockets import InitiatorSocket, TargetSocket

if TYPE_CHECKING:
    from .kernel import Simulator

SIDES = ("a", "b")


#: message value -> enum member: a dict lookup instead of an enum call (~1 us) per message
_COMMANDS: dict[int, Command] = {c.value: c for c in Command}
_STATUSES: dict[int, Status] = {s.value: s for s in Status}


def encode_request(p: GenericPayload) -> list[Any]:
    """A payload as plain data (the request half of a transaction)."""
    write = p.command == Command.WRITE
    data = bytes(memoryview(p.data).cast("B")[:p.length]) if write and p.data is not None else b""
    be = bytes(p.byte_enable) if p.byte_enable is not None else None
    return [int(p.command), p.address, p.length, data, be, p.streaming_width, p.initiator]


def decode_request(msg: list[Any]) -> GenericPayload:
    cmd, address, length, data, be, sw, initiator = msg
    command = _COMMANDS.get(cmd)
    return GenericPayload(Command(cmd) if command is None else command, address,
                          bytearray(data) if data else bytearray(length), length, be, sw, initiator)


class Link(Module):
    """A cuttable connection between side ``a`` (owned by ``side_a``) and side ``b``.

    ``min_latency`` (ps, >= 1) is the declared lookahead; ``latency`` is either a constant
    (ps) or a function returning the current latency in ps (e.g. FIFO cycles of two clocks).
    """

    def __init__(self, parent: "Module | Simulator", name: str, *, side_a: str, side_b: str,
                 min_latency: int, latency: int | Callable[[], int] | None = None):
        super().__init__(parent, name)
        if min_latency < 1:
            raise ElaborationError(f"a link needs a latency of at least 1 ps (got {min_latency}); "
                                   "zero-latency connections are socket bindings, which cannot be cut",
                                   self.path)
        self.side_of = {"a": side_a, "b": side_b}
        self.min_latency = min_latency
        self._latency = latency if latency is not None else min_latency
        self._seq = {"a": 0, "b": 0}               # per sending side
        self._channels: list[Any] = []
        # set by the distribution layer when the two sides live in different processes:
        # remote(link, from_side, time, key, channel_index, message)
        self.remote: Callable[["Link", str, int, tuple[Any, ...], int, Any], None] | None = None
        # optional tap seeing every message sent, same signature as ``remote`` (the
        # distribution layer hashes cross-link events with it, in one process or many)
        self.observer: Callable[["Link", str, int, tuple[Any, ...], int, Any], None] | None = None
        self.messages = {"a": 0, "b": 0}
        self.bytes = {"a": 0, "b": 0}
        self.sim.stats.add_provider(self.path, self._stat_values)
        self.sim.links.append(self)

    def _stat_values(self) -> dict[str, int]:
        return {"messages_a_to_b": self.messages["a"], "messages_b_to_a": self.messages["b"],
                "bytes_a_to_b": self.bytes["a"], "bytes_b_to_a": self.bytes["b"]}

    def latency(self, from_side: str | None = None) -> int:
        """The current latency in ps (never below ``min_latency``) of a message sent from
        ``from_side`` (subclasses whose latency depends on the sender's view override this)."""
        lat = self._latency() if callable(self._latency) else self._latency
        if lat < self.min_latency:
            raise CausalityError(f"link latency {lat} ps is below its declared minimum "
                                 f"{self.min_latency} ps (the lookahead)", self.path, self.sim.now)
        return lat

    # ----- the ordered message path -------------------------------------------------------
    def send(self, from_side: str, delay: int, channel: int, message: Any) -> int:
        """Send ``message`` on ``channel`` from ``from_side``; it is delivered to the other
        side ``delay + latency`` ps from now. Returns the delivery time."""
        sim = self.sim
        t = sim.now + delay + self.latency(from_side)
        seqs = self._seq
        seq = seqs[from_side]
        seqs[from_side] = seq + 1
        key = (self.path, from_side, seq)
        self.messages[from_side] += 1
        observer = self.observer
        if observer is not None:
            observer(self, from_side, t, key, channel, message)
        remote = self.remote
        if remote is not None:
            remote(self, from_side, t, key, channel, message)
        else:
            # what :meth:`deliver` would call, posted directly (one call less per message)
            sim.post(t, key, self._channels[channel].receive, message)
        return t

    def deliver(self, channel: int, message: Any) -> None:
        """Called at the delivery time on the receiving side (locally or by a worker)."""
        self._channels[channel].receive(message)

    def add_channel(self, ch: Any) -> int:
        """Register a channel (an object with ``receive(message)``); returns its index.
        Channels must be created in the same order in every process."""
        self._channels.append(ch)
        return len(self._channels) - 1

    @property
    def channels(self) -> tuple[Any, ...]:
        """The registered channels, in index order."""
        return tuple(self._channels)

    def _check_side(self, side: str) -> str:
        if side not in SIDES:
            raise ElaborationError(f"link side must be 'a' or 'b', got {side!r}", self.path)
        return "b" if side == "a" else "a"

    # ----- channel factories ---------------------------------------------------------------
    def transport(self, name: str, initiator_side: str = "a", max_initiators: int = 16) -> "LinkTransport":
        """TLM transport from initiators on ``initiator_side`` to a target on the other side."""
        return LinkTransport(self, name, initiator_side, max_initiators)

    def signal(self, name: str, from_side: str = "a", init: Any = 0) -> "LinkSignal":
        """A wire driven on ``from_side``; ``.signal`` is the receiving side's Signal."""
        return LinkSignal(self, name, from_side, init)

    def event(self, name: str, from_side: str = "a") -> "LinkEvent":  # type: ignore[override]
        """An event notified on ``from_side``; ``.event`` is the receiving side's Event."""
        return LinkEvent(self, name, from_side)

    def call(self, name: str, fn: Callable[..., None], from_side: str = "a") -> "LinkCall":
        """A one-way call: ``send(*args)`` on ``from_side`` runs ``fn(*args)`` on the other
        side after the link latency (``args``: plain data, they may cross processes)."""
        return LinkCall(self, name, fn, from_side)


class LinkTransport:
    """Bind initiators to ``target_socket`` (initiator side) and ``initiator_socket`` (the
    other side) to the target."""

    def __init__(self, link: Link, name: str, initiator_side: str, max_initiators: int):
        self.link = link
        self.name = name
        self.initiator_side = initiator_side
        self.target_side = link._check_side(initiator_side)
        self.index = link.add_channel(self)
        self.target_socket = TargetSocket(link, f"{name}_in", b_transport=self._b_transport,
                                          transport_dbg=self._transport_dbg,
                                          max_bindings=max_initiators)
        self.initiator_socket = InitiatorSocket(link, f"{name}_out")
        self._waiting: dict[int, tuple[GenericPayload, Event]] = {}
        self._next_id = 0
        self.transactions = 0

    async def _b_transport(self, p: GenericPayload, delay: int) -> int:
        link = self.link
        rid = self._next_id
        self._next_id += 1
        self.transactions += 1
        done = Event(link.sim, f"{link.path}.{self.name}.resp{rid}")
        self._waiting[rid] = (p, done)
        link.bytes[self.initiator_side] += p.length if p.command == Command.WRITE else 0
        link.send(self.initiator_side, delay, self.index,
                  ["req", rid, encode_request(p), p.bw_occupancy])
        await done
        return 0

    def _transport_dbg(self, p: GenericPayload) -> int:
        # Debug access has no time: allowed only while both sides share this process.
        if self.link.remote is not None:
            raise SimulationError("transport_dbg cannot cross a link cut between processes",
                                  self.link.path, self.link.sim.now)
        return self.initiator_socket.transport_dbg(p)

    def receive(self, message: list[Any]) -> None:
        kind = message[0]
        if kind == "req":
            _, rid, req, occ = message
            p = decode_request(req)
            p.bw_occupancy = occ  # data cycles already counted on this side's hops
            self.link.sim.spawn(self._serve(rid, p), f"{self.link.path}.{self.name}.req{rid}")
        else:
            _, rid, status, data, occ = message
            p, done = self._waiting.pop(rid)
            st = _STATUSES.get(status)
            p.status = Status(status) if st is None else st
            if data:
                memoryview(p.data).cast("B")[:len(data)] = data
            if occ > p.bw_occupancy:
                p.bw_occupancy = occ
            done.notify()

    async def _serve(self, rid: int, p: GenericPayload) -> None:
        link = self.link
        d = await self.initiator_socket.b_transport(p, 0)
        if p.status == INCOMPLETE:
            p.status = Status.GENERIC_ERROR
        data = (bytes(memoryview(p.data)[:p.length])
                if p.command == Command.READ and p.status == Status.OK else b"")
        link.bytes[self.target_side] += len(data)
        link.send(self.target_side, d, self.index,
                  ["resp", rid, int(p.status), data, p.bw_occupancy])


class LinkSignal:
    """``write(v)`` on the driving side; ``signal`` (a Signal) on the receiving side."""

    def __init__(self, link: Link, name: str, from_side: str, init: Any):
        self.link = link
        self.from_side = from_side
        link._check_side(from_side)
        self.index = link.add_channel(self)
        self.signal: Signal[Any] = Signal(link.sim, f"{link.path}.{name}", init)
        self.last_written = init

    def write(self, value: Any) -> None:
        self.last_written = value
        self.link.send(self.from_side, 0, self.index, value)

    def receive(self, value: Any) -> None:
        self.signal.write(value)


class LinkEvent:
    """``notify()`` on the sending side; ``event`` fires on the receiving side."""

    def __init__(self, link: Link, name: str, from_side: str):
        self.link = link
        self.from_side = from_side
        link._check_side(from_side)
        self.index = link.add_channel(self)
        self.event = Event(link.sim, f"{link.path}.{name}")
        self.count = 0

    def notify(self, delay: int = 0) -> None:
        self.link.send(self.from_side, delay, self.index, None)

    def receive(self, _message: Any) -> None:
        self.count += 1
        self.event.notify()


class LinkCall:
    """``send(*args)`` on the sending side; ``fn(*args)`` runs on the receiving side."""

    def __init__(self, link: Link, name: str, fn: Callable[..., None], from_side: str):
        self.link = link
        self.name = name
        self.fn = fn
        self.from_side = from_side
        link._check_side(from_side)
        self.index = link.add_channel(self)

    def send(self, *args: Any) -> int:
        return self.link.send(self.from_side, 0, self.index, list(args))

    def receive(self, message: list[Any]) -> None:
        self.fn(*message)
