"""Throughput of the SOC core: ``python bench/soc_core.py``.

Runs the committed benchmark firmware on a small platform (router, stdout, SOC timer) and
prints simulated instructions per wall-clock second for a compute-only loop (at two
quantum sizes) and an MMIO-heavy loop (with and without ``sync_on_io``), plus raw unicorn
on the same compute code without any hook, for reference. Not a test: numbers depend on
the machine (docs/firmware.md keeps the last measured table).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tlm import Clock, Module, Router, Simulator  # noqa: E402

from components.marsellus.facts import IRQ_LINES, MEMORY_MAP as MM  # noqa: E402
from components.soc_core import SocCore  # noqa: E402

BUILD = Path(__file__).resolve().parents[1] / "firmware" / "build"


def run(prog: str, **params) -> tuple[float, SocCore, Simulator]:
    from components.soc_timer import SocTimer
    from components.stdout import Stdout

    sim = Simulator(seed=1)
    top = Module(sim, "soc")
    clk = Clock(sim, "soc.clock", 400e6)
    xbar = Router(top, "xbar", clock=clk, latency=1)
    so = Stdout(top, "stdout", clock=clk, region=MM["stdout"])
    xbar.map(MM["stdout"].base, MM["stdout"].size, so.target_socket)
    tm = SocTimer(top, "timer", clock=clk, region=MM["timer"])
    xbar.map(MM["timer"].base, MM["timer"].size, tm.target_socket)
    fc = SocCore(top, "fc", clock=clk, elf=BUILD / f"{prog}.elf", memory_map=MM,
                 irq_lines=IRQ_LINES,
                 params={"local_regions": ["l2_private"], **params})
    fc.socket.bind(xbar.target_socket)
    fc.connect_exit(so)
    t0 = time.perf_counter()
    sim.run()
    return time.perf_counter() - t0, fc, sim


def raw_unicorn(prog: str, quantum: int = 100_000) -> tuple[float, int]:
    """The same ELF on bare unicorn (no hooks; the final print faults out of RAM)."""
    import unicorn as uc
    from unicorn import riscv_const as rv

    from components.soc_core.elf import load_elf

    img = load_elf(BUILD / f"{prog}.elf")
    u = uc.Uc(uc.UC_ARCH_RISCV, uc.UC_MODE_RISCV32)
    r = MM["l2_private"]
    u.mem_map(r.base, r.size)
    for seg in img.segments:
        if seg.data:
            u.mem_write(seg.address, seg.data)
    pc, n = img.entry, 0
    t0 = time.perf_counter()
    while True:
        try:
            u.emu_start(pc, 1, 0, quantum)
        except uc.UcError:
            break
        pc = u.reg_read(rv.UC_RISCV_REG_PC)
        n += quantum
    return time.perf_counter() - t0, n


def main() -> None:
    rows = []
    cases = [("compute loop, 1 us quantum (default)", "bench_compute", {}),
             ("compute loop, 10 us quantum", "bench_compute", {"quantum": "10 us"}),
             ("MMIO loop, sync_on_io (default)", "bench_mmio", {}),
             ("MMIO loop, loosely timed (sync_on_io=false)", "bench_mmio", {"sync_on_io": False})]
    cases += [(f"{label} [python counter]", prog, {**params, "counting": "python"})
              for label, prog, params in cases]
    for label, prog, params in cases:
        wall, fc, sim = run(prog, **params)
        st = sim.stats.as_dict()[fc.path]
        rows.append((label, fc.instret, st["mmio_accesses"], wall))
    wall, n = raw_unicorn("bench_compute")
    print(f"{'workload':60} {'instr':>10} {'MMIO':>7} {'wall s':>8} {'M instr/s':>10} {'k MMIO/s':>9}")
    for label, n_i, n_m, w in rows:
        print(f"{label:60} {n_i:10d} {n_m:7d} {w:8.3f} {n_i / w / 1e6:10.2f} {n_m / w / 1e3:9.1f}")
    print(f"{'raw unicorn, same compute code, no hooks':60} {n:10d} {'-':>7} {wall:8.3f} "
          f"{n / wall / 1e6:10.2f} {'-':>9}")


if __name__ == "__main__":
    main()
