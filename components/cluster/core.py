"""A cluster core: a TLM initiator on its TCDM port that executes a kernel's *steps*.

A kernel is planned (``kernels.py``) as, per core, a list of steps:

* :class:`Chunk` — read operands from TCDM (burst transactions, one per :class:`Access`),
  compute with numpy (``compute(buffers) -> write data``), write the results, and take
  ``cycles`` of compute time from the timing model;
* :class:`Barrier` — the Event Unit barrier (the core sleeps until the last one arrives).

Timing of a chunk (docs/cluster.md, "Compute and memory"): the core is in-order and single
issue, so its contention-free loads and stores are instructions already counted in the
calibrated compute cycles; what the TCDM adds beyond the contention-free time (bank
conflicts in word mode, the conflict factor or latency in burst mode) freezes the pipeline
and adds up:

    chunk = max(compute, ideal) + stall,   ideal = words accessed (one per cycle),
                                           stall = max(0, memory time - ideal)

where the memory time is what the TCDM port takes for the chunk's transactions, issued
back to back (annotated delay in burst mode, the elapsed time in word mode).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from tlm import Clock, GenericPayload, InitiatorSocket, Module
from tlm.payload import OK, READ, WRITE

from ..tcdm import PATTERN, TcdmPattern
from .event_unit import EventUnit

if TYPE_CHECKING:
    from tlm import Simulator

__all__ = ["Access", "Chunk", "Barrier", "Step", "ClusterCore", "access_words"]

WORD = 4


def access_words(address: int, row_bytes: int, rows: np.ndarray | None = None) -> int:
    """32-bit words (one core-port access each) a row set touches."""
    if rows is None:
        return ((address + row_bytes - 1) >> 2) - (address >> 2) + 1
    r = np.asarray(rows, dtype=np.int64)
    return int((((r + row_bytes - 1) >> 2) - (r >> 2) + 1).sum())


@dataclass
class Access:
    """One TCDM transaction: ``length`` bytes at ``address`` (global or local TCDM address),
    or, with ``rows``, ``len(rows)`` rows of ``row_bytes`` each at those addresses (a
    :class:`components.tcdm.TcdmPattern`; the data holds the rows back to back)."""

    address: int
    length: int
    rows: np.ndarray | None = None
    row_bytes: int = 0

    @classmethod
    def rows_at(cls, rows: Sequence[int] | np.ndarray, row_bytes: int) -> "Access":
        r = np.asarray(rows, dtype=np.int64)
        if len(r) == 1:
            return cls(int(r[0]), row_bytes)
        return cls(int(r[0]), len(r) * row_bytes, r, row_bytes)

    @property
    def words(self) -> int:
        if self.rows is None:
            return access_words(self.address, self.length)
        return access_words(0, self.row_bytes, self.rows)


@dataclass
class Chunk:
    """A piece of a kernel on one core: reads, numpy compute, writes, and compute cycles."""

    cycles: float
    reads: list[Access] = field(default_factory=list)
    writes: list[Access] = field(default_factory=list)
    compute: Callable[[list[np.ndarray]], list] | None = None
    ops: int = 0          #: arithmetic ops (a MAC is 2) for statistics and the power model

    @property
    def words(self) -> int:
        return sum(a.words for a in self.reads) + sum(a.words for a in self.writes)


@dataclass
class Barrier:
    """Synchronise with the other cores of the kernel on Event Unit barrier ``id``."""

    id: int = 0


Step = Chunk | Barrier


class ClusterCore(Module):
    """Core ``index`` of the cluster. ``tcdm`` is its initiator socket (bind it to the
    TCDM's core port ``index``). Statistics: ``chunks``, ``compute_cycles``,
    ``stall_cycles``, ``active_ps``, ``instr``, ``ops``, ``bytes_read``, ``bytes_written``,
    ``transactions``, ``barriers``, ``access_errors``."""

    def __init__(self, parent: "Module | Simulator", name: str, index: int, clock: Clock,
                 eu: EventUnit):
        super().__init__(parent, name)
        self.index = index
        self.clock = clock
        self.eu = eu
        self.tcdm = InitiatorSocket(self, "tcdm")
        self.faults = 0            # TCDM error responses seen by the current kernel
        #: instructions issued per compute cycle (timing model), for the power model
        self.issue_ratio = 1.0
        self._port: Any = None     # the power model's activity port (components.pmu)
        self._ledger: Any = None
        self._tcdm_port: Any = None
        self.c = {"chunks": 0, "compute_cycles": 0.0, "stall_cycles": 0.0, "active_ps": 0,
                  "instr": 0.0, "ops": 0, "bytes_read": 0, "bytes_written": 0,
                  "transactions": 0, "barriers": 0, "access_errors": 0}
        #: Called as ``fn(core, begin_ps, end_ps, ops, instr)`` after every chunk (power model).
        self.activity_listeners: list[Callable[["ClusterCore", int, int, int, float], None]] = []
        self.sim.stats.add_provider(self.path, lambda: dict(self.c))

    # ----- TCDM transactions ------------------------------------------------------------------
    def _payload(self, cmd, a: Access, data) -> GenericPayload:
        p = GenericPayload(cmd, a.address, data, a.length, initiator=self.path)
        if a.rows is not None:
            p.set_extension(PATTERN, TcdmPattern(a.row_bytes, rows=a.rows))
        return p

    def _check(self, p: GenericPayload) -> None:
        self.c["transactions"] += 1
        if p.status != OK:
            # the TCDM logged the error (initiator, address, time); the kernel goes on so
            # that the other cores are not left waiting at a barrier, and the job fails
            self.faults += 1
            self.c["access_errors"] += 1

    async def read(self, a: Access, delay: int = 0) -> tuple[np.ndarray, int]:
        """Read ``a`` through the TCDM port; returns (bytes as uint8, annotated delay)."""
        buf = np.zeros(a.length, dtype=np.uint8)
        p = self._payload(READ, a, buf)
        delay = await self.tcdm.b_transport(p, delay)
        self._check(p)
        self.c["bytes_read"] += a.length
        return buf, delay

    async def write(self, a: Access, data, delay: int = 0) -> int:
        """Write ``data`` (bytes-like, ``a.length`` bytes) through the TCDM port."""
        buf = np.ascontiguousarray(np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8))
        if buf.size != a.length:
            raise ValueError(f"{self.path}: write of {buf.size} bytes for an access of {a.length}")
        p = self._payload(WRITE, a, buf)
        delay = await self.tcdm.b_transport(p, delay)
        self._check(p)
        self.c["bytes_written"] += a.length
        return delay

    # ----- steps ---------------------------------------------------------------------------------
    async def run_chunk(self, ch: Chunk) -> None:
        """Execute one chunk (see the module docstring for its timing)."""
        sim = self.sim
        clk = self.clock
        start = sim.now
        d = 0
        bufs = []
        for a in ch.reads:
            buf, d = await self.read(a, d)
            bufs.append(buf)
        outs = ch.compute(bufs) if ch.compute is not None else []
        if len(outs) != len(ch.writes):
            raise ValueError(f"{self.path}: chunk computed {len(outs)} outputs for "
                             f"{len(ch.writes)} writes")
        for a, data in zip(ch.writes, outs):
            d = await self.write(a, data, d)
        period = clk.period
        mem = (sim.now - start + d) / period
        ideal = float(ch.words)
        stall = mem - ideal if mem > ideal else 0.0
        total = max(ch.cycles, ideal) + stall
        elapsed = (sim.now - start) / period
        # the chunk's activity happens over [start, end): book it now that its end is known
        # (before the wait, so that the On-Chip Monitors see it while it runs)
        instr = ch.cycles * self.issue_ratio
        port = self._power_port()
        if port is not None:
            end = sim.now + (round((total - elapsed) * period) if total > elapsed else 0)
            port.add("op", ch.ops, over=end - start, start=start)
            port.add("instr", instr, over=end - start, start=start)
            tcdm = self._tcdm_port
            if tcdm is not None:
                tcdm.add("access", ch.words, over=end - start, start=start)
        if total > elapsed:
            await clk.wait_cycles(total - elapsed)
        c = self.c
        c["chunks"] += 1
        c["compute_cycles"] += ch.cycles
        c["stall_cycles"] += stall
        c["instr"] += instr
        c["ops"] += ch.ops
        c["active_ps"] += sim.now - start
        for fn in self.activity_listeners:
            fn(self, start, sim.now, ch.ops, instr)

    def _power_port(self) -> Any:
        """The PMU energy ledger's port for this core (class ``cluster_core``), or None
        without a PMU. No PMU can exist unless its module was imported, so a platform
        without one pays a dictionary lookup."""
        mod = sys.modules.get("components.pmu.pmu")
        ledger = mod.power_of(self.sim) if mod is not None else None
        if ledger is None:
            return None
        if ledger is not self._ledger:
            self._ledger = ledger
            self._port = ledger.register(self.path, "cluster_core")
            # the core's TCDM words (banks + logarithmic interconnect), booked by the core
            # because it knows when they happen
            self._tcdm_port = ledger.register(self.path + ".tcdm", "tcdm")
        return self._port

    async def execute(self, steps: Sequence[Step], label: str = "kernel",
                      alive: Callable[[], bool] | None = None) -> int:
        """Run a kernel's steps on this core; returns the TCDM faults it met. ``alive()``
        is checked before every step: False (the cluster was powered off) ends the run."""
        self.faults = 0
        t0 = self.sim.now
        for s in steps:
            if alive is not None and not alive():
                break
            if isinstance(s, Chunk):
                await self.run_chunk(s)
            else:
                self.c["barriers"] += 1
                await self.eu.barrier(self.index, s.id)
        self.trace_span(label, t0, self.sim.now)
        return self.faults
