"""The overlap refinement of the latency model (spec §9, an assumption made a mode):
the decoder issues instructions in order, one per cycle, and the units (DRAM0, DRAM1,
array, SIMD ALUs, the local <-> accumulator data path) run in parallel unless an
instruction touches an address range an unfinished earlier one writes (or writes one it
reads). Ranges of strided accesses are taken as their whole span. Configure waits for
everything in flight (it may move a DRAM window). An instruction that cannot start holds
the decoder: issue is in order.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .isa import Configure, DataFlow, DataMove, Instruction, LoadLut, LoadWeight, MatMul, Simd

Range = tuple[str, int, int]       # (memory, first, last) vectors


def _span(mem: str, a: int, n: int, s: int) -> Range:
    return (mem, a, a + (n - 1) * s)


_OTHER = {DataFlow.DRAM0_TO_LOCAL: "dram0", DataFlow.LOCAL_TO_DRAM0: "dram0",
          DataFlow.DRAM1_TO_LOCAL: "dram1", DataFlow.LOCAL_TO_DRAM1: "dram1",
          DataFlow.ACC_TO_LOCAL: "acc", DataFlow.LOCAL_TO_ACC: "acc", DataFlow.LOCAL_TO_ACC_ADD: "acc"}


def unit_and_ranges(ins: Instruction, lut_vectors: int = 1) -> tuple[str, list[Range], list[Range]]:
    """(unit, ranges read, ranges written) of one instruction."""
    if isinstance(ins, MatMul):
        reads = [("weights", 0, 0)]
        if not ins.zeroes:
            reads.append(_span("local", ins.local_address, ins.size, ins.local_stride))
        acc = _span("acc", ins.accumulator_address, ins.size, ins.accumulator_stride)
        if ins.accumulate:
            reads.append(acc)
        return "array", reads, [acc]
    if isinstance(ins, LoadWeight):
        reads = [] if ins.zeroes else [_span("local", ins.local_address, ins.size, ins.local_stride)]
        return "array", reads, [("weights", 0, 0)]
    if isinstance(ins, DataMove):
        local = _span("local", ins.local_address, ins.size, ins.local_stride)
        other = _span(_OTHER[ins.flow], ins.address, ins.size, ins.stride)
        to_local = ins.flow in (DataFlow.DRAM0_TO_LOCAL, DataFlow.DRAM1_TO_LOCAL, DataFlow.ACC_TO_LOCAL)
        unit = other[0] if other[0] != "acc" else "dataflow"
        if to_local:
            return unit, [other], [local]
        return unit, [local] + ([other] if ins.flow == DataFlow.LOCAL_TO_ACC_ADD else []), [other]
    if isinstance(ins, Simd):
        reads: list[Range] = [("regs", 0, 0), ("luts", 0, 0)]
        if ins.read:
            reads.append(("acc", ins.read_address, ins.read_address))
        writes: list[Range] = [("regs", 0, 0)]
        if ins.write:
            writes.append(("acc", ins.write_address, ins.write_address))
            if ins.accumulate:
                reads.append(("acc", ins.write_address, ins.write_address))
        return "simd", reads, writes
    if isinstance(ins, LoadLut):
        return "simd", [_span("local", ins.local_address, lut_vectors, ins.local_stride)], [("luts", 0, 0)]
    return "decoder", [], []


def _hit(a: list[Range], b: list[Range]) -> bool:
    return any(m1 == m2 and lo1 <= hi2 and lo2 <= hi1 for m1, lo1, hi1 in a for m2, lo2, hi2 in b)


@dataclass
class _Flight:
    end: int
    reads: list[Range]
    writes: list[Range]


@dataclass
class OverlapModel:
    """Start and end cycle of each instruction under the overlap rules; ``total`` is when
    the last one finishes."""

    issue: int = 0
    total: int = 0
    unit_free: dict[str, int] = field(default_factory=dict)
    unit_busy: dict[str, int] = field(default_factory=dict)
    flights: list[_Flight] = field(default_factory=list)

    def add(self, ins: Instruction, cycles: int, lut_vectors: int = 1) -> int:
        """Place ``ins`` (its serial ``cycles``); returns its start cycle."""
        unit, reads, writes = unit_and_ranges(ins, lut_vectors)
        self.flights = [f for f in self.flights if f.end > self.issue]
        start = max(self.issue, self.unit_free.get(unit, 0))
        for f in self.flights:
            if isinstance(ins, Configure) or _hit(reads, f.writes) or _hit(writes, f.writes) \
                    or _hit(writes, f.reads):
                start = max(start, f.end)
        end = start + cycles
        if unit != "decoder":
            self.unit_free[unit] = end
            self.flights.append(_Flight(end, reads, writes))
        self.unit_busy[unit] = self.unit_busy.get(unit, 0) + cycles
        self.issue = start + 1
        self.total = max(self.total, end)
        return start
