"""The MiniGEMM block on tlm-cosim's common accelerator interface (components/accel.py).

* Registers from ``registers.yaml``: writing CTRL.START queues the job in the job registers.
* Memory: one initiator port ``mem``. The operands are read with debug accesses at the start
  of a job and its words then cross the port as timed bursts (the interconnect sees the
  traffic); the output lands at the end of the job.
* Time: :func:`cycles` — the R x C output-stationary schedule — or the bursts' time when the
  memory is slower.
* A job with an empty shape or an operand outside the memory is refused (STATUS.ERROR,
  ERROR_CODE), nothing written.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from components.accel import Accelerator, JobRecord, JobRefused, JobRegisters, MacArrayEnergy, timing_burst
from tlm import Clock, GenericPayload, Region, RegisterBank
from tlm.params import check_params, param
from tlm.payload import READ, WRITE
from tlm.regmap import RegisterMap, load_regmap


@lru_cache(maxsize=None)
def register_map() -> RegisterMap:
    """MiniGEMM's register map (``registers.yaml``)."""
    return load_regmap(Path(__file__).with_name("registers.yaml"))


@dataclass
class MiniGemmParams:
    """``<path>`` parameters of a MiniGEMM block."""

    rows: int = param(4, "MAC array rows R (outputs of one tile: R x C)", lo=1, hi=256)
    cols: int = param(4, "MAC array columns C", lo=1, hi=256)
    setup: int = param(4, "controller start-up cycles per job", lo=0, hi=1000)


@dataclass(frozen=True)
class MiniGemmJob:
    """One GEMM as the job registers hold it (addresses in bytes)."""

    m: int
    k: int
    n: int
    w_base: int
    i_base: int
    o_base: int


def encode_job(job: MiniGemmJob) -> list[tuple[int, int]]:
    """``(offset, value)`` register writes that program ``job`` (CTRL not included)."""
    out = []
    for reg in register_map().registers:
        if reg.name in ("CTRL", "STATUS"):
            continue
        word = 0
        for f in reg.fields:
            word = f.put(word, int(getattr(job, f.name)))
        out.append((reg.offset, word))
    return out


def cycles(m: int, k: int, n: int, p: MiniGemmParams) -> int:
    """The job's cycles: ``setup`` + one R x C output tile after another, each streaming its
    K operand pairs through the array plus the R + C - 2 cycles to fill and drain it."""
    tiles = -(-m // p.rows) * -(-n // p.cols)
    return p.setup + tiles * (k + p.rows + p.cols - 2)


def gemm(w: np.ndarray, i: np.ndarray) -> np.ndarray:
    """``W @ I`` as the array computes it: 32-bit two's complement accumulators (wrapping)."""
    acc = np.asarray(w, np.int64) @ np.asarray(i, np.int64)
    return ((acc + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32)


class MiniGemm(JobRegisters, Accelerator[MiniGemmJob]):
    """The MiniGEMM block. Map ``regs.socket`` at ``region``; bind ``mem`` to the memory
    whose region is ``mem_region`` (every operand must lie in it)."""

    kind = "minigemm"
    #: a job's ``op`` report is its MACs (32-bit operands, R x C PEs)
    energy_profile = MacArrayEnergy("minigemm", "op", lambda a: (32, a.params.rows * a.params.cols))

    def __init__(self, parent: Any, name: str, *, clock: Clock, region: Region, mem_region: Region,
                 params: MiniGemmParams | None = None):
        super().__init__(parent, name, clock=clock)
        self.params = params or MiniGemmParams()
        check_params(self.params, self.path)
        self.mem_region = mem_region
        self.init_job_registers(register_map(), self.params.setup)    # one job in flight, CTRL/STATUS
        self.regs = RegisterBank(self, "regs", region.size, clock=clock, latency=1)
        self.regs.add_map(self.map, {"CTRL": {"write": self._ctrl}, "STATUS": {"read": self.status_word}})
        self.mem = self.add_port("mem")
        self.sim.stats.add_provider(self.path, lambda: {"jobs": len(self.jobs), "busy_ps": self.busy_ps,
                                                        "ops": self.ops, "cycles": self.cycles})
        self.start()

    # ----- registers -----------------------------------------------------------------------
    def _ctrl(self, value: int) -> None:
        if self.map.field("CTRL", "START").get(value):
            g = lambda reg, f: self.map.field(reg, f).get(self.regs[reg].value)  # noqa: E731
            self.start_job(MiniGemmJob(g("M", "m"), g("K", "k"), g("N", "n"), g("W_BASE", "w_base"),
                                       g("I_BASE", "i_base"), g("O_BASE", "o_base")))

    # ----- memory --------------------------------------------------------------------------
    def _inside(self, addr: int, nbytes: int, what: str) -> None:
        if addr % 4 or not self.mem_region.contains(addr, nbytes):
            raise JobRefused("ERR_ADDRESS", f"{what}: [0x{addr:x}, +{nbytes}) is not inside "
                            f"{self.mem_region.name} or not word aligned")

    def _read(self, addr: int, rows: int, cols: int, what: str) -> np.ndarray:
        n = 4 * rows * cols
        self._inside(addr, n, what)
        p = GenericPayload(READ, addr, bytearray(n), initiator=self.path)
        if self.mem.transport_dbg(p) != n:
            raise JobRefused("ERR_ADDRESS", f"{what}: debug read at 0x{addr:x} failed")
        return np.frombuffer(bytes(p.data), "<i4").reshape(rows, cols)

    # ----- the accelerator interface -------------------------------------------------------
    def check(self, job: MiniGemmJob) -> None:
        if 0 in (job.m, job.k, job.n):
            raise JobRefused("ERR_SHAPE", f"M, K, N = {job.m}, {job.k}, {job.n}")
        self._inside(job.o_base, 4 * job.m * job.n, "O")

    async def execute(self, job_id: int, job: MiniGemmJob, start: int) -> JobRecord:
        try:
            w = self._read(job.w_base, job.m, job.k, "W")
            i = self._read(job.i_base, job.k, job.n, "I")
        except JobRefused as e:
            return await self.reject(job_id, self.refused(e), start)
        out = gemm(w, i)
        n_cycles = cycles(job.m, job.k, job.n, self.params)
        macs = job.m * job.k * job.n
        self.book("op", macs, n_cycles * self.clock.period)
        await timing_burst(self, "mem", False, job.w_base, 4 * job.m * job.k)
        await timing_burst(self, "mem", False, job.i_base, 4 * job.k * job.n)
        await timing_burst(self, "mem", True, job.o_base, 4 * job.m * job.n)
        end = max(start + n_cycles * self.clock.period, self.sim.now)
        if end > self.sim.now:
            await self.sim.wait(end - self.sim.now)
        self.mem.transport_dbg(GenericPayload(WRITE, job.o_base, bytearray(out.astype("<i4").tobytes()),
                                              initiator=self.path))
        pes = self.params.rows * self.params.cols
        self.account(start, n_cycles, -(-macs // pes), 2 * macs,
                     {"mem": 4 * (job.m * job.k + job.k * job.n + job.m * job.n)})
        return JobRecord(job_id, start, self.sim.now, 0, n_cycles)
