"""The Voyager accelerator on the common interface (components/accel.py): MMIO registers
from ``registers.yaml``, one memory initiator port ``dram`` (AXI-like; the composition
binds it to the DRAM), an interrupt event ``irq`` (end of job, gated by IRQ_ENABLE) and the
``done`` event of every accelerator.

A START write snapshots the descriptor into a job (one in flight). The job's schedule
(:meth:`VoyagerModel.timing`) is replayed: per L2 tile its DRAM bursts go through the port
(real TLM transactions, so the DRAM's bandwidth and any contention set the memory time) and
the tile lasts ``max(compute, memory)``. The output is computed bit-exactly and written by
the tiles' write bursts. The report entry adds the per-job (per-layer) figures."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from components.accel import Accelerator, AcceleratorReport, JobRecord, MacArrayEnergy
from tlm import Clock, Event, GenericPayload, Module, Simulator
from tlm.params import check_params
from tlm.payload import READ, WRITE
from tlm.regmap import load_regmap
from tlm.regs import RegisterBank

from .config import VoyagerParams
from .errors import VoyagerError
from .job import (ERR_BAD_ADDRESS, ERR_BAD_JOB, ERR_NO_TILE, JobProblem, VoyagerJob, VoyagerModel, describe,
                  fields)

MAP = load_regmap(Path(__file__).with_name("registers.yaml"))
JOB_REGS = [r.name for r in MAP.group("job") + MAP.group("approx")]
STATUS_DONE = 1 << 8


@dataclass
class VoyagerReport(AcceleratorReport):
    """The common entry plus one row per job (``layers``) and the matrix-unit totals."""

    layers: list[dict[str, Any]] = field(default_factory=list)
    job_errors: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        d = super().as_dict()
        d["layers"] = list(self.layers)
        if self.job_errors:
            d["job_errors"] = list(self.job_errors)
        ideal = sum(r["ideal_cycles"] for r in self.layers)
        achieved = sum(r["cycles"] for r in self.layers)
        d["totals"] = {"ideal_cycles": ideal, "cycles": achieved,
                       "utilisation": ideal / achieved if achieved else 0.0,
                       "model_cycles": sum(r["model_cycles"] for r in self.layers)}
        return d


def _dtype_bits(name: str) -> int:
    from .dtypes import parse_dtype
    return parse_dtype(name).bits


class Voyager(Accelerator[VoyagerJob]):
    """A Voyager instance: registers on ``regs.socket``, data on ``ports['dram']``."""

    kind = "voyager"
    #: W: the storage width of the operand datatype (``dtype``); PEs: rows x cols
    energy_profile = MacArrayEnergy("voyager", "mac", lambda a: (_dtype_bits(a.params.dtype),
                                                                 a.params.ic_dim * a.params.oc_dim))

    def __init__(self, parent: Module | Simulator, name: str, *, clock: Clock, params: VoyagerParams,
                 region_size: int = 0x1000, bus_clock: Clock | None = None):
        super().__init__(parent, name, clock=clock)
        check_params(params, self.path)
        self.params = params
        self.model = VoyagerModel(params)
        self.dram = self.add_port("dram")
        self.irq = Event(self.sim, f"{self.path}.irq")
        self._queue: list[tuple[int, VoyagerJob | int]] = []
        self._next_id = 0
        self._busy = False
        self._status = 0
        self._irq_status = 0
        self._cycles0 = 0
        self.layers: list[dict[str, Any]] = []
        self.job_errors: list[dict[str, Any]] = []
        self.regs = RegisterBank(self, "regs", region_size, clock=bus_clock or clock, latency=1)
        self.target_socket = self.regs.socket
        self.regs.add_map(MAP, {
            "CTRL": dict(write=self._write_ctrl),
            "STATUS": dict(read=self._read_status, write=self._w1c_status),
            "IRQ_STATUS": dict(read=lambda: self._irq_status, write=self._w1c_irq),
            "CYCLE_LO": dict(read=lambda: self._busy_cycles() & 0xFFFFFFFF),
            "CYCLE_HI": dict(read=lambda: self._busy_cycles() >> 32),
        })
        self.sim.stats.add_provider(self.path, lambda: {"jobs": len(self.jobs), "busy_ps": self.busy_ps,
                                                        "cycles": self.cycles, "ops": self.ops,
                                                        "bytes": sum(self.bytes_moved.values())})
        self.start()

    # ----- registers -------------------------------------------------------------------------
    def _busy_cycles(self) -> int:
        return self.cycles - self._cycles0

    def _read_status(self) -> int:
        busy = 3 if self._busy or self._queue else 0
        return busy | self._status

    def _w1c_status(self, v: int) -> None:
        if v & STATUS_DONE:
            self._status &= ~STATUS_DONE

    def _w1c_irq(self, v: int) -> None:
        self._irq_status &= ~(v & 1)

    def _write_ctrl(self, v: int) -> None:
        if v >> 31 & 1:
            self._status = self._irq_status = 0
            self._cycles0 = self.cycles
        if not v & 7 or self._busy or self._queue:
            return
        values = {n: self.regs.read_reg(self.regs[n]) for n in JOB_REGS}
        self._next_id += 1
        job: VoyagerJob | int = fields(values)
        pr = job.problem() or self.model.problem(job)
        if pr is None and not self._reachable(job):
            pr = JobProblem(ERR_BAD_ADDRESS, "IN_ADDR", "a tensor of the job lies outside the memory behind the "
                                                        "dram port")
        if pr is None:
            try:
                self.model.schedule(job)
            except VoyagerError as e:
                pr = JobProblem(ERR_NO_TILE, "TILE_YX", str(e))
        if pr is not None:
            job = pr.code
            # the located reason: which register field, which job, when (the status holds the code only)
            self.job_errors.append({"job": f"job{self._next_id}", "error": pr.code, "time_ps": self.sim.now,
                                    "where": f"{self.regs.path}.{pr.field}", "message": pr.message})
        self._queue.append((self._next_id, job))
        self.kick()

    def _reachable(self, job: VoyagerJob) -> bool:
        """Every tensor of ``job`` lies in memory the DRAM port reaches (its first and last
        byte answer a debug read): bursts never run beyond the memory."""
        for addr, n in job.tensors(self.model.scale_bytes):
            for a in (addr, addr + max(n, 1) - 1):
                if self.dram.transport_dbg(GenericPayload(READ, a, bytearray(1))) != 1:
                    return False
        return True

    # ----- the job loop ------------------------------------------------------------------------
    def next_job(self) -> tuple[int, VoyagerJob | int] | None:
        if not self._queue:
            return None
        self._busy = True
        return self._queue.pop(0)

    def _read(self, addr: int, n: int) -> bytes:
        p = GenericPayload(READ, addr, bytearray(n))
        if self.dram.transport_dbg(p) != n:
            raise VoyagerError(self.path, f"cannot read [0x{addr:x}, +{n}) through the dram port")
        return bytes(p.data)

    async def execute(self, job_id: int, job: VoyagerJob, start: int) -> JobRecord:
        name = f"job{job_id}"
        timing = self.model.timing(job, name)
        ho, wo = job.out_hw
        try:
            out = self.model.compute(job, self._read) if self.params.data else bytes(job.out_size(ho * wo * job.k))
        except VoyagerError:                  # a tensor outside the memory: the job ends at once
            return JobRecord(job_id, start, self.sim.now, ERR_BAD_ADDRESS)
        period = self.clock.period
        moved = 0
        for ph in timing.phases:
            t0 = self.sim.now
            for b in ph.bursts:
                if b.write:
                    off = b.address - job.out_addr
                    p = GenericPayload(WRITE, b.address, bytearray(out[off:off + b.nbytes]))
                else:
                    p = GenericPayload(READ, b.address, bytearray(b.nbytes))
                d = await self.dram.b_transport(p, 0)
                if d:
                    await self.sim.wait(d)
                moved += b.nbytes
            rest = ph.cycles * period - (self.sim.now - t0)
            if rest > 0:
                await self.sim.wait(rest)
        cycles = -(-(self.sim.now - start) // period)
        self.account(start, cycles, timing.ideal_cycles, timing.ops, {"dram": moved})
        self.book("mac", timing.ops, self.sim.now - start)
        lp = self.model.schedule(job, name)
        self.layers.append({"name": name, "op": describe(job), "macs": timing.ops,
                            "ideal_cycles": timing.ideal_cycles, "cycles": cycles, "model_cycles": lp.cycles,
                            "utilisation": timing.ideal_cycles / cycles if cycles else 0.0,
                            "tile": list(lp.tile), "order": lp.order, "l2_tiles": lp.l2_tiles,
                            "dram_bytes": moved})
        return JobRecord(job_id, start, self.sim.now, 0, cycles)

    def retire(self, job_id: int, record: JobRecord) -> bool:
        self._busy = False
        self._status = (self._status & ~(0xFF << 16)) | STATUS_DONE | ((record.error & 0xFF) << 16)
        if self.regs.read_reg(self.regs["IRQ_ENABLE"]) & 1:
            self._irq_status |= 1
            self.irq.notify()
        return True

    def report_entry(self) -> VoyagerReport:
        base = super().report_entry()
        return VoyagerReport(**{k: getattr(base, k) for k in ("kind", "jobs", "errors", "busy_ps", "cycles",
                                                             "ideal_cycles", "ops", "bytes", "energy_j")},
                             layers=list(self.layers), job_errors=list(self.job_errors))


__all__ = ["Voyager", "VoyagerReport", "MAP", "ERR_BAD_ADDRESS", "ERR_BAD_JOB", "ERR_NO_TILE"]
