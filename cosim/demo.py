"""A small kernel demo: two initiators share a 64-bit crossbar to an SRAM and a ROM.

    python -m cosim.demo [--seed N] [--trace FILE]

One initiator streams loosely-timed bursts with a quantum keeper; the other copies a
block through DMI, then the SRAM revokes DMI; one access hits an unmapped address and is
answered with an ADDRESS_ERROR (reported, not raised). Prints a summary table.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from tlm import (READ, WRITE, Clock, DmiCache, GenericPayload, InitiatorSocket, Memory, Module,
                 QuantumKeeper, Router, Simulator, Tracer, fmt_time, write_chrome_trace)
from tlm.units import NS


class StreamingInitiator(Module):
    """Writes ``count`` bursts of ``burst`` bytes of seeded random data, then reads them back."""

    def __init__(self, parent, name: str, base: int, count: int, burst: int):
        super().__init__(parent, name)
        self.socket = InitiatorSocket(self, "socket")
        self.base, self.count, self.burst = base, count, burst
        self.mismatches = 0
        self.spawn(self.run())

    async def run(self) -> None:
        qk = QuantumKeeper(self.sim)
        data = self.rng.integers(0, 256, self.count * self.burst, dtype=np.uint8)
        for phase in (WRITE, READ):
            for i in range(self.count):
                chunk = data[i * self.burst:(i + 1) * self.burst]
                buf = bytearray(chunk.tobytes()) if phase == WRITE else bytearray(self.burst)
                p = GenericPayload(phase, self.base + i * self.burst, buf, initiator=self.path)
                begin = qk.current_time
                qk.set(await self.socket.b_transport(p, qk.local))
                self.trace_span(phase.name.lower(), begin, qk.current_time, bytes=self.burst)
                if phase == READ and bytes(buf) != chunk.tobytes():
                    self.mismatches += 1
                if qk.need_sync():
                    await qk.sync()
        await qk.sync()
        # one access to an unmapped address: answered with ADDRESS_ERROR, logged
        bad = GenericPayload(READ, 0x3000_0000, bytearray(4), initiator=self.path)
        await self.socket.b_transport(bad, 0)


class DmiCopier(Module):
    """Copies ROM contents into SRAM through DMI pointers, paying the DMI latency."""

    def __init__(self, parent, name: str, src: int, dst: int, size: int):
        super().__init__(parent, name)
        self.socket = InitiatorSocket(self, "socket", invalidate_direct_mem_ptr=self._invalidate)
        self.cache = DmiCache()
        self.src, self.dst, self.size = src, dst, size
        self.spawn(self.run())

    def _invalidate(self, start: int, end: int) -> None:
        self.cache.invalidate(start, end)

    async def run(self) -> None:
        for addr in (self.src, self.dst):
            region = self.socket.get_direct_mem_ptr(GenericPayload(READ, addr, length=1))
            if region is not None:
                self.cache.add(region)
        rd = self.cache.lookup(self.src, self.size)
        wr = self.cache.lookup(self.dst, self.size, write=True)
        wr.view(self.dst, self.size)[:] = rd.view(self.src, self.size)
        begin = self.sim.now
        await self.sim.wait(rd.read_latency + wr.write_latency)
        self.trace_span("dmi_copy", begin, self.sim.now, bytes=self.size)


def build(seed: int) -> tuple[Simulator, dict]:
    sim = Simulator(seed=seed)
    sim.global_quantum = 200 * NS
    top = Module(sim, "demo")
    clk = Clock(sim, "demo.clk", 400e6)
    xbar = Router(top, "xbar", clock=clk, latency=2, width=8)
    sram = Memory(top, "sram", 256 * 1024, clock=clk, latency=1, width=8)
    rom = Memory(top, "rom", 8 * 1024, clock=clk, latency=2, width=4, read_only=True)
    rom.load(0, bytes(range(256)) * 32)
    xbar.map(0x1C00_0000, sram.size, sram.socket)
    xbar.map(0x1A00_0000, rom.size, rom.socket)
    streamer = StreamingInitiator(top, "streamer", 0x1C00_0000, count=2000, burst=64)
    copier = DmiCopier(top, "copier", 0x1A00_0000, 0x1C03_0000, 8 * 1024)
    streamer.socket.bind(xbar.target_socket)
    copier.socket.bind(xbar.target_socket)
    return sim, {"sram": sram, "streamer": streamer, "copier": copier}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="tlm-cosim kernel demo")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--trace", type=Path, help="write a Chrome/Perfetto trace here")
    args = ap.parse_args(argv)
    sim, parts = build(args.seed)
    if args.trace:
        sim.tracer = Tracer(sim)
    end = sim.run()
    parts["sram"].invalidate_dmi()
    from .report import output_console, table as summary_table
    console = output_console()     # piped: wide enough that no path is cut
    table = summary_table(f"tlm-cosim kernel demo (seed {args.seed})", ["path", "statistic", "value"], left=2)
    for path, values in sim.stats.as_dict().items():
        for k, v in values.items():
            table.add_row(path, k, f"{v:,}")
    console.print(table)
    ok = parts["streamer"].mismatches == 0 and bytes(parts["sram"].array[0x30000:0x30100]) == bytes(range(256))
    console.print(f"simulated time: {fmt_time(end)}; data check: {'passed' if ok else 'FAILED'}")
    held = [f"0x{r.start:08x}-0x{r.end:08x}" for r in parts["copier"].cache.regions]
    console.print(f"DMI regions the copier still holds after the SRAM revoked its own: {', '.join(held)}")
    for err in sim.errors:
        console.print(f"TLM error response: {err}")
    if args.trace:
        with args.trace.open("w") as f:
            write_chrome_trace(sim.tracer.records, f, "demo")
        console.print(f"trace written to {args.trace}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
