"""A whole network in timing mode on a simulated Voyager: every matrix operator, pooling,
softmax and layer norm of the compiled network is programmed through the registers and run
as a job (its DRAM bursts through TLM), depthwise convolutions too when the DWC extension is
present; the others (on the vector unit) and batch-1 GEMMs take the performance model's cycles. Used by
``bench/voyager.py`` and ``cosim voyager --tlm``."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Sequence

from accelerators.voyager.model.compiler import fuse
from accelerators.voyager.model.config import VoyagerParams, checked
from accelerators.voyager.model.job import KIND_CONV, KIND_DWC, KIND_GEMM, KIND_VECTOR, VOPS, VoyagerJob, job_registers
from accelerators.voyager.model.perf import op_perf
from accelerators.voyager.model.zoo import Layer

DRAM_BASE = 0x80000000
DRAM_SIZE = 64 << 20


@dataclass(frozen=True)
class LayerRun:
    """One operator of a timing run: the TLM cycles next to the model's."""

    name: str
    unit: str
    ideal: int
    cycles: int
    model_cycles: int

    @property
    def utilisation(self) -> float:
        return self.ideal / self.cycles if self.cycles else 0.0


def _job(op: Any) -> list[VoyagerJob]:
    """The descriptor jobs of a fused operator ([] when it has none: a depthwise conv on the
    vector unit or a batch-1 GEMM, which take the performance model's cycles)."""
    ly: Layer = op.layer
    if ly.kind in VOPS:
        vec = dict(kind=KIND_VECTOR, vop=VOPS.index(ly.kind), dtype="bf16", in_addr=DRAM_BASE,
                   w_addr=DRAM_BASE + (32 << 20), bias_addr=DRAM_BASE + (48 << 20), out_addr=DRAM_BASE + (16 << 20))
        if ly.kind in ("maxpool", "avgpool"):
            return [VoyagerJob(h=ly.h, w=ly.w, c=ly.c, k=ly.c, f=ly.f, stride=ly.stride, pad=ly.pad, **vec)]
        return [VoyagerJob(h=ly.m, w=1, c=ly.c, k=ly.c, **vec)]
    post = {name: name in op.post for name in ("relu", "gelu", "silu", "sigmoid", "tanh", "add")}
    if op.unit == "dwc":
        return [VoyagerJob(kind=KIND_DWC, dtype="int8", in_addr=DRAM_BASE, w_addr=DRAM_BASE + (32 << 20),
                           out_addr=DRAM_BASE + (16 << 20), skip_addr=DRAM_BASE + (48 << 20), h=ly.h, w=ly.w,
                           c=ly.c, k=ly.c, f=ly.f, stride=ly.stride, pad=ly.pad, quant=True, out_scale=1.0,
                           skip_scale=1.0, **post)]
    if op.unit != "matrix":
        return []
    common = dict(dtype="int8", in_addr=DRAM_BASE, w_addr=DRAM_BASE + (32 << 20), out_addr=DRAM_BASE + (16 << 20),
                  skip_addr=DRAM_BASE + (48 << 20), quant=True, out_scale=1.0, skip_scale=1.0, **post)
    if ly.kind == "conv":
        return [VoyagerJob(kind=KIND_CONV, h=ly.h, w=ly.w, c=ly.c, k=ly.k, f=ly.f, stride=ly.stride, pad=ly.pad,
                           **common)]
    return [VoyagerJob(kind=KIND_GEMM, h=ly.m, w=1, c=ly.c, k=ly.k, **common)] * ly.batch


def run_timing(layers: Sequence[Layer], params: VoyagerParams, dram_bytes_per_cycle: int | None = None,
               dram_latency: int = 20) -> list[LayerRun]:
    """Simulate ``layers`` on one Voyager instance (timing only): a host programs each
    matrix job through the registers and waits for its end."""
    from components.l2 import BankedMemory, BankedMemoryParams
    from accelerators.voyager.model.accel import MAP, Voyager
    from tlm import Clock, GenericPayload, InitiatorSocket, Module, Simulator
    from tlm.address_map import Region
    from tlm.payload import WRITE

    p = checked(replace(params, data=False))
    word = int(dram_bytes_per_cycle or p.mem_bytes_per_cycle)
    sim = Simulator()
    clk = Clock(sim, "clk", p.clock_hz)
    dram = BankedMemory(sim, "dram", Region("dram", DRAM_BASE, DRAM_SIZE, "soc", "memory", ""), clk,
                        BankedMemoryParams(banks=1, bank_word_bytes=word, latency=dram_latency))
    acc = Voyager(sim, "voyager", clock=clk, params=p)
    acc.dram.bind(dram.socket)
    host = InitiatorSocket(Module(sim, "host"), "bus")
    host.bind(acc.regs.socket)
    ops = fuse(layers, p.dwc_unit)
    runs: list[LayerRun] = []

    async def wr(name: str, value: int) -> None:
        await host.b_transport(GenericPayload(WRITE, MAP.register(name).offset,
                                              bytearray(int(value).to_bytes(4, "little"))), 0)

    async def main() -> None:
        for op in ops:
            model = op_perf(op, p)
            jobs = _job(op)
            if not jobs:
                await sim.wait(model.cycles * clk.period)
                runs.append(LayerRun(op.name, op.unit, 0, model.cycles, model.cycles))
                continue
            cycles = 0
            for job in jobs:
                n = len(acc.layers)
                for name, v in job_registers(job).items():
                    await wr(name, v)
                await wr("CTRL", 4)
                while len(acc.layers) == n:
                    await acc.done
                cycles += acc.layers[-1]["cycles"]
            runs.append(LayerRun(op.name, op.unit, model.ideal, cycles, model.cycles))

    sim.spawn(main(), "host")
    sim.run()
    return runs


def totals(runs: Sequence[LayerRun]) -> dict[str, float]:
    """Total cycles, and utilisation over matrix operators (sum ideal / sum achieved)."""
    mats = [r for r in runs if r.unit == "matrix"]
    ideal = sum(r.ideal for r in mats)
    achieved = sum(r.cycles for r in mats)
    return {"cycles": sum(r.cycles for r in runs), "model_cycles": sum(r.model_cycles for r in runs),
            "matrix_ideal": ideal, "matrix_cycles": achieved, "utilisation": ideal / achieved if achieved else 0.0}
