"""The RBE as a cluster peripheral: HWPE registers, a job engine process, TCDM traffic.

* Registers: a :class:`tlm.RegisterBank` at the ``region`` its composer gives it, whose
  hooks drive the kernel-independent :class:`RbeRegisterFile` (two-deep job queue,
  acquire/trigger, status, soft clear; docs/rbe.md).
* Engine: one process takes committed jobs in order. At the start of a job it reads the
  operands through the TCDM (debug access: no time), computes bit-exactly with
  :func:`run_job`, and writes the outputs when the job ends.
* Timing: the job's 288-bit streamer accesses (:func:`streamer_trace`) go to the TCDM's RBE
  branch as real transactions (a :class:`TcdmPattern` of row addresses), so the TCDM counts
  bank contention with cores and DMA; the time each phase's accesses take beyond one per
  cycle are that phase's grant stalls, added to the cycle model (:func:`job_cycles`).
  ``traffic='segment'`` replays the accesses per tile phase in hardware order (accurate
  word-level contention); ``'phase'`` issues one transaction per phase kind (fast: four
  per job); ``'auto'`` picks segment when the TCDM is in word mode.
* Events: ``done`` is notified at the end of every job (including a job rejected by
  validation, as the hardware raises its event for it too); the platform connects it to
  the Event Unit. Soft-clear-aborted jobs raise no event.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Literal

import numpy as np

from tlm import Clock, GenericPayload, Module, Region, RegisterBank
from tlm.payload import READ, WRITE
from tlm.params import check_params, param

from ..accel import Accelerator, JobRecord as AccelJobRecord
from .cycles import (CycleParams, PhaseStalls, compute_spans, datapath_peak_ops_per_cycle,
                     job_cycles)
from .engine import run_job
from .job import Mode, RbeError, RbeJob
from .regs import REGMAP, RbeRegisterFile
from .streamer import Phase, streamer_trace

if TYPE_CHECKING:
    from tlm import Simulator

PATTERN = "tcdm.pattern"   # the TCDM's payload extension for row patterns
ROW_BYTES = 36             # one 288-bit access: 9 ports x 32 bit


@dataclass
class RbeParams:
    """``cluster.rbe`` parameters."""

    traffic: Literal["auto", "phase", "segment"] = field(
        default="auto", metadata={"doc": "how streamer accesses reach the TCDM"})
    setup: int = param(2, "controller start-up cycles per job (timing: paper)", lo=0, hi=1000)
    compute_fill: int = param(7, "COMPUTE pipeline fill/drain per inner loop (timing: paper)",
                              lo=0, hi=1000)
    accumulate_cycles: int = param(1, "COMPUTE cycles per output channel to accumulate "
                                      "(timing: paper)", lo=0, hi=64)
    nq_cycles_per_group: int = param(2, "norm-quant cycles per 4 channels (timing: paper)",
                                     lo=0, hi=1000)
    timing: Literal["open_rtl", "paper"] = field(
        default="open_rtl", metadata={"doc": "cycle calibration: 'open_rtl' (pulp-platform/rbe "
                                             "RTL, docs/rbe.md) or 'paper' (the four numbers "
                                             "above; the schedule our SV RBE implements)"})

    def validate(self) -> None:
        paper = CycleParams.paper()
        for k in PAPER_KNOBS:
            if getattr(self, k) < 0:
                raise ValueError(f"{k} must be >= 0")
            if self.timing != "paper" and getattr(self, k) != getattr(paper, k):
                # silently ignoring a knob would make a user's setting a no-op
                raise ValueError(f"{k} = {getattr(self, k)} only applies with timing: paper "
                                 f"(timing is {self.timing!r}); set timing: paper or drop {k}")

    @property
    def cycle_params(self) -> CycleParams:
        if self.timing == "open_rtl":
            return CycleParams.open_rtl()
        return CycleParams(compute_fill=self.compute_fill,
                           nq_cycles_per_group=self.nq_cycles_per_group, setup=self.setup,
                           accumulate_cycles=self.accumulate_cycles)


#: The RbeParams fields that tune the paper calibration (no effect on 'open_rtl').
PAPER_KNOBS = ("setup", "compute_fill", "accumulate_cycles", "nq_cycles_per_group")


#: What one job did (kept for reports: RTL-vs-model comparisons use ``cycles``, an
#: :class:`RbeCycles`, None for a rejected job).
JobRecord = AccelJobRecord


class Rbe(Accelerator[RbeJob]):
    """The RBE peripheral, on the common accelerator interface (:mod:`components.accel`).
    Bind ``tcdm`` to the TCDM's RBE port and map ``regs.socket`` on the cluster peripheral
    bus at ``region``; ``tcdm_region`` is the TCDM's (global) region, which the job
    addresses must lie in."""

    kind = "rbe"
    rtl_block = "rbe"

    def __init__(self, parent: "Module | Simulator", name: str, *, clock: Clock,
                 region: Region, tcdm_region: Region, params: RbeParams | None = None,
                 tcdm_word_mode: Callable[[], bool] | None = None):
        super().__init__(parent, name, clock=clock)
        self.params = params or RbeParams()
        check_params(self.params, self.path)
        self.region = region
        self.regfile = RbeRegisterFile(tcdm_region.base, tcdm_region.size)
        self.regs = RegisterBank(self, "regs", region.size, clock=clock, latency=1)
        names = {r.offset: n for n, r in REGMAP.control.items()} | {r.offset: r.name for r in REGMAP.job}
        for off in range(0, REGMAP.job[-1].offset + 4, 4):
            # reserved offsets are mapped too: the register file flags them (ERR_BAD_ACCESS)
            self.regs.add(off, names.get(off, f"RESERVED_{off:02X}"), read=lambda o=off: self.regfile.read(o),
                          write=lambda v, m, o=off: self._write(o, v, m))
        self.tcdm = self.add_port("tcdm")
        self._word_mode = tcdm_word_mode or (lambda: False)
        self.phase_cycles = {ph.name.lower(): 0 for ph in Phase}
        self.stall_cycles = {ph.name.lower(): 0 for ph in Phase}
        self._epoch = 0
        self._scratch = bytearray()   # the data of the timing-only read phases
        self.sim.stats.add_provider(self.path, self._stat_values)
        self.start()

    # ----- registers ---------------------------------------------------------------------
    def _write(self, offset: int, value: int, mask: int) -> None:
        be = sum(1 << i for i in range(4) if mask >> (8 * i) & 0xFF)
        self.regfile.write(offset, value, be)
        if REGMAP.control["TRIGGER"].offset == offset or REGMAP.control["SOFT_CLEAR"].offset == offset:
            self.kick()

    def _stat_values(self) -> dict:
        out = {"jobs": len(self.jobs), "busy_ps": self.busy_ps, "ops": self.ops,
               "errors": sum(1 for j in self.jobs if j.error)}
        for k, v in self.phase_cycles.items():
            out[f"cycles.{k}"] = v
        for k, v in self.stall_cycles.items():
            out[f"stalls.{k}"] = v
        return out

    # ----- TCDM access --------------------------------------------------------------------
    def _read(self, addr: int, n: int) -> np.ndarray:
        p = GenericPayload(READ, addr, bytearray(n), initiator=self.path)
        if self.tcdm.transport_dbg(p) != n:
            raise RuntimeError(f"RBE debug read of {n} B at 0x{addr:x} failed")  # validated earlier
        return np.frombuffer(p.data, dtype=np.uint8)

    def _write_mem(self, addr: int, data: np.ndarray) -> None:
        buf = bytearray(np.asarray(data, dtype=np.uint8).tobytes())
        p = GenericPayload(WRITE, addr, buf, initiator=self.path)
        self.tcdm.transport_dbg(p)

    async def _traffic(self, phase: Phase, addrs: np.ndarray) -> int:
        """Issue ``addrs`` (288-bit rows) on the RBE branch; returns the cycles it took."""
        if addrs.size == 0:
            return 0
        from ..tcdm import TcdmPattern  # the TCDM's pattern type (avoids an import cycle)
        cmd = WRITE if phase == Phase.STREAMOUT else READ
        n = int(addrs.size) * ROW_BYTES
        if cmd == WRITE:
            p = GenericPayload(cmd, int(addrs[0]), bytearray(n), initiator=self.path)
            p.byte_enable = b"\x00"  # timing only: the engine already wrote the data
        else:
            # timing only as well (the engine read its operands): the data lands in a
            # buffer kept across jobs instead of a freshly zeroed one per phase
            if len(self._scratch) < n:
                self._scratch = bytearray(n)
            p = GenericPayload(cmd, int(addrs[0]), memoryview(self._scratch)[:n], n,
                               initiator=self.path)
        p.set_extension(PATTERN, TcdmPattern(ROW_BYTES, rows=addrs))
        start = self.sim.now
        d = await self.tcdm.b_transport(p, 0)
        if d:
            await self.sim.wait(d)  # the streamer is busy until its accesses are done
        return round((self.sim.now - start) / self.clock.period)

    # ----- the accelerator interface: control port -> jobs --------------------------------
    def next_job(self) -> tuple[int, RbeJob | int] | None:
        item = self.regfile.pop_job()
        if item is None:
            return None
        self._epoch = self.regfile.epoch
        job_id, job = item
        return (job_id, int(job)) if isinstance(job, RbeError) else (job_id, job)

    async def reject(self, job_id: int, error: int, start: int) -> JobRecord:
        await self.clock.wait_cycles(self.params.setup)   # the controller still starts up
        return JobRecord(job_id, start, self.sim.now, error, None)

    def retire(self, job_id: int, record: JobRecord) -> bool:
        return self.regfile.job_done(job_id, self._epoch)

    async def execute(self, job_id: int, job: RbeJob, start: int) -> JobRecord:
        return await self._run(job_id, job, start)

    async def _run(self, job_id: int, job: RbeJob, start: int) -> JobRecord:
        outputs: list[tuple[int, np.ndarray]] = []   # operands are read now, outputs land at the end
        run_job(job, self._read, lambda a, d: outputs.append((a, np.array(d, dtype=np.uint8, copy=True))))
        trace = streamer_trace(job)
        segment = self.params.traffic == "segment" or (
            self.params.traffic == "auto" and self._word_mode())
        measured = {ph: 0 for ph in Phase}
        if segment:
            # runs of equal phase in issue order
            change = np.flatnonzero(np.diff(trace.phase)) + 1
            bounds = np.concatenate([[0], change, [len(trace)]])
            for a, b in zip(bounds[:-1], bounds[1:]):
                ph = Phase(int(trace.phase[a]))
                measured[ph] += await self._traffic(ph, trace.addr[a:b])
        else:
            for ph in Phase:   # the phase's addresses (a mask on a plain int: no enum per element)
                measured[ph] += await self._traffic(ph, trace.addr[trace.phase == int(ph)])
        counts = trace.counts()
        stalls = PhaseStalls(*(max(0, measured[ph] - counts[ph]) for ph in Phase))
        cyc = job_cycles(job, stalls, self.params.cycle_params)
        end = start + cyc.total * self.clock.period
        self.book_job(start, job, cyc)
        if end > self.sim.now:
            await self.sim.wait(end - self.sim.now)
        for a, d in outputs:
            self._write_mem(a, d)
        for ph in Phase:
            k = ph.name.lower()
            self.phase_cycles[k] += getattr(cyc, k)
            self.stall_cycles[k] += getattr(stalls, k)
        self.account_job(start, job, cyc, cyc.total)
        return JobRecord(job_id, start, self.sim.now, 0, cyc)

    def book_job(self, start: int, job: RbeJob, cyc: Any) -> None:
        """Report a job's activity to the power model where it happens: its ops, one-bit
        products (W*I per MAC: the precision-dependent part) and datapath cycles over its
        COMPUTE phases, its TCDM words (9 per 288-bit access) over the whole job."""
        period = self.clock.period
        bits = job.w_bits * job.i_bits
        for sp in compute_spans(job, cyc, self.params.cycle_params):
            t0 = start + round(sp.start * period)
            over = max(0, start + round(sp.end * period) - t0)
            self.book("op", sp.ops, over, start=t0)
            self.book("bitop", sp.ops // 2 * bits, over, start=t0)
            self.book("cycle", sp.cycles, over, start=t0)
        words = sum(cyc.accesses.values()) * (ROW_BYTES // 4)
        self.book("access", words, cyc.total * period, start=start, unit="tcdm")

    def account_job(self, start: int, job: RbeJob, cyc: Any, cycles: int) -> None:
        """Book one finished job of ``cycles`` cycles (``cyc``: its :class:`RbeCycles`,
        for the operation and TCDM access counts)."""
        ideal = round(cyc.ops / datapath_peak_ops_per_cycle(job.mode == Mode.CONV3X3,
                                                            job.w_bits, job.i_bits))
        self.account(start, cycles, ideal, cyc.ops,
                     {"tcdm": sum(cyc.accesses.values()) * ROW_BYTES})
