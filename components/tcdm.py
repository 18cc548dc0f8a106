"""Cluster TCDM (L1): 128 KiB of SRAM in 32 word-interleaved banks, with its initiator ports.

Ports (each a :class:`tlm.TargetSocket`; get them with ``tcdm.port(name)``):

=========  =====================  ======  ===============================================
name       attribute              width   branch
=========  =====================  ======  ===============================================
core0..15  ``core_ports[i]``      4 B     LIC (logarithmic interconnect)
dma0..     ``dma_ports[i]``       8 B     LIC (the cluster DMA, 64 bit/cycle)
soc        ``soc_port``           4 B     LIC (AXI from the cluster bus / SOC side)
rbe        ``rbe_port``           36 B    RBE branch (9 contiguous words per access)
=========  =====================  ======  ===============================================

A transaction on a port is a burst of consecutive words; a port issues one *access* per
cycle of ``width`` bytes (``width/4`` consecutive words: a 288-bit RBE row, two words on the
64-bit DMA port). The payload extension ``"tcdm.pattern"`` (a :class:`TcdmPattern`) turns a
transaction into rows (strided, or an explicit list of row addresses): each row starts a
new access and the data buffer holds the rows back to back. Byte enables are honoured.
Addresses may be local offsets ``[0, size)`` or global ``[base, base+size)``.

Two fidelity levels (``mode``):

* ``burst`` (fast): the data moves at once; a transaction takes
  ``latency + ceil(beats * conflict_factor)`` cycles of the cluster clock, ``beats`` =
  accesses it needs (``ceil(words/port_words)`` per row). Each port serialises its own
  transactions like a streaming hop (:class:`tlm.timing.HopTiming`): "latency adds up,
  occupancy takes the max" with the data cycles already spent upstream (``bw_occupancy``).
* ``word``: every bank serves one word per cycle. Per bank, a round-robin arbiter picks one
  LIC initiator (cores, DMA, SOC port) and a round-robin multiplexer picks the LIC or the
  RBE branch. The arbiter is event driven: it steps cycles only while requests are pending.
  A request issued at time ``t`` takes part from the first clock edge ``>= t``; a
  transaction completes ``(1 + latency)`` cycles after the edge at which its last word was
  granted. Data moves when the transaction is issued (at ``now + delay``), so a race-free
  program sees exactly the same memory contents as in burst mode.

One bank may be swapped for another storage (``Tcdm.bank_port``, word mode only: cosim.rtl
puts an RTL bank there). The TCDM array then stays a *mirror* of that bank: every path that
moves data (timed transactions at issue time, ``transport_dbg``, ``load``, ``clear``) first
does so on the array and then calls the port, which may replace the bank's bytes of a read
with its own; DMI is refused. ``None`` (the default) costs one attribute test per timed
transaction.

Statistics per port (``<port>.transactions``, ``.bytes``, ``.words``, ``.stall_cycles``:
cycles with an access not (fully) granted, ``.conflicts``: word requests denied) and
``conflict_cycles`` (bank-cycles with more than one requester), ``cycles`` (arbiter steps).
"""
from __future__ import annotations

import math
from bisect import insort
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Sequence

import numpy as np

from tlm import Clock, Event, Module
from tlm.dmi import DmiRegion
from tlm.memory import as_bytes_view
from tlm.payload import OK, READ, WRITE, Command, GenericPayload, Status, record_error
from tlm.sockets import TargetSocket

from .marsellus.memory_map import MEMORY_MAP, Region

if TYPE_CHECKING:
    from tlm import Simulator

__all__ = ["TcdmParams", "Tcdm", "TcdmPort", "TcdmPattern", "PATTERN", "WORD"]

WORD = 4                   #: bytes per TCDM word (bank width)
PATTERN = "tcdm.pattern"   #: payload extension key for a :class:`TcdmPattern`


@dataclass(frozen=True)
class TcdmPattern:
    """Rows of ``row_bytes`` each: ``count`` rows ``stride`` bytes apart from the payload
    address, or the explicit absolute row addresses ``rows`` (then ``count``/``stride`` are
    ignored). The payload's data holds the rows back to back; its length must be
    ``rows * row_bytes``."""

    row_bytes: int
    count: int = 1
    stride: int = 0
    rows: Sequence[int] | np.ndarray | None = None

    def row_addresses(self, base: int) -> np.ndarray:
        if self.rows is not None:
            return np.asarray(self.rows, dtype=np.int64)
        return base + np.arange(self.count, dtype=np.int64) * self.stride

    @property
    def n_rows(self) -> int:
        return len(self.rows) if self.rows is not None else self.count


@dataclass
class TcdmParams:
    """``cluster.tcdm`` parameters (times in cycles of the cluster clock)."""

    #: ``burst``: analytical per transaction; ``word``: per-bank, per-cycle arbitration.
    mode: Literal["burst", "word"] = field(default="burst", metadata={"doc": "fidelity level"})
    #: Word-interleaved banks (bank = (address >> 2) % banks).
    banks: int = field(default=32, metadata={"doc": "SRAM banks"})
    #: Core ports on the LIC.
    cores: int = field(default=16, metadata={"doc": "core ports"})
    #: DMA ports on the LIC.
    dma_ports: int = field(default=1, metadata={"doc": "DMA ports"})
    core_port_bytes: int = field(default=4, metadata={"doc": "core port width (bytes)"})
    dma_port_bytes: int = field(default=8, metadata={"doc": "DMA port width (bytes, 64 bit)"})
    soc_port_bytes: int = field(default=4, metadata={"doc": "SOC port width (bytes, 32 bit)"})
    rbe_port_bytes: int = field(default=36, metadata={"doc": "RBE branch width (bytes, 288 bit)"})
    #: Cycles added to every transaction beyond its data cycles (0: 0-wait-state SRAM, the
    #: response of an access comes the cycle after its grant).
    latency: int = field(default=0, metadata={"doc": "extra latency (cycles)"})
    #: Burst mode only: data cycles are multiplied by this (>= 1) to stand for the average
    #: bank conflicts that word mode would simulate.
    conflict_factor: float = field(default=1.0, metadata={"doc": "burst-mode conflict factor"})

    def validate(self) -> None:
        if self.banks < 1:
            raise ValueError(f"banks must be >= 1, got {self.banks}")
        if self.cores < 0 or self.dma_ports < 0:
            raise ValueError("cores and dma_ports must be >= 0")
        for name in ("core_port_bytes", "dma_port_bytes", "soc_port_bytes", "rbe_port_bytes"):
            v = getattr(self, name)
            if v < WORD or v % WORD:
                raise ValueError(f"{name} must be a positive multiple of {WORD}, got {v}")
            if v // WORD > self.banks:
                raise ValueError(f"{name} ({v} B) spans more than the {self.banks} banks")
        if self.latency < 0:
            raise ValueError(f"latency must be >= 0, got {self.latency}")
        if not self.conflict_factor >= 1.0:
            raise ValueError(f"conflict_factor must be >= 1, got {self.conflict_factor}")


class _Txn:
    """A word-mode transaction: its accesses (lists of banks) and completion event."""

    __slots__ = ("chunks", "done", "eligible", "first_edge", "payload")

    def __init__(self, chunks: list, done: Event, eligible: int, payload: GenericPayload):
        self.chunks = chunks
        self.done = done
        self.eligible = eligible
        self.first_edge = -1
        self.payload = payload


class TcdmPort:
    """One initiator port: its socket, width and counters (and word-mode queue)."""

    def __init__(self, tcdm: "Tcdm", name: str, index: int, width: int, lic: bool):
        self.tcdm = tcdm
        self.name = name
        self.index = index
        self.width = width
        self.words = width // WORD
        self.lic = lic
        self.busy_until = 0                     # burst mode: the port's own busy interval
        self.transactions = self.bytes = self.word_count = 0
        self.stall_cycles = self.conflicts = 0
        # word-mode state
        self.queue: deque[_Txn] = deque()
        self.txn: _Txn | None = None
        self.chunk = 0
        self.cur: list[int] = []
        b = self._b_word if tcdm.params.mode == "word" else self._b_burst
        self.socket = TargetSocket(tcdm, f"{name}_port", b_transport=b,
                                   transport_dbg=tcdm.transport_dbg,
                                   get_direct_mem_ptr=tcdm.get_direct_mem_ptr, optional=True)
        self._event_name = f"{tcdm.path}.{name}.done"

    def __repr__(self) -> str:
        return f"<TcdmPort {self.tcdm.path}.{self.name} {self.width} B>"

    def beats(self, p: GenericPayload) -> int:
        """Accesses (cycles without conflicts) the transaction ``p`` needs on this port."""
        rows, row_len = self.tcdm._rows(p)
        return int(self.tcdm._row_beats(rows, row_len, self.words).sum())

    # ----- burst mode -----------------------------------------------------------------------
    async def _b_burst(self, p: GenericPayload, delay: int) -> int:
        t = self.tcdm
        a = p.address
        if a >= t.base:
            a -= t.base
        n = p.length
        if (p.extensions is None and p.byte_enable is None and n > 0 and a >= 0
                and a + n <= t.size and (p.streaming_width is None or p.streaming_width >= n)):
            cmd = p.command
            if cmd == READ:
                as_bytes_view(p.data, n)[:] = t._mv[a:a + n]
            elif cmd == WRITE:
                t._mv[a:a + n] = as_bytes_view(p.data, n)
            elif cmd != Command.IGNORE:
                return t._fail(p, Status.COMMAND_ERROR, f"unknown command {cmd!r}", delay)
            words = ((a + n - 1) >> 2) - (a >> 2) + 1
            beats = -(-words // self.words)
        else:
            r = t._access(p, a)
            if r is None:
                return delay
            beats = int(t._row_beats(r[0], r[1], self.words).sum())
        self.transactions += 1
        self.bytes += n
        prm = t.params
        cf = prm.conflict_factor
        cycles = beats if cf == 1.0 else math.ceil(beats * cf - 1e-9)
        per = t.clock.period
        occ = cycles * per
        # a streaming hop (see tlm.timing.HopTiming): the data cycles that overlapped
        # earlier hops (bw_occupancy) are behind us; queue behind the port's last burst
        start = t.sim.now + delay
        seen = p.bw_occupancy
        end = start + occ - seen if occ > seen else start
        after = self.busy_until + occ
        if after > end:
            end = after
        self.busy_until = end
        delay += end - start
        if occ > seen:
            p.bw_occupancy = occ
        p.status = OK
        p.dmi_allowed = True
        return delay + prm.latency * per

    # ----- word mode ------------------------------------------------------------------------
    async def _b_word(self, p: GenericPayload, delay: int) -> int:
        t = self.tcdm
        sim = t.sim
        if delay:
            await sim.wait(delay)
        a = p.address
        if a >= t.base:
            a -= t.base
        n = p.length
        cmd = p.command
        if (n > 0 and a >= 0 and a + n <= t.size and (cmd == READ or cmd == WRITE)
                and p.extensions is None and p.byte_enable is None
                and (p.streaming_width is None or p.streaming_width >= n)):
            # fast path: one contiguous burst, no numpy
            data = p.data
            if data.__class__ is bytearray and len(data) == n:
                if cmd == READ:
                    data[:] = t._mv[a:a + n]
                else:
                    t._mv[a:a + n] = data
            elif cmd == READ:
                as_bytes_view(data, n)[:] = t._mv[a:a + n]
            else:
                t._mv[a:a + n] = as_bytes_view(data, n)
            w0 = a >> 2
            if (a + n - 1) >> 2 == w0:
                chunks = [[w0 % t._nbanks]]
            else:
                chunks = t._chunks_1d(a, n, self.words)
            if t.bank_port is not None:
                t.bank_port.access(cmd, (a,), n, data, None, self.name)
        else:
            r = t._access(p, a)
            if r is None:
                return 0
            chunks = t._chunks(r[0], r[1], self.words)
            if t.bank_port is not None and cmd != Command.IGNORE:
                t.bank_port.access(cmd, r[0], r[1], p.data, p.byte_enable, self.name)
        self.transactions += 1
        self.bytes += n
        done = Event(sim, self._event_name)
        t._submit(self, _Txn(chunks, done, t.clock.next_edge(sim.now), p))
        await done
        p.status = OK
        return 0


class Tcdm(Module):
    """The TCDM: storage, ports and (in word mode) the per-bank arbiter. See the module
    docstring for the port list, the two modes and their timing."""

    def __init__(self, parent: "Module | Simulator", name: str, clock: Clock,
                 params: TcdmParams | None = None, region: Region | None = None):
        super().__init__(parent, name)
        self.params = params or TcdmParams()
        self.params.validate()
        self.region = region or MEMORY_MAP["tcdm"]
        self.base = self.region.base
        self.size = self.region.size
        self.clock = clock
        prm = self.params
        if self.size % (prm.banks * WORD):
            raise ValueError(f"{self.path}: size 0x{self.size:x} is not a multiple of "
                             f"{prm.banks} banks x {WORD} B")
        self._buf = bytearray(self.size)
        self._mv = memoryview(self._buf)
        self.array = np.frombuffer(self._buf, dtype=np.uint8)
        self._nbanks = prm.banks
        #: a swapped bank (word mode), or None. An object with ``bank`` (its index),
        #: ``access(command, rows, row_len, data, byte_enable, initiator)`` -- called after
        #: the TCDM moved the data of a transaction touching any bank (``rows``: local row
        #: start addresses, ``data``: the payload's buffer, rows back to back; on a READ the
        #: port may overwrite its bank's bytes in ``data`` and in the array; ``initiator``:
        #: the port name, ``"debug"`` or ``"load"``) -- and ``replaced()`` (the whole array
        #: was overwritten, e.g. by :meth:`clear`). Set by cosim.rtl; plain attribute.
        self.bank_port: object | None = None
        # ports: LIC initiators first (their index is the round-robin order), then the RBE
        self.ports: dict[str, TcdmPort] = {}
        idx = 0
        for i in range(prm.cores):
            self._add_port(f"core{i}", idx, prm.core_port_bytes, True)
            idx += 1
        for i in range(prm.dma_ports):
            self._add_port(f"dma{i}", idx, prm.dma_port_bytes, True)
            idx += 1
        self._add_port("soc", idx, prm.soc_port_bytes, True)
        self._add_port("rbe", idx + 1, prm.rbe_port_bytes, False)
        self.core_ports = [self.ports[f"core{i}"].socket for i in range(prm.cores)]
        self.dma_ports = [self.ports[f"dma{i}"].socket for i in range(prm.dma_ports)]
        self.soc_port = self.ports["soc"].socket
        self.rbe_port = self.ports["rbe"].socket
        # word-mode arbiter state
        self._lic_last = [-1] * prm.banks       # last granted LIC port index, per bank
        self._mux_rbe = [False] * prm.banks     # True when the RBE branch won last, per bank
        self._active: list[tuple[int, TcdmPort]] = []  # ports with a transaction, by index
        self._edge = 0                          # edge of the cycle being collected
        self._running = False
        self.cycles = 0
        self.conflict_cycles = 0
        self.sim.stats.add_provider(self.path, self._stat_values)

    def _add_port(self, name: str, index: int, width: int, lic: bool) -> None:
        self.ports[name] = TcdmPort(self, name, index, width, lic)

    def port(self, name: str) -> TargetSocket:
        """The target socket of port ``name`` (``core3``, ``dma0``, ``soc``, ``rbe``)."""
        try:
            return self.ports[name].socket
        except KeyError:
            raise KeyError(f"{self.path} has no port {name!r}; ports: "
                           f"{', '.join(self.ports)}") from None

    def _stat_values(self) -> dict:
        out: dict = {"cycles": self.cycles, "conflict_cycles": self.conflict_cycles}
        for n, pt in self.ports.items():
            if pt.transactions:
                out[f"{n}.transactions"] = pt.transactions
                out[f"{n}.bytes"] = pt.bytes
                out[f"{n}.words"] = pt.word_count
                out[f"{n}.stall_cycles"] = pt.stall_cycles
                out[f"{n}.conflicts"] = pt.conflicts
        return out

    # ----- contents (no time) ---------------------------------------------------------------
    def local(self, address: int) -> int:
        return address - self.base if address >= self.base else address

    def load(self, address: int, data) -> None:
        """Copy bytes in at a local or global address (no time)."""
        a = self.local(address)
        mv = memoryview(data).cast("B")
        if a < 0 or a + len(mv) > self.size:
            raise ValueError(f"{self.path}: load of {len(mv)} bytes at 0x{address:x} does not fit")
        self._mv[a:a + len(mv)] = mv
        if self.bank_port is not None and len(mv):
            self.bank_port.access(WRITE, (a,), len(mv), mv, None, "load")

    def dump(self, address: int, length: int) -> bytes:
        a = self.local(address)
        if a < 0 or length < 0 or a + length > self.size:
            raise ValueError(f"{self.path}: dump of {length} bytes at 0x{address:x} does not fit")
        return bytes(self._mv[a:a + length])

    def clear(self) -> None:
        """Lose the contents (power-off): zero the SRAM and revoke DMI grants."""
        self.array[:] = 0
        if self.bank_port is not None:
            self.bank_port.replaced()
        for pt in self.ports.values():
            pt.socket.invalidate_direct_mem_ptr(0, self.size - 1)
            pt.socket.invalidate_direct_mem_ptr(self.base, self.base + self.size - 1)

    # ----- decoding shared by both modes ---------------------------------------------------------
    def _fail(self, p: GenericPayload, status: Status, reason: str, delay: int) -> int:
        self.stats.add("errors")
        record_error(self.sim, p, self.path, status, reason)
        return delay

    def _rows(self, p: GenericPayload) -> tuple[np.ndarray, int]:
        """Local row start addresses and the row length of a transaction."""
        pat = p.get_extension(PATTERN)
        if pat is None:
            a = p.address
            return np.array([a - self.base if a >= self.base else a], dtype=np.int64), p.length
        rows = pat.row_addresses(p.address)
        rows = np.where(rows >= self.base, rows - self.base, rows)
        return rows, pat.row_bytes

    @staticmethod
    def _row_beats(rows: np.ndarray, row_len: int, port_words: int) -> np.ndarray:
        words = ((rows + row_len - 1) >> 2) - (rows >> 2) + 1
        return -(-words // port_words)

    def _access(self, p: GenericPayload, a: int) -> tuple[np.ndarray, int] | None:
        """Check ``p`` and move its data; returns (local rows, row length) or None."""
        n = p.length
        if p.command not in (READ, WRITE, Command.IGNORE):
            self._fail(p, Status.COMMAND_ERROR, f"unknown command {p.command!r}", 0)
            return None
        if n <= 0:
            self._fail(p, Status.ADDRESS_ERROR, "zero-length access", 0)
            return None
        if p.streaming_width is not None and p.streaming_width < n:
            self._fail(p, Status.BURST_ERROR, "streaming width below the length is not supported", 0)
            return None
        pat = p.get_extension(PATTERN)
        if pat is None:
            rows = np.array([a], dtype=np.int64)
            row_len = n
        else:
            rows, row_len = self._rows(p)
            if row_len <= 0 or len(rows) == 0 or len(rows) * row_len != n:
                self._fail(p, Status.BURST_ERROR, f"pattern of {len(rows)} rows x {row_len} B "
                           f"does not match the length {n}", 0)
                return None
        if rows.min() < 0 or rows.max() + row_len > self.size:
            self._fail(p, Status.ADDRESS_ERROR, f"0x{p.address:x}+{n} reaches outside the TCDM "
                       f"[0x{self.base:x}, 0x{self.base + self.size:x})", 0)
            return None
        if p.command == Command.IGNORE:
            return rows, row_len
        buf = np.frombuffer(as_bytes_view(p.data, n), dtype=np.uint8)
        if len(rows) == 1 and p.byte_enable is None:
            r0 = int(rows[0])
            if p.command == READ:
                buf[:] = self.array[r0:r0 + n]
            else:
                self.array[r0:r0 + n] = buf
            return rows, row_len
        idx = (rows[:, None] + np.arange(row_len)).reshape(-1)
        mask = None
        if p.byte_enable is not None:
            mask = np.resize(np.frombuffer(bytes(p.byte_enable), dtype=np.uint8), n) != 0
        if p.command == READ:
            if mask is None:
                buf[:] = self.array[idx]
            else:
                buf[mask] = self.array[idx[mask]]
        else:
            if mask is None:
                self.array[idx] = buf
            else:
                self.array[idx[mask]] = buf[mask]
        return rows, row_len

    def _chunks_1d(self, a: int, n: int, k: int) -> list[list[int]]:
        """Accesses of one contiguous burst at local address ``a`` (see :meth:`_chunks`)."""
        w0 = a >> 2
        w1 = (a + n - 1) >> 2
        nb = self.params.banks
        if k == 1:
            if w0 == w1:
                return [[w0 % nb]]
            return [[w % nb] for w in range(w0, w1 + 1)]
        return [[w % nb for w in range(s, min(s + k, w1 + 1))] for s in range(w0, w1 + 1, k)]

    def _chunks(self, rows: np.ndarray, row_len: int, k: int) -> list[list[int]]:
        """Per access (cycle), the banks of its words: rows split in groups of k words."""
        mask = self.params.banks - 1
        pow2 = self.params.banks & mask == 0
        out: list[list[int]] = []
        for r in rows.tolist():
            w0 = r >> 2
            w1 = (r + row_len - 1) >> 2
            w = np.arange(w0, w1 + 1)
            b = (w & mask) if pow2 else (w % self.params.banks)
            nw = len(b)
            full = nw - nw % k
            if k == 1:
                out.extend([[x] for x in b.tolist()])
                continue
            if full:
                out.extend(b[:full].reshape(-1, k).tolist())
            if full < nw:
                out.append(b[full:].tolist())
        return out

    # ----- TLM debug / DMI ------------------------------------------------------------------------
    def transport_dbg(self, p: GenericPayload) -> int:
        """Debug access on any port: no time, no statistics (patterns honoured)."""
        if p.command == Command.IGNORE or p.length <= 0:
            return 0
        a = self.local(p.address)
        pat = p.get_extension(PATTERN)
        n = p.length
        buf = np.frombuffer(as_bytes_view(p.data, n), dtype=np.uint8)
        if pat is None:
            if a < 0 or a + n > self.size:
                return 0
            idx = slice(a, a + n)
        else:
            rows, row_len = self._rows(p)
            if len(rows) * row_len != n or rows.min() < 0 or rows.max() + row_len > self.size:
                return 0
            idx = (rows[:, None] + np.arange(row_len)).reshape(-1)
        if p.command == READ:
            buf[:] = self.array[idx]
        else:
            self.array[idx] = buf
        if self.bank_port is not None:
            rows, row_len = ((a,), n) if pat is None else (rows, row_len)
            self.bank_port.access(p.command, rows, row_len, buf, None, "debug")
        p.status = OK
        return n

    def get_direct_mem_ptr(self, p: GenericPayload) -> DmiRegion | None:
        """Burst mode grants DMI over the whole TCDM (local or global view, like the
        request); word mode refuses, since every access must meet the arbiter, and so
        does a TCDM with a swapped bank (its accesses must reach the bank)."""
        if self.params.mode == "word" or self.bank_port is not None:
            return None
        start = self.base if p.address >= self.base else 0
        if not 0 <= p.address - start < self.size:
            return None
        lat = (self.params.latency + 1) * self.clock.period
        return DmiRegion(start, start + self.size - 1, self.array, True, True, lat, lat)

    # ----- word-mode arbiter -----------------------------------------------------------------------
    def _submit(self, port: TcdmPort, txn: _Txn) -> None:
        port.word_count += sum(map(len, txn.chunks))
        if port.txn is None:
            self._start_txn(port, txn)
            insort(self._active, (port.index, port))
        else:
            port.queue.append(txn)
        if not self._running:
            self._running = True
            now = self.sim.now
            self._edge = txn.eligible
            self.sim.schedule(self._edge + self.clock.period - now, self._step)

    @staticmethod
    def _start_txn(port: TcdmPort, txn: _Txn) -> None:
        port.txn = txn
        port.chunk = 0
        port.cur = list(txn.chunks[0])

    def _step(self) -> None:
        """Arbitrate the cycle that began at ``self._edge`` (we are at its end)."""
        edge = self._edge
        self.cycles += 1
        lic_req: dict[int, list[TcdmPort]] = {}
        rbe_req: dict[int, TcdmPort] = {}
        taking: list[TcdmPort] = []
        for _, port in self._active:
            txn = port.txn
            if txn.eligible > edge:
                continue
            if txn.first_edge < 0:
                txn.first_edge = edge
            taking.append(port)
            if port.lic:
                for b in port.cur:
                    lst = lic_req.get(b)
                    if lst is None:
                        lic_req[b] = [port]
                    else:
                        lst.append(port)
            else:
                for b in port.cur:
                    rbe_req[b] = port
        lic_last = self._lic_last
        mux_rbe = self._mux_rbe
        for b, lst in lic_req.items():
            if len(lst) == 1:
                win = lst[0]
            else:
                # round robin: the first requester after the last one granted at this bank
                self.conflict_cycles += 1
                last = lic_last[b]
                win = lst[0]
                for q in lst:
                    if q.index > last:
                        win = q
                        break
                for q in lst:
                    if q is not win:
                        q.conflicts += 1
            rbe = rbe_req.pop(b, None) if rbe_req else None
            if rbe is not None:
                if len(lst) == 1:
                    self.conflict_cycles += 1
                if not mux_rbe[b]:
                    # the RBE branch's turn: the LIC winner waits (its pointer stays)
                    mux_rbe[b] = True
                    win.conflicts += 1
                    rbe.cur.remove(b)
                    continue
                rbe.conflicts += 1
            mux_rbe[b] = False
            lic_last[b] = win.index
            win.cur.remove(b)
        for b, rbe in rbe_req.items():
            mux_rbe[b] = True
            rbe.cur.remove(b)
        # advance the ports
        now = self.sim.now
        per = self.clock.period
        lat = self.params.latency
        finished = False
        for port in taking:
            if port.cur:
                port.stall_cycles += 1
                continue
            txn = port.txn
            port.chunk += 1
            if port.chunk < len(txn.chunks):
                port.cur = list(txn.chunks[port.chunk])
                continue
            # the transaction is complete: its last response arrives now (+ latency)
            occ = now - txn.first_edge
            if occ > txn.payload.bw_occupancy:
                txn.payload.bw_occupancy = occ
            if lat:
                txn.done.notify(lat * per)
            else:
                txn.done.notify()
            if port.queue:
                self._start_txn(port, port.queue.popleft())
            else:
                port.txn = None
                finished = True
        if finished:
            self._active = [(i, p) for i, p in self._active if p.txn is not None]
        if self._active:
            self._edge = now
            self.sim.schedule(per, self._step)
        else:
            self._running = False
