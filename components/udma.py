"""I/O DMA (uDMA) with a HyperRAM channel: moves data L2 <-> HyperRAM (L3).

PULP-uDMA-like: a register bank (at the ``region`` its composer gives it; global IRQ
registers and the HyperRAM channel with an RX and a TX direction, laid out in
``udma.registers.yaml``), an
initiator socket on the SOC crossbar towards L2 (``l2_socket``, 16 B per peripheral-clock
cycle), and a HyperBus port that crosses a cuttable :class:`tlm.Link` to the HyperRAM
device.

* RX: HyperRAM -> L2 (the peripheral *receives*, PULP naming); TX: L2 -> HyperRAM.
* A transfer is split into HyperBus bursts of at most MAX_BURST bytes that never cross a
  BURST_BOUNDARY; up to ``max_outstanding`` bursts are in flight per channel, so the
  HyperBus stays busy while the L2 side fetches (TX) or drains (RX).
* Writing CFG.EN starts a transfer from the shadow registers (SADDR, SIZE, EXT_ADDR); a
  second start while one runs is queued (CFG.PENDING); a third is refused (QUEUE_FULL).
* Errors (zero length, illegal L2 or HyperRAM range, bad configuration) are detected at the
  start: nothing moves, the ERROR bits are set and the done + error interrupt is raised.
  An error response during the transfer (from L2 or the device) stops it at that burst.

The register map, the timing formula and the error behaviour are in docs/hyperram_udma.md.
The Python API (:meth:`Udma.start`, :meth:`Udma.transfer`) writes the same registers.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from components.hyperram import HyperRamParams
from tlm.address_map import MemoryMap, Region
from tlm.clock import Clock
from tlm.errors import SimulationError
from tlm.kernel import Event, Process
from tlm.link import Link
from tlm.module import Module
from tlm.params import ParameterError, param, resolve, time_field
from tlm.payload import OK, READ, WRITE, Command, GenericPayload, Status
from tlm.regmap import load_regmap
from tlm.regs import RegisterBank
from tlm.sockets import InitiatorSocket, TargetSocket
from tlm.timing import HopTiming

if TYPE_CHECKING:
    from tlm.kernel import Simulator

__all__ = ["Udma", "UdmaParams", "UdmaTransfer", "Direction", "REGISTER_MAP"]

# ----- register map (components/udma.registers.yaml; offsets from the uDMA region's base) -----
MAP = load_regmap(Path(__file__).with_name("udma.registers.yaml"))
REGISTER_MAP = MAP.offsets()
IRQ_STATUS = REGISTER_MAP["IRQ_STATUS"]
IRQ_MASK = REGISTER_MAP["IRQ_MASK"]
_CFG = MAP.register("HYPER_RX_CFG")   # RX and TX share the CFG layout
CFG_CONTINUOUS = _CFG.field("CONTINUOUS").mask
CFG_DATASIZE_SHIFT = _CFG.field("DATASIZE").lsb   # 0 = 8-bit, 1 = 16-bit, 2 = 32-bit
CFG_DATASIZE = _CFG.field("DATASIZE").mask
CFG_EN = _CFG.field("EN").mask
CFG_PENDING = _CFG.field("PENDING").mask
CFG_CLR = _CFG.field("CLR").mask

_ERR = MAP.register("HYPER_ERROR")    # a channel's bits, RX_* shifted by its err_shift
_ERR_LSB = _ERR.field("RX_L2_RANGE").lsb
ERR_L2_RANGE, ERR_EXT_RANGE, ERR_ZERO_LEN, ERR_CFG, ERR_BUS, ERR_QUEUE_FULL = (
    _ERR.field(f"RX_{n}").mask >> _ERR_LSB
    for n in ("L2_RANGE", "EXT_RANGE", "ZERO_LEN", "CFG", "BUS", "QUEUE_FULL"))
_IRQ_BITS = sum(f.mask for f in MAP.register("IRQ_STATUS").fields)
ERROR_NAMES = {ERR_L2_RANGE: "L2_RANGE", ERR_EXT_RANGE: "EXT_RANGE", ERR_ZERO_LEN: "ZERO_LEN",
               ERR_CFG: "CFG", ERR_BUS: "BUS", ERR_QUEUE_FULL: "QUEUE_FULL"}

class Direction(str, Enum):
    """RX: HyperRAM -> L2 (read from L3); TX: L2 -> HyperRAM (write to L3)."""

    RX = "rx"
    TX = "tx"




@dataclass
class UdmaParams:
    """uDMA parameters (the clock is the SOC peripheral clock given to the constructor)."""

    l2_width: int = param(16, "L2-side bytes per peripheral-clock cycle (128 bit)", lo=1, hi=512)
    setup_cycles: int = param(2, "peripheral cycles from CFG.EN to the first access", lo=0, hi=1000)
    max_outstanding: int = param(2, "HyperBus bursts in flight per channel (burst buffers)", lo=1, hi=64)
    burst_boundary: int = param(1024, "reset of BURST_BOUNDARY (bytes; power of 2, 0 = none)", lo=0, hi=1 << 30)
    max_burst: int = param(0, "reset of MAX_BURST (bytes); 0 = the device's tCSM limit", lo=0, hi=1 << 30)
    link_latency: int = time_field(12_000, "one-way uDMA <-> HyperRAM link latency (PHY, pads)")
    reg_latency: int = param(1, "register access time in peripheral-clock cycles", lo=0, hi=1000)
    l2_regions: list[str] = field(default_factory=lambda: ["l2_private", "l2"], metadata={
        "doc": "contiguous memory-map regions a transfer's L2 range must lie in"})

    def validate(self) -> None:
        for name in ("l2_width", "max_outstanding"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("setup_cycles", "max_burst", "reg_latency"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        b = self.burst_boundary
        if b < 0 or b & (b - 1):
            raise ValueError(f"burst_boundary must be 0 or a power of two, got {b}")
        if self.link_latency < 1:
            raise ValueError(f"link_latency must be >= 1 ps, got {self.link_latency}")
        if not self.l2_regions:
            raise ValueError("l2_regions must name at least one memory-map region")


class UdmaTransfer:
    """One transfer started by a CFG.EN write. ``done`` fires when it ends (also on error
    or CLR); ``error`` holds ERR_* bits; ``bytes_done`` counts bytes moved in order."""

    def __init__(self, udma: "Udma", seq: int, direction: Direction, l2_addr: int,
                 ext_addr: int, size: int, datasize: int, continuous: bool,
                 max_burst: int, boundary: int):
        self.seq = seq
        self.direction = direction
        self.l2_addr = l2_addr
        self.ext_addr = ext_addr
        self.size = size
        self.datasize = datasize
        self.continuous = continuous
        self.max_burst = max_burst
        self.boundary = boundary
        self.done = Event(udma.sim, f"{udma.path}.{direction.value}.transfer{seq}.done")
        self.error = 0
        self.bytes_done = 0
        self.bursts = 0
        self.aborted = False
        self.finished = False
        self.t_start: int | None = None
        self.t_end: int | None = None

    def __repr__(self) -> str:
        state = "done" if self.finished else "running"
        return (f"<UdmaTransfer {self.direction.value}#{self.seq} L2 0x{self.l2_addr:x} "
                f"ext 0x{self.ext_addr:x} {self.size} B {state} {self.error_names or 'ok'}>")

    @property
    def ok(self) -> bool:
        return self.finished and not self.error and not self.aborted

    @property
    def error_names(self) -> list[str]:
        return [n for bit, n in ERROR_NAMES.items() if self.error & bit]

    @property
    def duration(self) -> int | None:
        """ps from the start (CFG.EN or promotion from pending) to completion."""
        return None if self.t_end is None or self.t_start is None else self.t_end - self.t_start

    def bursts_plan(self) -> list[tuple[int, int, int]]:
        """(HyperRAM address, L2 address, bytes) of each burst."""
        out = []
        off = 0
        while off < self.size:
            a = self.ext_addr + off
            n = min(self.max_burst, self.size - off)
            if self.boundary:
                n = min(n, self.boundary - a % self.boundary)
            out.append((a, self.l2_addr + off, n))
            off += n
        return out


class _Channel:
    """One direction of the HyperRAM channel: shadow registers and the transfer slots."""

    def __init__(self, udma: "Udma", direction: Direction):
        self.direction = direction
        d = direction.value.upper()
        #: this direction's register offsets: SADDR, SIZE, CFG, EXT_ADDR
        self.reg = {n: MAP.offset(f"HYPER_{d}_{n}") for n in ("SADDR", "SIZE", "CFG", "EXT_ADDR")}
        self.irq_done = MAP.mask("IRQ_STATUS", f"HYPER_{d}_DONE")
        self.irq_err = MAP.mask("IRQ_STATUS", f"HYPER_{d}_ERR")
        self.err_shift = MAP.shift("HYPER_ERROR", f"{d}_L2_RANGE")
        self.status_shift = MAP.shift("HYPER_STATUS", f"{d}_BUSY")
        self.saddr = self.size = self.ext = self.cfg = 0
        self.active: UdmaTransfer | None = None
        self.pending: UdmaTransfer | None = None
        self.last_started: UdmaTransfer | None = None
        self.kick = udma.event(f"{direction.value}_kick")
        self.slot_freed = udma.event(f"{direction.value}_slot_freed")
        self.done = udma.event(f"{direction.value}_done")
        self.seq = 0
        self.transfers = self.bytes = self.errors = self.bursts = self.busy_ps = 0


class Udma(Module):
    """The I/O DMA with its HyperRAM channel.

    ``region``: where the composer maps the registers; ``memory_map``: the map the names of
    ``params.l2_regions`` are looked up in.

    Sockets: ``target_socket`` (the register bank; map it at ``region``),
    ``l2_socket`` (initiator towards L2 on the SOC crossbar; global addresses), and the
    HyperBus port over ``link`` (side ``a`` = "soc"): call :meth:`connect` with the
    HyperRAM's target socket. Events: ``rx_done``, ``tx_done`` (each completed transfer of
    that direction), ``irq`` (an IRQ_STATUS bit enabled by IRQ_MASK was set).
    """

    def __init__(self, parent: "Module | Simulator", name: str, *, clock: Clock, region: Region,
                 memory_map: MemoryMap,
                 params: UdmaParams | Mapping[str, Any] | None = None,
                 hyperram: HyperRamParams | Mapping[str, Any] | None = None,
                 link: Link | None = None):
        super().__init__(parent, name)
        if not isinstance(params, UdmaParams):
            params = resolve(UdmaParams, params, self.path)
        if not isinstance(hyperram, HyperRamParams):
            hyperram = resolve(HyperRamParams, hyperram, f"{self.path}.hyperram")
        self.params = params
        self.hyperram = hyperram
        self.clock = clock
        self.region = region
        regions = []
        for rname in params.l2_regions:
            if rname not in memory_map:
                raise ParameterError(f"l2_regions: {rname!r} is not in the memory map",
                                     f"{self.path}.l2_regions")
            regions.append(memory_map[rname])
        regions.sort(key=lambda r: r.base)
        for a, b2 in zip(regions, regions[1:]):
            if a.end != b2.base:
                raise ParameterError(f"l2_regions {a.name} and {b2.name} are not contiguous",
                                     f"{self.path}.l2_regions")
        self.l2_window = (regions[0].base, regions[-1].end)
        self.ext_size = hyperram.capacity

        # L2 side: one 128-bit port shared by both directions (occupancy per access)
        self.l2_socket = InitiatorSocket(self, "l2")
        self._l2_timing = HopTiming(clock, 0, params.l2_width, True, self.path)
        # HyperBus side: a transport channel over the cuttable link
        self.link = link if link is not None else Link(
            self, "hyperbus_link", side_a="soc", side_b="hyperram",
            min_latency=params.link_latency)
        self.hyperbus = self.link.transport("hyperbus", initiator_side="a")
        self.hyper_socket = InitiatorSocket(self, "hyper")
        self.hyper_socket.bind(self.hyperbus.target_socket)

        self.irq = self.event("irq")
        self._irq_status = 0
        self._irq_mask = MAP.register("IRQ_MASK").reset
        self._error = 0
        self._max_burst = params.max_burst or hyperram.max_burst_bytes()
        self._boundary = params.burst_boundary
        self._ch = {
            Direction.RX: _Channel(self, Direction.RX),
            Direction.TX: _Channel(self, Direction.TX),
        }
        self.rx_done = self._ch[Direction.RX].done
        self.tx_done = self._ch[Direction.TX].done

        self.regs = RegisterBank(self, "regs", self.region.size, clock=clock,
                                 latency=params.reg_latency)
        self.target_socket: TargetSocket = self.regs.socket
        self._build_registers()
        self.sim.stats.add_provider(self.path, self._stat_values)
        for ch in self._ch.values():
            self.spawn(self._channel(ch), f"hyper_{ch.direction.value}")

    def connect(self, hyperram_socket: TargetSocket) -> None:
        """Bind the far end of the HyperBus link channel to the device's socket."""
        self.hyperbus.initiator_socket.bind(hyperram_socket)

    # ----- registers -------------------------------------------------------------------------
    def _build_registers(self) -> None:
        hooks = {   # names, access, reset and docs: udma.registers.yaml
            "IRQ_STATUS": dict(read=lambda: self._irq_status, write=self._w1c_irq),
            "IRQ_MASK": dict(read=lambda: self._irq_mask, write=self._set_mask),
            "HYPER_STATUS": dict(read=self._read_status),
            "HYPER_ERROR": dict(read=lambda: self._error, write=self._w1c_error),
            # the resets of the burst limits are the model's parameters, not the map's 0
            "HYPER_MAX_BURST": dict(reset=self._max_burst, read=lambda: self._max_burst,
                                    write=lambda v: setattr(self, "_max_burst", v)),
            "HYPER_BURST_BOUNDARY": dict(reset=self._boundary, read=lambda: self._boundary,
                                         write=lambda v: setattr(self, "_boundary", v)),
        }
        for ch in self._ch.values():
            d = f"HYPER_{ch.direction.value.upper()}_"
            hooks |= {
                d + "SADDR": dict(read=lambda c=ch: self._read_saddr(c),
                                  write=lambda v, c=ch: setattr(c, "saddr", v)),
                d + "SIZE": dict(read=lambda c=ch: self._read_size(c),
                                 write=lambda v, c=ch: setattr(c, "size", v)),
                d + "CFG": dict(read=lambda c=ch: self._read_cfg(c),
                                write=lambda v, c=ch: self._write_cfg(c, v)),
                d + "EXT_ADDR": dict(read=lambda c=ch: c.ext,
                                     write=lambda v, c=ch: setattr(c, "ext", v)),
            }
        self.regs.add_map(MAP, hooks)

    def _w1c_irq(self, v: int) -> None:
        self._irq_status &= ~v

    def _w1c_error(self, v: int) -> None:
        self._error &= ~v

    def _set_mask(self, v: int) -> None:
        self._irq_mask = v & _IRQ_BITS

    def _read_saddr(self, ch: _Channel) -> int:
        job = ch.active
        return job.l2_addr + job.bytes_done if job is not None else ch.saddr

    def _read_size(self, ch: _Channel) -> int:
        job = ch.active
        return job.size - job.bytes_done if job is not None else ch.size

    def _read_cfg(self, ch: _Channel) -> int:
        return (ch.cfg | (CFG_EN if ch.active is not None else 0)
                | (CFG_PENDING if ch.pending is not None else 0))

    def _read_status(self) -> int:
        v = 0
        for ch in self._ch.values():
            v |= ((ch.active is not None) | (ch.pending is not None) << 1) << ch.status_shift
        return v

    def _write_cfg(self, ch: _Channel, v: int) -> None:
        if v & CFG_CLR:
            self._clear(ch)
        ch.cfg = v & (CFG_CONTINUOUS | CFG_DATASIZE)
        if v & CFG_EN:
            self._start(ch)

    # ----- starting, checking, completing ------------------------------------------------------
    def _start(self, ch: _Channel) -> UdmaTransfer:
        ch.seq += 1
        job = UdmaTransfer(self, ch.seq, ch.direction, ch.saddr, ch.ext, ch.size,
                           _CFG.field("DATASIZE").get(ch.cfg), bool(ch.cfg & CFG_CONTINUOUS),
                           self._max_burst, self._boundary)
        ch.last_started = job
        err = self._check(job)
        if err:
            self._finish(ch, job, err)
        elif ch.active is None:
            ch.active = job
            ch.kick.notify()
        elif ch.pending is None:
            ch.pending = job
        else:  # the shadow slot is taken: refuse loudly rather than drop silently
            self._finish(ch, job, ERR_QUEUE_FULL)
        return job

    def _check(self, job: UdmaTransfer) -> int:
        """Error bits of a transfer before it starts (nothing moves when non-zero)."""
        err = 0
        n = job.size
        if n == 0:
            err |= ERR_ZERO_LEN
        lo, hi = self.l2_window
        if not (lo <= job.l2_addr and job.l2_addr + max(n, 1) <= hi):
            err |= ERR_L2_RANGE
        if job.ext_addr + max(n, 1) > self.ext_size:
            err |= ERR_EXT_RANGE
        ds = 1 << job.datasize
        b = job.boundary
        if (job.datasize == 3 or job.l2_addr % ds or job.ext_addr % ds or n % ds
                or job.max_burst < ds or job.max_burst % ds or b & (b - 1) or 0 < b < ds):
            err |= ERR_CFG
        return err

    def _finish(self, ch: _Channel, job: UdmaTransfer, err: int = 0) -> None:
        """End ``job``: error bits, interrupt flags, events (an aborted job only fires
        its own ``done``)."""
        sim = self.sim
        job.error |= err
        job.finished = True
        if job.t_start is None:
            job.t_start = sim.now
        job.t_end = sim.now
        if not job.aborted:
            ch.transfers += 1
            ch.bytes += job.bytes_done
            ch.busy_ps += job.t_end - job.t_start
            bits = ch.irq_done
            if job.error:
                ch.errors += 1
                bits |= ch.irq_err
                self._error |= job.error << ch.err_shift
            self._irq_status |= bits
            self.trace_span(f"{ch.direction.value} {job.size} B", job.t_start, job.t_end,
                            l2=job.l2_addr, ext=job.ext_addr, error=job.error)
            ch.done.notify()
            if bits & self._irq_mask:
                self.irq.notify()
        job.done.notify()

    def _clear(self, ch: _Channel) -> None:
        """CFG.CLR: drop the pending transfer, stop the active one after its in-flight
        bursts (both end aborted: their ``done`` fires, no interrupt)."""
        if ch.pending is not None:
            job, ch.pending = ch.pending, None
            job.aborted = True
            self._finish(ch, job)
        if ch.active is not None:
            ch.active.aborted = True
            ch.active.continuous = False
        ch.slot_freed.notify()

    # ----- the channel process -------------------------------------------------------------------
    async def _channel(self, ch: _Channel) -> None:
        while True:
            job = ch.active
            if job is None:
                await ch.kick
                continue
            job.t_start = self.sim.now
            if self.params.setup_cycles:
                await self.clock.wait_cycles(self.params.setup_cycles)
            if not job.aborted:
                if ch.direction == Direction.TX:
                    await self._run_tx(ch, job)
                else:
                    await self._run_rx(ch, job)
            self._finish(ch, job)
            nxt, ch.pending = ch.pending, None
            if nxt is None and job.continuous and not job.error and not job.aborted:
                ch.seq += 1  # continuous mode: reload the same transfer
                nxt = UdmaTransfer(self, ch.seq, ch.direction, job.l2_addr, job.ext_addr,
                                   job.size, job.datasize, True, job.max_burst, job.boundary)
                ch.last_started = nxt
            ch.active = nxt
            ch.slot_freed.notify()

    async def _l2_access(self, cmd: Command, addr: int, buf: bytearray, n: int) -> bool:
        p = GenericPayload(cmd, addr, buf, n, initiator=self.path)
        d = self._l2_timing.apply(p, 0, self.sim.now)
        d = await self.l2_socket.b_transport(p, d)
        if d:
            await self.sim.wait(d)
        return p.status == OK

    async def _hyper_burst(self, cmd: Command, ext: int, buf: bytearray, n: int) -> Status:
        p = GenericPayload(cmd, ext, buf, n, initiator=self.path)
        d = await self.hyper_socket.b_transport(p, 0)
        if d:
            await self.sim.wait(d)
        return p.status

    async def _run_tx(self, ch: _Channel, job: UdmaTransfer) -> None:
        """L2 -> HyperRAM: fetch a burst from L2, send it; up to W bursts in flight."""
        bursts = job.bursts_plan()
        window = self.params.max_outstanding
        inflight: deque[tuple[int, int, Process]] = deque()
        stop_at: int | None = None
        i = 0
        while True:
            while (i < len(bursts) and len(inflight) < window and stop_at is None
                   and not job.aborted):
                ext, l2, n = bursts[i]
                buf = bytearray(n)
                if not await self._l2_access(READ, l2, buf, n):
                    job.error |= ERR_BUS
                    stop_at = i
                    break
                inflight.append((i, n, self.spawn(self._hyper_burst(WRITE, ext, buf, n),
                                                  f"hyper_tx.burst{i}")))
                i += 1
            if not inflight:
                return
            idx, n, proc = inflight.popleft()
            status = await proc
            job.bursts += 1
            ch.bursts += 1
            if status != OK:
                job.error |= ERR_BUS
                stop_at = idx if stop_at is None else min(stop_at, idx)
            elif stop_at is None or idx < stop_at:
                job.bytes_done += n

    async def _run_rx(self, ch: _Channel, job: UdmaTransfer) -> None:
        """HyperRAM -> L2: request up to W bursts ahead, write each to L2 in order."""
        bursts = job.bursts_plan()
        window = self.params.max_outstanding
        inflight: deque[tuple[int, int, int, bytearray, Process]] = deque()
        stop_at: int | None = None
        i = 0
        while True:
            while (i < len(bursts) and len(inflight) < window and stop_at is None
                   and not job.aborted):
                ext, l2, n = bursts[i]
                buf = bytearray(n)
                inflight.append((i, l2, n, buf, self.spawn(self._hyper_burst(READ, ext, buf, n),
                                                           f"hyper_rx.burst{i}")))
                i += 1
            if not inflight:
                return
            idx, l2, n, buf, proc = inflight.popleft()
            status = await proc
            job.bursts += 1
            ch.bursts += 1
            if stop_at is not None:
                continue  # after a failure, data still in flight is dropped, never written
            if status != OK or not await self._l2_access(WRITE, l2, buf, n):
                job.error |= ERR_BUS
                stop_at = idx
                continue
            job.bytes_done += n

    # ----- Python API (the same register path as firmware) ----------------------------------
    def start(self, direction: Direction | str, l2_addr: int, ext_addr: int, size: int, *,
              datasize: int = 0, continuous: bool = False) -> UdmaTransfer:
        """Program the channel's registers and write CFG.EN, as firmware would; returns the
        transfer (already finished, with ``error`` set, if the start was refused)."""
        ch = self._ch[Direction(direction)]
        for what, v in (("l2_addr", l2_addr), ("ext_addr", ext_addr), ("size", size)):
            if not 0 <= v <= 0xFFFFFFFF:
                raise ValueError(f"{self.path}: {what} {v!r} does not fit a 32-bit register")
        if not 0 <= datasize <= 3:
            raise ValueError(f"{self.path}: datasize {datasize} is not a 2-bit field")
        regs, o = self.regs.registers, ch.reg
        self.regs.write_reg(regs[o["SADDR"]], l2_addr)
        self.regs.write_reg(regs[o["SIZE"]], size)
        self.regs.write_reg(regs[o["EXT_ADDR"]], ext_addr)
        self.regs.write_reg(regs[o["CFG"]], CFG_EN | datasize << CFG_DATASIZE_SHIFT
                            | (CFG_CONTINUOUS if continuous else 0))
        assert ch.last_started is not None
        return ch.last_started

    async def transfer(self, l2_addr: int, ext_addr: int, size: int,
                       direction: Direction | str, *, datasize: int = 0,
                       check: bool = True) -> UdmaTransfer:
        """Start a transfer (waiting for a free slot first) and wait for its end. With
        ``check``, an error raises a :class:`SimulationError` naming the error bits."""
        ch = self._ch[Direction(direction)]
        while ch.pending is not None:
            await ch.slot_freed
        job = self.start(direction, l2_addr, ext_addr, size, datasize=datasize)
        if not job.finished:
            await job.done
        if check and (job.error or job.aborted):
            what = "aborted (CLR)" if job.aborted and not job.error else ", ".join(job.error_names)
            raise SimulationError(
                f"uDMA {job.direction.value} transfer of {size} B (L2 0x{l2_addr:x}, HyperRAM "
                f"0x{ext_addr:x}) failed: {what}; {job.bytes_done} B moved",
                self.path, self.sim.now)
        return job

    def busy(self, direction: Direction | str) -> bool:
        ch = self._ch[Direction(direction)]
        return ch.active is not None or ch.pending is not None

    # ----- statistics -------------------------------------------------------------------------
    def _stat_values(self) -> dict:
        out: dict = {"l2_busy_ps": self._l2_timing.busy_time}
        for ch in self._ch.values():
            d = ch.direction.value
            out.update({f"{d}.transfers": ch.transfers, f"{d}.bytes": ch.bytes,
                        f"{d}.errors": ch.errors, f"{d}.bursts": ch.bursts,
                        f"{d}.busy_ps": ch.busy_ps})
        return out
