"""SOC memories of MARSELLUS: L2 (shared + private banks), boot ROM, and the 64-bit AXI crossbar.

Functionally each memory is one numpy byte array; the banks exist only in the timing.
An access of ``n`` bytes at local address ``a`` touches the 32-bit words
``a//4 .. (a+n-1)//4``; ``w_b`` of them fall in bank ``b`` (:func:`bank_occupancy`). Each
bank serves one word per SOC cycle ``T`` and streams like a :class:`tlm.timing.HopTiming`, so an
access arriving at ``start`` (= now + annotated delay) ends at

    end   = max over banks b of  max(start + max(0, w_b*T - bw_occupancy), busy_b + w_b*T)
    delay = (end - start) + latency * T

(``bw_occupancy``: the largest occupancy met earlier on the path, see ``tlm.timing``:
"latency adds up, occupancy takes the max"). With ``interleaving='word'`` word ``w`` lives
in bank ``w % banks`` (4 banks serve a burst in parallel: 16 B/cycle, more than the 8 B/cycle
crossbar, so through the crossbar only the latency shows); with ``'contiguous'`` bank
``a // (size/banks)`` (the private banks: a burst inside one bank runs at 4 B/cycle).

Addresses: targets accept local offsets ``[0, size)`` (what a translating router passes)
and the global addresses of their memory-map region (for initiators bound directly, e.g.
the uDMA's 128-bit L2 port); the two ranges never overlap on MARSELLUS.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from tlm import Clock, Module, Router
from tlm.dmi import DmiRegion
from tlm.memory import as_bytes_view, move_payload
from tlm.payload import OK, READ, WRITE, Command, GenericPayload, Status, record_error
from tlm.sockets import TargetSocket

from tlm.address_map import Region
from tlm.params import check_params, param

if TYPE_CHECKING:
    from tlm import Simulator

__all__ = ["BankedMemoryParams", "L2Params", "L2PrivateParams", "RomParams", "SocXbarParams",
           "BankedMemory", "Crossbar", "SocXbar", "bank_occupancy"]


@dataclass
class BankedMemoryParams:
    """Timing of a banked SRAM/ROM behind the SOC crossbar (all times in SOC clock cycles)."""

    #: Number of SRAM banks (cuts) the memory is built from.
    banks: int = param(4, "SRAM banks", lo=1, hi=1024)
    #: Bank data width in bytes (one word per bank per cycle).
    bank_word_bytes: int = param(4, "bank word width (bytes)", lo=1, hi=512)
    #: ``word``: word w in bank w % banks; ``contiguous``: bank = address // bank size.
    interleaving: Literal["word", "contiguous"] = field(
        default="word", metadata={"doc": "word-interleaved or contiguous banks"})
    #: Access latency (SOC cycles) from request to first data, beyond the crossbar.
    latency: int = param(1, "access latency (SOC cycles)", lo=0, hi=1000)


@dataclass
class L2Params(BankedMemoryParams):
    """``soc.l2``: 960 KiB shared L2 in 4 word-interleaved 32-bit banks."""


@dataclass
class L2PrivateParams(BankedMemoryParams):
    """``soc.l2_private``: 64 KiB private L2 in 2 contiguous (bank-interleaved) 32 KiB banks."""

    banks: int = param(2, "SRAM banks", lo=1, hi=1024)
    interleaving: Literal["word", "contiguous"] = field(
        default="contiguous", metadata={"doc": "word-interleaved or contiguous banks"})


@dataclass
class RomParams(BankedMemoryParams):
    """``soc.rom``: 8 KiB boot ROM, one 32-bit bank."""

    banks: int = param(1, "ROM banks", lo=1, hi=1024)


@dataclass
class SocXbarParams:
    """``soc.xbar``: the 64-bit AXI4 crossbar of the SOC domain."""

    #: Crossbar latency per hop (SOC cycles): address decode + one register slice.
    latency: int = param(2, "hop latency (SOC cycles)", lo=0, hi=1000)
    #: Data width in bytes per cycle (64-bit AXI = 8).
    width: int = param(8, "data width (bytes/cycle)", lo=1, hi=512)
    #: ``per_target``: a crossbar (each target port busy on its own); ``shared``: a bus.
    contention: Literal["per_target", "shared", "none"] = field(
        default="per_target", metadata={"doc": "contention model"})


def bank_occupancy(address: int, length: int, banks: int, word: int = 4,
                   interleaving: str = "word", size: int | None = None) -> list[int]:
    """Words per bank touched by ``[address, address+length)`` (local address).

    This is the documented timing formula: the access occupies the memory for
    ``max(result)`` cycles."""
    if length <= 0:
        return [0] * banks
    w0 = address // word
    w1 = (address + length - 1) // word
    if interleaving == "word":
        full, rest = divmod(w1 - w0 + 1, banks)
        first = w0 % banks
        return [full + ((b - first) % banks < rest) for b in range(banks)]
    if size is None:
        raise ValueError("contiguous banks need the memory size")
    bank_words = size // word // banks
    out = [0] * banks
    for b in range(w0 // bank_words, w1 // bank_words + 1):
        out[b] = min(w1, (b + 1) * bank_words - 1) - max(w0, b * bank_words) + 1
    return out


class BankedMemory(Module):
    """A banked SOC memory (L2 shared, L2 private or boot ROM) on ``socket``.

    ``read_only``: bus writes get COMMAND_ERROR and change nothing; debug writes
    (``transport_dbg``, ``load``) still reach it, which is how a loader fills the ROM.
    DMI: read/write regions over the whole memory (read-only for a ROM).
    Statistics: reads, writes, bytes_read, bytes_written, busy_ps, errors."""

    def __init__(self, parent: "Module | Simulator", name: str, region: Region, clock: Clock,
                 params: BankedMemoryParams | None = None, *, read_only: bool = False,
                 max_bindings: int = 64):
        super().__init__(parent, name)
        self.params = params or BankedMemoryParams()
        check_params(self.params, self.path)
        self.region = region
        self.base = region.base
        self.size = region.size
        self.clock = clock
        self.read_only = read_only
        p = self.params
        if self.size % (p.banks * p.bank_word_bytes):
            raise ValueError(f"{self.path}: size 0x{self.size:x} is not a multiple of "
                             f"banks x word ({p.banks} x {p.bank_word_bytes})")
        self._buf = bytearray(self.size)
        self._mv = memoryview(self._buf)
        self.array = np.frombuffer(self._buf, dtype=np.uint8)
        self._bank_busy = [0] * p.banks
        self.socket = TargetSocket(self, "socket", b_transport=self.b_transport,
                                   transport_dbg=self.transport_dbg,
                                   get_direct_mem_ptr=self.get_direct_mem_ptr,
                                   max_bindings=max_bindings)
        self.reads = self.writes = self.bytes_read = self.bytes_written = 0
        self.busy_ps = 0
        self.errors = 0
        self.sim.stats.add_provider(self.path, self._stat_values)

    def _stat_values(self) -> dict:
        return {"reads": self.reads, "writes": self.writes, "bytes_read": self.bytes_read,
                "bytes_written": self.bytes_written, "busy_ps": self.busy_ps,
                "errors": self.errors}

    # ----- addressing and timing ------------------------------------------------------------
    def local(self, address: int) -> int:
        """Local offset of a local or global address (global ones are in the region)."""
        return address - self.base if address >= self.base else address

    def occupancy(self, address: int, length: int) -> list[int]:
        """Words per bank of an access at local ``address`` (the timing formula)."""
        p = self.params
        return bank_occupancy(address, length, p.banks, p.bank_word_bytes, p.interleaving,
                              self.size)

    def _timing(self, p: GenericPayload, a: int, n: int, delay: int) -> int:
        """Each bank streams its words like a :class:`tlm.timing.HopTiming`; the access ends when its
        last bank does."""
        prm = self.params
        per = self.clock.period
        seen = p.bw_occupancy
        start = self.sim.now + delay
        busy = self._bank_busy
        if prm.banks == 1:
            word = prm.bank_word_bytes
            counts = [(a + n - 1) // word - a // word + 1]
        else:
            counts = self.occupancy(a, n)
        end = start
        top = 0
        for b, c in enumerate(counts):
            if c:
                occ = c * per
                e = start + occ - seen if occ > seen else start
                after = busy[b] + occ
                if after > e:
                    e = after
                busy[b] = e
                if e > end:
                    end = e
                if occ > top:
                    top = occ
        self.busy_ps += top
        if top > seen:
            p.bw_occupancy = top
        return delay + (end - start) + prm.latency * per

    # ----- TLM interfaces ------------------------------------------------------------------------
    def _check(self, p: GenericPayload, a: int, debug: bool) -> bool:
        n = p.length
        if n <= 0 or a < 0 or a + n > self.size:
            reason = "zero-length access" if n <= 0 else (
                f"0x{p.address:x}+{n} is outside [0, 0x{self.size:x}) / "
                f"[0x{self.base:x}, 0x{self.base + self.size:x})")
            self.errors += 1
            record_error(self.sim, p, self.path, Status.ADDRESS_ERROR, reason)
            return False
        if p.command == WRITE and self.read_only and not debug:
            self.errors += 1
            record_error(self.sim, p, self.path, Status.COMMAND_ERROR, "write to read-only memory")
            return False
        if p.command not in (READ, WRITE, Command.IGNORE):
            self.errors += 1
            record_error(self.sim, p, self.path, Status.COMMAND_ERROR, f"unknown command {p.command!r}")
            return False
        if p.streaming_width is not None and p.streaming_width < n:
            self.errors += 1
            record_error(self.sim, p, self.path, Status.BURST_ERROR,
                         "streaming width below the length is not supported by AXI memories")
            return False
        return True

    def _move(self, p: GenericPayload, a: int) -> None:
        moved = move_payload(p, self._mv, self.array, a)
        if p.command == READ:
            self.reads += 1
            self.bytes_read += moved
        elif p.command == WRITE:
            self.writes += 1
            self.bytes_written += moved

    async def b_transport(self, p: GenericPayload, delay: int) -> int:
        a = p.address
        if a >= self.base:
            a -= self.base
        if not self._check(p, a, False):
            return delay
        self._move(p, a)
        p.status = OK
        p.dmi_allowed = True
        return self._timing(p, a, p.length, delay)

    def transport_dbg(self, p: GenericPayload) -> int:
        """Debug access: no time, no statistics; writes reach a ROM (loaders)."""
        a = self.local(p.address)
        n = p.length
        if p.command == Command.IGNORE or n <= 0 or a < 0 or a + n > self.size:
            return 0
        if p.command == READ:
            as_bytes_view(p.data, n)[:] = self._mv[a:a + n]
        else:
            self._mv[a:a + n] = as_bytes_view(p.data, n)
        p.status = OK
        return n

    def get_direct_mem_ptr(self, p: GenericPayload) -> DmiRegion | None:
        """The whole memory, at local or global addresses like the request; latency per
        access = latency + 1 cycle (one word)."""
        lat = (self.params.latency + 1) * self.clock.period
        start = self.base if p.address >= self.base else 0
        if not 0 <= p.address - start < self.size:
            return None
        return DmiRegion(start, start + self.size - 1, self.array, True, not self.read_only,
                         lat, lat)

    def invalidate_dmi(self) -> None:
        """Revoke DMI grants (both address views), e.g. before the SOC domain powers off."""
        self.socket.invalidate_direct_mem_ptr(0, self.size - 1)
        self.socket.invalidate_direct_mem_ptr(self.base, self.base + self.size - 1)

    # ----- loaders -------------------------------------------------------------------------------
    def load(self, address: int, data) -> None:
        """Copy bytes in at a local or global address (no time; reaches a ROM too)."""
        a = self.local(address)
        mv = memoryview(data).cast("B")
        if a < 0 or a + len(mv) > self.size:
            raise ValueError(f"{self.path}: load of {len(mv)} bytes at 0x{address:x} does not fit "
                             f"[0x{self.base:x}, 0x{self.base + self.size:x})")
        self._mv[a:a + len(mv)] = mv

    def dump(self, address: int, length: int) -> bytes:
        a = self.local(address)
        if a < 0 or length < 0 or a + length > self.size:
            raise ValueError(f"{self.path}: dump of {length} bytes at 0x{address:x} does not fit "
                             f"[0x{self.base:x}, 0x{self.base + self.size:x})")
        return bytes(self._mv[a:a + length])


class Crossbar(Router):
    """A :class:`tlm.Router` that maps memory-map regions by name."""

    def __init__(self, parent: "Module | Simulator", name: str, *, clock: Clock,
                 latency: int = 0, width: int | None = None, contention: str = "per_target",
                 max_initiators: int = 64):
        super().__init__(parent, name, clock=clock, latency=latency, width=width,
                         contention=contention, max_initiators=max_initiators)
        # a crossbar nobody drives yet (unit tests, partial platforms) is harmless
        self.target_socket.optional = True

    def map_region(self, region: Region, target: TargetSocket, *, translate: bool = True):
        """Map a memory-map region onto ``target`` (name = region name)."""
        return self.map(region.base, region.size, target, name=region.name, translate=translate)


class SocXbar(Crossbar):
    """``soc.xbar``: the SOC AXI crossbar, clocked by the SOC clock (latency in SOC cycles,
    ``width`` bytes/cycle, contention per target port)."""

    def __init__(self, parent: "Module | Simulator", name: str, clock: Clock,
                 params: SocXbarParams | None = None, *, max_initiators: int = 64):
        self.params = params or SocXbarParams()
        check_params(self.params, name)
        super().__init__(parent, name, clock=clock, latency=self.params.latency,
                         width=self.params.width, contention=self.params.contention,
                         max_initiators=max_initiators)
