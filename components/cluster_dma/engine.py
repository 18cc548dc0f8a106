"""The cluster DMA's transfer engine (MCHAN-style): L2 <-> TCDM, 1D and 2D, 64 bit/cycle read +
64 bit/cycle write.

Software programs it through its register bank (the map of :mod:`.registers`, at ``region``,
given by its composer); Python (scenario task lists, tests) uses :meth:`ClusterDma.submit` /
:meth:`ClusterDma.run` with a :class:`DmaCommand`. Both paths go through the same checks,
queue and engine.

Checks at push (failures move no data; the transfer finishes at once with its error bits
in ERROR, ERR_ID set, :attr:`error_event` notified, plus :attr:`irq` if IRQ_EN):
ZERO_LEN (LEN = 0, or ROW_LEN = 0 in 2D), GEOMETRY (2D with ROW_LEN or a 2D stride not a
multiple of 4 bytes, a stride below ROW_LEN, or LEN not a multiple of ROW_LEN), L2_RANGE
(any byte outside the L2 window [l2_private.base, l2.end)), TCDM_RANGE (outside the TCDM).
BUS: an error response during the transfer (the rest of it is skipped).

Engine: transfers run in order; each row is split into AXI bursts at 4 KiB boundaries of
the L2 address and at ``max_burst_beats`` beats of ``beat_bytes`` (256 x 8 B = 2 KiB).
``max_outstanding`` bursts are in flight at once, which hides the crossing latency as in
hardware. Bursts of consecutive transfers with the same direction pipeline back to back;
a change of direction waits for the bursts in flight (no read-after-write hazard between
an L2 -> TCDM and a TCDM -> L2 transfer). Timing is analytical per burst in TCDM burst
mode (docs/memory.md states the duration formula).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Awaitable, Callable, Sequence

from tlm.timing import HopTiming
from tlm import Clock, Event, GenericPayload, Module, RegisterBank
from tlm.payload import OK, READ, WRITE
from tlm.sockets import InitiatorSocket

from tlm.address_map import Region
from tlm.params import check_params, param

from .registers import ERROR_MASK, ID_FULL, MAP, DmaCommand, DmaError

if TYPE_CHECKING:
    from tlm import Simulator

__all__ = ["DmaParams", "DmaTransfer", "ClusterDma", "split_bursts"]

_FREE, _RESERVED, _BUSY, _DONE = range(4)


@dataclass
class DmaParams:
    """``cluster.dma`` parameters (times in cycles of the cluster clock)."""

    #: Transfer IDs = commands that can be queued or running at once (<= 32).
    queue_depth: int = param(16, "transfer IDs / queue entries", lo=1, hi=256)
    #: AXI bursts in flight at once (hides the crossing latency).
    max_outstanding: int = param(8, "bursts in flight", lo=1, hi=256)
    #: AXI data width in bytes (64 bit).
    beat_bytes: int = param(8, "AXI beat (bytes)", lo=1, hi=128)
    #: AXI4 burst length limit in beats.
    max_burst_beats: int = param(256, "beats per burst (AXI4: 256)", lo=1, hi=256)
    #: Bursts never cross this L2 address boundary (AXI: 4 KiB).
    page_bytes: int = param(4096, "burst boundary (bytes)", lo=1, hi=1 << 20)
    #: Cycles from a command push to the issue of its first burst.
    cmd_latency: int = param(2, "command decode (cycles)", lo=0, hi=1000)

    def validate(self) -> None:
        if not 1 <= self.queue_depth <= 32:
            raise ValueError(f"queue_depth must be in 1..32, got {self.queue_depth}")
        if self.max_outstanding < 1:
            raise ValueError(f"max_outstanding must be >= 1, got {self.max_outstanding}")
        for name in ("beat_bytes", "max_burst_beats", "page_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.page_bytes % self.beat_bytes:
            raise ValueError("page_bytes must be a multiple of beat_bytes")
        if self.cmd_latency < 0:
            raise ValueError("cmd_latency must be >= 0")

    @property
    def max_burst_bytes(self) -> int:
        return self.beat_bytes * self.max_burst_beats


def split_bursts(cmd: DmaCommand, beat: int = 8, max_beats: int = 256,
                 page: int = 4096) -> list[tuple[int, int, int]]:
    """AXI bursts of ``cmd`` as ``(l2_address, tcdm_address, bytes)``: per row, cut at
    every ``page`` boundary of the L2 address and after ``max_beats`` beats of ``beat``
    bytes (the first beat of an unaligned burst is partial)."""
    out: list[tuple[int, int, int]] = []
    max_bytes = beat * max_beats
    for r in range(cmd.rows):
        a = cmd.l2 + r * cmd.l2_step
        t = cmd.tcdm + r * cmd.tcdm_step
        left = cmd.row_bytes
        while left > 0:
            n = min(left, page - a % page, max_bytes - a % beat)
            out.append((a, t, n))
            a += n
            t += n
            left -= n
    return out


class DmaTransfer:
    """A transfer in the DMA: ``await xfer`` waits for its completion (returns ``xfer``).
    ``error`` is a :class:`DmaError` (NONE when it went well); times are in ps."""

    __slots__ = ("id", "command", "error", "done", "finished", "push_time", "ready",
                 "start_time", "end_time", "bursts", "next", "inflight", "aborted")

    def __init__(self, dma: "ClusterDma", tid: int | None, command: DmaCommand):
        self.id = tid
        self.command = command
        self.error = DmaError.NONE
        self.done = Event(dma.sim, f"{dma.path}.xfer{tid}.done")
        self.finished = False
        self.push_time = dma.sim.now
        self.ready = dma.sim.now
        self.start_time: int | None = None
        self.end_time: int | None = None
        self.bursts: list[tuple[int, int, int]] = []
        self.next = 0
        self.inflight = 0
        self.aborted = False

    def __await__(self):
        if not self.finished:
            yield self.done
        return self

    @property
    def ok(self) -> bool:
        return self.finished and self.error == DmaError.NONE

    @property
    def duration(self) -> int | None:
        """Push to completion (ps)."""
        return None if self.end_time is None else self.end_time - self.push_time

    def __repr__(self) -> str:
        st = "done" if self.finished else "pending"
        return f"<DmaTransfer id={self.id} {st} error={self.error!r}>"


class ClusterDma(Module):
    """``cluster.dma``. Sockets: ``axi`` (L2 side: bind to the cluster crossbar, which
    reaches L2 through the crossing) and ``tcdm`` (bind to ``tcdm.dma_ports[0]``); the
    register bank is ``regs`` (map ``regs.socket`` on the cluster peripheral bus).
    Events: :attr:`done_event` (EVT_EN completions, towards the Event Unit), :attr:`irq`
    (IRQ_EN completions and failures), :attr:`error_event` (every failure), and one
    ``done`` event per :class:`DmaTransfer`.

    Hooks for an external engine (plain attributes, set before the first transfer; used
    by ``cosim.rtl`` to swap in the RTL, ``None`` = the model alone, unchanged):

    * :attr:`executor`: ``async executor(xfer) -> bursts`` replaces the burst slots. Each
      transfer that passed the push checks is handed to it in push order, one at a time
      (the next starts when it returns); it moves the data, lets the transfer's time pass,
      may set ``xfer.error`` (e.g. BUS) and returns the number of AXI bursts it issued
      (``None``: ``len(xfer.bursts)``). The DMA then ends the transfer (:meth:`_finish`:
      events, irq, DONE/FREE, statistics).
    * :attr:`watch`: ``watch(what, xfer)`` is called with ``"start"`` when the model takes
      the first burst of a transfer and with ``"end"`` when that transfer finishes (before
      its events), both at the model's simulated time; it must not change the transfer."""

    def __init__(self, parent: "Module | Simulator", name: str, clock: Clock,
                 params: DmaParams | None = None, *,
                 l2_regions: Sequence[Region], tcdm_region: Region, region: Region):
        super().__init__(parent, name)
        self.params = params or DmaParams()
        check_params(self.params, self.path)
        self.clock = clock
        self.region = region
        prm = self.params
        l2r = sorted(l2_regions,
                     key=lambda r: r.base)
        for a, b in zip(l2r, l2r[1:]):
            if a.end != b.base:
                raise ValueError(f"{self.path}: L2 regions {a.name} and {b.name} are not contiguous")
            if b.base % prm.page_bytes:
                # bursts split at pages, so none can straddle two L2 targets
                raise ValueError(f"{self.path}: {b.name} does not start on a page boundary")
        self.l2_window = (l2r[0].base, l2r[-1].end)
        t = tcdm_region
        self.tcdm_window = (t.base, t.end)
        self.axi = InitiatorSocket(self, "axi")
        self.tcdm = InitiatorSocket(self, "tcdm")
        self.done_event = self.event("done")
        self.irq = self.event("irq")
        self.error_event = self.event("error")
        self._work = self.event("work")
        self._freed = self.event("freed")
        # the DMA's own 64-bit AXI port (first hop of L2 reads, second of L2 writes)
        self._axi_timing = HopTiming(clock, 0, prm.beat_bytes, True, self.path)
        # queue and IDs
        self._state = [_FREE] * prm.queue_depth
        self._xfer: list[DmaTransfer | None] = [None] * prm.queue_depth
        self._reserved: deque[int] = deque()
        self._queue: deque[DmaTransfer] = deque()
        self._inflight = 0
        self._inflight_dir = True
        self.error_bits = DmaError.NONE
        self.err_id = ID_FULL
        self.last_id = ID_FULL
        # statistics
        self.transfers = self.bytes = self.bursts = self.failed = 0
        self.dropped = self.alloc_full = self.free_busy_ignored = 0
        self.busy_ps = 0
        self._busy_since: int | None = None
        self.sim.stats.add_provider(self.path, self._stat_values)
        self.regs = self._build_regs()
        self._workers = False  # burst slots start with the first transfer
        self.executor: Callable[[DmaTransfer], Awaitable[int | None]] | None = None
        self.watch: Callable[[str, DmaTransfer], None] | None = None

    def _build_regs(self) -> RegisterBank:
        """The register bank ``regs``, its hooks calling this Python API."""
        rb = RegisterBank(self, "regs", self.region.size, clock=self.clock, latency=1)

        def push(word: int) -> None:
            r = rb
            self.submit(DmaCommand.decode(word, r["L2_ADDR"].value, r["TCDM_ADDR"].value,
                                          r["ROW_LEN"].value, r["L2_STRIDE"].value,
                                          r["TCDM_STRIDE"].value))

        def free(value: int) -> None:
            for i in range(self.params.queue_depth):
                if value >> i & 1:
                    self.free(i)

        def w1c(value: int) -> None:
            self.error_bits = DmaError(int(self.error_bits) & ~value & ERROR_MASK)

        hooks = {
            "CMD": dict(read=self.reserve, write=push),
            "STATUS": dict(read=self.busy_mask),
            "FREE": dict(read=self.allocated_mask, write=free),
            "ERROR": dict(read=lambda: int(self.error_bits), write=w1c),
            "ERR_ID": dict(read=lambda: self.err_id),
            "LAST_ID": dict(read=lambda: self.last_id),
            "DONE": dict(read=self.done_mask),
        }
        rb.add_map(MAP, hooks)  # the staged address registers keep plain stored values
        return rb

    def _stat_values(self) -> dict:
        return {"transfers": self.transfers, "bytes": self.bytes, "bursts": self.bursts,
                "failed": self.failed, "dropped": self.dropped, "alloc_full": self.alloc_full,
                "free_busy_ignored": self.free_busy_ignored, "busy_ps": self.busy_ps}

    # ----- ID state (the register front end reads these) -------------------------------
    def _mask(self, state: int) -> int:
        return sum(1 << i for i, s in enumerate(self._state) if s == state)

    def busy_mask(self) -> int:
        """Bit i = 1 while transfer i is queued or running (STATUS)."""
        return self._mask(_BUSY)

    def done_mask(self) -> int:
        """Bit i = 1 when transfer i finished and is not yet freed (DONE)."""
        return self._mask(_DONE)

    def allocated_mask(self) -> int:
        """Bit i = 1 while ID i is allocated (FREE read)."""
        return sum(1 << i for i, s in enumerate(self._state) if s != _FREE)

    def _lowest_free(self) -> int | None:
        for i, s in enumerate(self._state):
            if s == _FREE:
                return i
        return None

    def reserve(self) -> int:
        """Reserve the lowest free ID for the next push (a CMD read); ID_FULL if none."""
        tid = self._lowest_free()
        if tid is None:
            self.alloc_full += 1
            return ID_FULL
        self._state[tid] = _RESERVED
        self._reserved.append(tid)
        return tid

    # ----- Python API ------------------------------------------------------------------------------
    def free(self, tid: int) -> bool:
        """Free ID ``tid`` (finished or reserved); a busy ID stays (counted). True if freed."""
        s = self._state[tid]
        if s == _BUSY:
            self.free_busy_ignored += 1
            return False
        if s == _RESERVED:
            self._reserved.remove(tid)
        if s != _FREE:
            self._state[tid] = _FREE
            self._xfer[tid] = None
            self._freed.notify()
        return True

    def transfer(self, tid: int) -> DmaTransfer | None:
        """The transfer holding ID ``tid`` (busy, or finished and not yet freed)."""
        return self._xfer[tid]

    @property
    def free_ids(self) -> int:
        return sum(1 for s in self._state if s == _FREE)

    @property
    def idle(self) -> bool:
        return not self._queue and self._inflight == 0

    def check(self, cmd: DmaCommand) -> DmaError:
        """The errors the hardware's command decoder finds in ``cmd`` (no side effects)."""
        err = DmaError.NONE
        if cmd.length <= 0 or (cmd.is_2d and not cmd.row_len):
            return DmaError.ZERO_LEN
        if cmd.is_2d:
            rl = cmd.row_len
            strides = [s for s in (cmd.l2_stride, cmd.tcdm_stride) if s is not None]
            if (rl % 4 or cmd.length % rl or any(s % 4 for s in strides)
                    or any(s < rl for s in strides)):
                err |= DmaError.GEOMETRY
                return err
        span_l2 = (cmd.rows - 1) * cmd.l2_step + cmd.row_bytes
        span_tc = (cmd.rows - 1) * cmd.tcdm_step + cmd.row_bytes
        lo, hi = self.l2_window
        if not (lo <= cmd.l2 and cmd.l2 + span_l2 <= hi):
            err |= DmaError.L2_RANGE
        lo, hi = self.tcdm_window
        if not (lo <= cmd.tcdm and cmd.tcdm + span_tc <= hi):
            err |= DmaError.TCDM_RANGE
        return err

    def submit(self, cmd: DmaCommand) -> DmaTransfer:
        """Push ``cmd`` as the hardware does: it takes the oldest reserved ID or the lowest
        free one; with no free ID it is dropped (``error == FULL``, ``id is None``). An
        invalid command finishes at once with its error bits; nothing is copied."""
        tid = self._reserved.popleft() if self._reserved else self._lowest_free()
        now = self.sim.now
        if tid is None:
            x = DmaTransfer(self, None, cmd)
            x.error = DmaError.FULL
            self.dropped += 1
            self.last_id = ID_FULL
            self._finish(x)
            return x
        x = DmaTransfer(self, tid, cmd)
        self._state[tid] = _BUSY
        self._xfer[tid] = x
        self.last_id = tid
        err = self.check(cmd)
        if err:
            x.error = err
            self._finish(x)
            return x
        prm = self.params
        x.bursts = split_bursts(cmd, prm.beat_bytes, prm.max_burst_beats, prm.page_bytes)
        x.ready = now + prm.cmd_latency * self.clock.period
        self._queue.append(x)
        if not self._workers:
            self._workers = True
            if self.executor is not None:
                self.spawn(self._run_executor(), "executor")
            else:
                for k in range(prm.max_outstanding):
                    self.spawn(self._worker(), f"burst{k}")
        if self._busy_since is None:
            self._busy_since = now
        self._work.notify()
        return x

    async def run(self, cmd: DmaCommand) -> DmaTransfer:
        """Wait for a free ID, submit ``cmd`` and wait for its completion."""
        while not self._reserved and self._lowest_free() is None:
            await self._freed
        return await self.submit(cmd)

    def copy_in(self, l2: int, tcdm: int, length: int, **kw) -> DmaTransfer:
        """Submit a 1D L2 -> TCDM transfer (``kw``: other :class:`DmaCommand` fields)."""
        return self.submit(DmaCommand(l2, tcdm, length, True, **kw))

    def copy_out(self, tcdm: int, l2: int, length: int, **kw) -> DmaTransfer:
        """Submit a 1D TCDM -> L2 transfer."""
        return self.submit(DmaCommand(l2, tcdm, length, False, **kw))

    # ----- engine --------------------------------------------------------------------------------------
    def _next_burst(self) -> tuple[DmaTransfer, tuple[int, int, int]] | None:
        q = self._queue
        while q:
            x = q[0]
            if x.aborted or x.next >= len(x.bursts):
                q.popleft()
                continue
            if self._inflight and self._inflight_dir != x.command.to_tcdm:
                return None  # direction change: let the bursts in flight drain first
            b = x.bursts[x.next]
            x.next += 1
            if x.next == len(x.bursts):
                q.popleft()
            x.inflight += 1
            if x.start_time is None:
                x.start_time = self.sim.now
                if self.watch is not None:
                    self.watch("start", x)
            self._inflight += 1
            self._inflight_dir = x.command.to_tcdm
            return x, b
        return None

    async def _worker(self) -> None:
        """One burst slot: takes the next burst, moves it, repeats."""
        sim = self.sim
        buf = bytearray(self.params.max_burst_bytes)
        p = GenericPayload(READ, 0, buf, 0, initiator=self.path)   # L2 side
        q = GenericPayload(READ, 0, buf, 0, initiator=self.path)   # TCDM side
        while True:
            item = self._next_burst()
            if item is None:
                await self._work
                continue
            x, (l2, tc, n) = item
            d = x.ready - sim.now
            if d < 0:
                d = 0
            if x.command.to_tcdm:
                p.reset(READ, l2, n)
                d = self._axi_timing.apply(p, d, sim.now)
                d = await self.axi.b_transport(p, d)
                ok = p.status == OK
                if ok:
                    q.reset(WRITE, tc, n)
                    q.bw_occupancy = p.bw_occupancy
                    d = await self.tcdm.b_transport(q, d)
                    ok = q.status == OK
            else:
                q.reset(READ, tc, n)
                d = await self.tcdm.b_transport(q, d)
                ok = q.status == OK
                if ok:
                    p.reset(WRITE, l2, n)
                    p.bw_occupancy = q.bw_occupancy
                    d = self._axi_timing.apply(p, d, sim.now)
                    d = await self.axi.b_transport(p, d)
                    ok = p.status == OK
            if d:
                await sim.wait(d)
            self.bursts += 1
            self._burst_done(x, ok)

    async def _run_executor(self) -> None:
        """The :attr:`executor` path: transfers one at a time, in push order. The
        external engine owns the time from the start (no ``cmd_latency`` added here)."""
        q = self._queue
        while True:
            if not q:
                await self._work
                continue
            x = q.popleft()
            x.start_time = self.sim.now
            x.inflight = 1
            self._inflight = 1
            self._inflight_dir = x.command.to_tcdm
            n = await self.executor(x)
            self.bursts += len(x.bursts) if n is None else int(n)
            x.next = len(x.bursts)
            x.inflight = 0
            self._inflight = 0
            self._finish(x)
            if not q and self._busy_since is not None:
                self.busy_ps += self.sim.now - self._busy_since
                self._busy_since = None

    def _burst_done(self, x: DmaTransfer, ok: bool) -> None:
        x.inflight -= 1
        self._inflight -= 1
        if not ok and not x.aborted:
            x.error |= DmaError.BUS
            x.aborted = True
        if x.inflight == 0 and (x.aborted or x.next >= len(x.bursts)):
            self._finish(x)
        if self._inflight == 0:
            if self._queue:
                self._work.notify()  # wake slots held back by a direction change
            elif self._busy_since is not None:
                self.busy_ps += self.sim.now - self._busy_since
                self._busy_since = None

    def _finish(self, x: DmaTransfer) -> None:
        now = self.sim.now
        cmd = x.command
        x.finished = True
        x.end_time = now
        if x.id is not None:
            self._state[x.id] = _FREE if cmd.auto_free else _DONE
            if cmd.auto_free:
                self._xfer[x.id] = None
        if x.error:
            self.failed += 1
            self.error_bits |= x.error
            self.err_id = ID_FULL if x.id is None else x.id
        else:
            self.transfers += 1
            self.bytes += cmd.length
            self.trace_span("dma", x.push_time, now, id=x.id, bytes=cmd.length,
                            to_tcdm=cmd.to_tcdm)
        if self.watch is not None and x.start_time is not None:
            self.watch("end", x)
        x.done.notify()
        if x.error:
            self.error_event.notify()
        if cmd.event and not x.error:
            self.done_event.notify()
        if cmd.irq:
            self.irq.notify()
        if x.id is not None and cmd.auto_free:
            self._freed.notify()
