"""An address-decoding router (interconnect) with per-hop latency and bandwidth occupancy."""
from __future__ import annotations

from bisect import bisect_right
from functools import partial
from typing import TYPE_CHECKING

from .clock import Clock
from .dmi import DmiRegion
from .errors import ElaborationError
from .module import Module
from .payload import GenericPayload, Phase, Status, Sync, record_error
from .sockets import InitiatorSocket, TargetSocket
from .timing import HopTiming

if TYPE_CHECKING:
    from .kernel import Simulator


def _span(p: GenericPayload) -> int:
    """Bytes an access addresses: its length, or its streaming width when narrower."""
    n = p.length
    sw = p.streaming_width
    return sw if sw is not None and 0 < sw < n else n


class _Route:
    __slots__ = ("base", "end", "socket", "offset", "timing", "name", "transactions", "bytes")

    def __init__(self, base: int, end: int, socket: InitiatorSocket, offset: int,
                 timing: HopTiming, name: str):
        self.base = base
        self.end = end          # exclusive
        self.socket = socket
        self.offset = offset    # subtracted from the address before forwarding
        self.timing = timing
        self.name = name
        self.transactions = 0
        self.bytes = 0


class Router(Module):
    """Decodes addresses onto mapped targets.

    ``latency`` (cycles of ``clock``, or ps without a clock) is added per hop; ``width``
    (bytes/cycle) sets each transaction's occupancy. ``contention='per_target'`` (a
    crossbar: targets are busy independently), ``'shared'`` (a bus: one busy interval) or
    ``'none'``. An address no range maps gets ADDRESS_ERROR, logged with the initiator,
    address and time; the router never sets OK (the target does).
    """

    def __init__(self, parent: "Module | Simulator", name: str, *, clock: Clock | None = None,
                 latency: int = 0, width: int | None = None, contention: str = "per_target",
                 max_initiators: int = 64):
        super().__init__(parent, name)
        if contention not in ("per_target", "shared", "none"):
            raise ElaborationError(f"contention must be 'per_target', 'shared' or 'none', "
                                   f"got {contention!r}", self.path)
        self.clock = clock
        self.latency = latency
        self.width = width
        self.contention = contention
        self._shared = HopTiming(clock, latency, width, contention == "shared", self.path)
        self.target_socket = TargetSocket(self, "target", b_transport=self.b_transport,
                                          transport_dbg=self.transport_dbg,
                                          get_direct_mem_ptr=self.get_direct_mem_ptr,
                                          nb_transport_fw=self.nb_transport_fw,
                                          max_bindings=max_initiators)
        self._routes: list[_Route] = []
        self._bases: list[int] = []
        self._nb_orig: dict[GenericPayload, tuple[int, _Route]] = {}
        self.sim.stats.add_provider(self.path, self._stat_values)

    def _stat_values(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self._routes:
            out[f"{r.name}.transactions"] = r.transactions
            out[f"{r.name}.bytes"] = r.bytes
            out[f"{r.name}.busy_ps"] = r.timing.busy_time
        return out

    def map(self, base: int, size: int, target: TargetSocket, name: str | None = None,
            translate: bool = True) -> InitiatorSocket:
        """Map ``[base, base+size)`` onto ``target``; with ``translate`` the target sees
        addresses relative to ``base``. Overlapping ranges are refused."""
        if size <= 0 or base < 0:
            raise ElaborationError(f"bad range base=0x{base:x} size=0x{size:x}", self.path)
        end = base + size
        for r in self._routes:
            if base < r.end and r.base < end:
                raise ElaborationError(
                    f"range [0x{base:x}, 0x{end:x}) for {target.path} overlaps "
                    f"[0x{r.base:x}, 0x{r.end:x}) of {r.socket.target.path if r.socket.target else r.name}",
                    self.path)
        name = name or target.owner.name
        offset = base if translate else 0
        sock = InitiatorSocket(self, f"to_{name}",
                               invalidate_direct_mem_ptr=partial(self._invalidate, offset=offset),
                               nb_transport_bw=self._nb_bw)
        sock.bind(target)
        timing = (self._shared if self.contention != "per_target" else
                  HopTiming(self.clock, self.latency, self.width, True, self.path))
        route = _Route(base, end, sock, offset, timing, name)
        i = bisect_right(self._bases, base)
        self._routes.insert(i, route)
        self._bases.insert(i, base)
        return sock

    def decode(self, address: int, length: int = 1) -> _Route | None:
        """The route serving ``[address, address+length)``, or None."""
        i = bisect_right(self._bases, address) - 1
        if i < 0:
            return None
        r = self._routes[i]
        if address + max(length, 1) > r.end:
            return None
        return r

    def _miss(self, p: GenericPayload) -> None:
        record_error(self.sim, p, self.path, Status.ADDRESS_ERROR,
                     "no target mapped at this address" if self.decode(p.address) is None
                     else "access crosses the end of the mapped range")

    async def b_transport(self, p: GenericPayload, delay: int) -> int:
        a = p.address
        n = p.length
        sw = p.streaming_width
        if sw is not None and 0 < sw < n:
            n = sw  # a streaming access addresses only its first sw bytes (see _span)
        i = bisect_right(self._bases, a) - 1
        if i < 0 or a + n > self._routes[i].end:
            self._miss(p)
            return delay + self._shared.latency_ps()
        r = self._routes[i]
        r.transactions += 1
        r.bytes += p.length
        delay = r.timing.apply(p, delay, self.sim.now)
        p.address = a - r.offset
        try:
            return await r.socket.b_transport(p, delay)
        finally:
            p.address = a

    def transport_dbg(self, p: GenericPayload) -> int:
        a = p.address
        r = self.decode(a, p.length)
        if r is None:
            return 0
        p.address = a - r.offset
        try:
            return r.socket.transport_dbg(p)
        finally:
            p.address = a

    def get_direct_mem_ptr(self, p: GenericPayload) -> DmiRegion | None:
        a = p.address
        r = self.decode(a)
        if r is None:
            return None
        p.address = a - r.offset
        try:
            region = r.socket.get_direct_mem_ptr(p)
        finally:
            p.address = a
        if region is None:
            return None
        region = region.translated(r.offset)
        # clip to the mapped window: DMI must not reach past what this router decodes
        lo, hi = max(region.start, r.base), min(region.end, r.end - 1)
        if lo > region.start or hi < region.end:
            region = DmiRegion(lo, hi, region.array[lo - region.start:hi - region.start + 1],
                               region.read_allowed, region.write_allowed,
                               region.read_latency, region.write_latency)
        region.read_latency += r.timing.latency_ps()
        region.write_latency += r.timing.latency_ps()
        return region

    def _invalidate(self, start: int, end: int, offset: int) -> None:
        self.target_socket.invalidate_direct_mem_ptr(start + offset, end + offset)

    # ----- approximately-timed path ---------------------------------------------------------
    def nb_transport_fw(self, p: GenericPayload, phase: Phase, delay: int) -> tuple[Sync, Phase, int]:
        if phase == Phase.BEGIN_REQ:
            a = p.address
            r = self.decode(a, _span(p))
            if r is None:
                self._miss(p)
                return Sync.COMPLETED, Phase.BEGIN_RESP, delay
            self._nb_orig[p] = (a, r)
            r.transactions += 1
            r.bytes += p.length
            delay += r.timing.latency_ps()
            p.address = a - r.offset
        else:
            entry = self._nb_orig.get(p)
            if entry is None:
                return Sync.COMPLETED, phase, delay
            r = entry[1]
        result = r.socket.nb_transport_fw(p, phase, delay)
        if result[0] == Sync.COMPLETED or phase == Phase.END_RESP:
            self._restore(p)
        return result

    def _nb_bw(self, p: GenericPayload, phase: Phase, delay: int) -> tuple[Sync, Phase, int]:
        entry = self._nb_orig.get(p)
        if entry is not None:
            p.address = entry[0]
        result = self.target_socket.nb_transport_bw(p, phase, delay)
        if result[0] == Sync.COMPLETED or result[1] == Phase.END_RESP:
            self._nb_orig.pop(p, None)
        elif entry is not None:
            p.address = entry[0] - entry[1].offset
        return result

    def _restore(self, p: GenericPayload) -> None:
        entry = self._nb_orig.pop(p, None)
        if entry is not None:
            p.address = entry[0]
