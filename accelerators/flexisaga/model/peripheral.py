"""FlexiSAGA as a memory-mapped accelerator on the common interface (components/accel.py).

* Registers: a :class:`tlm.RegisterBank` built from ``registers.yaml``; writing CTRL.START
  queues the job held in the job registers (one job in flight).
* Memory: one initiator port ``mem`` (the composition binds it to a TCDM branch whose width
  is the DecU's P x 32-bit ports). Operands and compressed weight tiles are read through
  the DecU's decoder (:mod:`accelerators.flexisaga.model.tiles`) with debug accesses at the start
  of the job; the job's words then cross the port as timed bursts, so the interconnect
  sees the traffic and bank contention; outputs land at the end of the job.
* Time: ``setup`` + the fast cycle model (:mod:`accelerators.flexisaga.model.cycles`, equal to the
  step model), or the bursts' time when the memory is slower.
* Bad jobs (unknown dataflow, empty shape, an operand outside the memory, a compressed
  tile that does not fit the weight shape, unsupported FLAGS) are refused: STATUS.ERROR
  and ERROR_CODE, the end-of-job event, nothing written.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from tlm import Clock, GenericPayload, Module, Region, RegisterBank
from tlm.params import check_params, param
from tlm.payload import READ, WRITE
from tlm.regmap import RegisterMap, load_regmap

from components.accel import Accelerator, JobRecord, JobRefused, JobRegisters, MacArrayEnergy, timing_burst
from .config import DATAFLOWS, SPARSE, ArrayConfig
from .cycles import CycleReport, estimate
from .functional import gemm
from .tiles import TileFormatError, from_words, strips, to_words, unpack_tile

if TYPE_CHECKING:
    from tlm import Simulator


@lru_cache(maxsize=None)
def register_map() -> RegisterMap:
    """FlexiSAGA's register map (``registers.yaml``)."""
    return load_regmap(Path(__file__).with_name("registers.yaml"))


@dataclass
class FlexiSagaParams:
    """``<path>`` parameters of a FlexiSAGA block."""

    rows: int = param(8, "PE grid rows R", lo=1, hi=64)
    cols: int = param(8, "PE grid columns C", lo=1, hi=64)
    mem_ports: int = param(8, "32-bit memory ports P behind the DecU", lo=1, hi=32)
    mem_latency: int = param(1, "memory latency, cycles added once per tile", lo=0, hi=100)
    word_bits: int = param(32, "register / data width (bits)", lo=8, hi=32)
    csb_index_bits: int = param(8, "bits per CSB column index", lo=2, hi=16)
    setup: int = param(2, "controller start-up cycles per job", lo=0, hi=1000)
    pe_dtype: Literal["fp32", "int"] = field(default="fp32", metadata={"doc": "PE arithmetic"})

    @property
    def array(self) -> ArrayConfig:
        return ArrayConfig(rows=self.rows, cols=self.cols, word_bits=self.word_bits,
                           pe_dtype=self.pe_dtype, mem_ports=self.mem_ports,
                           mem_latency=self.mem_latency, csb_index_bits=self.csb_index_bits)


@dataclass
class SocFlexiSagaParams(FlexiSagaParams):
    """A FlexiSAGA inside a cluster (MARSELLUS's ``cluster.flexisaga``): off unless
    ``enabled``; on the cluster clock, its DecU on a TCDM accelerator branch of
    ``4 * mem_ports`` bytes next to the RBE's."""

    enabled: bool = param(False, "build a FlexiSAGA in the cluster, on its own TCDM accelerator branch")


@dataclass(frozen=True)
class FlexiSagaJob:
    """One GEMM job as the job registers hold it (addresses in bytes, pitches in words)."""

    dataflow: int
    m: int
    k: int
    n: int
    w_base: int
    w_tile_table: int
    i_base: int
    ldi: int
    o_base: int
    ldo: int
    accumulate: bool = False
    integer: bool = False

    @property
    def dataflow_name(self) -> str:
        return DATAFLOWS[self.dataflow] if 0 <= self.dataflow < len(DATAFLOWS) else f"#{self.dataflow}"


def encode_job(job: FlexiSagaJob) -> list[tuple[int, int]]:
    """``(offset, value)`` register writes that program ``job`` (CTRL not included)."""
    m = register_map()
    out = []
    for reg in m.registers:
        if reg.name in ("CTRL", "STATUS", "IRQ_ENABLE"):
            continue
        word = 0
        for f in reg.fields:
            word = f.put(word, int(getattr(job, f.name)))
        out.append((reg.offset, word))
    return out


class FlexiSaga(JobRegisters, Accelerator[FlexiSagaJob]):
    """The FlexiSAGA block. Map ``regs.socket`` at ``region`` and bind ``mem`` to memory
    whose region is ``mem_region`` (every job operand must lie in it)."""

    kind = "flexisaga"
    rtl_block = "flexisaga"
    #: a job's ``op`` report is the MACs it executes (a sparse dataflow skips the pruned
    #: ones); W: the PE word width; PEs: rows x cols
    energy_profile = MacArrayEnergy("flexisaga", "op", lambda a: (a.cfg.word_bits, a.cfg.rows * a.cfg.cols))

    def __init__(self, parent: "Module | Simulator", name: str, *, clock: Clock, region: Region,
                 mem_region: Region, params: FlexiSagaParams | None = None):
        super().__init__(parent, name, clock=clock)
        self.params = params or FlexiSagaParams()
        check_params(self.params, self.path)
        self.cfg = self.params.array
        self.region = region
        self.mem_region = mem_region
        self.init_job_registers(register_map(), self.params.setup)
        self.regs = RegisterBank(self, "regs", region.size, clock=clock, latency=1)
        self.regs.add_map(self.map, {"CTRL": {"write": self._ctrl}, "STATUS": {"read": self.status_word}})
        self.mem = self.add_port("mem")
        #: the last job's cycle report
        self.last: CycleReport | None = None
        self.sim.stats.add_provider(self.path, self._stat_values)
        self.start()

    # ----- registers -----------------------------------------------------------------------
    def _field(self, reg: str, name: str) -> int:
        return self.map.field(reg, name).get(self.regs[reg].value)

    def _ctrl(self, value: int) -> None:
        if self.map.field("CTRL", "SOFT_RESET").get(value):
            self.clear_status()
        if self.map.field("CTRL", "START").get(value):
            g = self._field
            self.start_job(FlexiSagaJob(
                g("DATAFLOW", "dataflow"), g("M", "m"), g("K", "k"), g("N", "n"),
                g("W_BASE", "w_base"), g("W_TILE_TABLE", "w_tile_table"), g("I_BASE", "i_base"),
                g("LDI", "ldi"), g("O_BASE", "o_base"), g("LDO", "ldo"),
                bool(g("FLAGS", "accumulate")), bool(g("FLAGS", "integer"))))

    def _stat_values(self) -> dict:
        return {"jobs": len(self.jobs), "busy_ps": self.busy_ps, "ops": self.ops,
                "errors": sum(1 for j in self.jobs if j.error), "cycles": self.cycles}

    # ----- memory --------------------------------------------------------------------------
    def _words(self, addr: int, count: int, what: str) -> np.ndarray:
        n = 4 * count
        if count < 0 or addr % 4 or not self.mem_region.contains(addr, max(n, 1)):
            raise JobRefused("ERR_ADDRESS", f"{what}: [0x{addr:x}, +{n}) is not inside "
                            f"{self.mem_region.name} or not word aligned")
        if count == 0:
            return np.zeros(0, dtype=np.uint32)
        p = GenericPayload(READ, addr, bytearray(n), initiator=self.path)
        if self.mem.transport_dbg(p) != n:
            raise JobRefused("ERR_ADDRESS", f"{what}: debug read at 0x{addr:x} failed")
        return np.frombuffer(bytes(p.data), dtype=np.uint32)

    def _matrix(self, base: int, rows: int, cols: int, pitch: int, what: str) -> np.ndarray:
        if pitch < cols:
            raise JobRefused("ERR_SHAPE", f"{what}: row pitch {pitch} < {cols} columns")
        words = self._words(base, (rows - 1) * pitch + cols, what)
        out = np.zeros((rows, cols), dtype=np.uint32)
        for r in range(rows):
            out[r] = words[r * pitch:r * pitch + cols]
        return out

    def _weights(self, job: FlexiSagaJob) -> tuple[np.ndarray, int]:
        """W as the DecU decodes it, and the words its image spans."""
        name, cfg = job.dataflow_name, self.cfg
        if name not in SPARSE:
            return from_words(self._matrix(job.w_base, job.m, job.k, job.k, "W"), cfg), job.m * job.k
        tiles = strips(name, (job.m, job.k), cfg)
        table = self._words(job.w_tile_table, len(tiles), "W tile table")
        w = np.zeros((job.m, job.k), dtype=cfg.dtype)
        span = [0]
        for t, (rs, cs) in enumerate(tiles):
            base = job.w_base + 4 * int(table[t])

            def read(idx: int, count: int, base: int = base, t: int = t) -> np.ndarray:
                span[0] = max(span[0], (base - job.w_base) // 4 + idx + count)
                return self._words(base + 4 * idx, count, f"W tile {t}")
            shape = (rs.stop - rs.start, cs.stop - cs.start)
            try:
                w[rs, cs] = unpack_tile(name, read, shape, cfg)
            except TileFormatError as e:
                raise JobRefused("ERR_FORMAT", f"W tile {t}: {e}") from None
        return w, span[0]

    def check(self, job: FlexiSagaJob) -> None:
        if not 0 <= job.dataflow < len(DATAFLOWS):
            raise JobRefused("ERR_DATAFLOW", f"DATAFLOW {job.dataflow} names no dataflow")
        if 0 in (job.m, job.k, job.n):
            raise JobRefused("ERR_SHAPE", f"M, K, N = {job.m}, {job.k}, {job.n}")
        if job.accumulate or job.integer != (self.cfg.pe_dtype == "int"):
            raise JobRefused("ERR_FLAGS", "FLAGS: accumulate is not supported; integer must "
                            f"match the PEs ({self.cfg.pe_dtype})")
        if job.ldo < job.n:
            raise JobRefused("ERR_SHAPE", f"LDO {job.ldo} < N {job.n}")
        o_words = (job.m - 1) * job.ldo + job.n
        if job.o_base % 4 or not self.mem_region.contains(job.o_base, 4 * o_words):
            raise JobRefused("ERR_ADDRESS", f"O: [0x{job.o_base:x}, +{4 * o_words}) is not inside "
                            f"{self.mem_region.name} or not word aligned")

    # ----- the accelerator interface -------------------------------------------------------
    async def execute(self, job_id: int, job: FlexiSagaJob, start: int) -> JobRecord:
        try:
            w, w_words = self._weights(job)
            i = from_words(self._matrix(job.i_base, job.k, job.n, job.ldi, "I"), self.cfg)
        except JobRefused as e:
            return await self.reject(job_id, self.refused(e), start)
        name = job.dataflow_name
        out = gemm(name, w, i, self.cfg)
        rep = estimate(name, w, job.n, self.cfg)
        self.last = rep
        cycles = self.params.setup + rep.cycles
        self.book("op", rep.macs, cycles * self.clock.period)
        traffic_start = self.sim.now
        await timing_burst(self, "mem", False, job.w_base, 4 * w_words)
        await timing_burst(self, "mem", False, job.i_base, 4 * job.k * job.n)
        await timing_burst(self, "mem", True, job.o_base, 4 * job.m * job.n)
        end = max(start + cycles * self.clock.period, self.sim.now)
        if end > self.sim.now:
            await self.sim.wait(end - self.sim.now)
        took = round((self.sim.now - traffic_start) / self.clock.period)
        words = to_words(out, self.cfg)
        for r in range(job.m):
            buf = bytearray(words[r].tobytes())
            self.mem.transport_dbg(GenericPayload(WRITE, job.o_base + 4 * r * job.ldo, buf,
                                                  initiator=self.path))
        self.account(start, max(cycles, took), rep.dense_macs // (self.cfg.rows * self.cfg.cols),
                     2 * rep.macs, {"mem": 4 * (rep.reads + rep.writes)})
        return JobRecord(job_id, start, self.sim.now, 0, rep)
