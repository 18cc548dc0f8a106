"""The TCU's per-instruction latency model (spec §9, serial estimator) and the handshake
bits of its performance samples (spec §8).

Cycles of one instruction, n = its size in vectors:

* NoOp, Configure, SIMD: 1
* LoadWeight: n
* MatMul: n + fill, fill = 0 after a MatMul, N after a LoadWeight, 2N otherwise
* DataMove local <-> accumulators: n (one vector per cycle through the memory ports)
* DataMove local <-> DRAM: ``dram_setup`` + ceil(n * vector bytes / ``dram_bytes_per_cycle``)
  (one vector per cycle when ``dram_bytes_per_cycle`` is 0)
* LoadLUT: ``lut_depth_vectors``
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tlm.params import param

from .arch import TensilArch
from .isa import DataFlow, DataMove, Instruction, LoadLut, LoadWeight, MatMul, Simd

DRAM_FLOWS = {DataFlow.DRAM0_TO_LOCAL: 0, DataFlow.LOCAL_TO_DRAM0: 0,
              DataFlow.DRAM1_TO_LOCAL: 1, DataFlow.LOCAL_TO_DRAM1: 1}


@dataclass(frozen=True)
class TensilTiming:
    """Constants of the latency model and of the hazard model (every one an assumption of
    the spec made a parameter)."""

    dram_bytes_per_cycle: int = param(0, "DRAM bandwidth in bytes per TCU cycle (0: one "
                                         "vector per cycle)", lo=0, hi=1 << 16)
    dram_setup: int = param(0, "fixed cycles per DRAM DataMove (AXI latency)", lo=0, hi=100_000)
    simd_write_hazard: int = param(2, "instructions after a SIMD write before a DataMove "
                                      "reads the accumulators correctly", lo=0, hi=64)
    hazard: Literal["stale", "in_order", "error"] = param(
        "stale", "a DataMove reading a SIMD result too early: gets the stale value (as on the "
                 "hardware), the in-order value, or stops the run")
    overlap: bool = param(False, "refinement: units run in parallel unless their address ranges "
                                 "conflict (accelerators/tensil/model/overlap.py); false: serial")
    sample_block_words: int = param(1024, "performance-sample words per AXI-stream block",
                                    lo=1, hi=1 << 20)


def dram_cycles(n: int, arch: TensilArch, t: TensilTiming) -> int:
    """Cycles of an n-vector DRAM DataMove in the standalone model."""
    if t.dram_bytes_per_cycle <= 0:
        return t.dram_setup + n
    return t.dram_setup + -(-n * arch.vector_bytes // t.dram_bytes_per_cycle)


def cycles(ins: Instruction, prev: Instruction | None, arch: TensilArch, t: TensilTiming) -> int:
    """Cycles of ``ins`` following ``prev`` (None at the start of a program)."""
    if isinstance(ins, MatMul):
        if isinstance(prev, MatMul):
            fill = 0
        elif isinstance(prev, LoadWeight):
            fill = arch.array_size
        else:
            fill = 2 * arch.array_size
        return ins.size + fill
    if isinstance(ins, LoadWeight):
        return ins.size
    if isinstance(ins, DataMove):
        if ins.flow in DRAM_FLOWS:
            return dram_cycles(ins.size, arch, t)
        return ins.size
    if isinstance(ins, LoadLut):
        return arch.lut_depth_vectors
    return 1


# performance-sample handshake bit pairs (valid bit; ready is the next bit)
ARRAY, ACC, DATAFLOW, DRAM1, DRAM0, PORT_B, PORT_A, DECODER = 32, 34, 36, 38, 40, 42, 44, 46


def busy_units(ins: Instruction) -> tuple[int, ...]:
    """Valid-bit positions of the units ``ins`` keeps busy (the decoder always)."""
    if isinstance(ins, MatMul):
        return (DECODER, ARRAY, PORT_A, ACC)
    if isinstance(ins, LoadWeight):
        return (DECODER, ARRAY, PORT_A)
    if isinstance(ins, DataMove):
        bank = DRAM_FLOWS.get(ins.flow)
        if bank is None:
            return (DECODER, DATAFLOW, PORT_B, ACC)
        return (DECODER, DATAFLOW, PORT_B, DRAM0 if bank == 0 else DRAM1)
    if isinstance(ins, Simd):
        return (DECODER, ACC)
    if isinstance(ins, LoadLut):
        return (DECODER, PORT_A)
    return (DECODER,)


def sample_word(pc: int, ins: Instruction) -> int:
    """The 64-bit sample taken while ``ins`` runs at program counter ``pc``: the serial model
    never stalls, so every busy unit shows valid and ready."""
    word = pc & 0xFFFFFFFF
    for bit in busy_units(ins):
        word |= 0b11 << bit
    return word
