"""Core-kernel costs measured on our ISS: firmware/bench_kernels.c and bench_pool.c
(RV32IMC) on the FC.

The firmware runs each kernel's inner loop on N and 2N pixels between marker lines; the
difference of the two intervals (stdout line times) is N pixels' worth of inner loop in
core cycles (ISS: instructions x CPI plus stalls). From it:

* ``add_requant`` at 8/8/8 and 4/4/4 bits: cycles per element = base + bits x per-bit,
  solved for per-bit (unpack/pack of one channel-bit) and base (requantisation);
* ``avgpool`` accumulate at 8 bits: minus 8 x per-bit, the add per element;
* an int8 dot product: scalar RV32IMC cycles per MAC;
* ``maxpool`` over 3x3 windows: per tap (a load and a compare), the element's cost / 9;
* ``leaky``: int8 LeakyRelu (a multiplier per side of the zero point, a shift rounding
  half to even, clip) per element;
* ``lut``: an int8 table look-up per element.

The paper gives the cluster's plain-Xpulp int8 matmul rate (kernel_timing.yaml, fitted
``xpulp`` 8-bit MACs/cycle/core); ``speedup`` = that rate x the scalar cycles per MAC is
the Xpulp SIMD speed-up over RV32IMC, applied to every per-element cost (assumption,
docs/cluster.md: the bit-plane loops vectorise like the dot product, 4 lanes of 8 bits,
hardware loops and post-increment loads). ``python -m cosim.kernel_costs``
prints the derivation; ``--write`` stores it in components/cluster/kernel_timing.yaml.
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ELF = ROOT / "firmware" / "build" / "bench_kernels.elf"
ELF_POOL = ROOT / "firmware" / "build" / "bench_pool.elf"
#: pixels of the first run (the firmware's NMAX / 2) and channels per pixel (one word)
N_PIXELS, CHANNELS = 8, 32
#: the configurations of each program, in the order it runs them
PROGRAMS = {ELF: ("add_requant 8/8/8", "add_requant 4/4/4", "avgpool 8", "dot int8"),
            ELF_POOL: ("maxpool 3x3", "leaky int8", "lut int8")}
CONFIGS = tuple(c for cs in PROGRAMS.values() for c in cs)


def measure(elf: Path | None = None) -> dict[str, float]:
    """FC cycles per element (pixel x channel, or MAC) of each configuration of ``elf``'s
    (default: of every program's, i.e. CONFIGS)."""
    if elf is None:
        return {k: v for e in PROGRAMS for k, v in measure(e).items()}
    configs = PROGRAMS[elf]
    from tlm import Clock, Module, Router, Simulator
    from components.soc_core import SocCore
    from components.stdout import Stdout

    from components.marsellus.facts import IRQ_LINES, MEMORY_MAP as MM
    sim = Simulator(seed=1)
    top = Module(sim, "soc")
    clock = Clock(sim, "soc.clock", 400e6)
    xbar = Router(top, "xbar", clock=clock, latency=1)
    fc = SocCore(top, "fc", clock=clock, elf=elf, params={"local_regions": ["l2_private"], "on_fault": "stop"},
                 memory_map=MM, irq_lines=IRQ_LINES)
    fc.socket.bind(xbar.target_socket)
    out = Stdout(top, "stdout", clock=clock, region=MM["stdout"])
    xbar.map(MM["stdout"].base, MM["stdout"].size, out.target_socket)
    fc.connect_exit(out)
    sim.run()
    if fc.exit_code != 0 or fc.fault is not None:
        raise RuntimeError(f"{elf.name}: exit {fc.exit_code}, fault {fc.fault}")
    times = [ln.time for ln in out.lines]
    if len(times) != 3 * len(configs):
        raise RuntimeError(f"{elf.name}: {len(times)} marker lines, expected {3 * len(configs)}")
    period = clock.period
    res = {}
    for i, name in enumerate(configs):
        t0, t1, t2 = times[3 * i:3 * i + 3]
        res[name] = ((t2 - t1) - (t1 - t0)) / period / (N_PIXELS * CHANNELS)
    return res


def derive(meas: dict[str, float], xpulp_int8_macs_per_cycle: float) -> dict[str, float]:
    """The kernel_timing.yaml ``eltwise``/``pool`` costs from the measurement."""
    per_bit = (meas["add_requant 8/8/8"] - meas["add_requant 4/4/4"]) / 12   # 24 - 12 bits
    base = meas["add_requant 8/8/8"] - 24 * per_bit
    acc = meas["avgpool 8"] - 8 * per_bit
    speedup = xpulp_int8_macs_per_cycle * meas["dot int8"]
    tap = meas["maxpool 3x3"] / 9
    return {"rv32imc_bit_cycles": per_bit, "rv32imc_requant_cycles": base,
            "rv32imc_accumulate_cycles": acc, "rv32imc_cycles_per_mac": meas["dot int8"],
            "rv32imc_max_cycles_per_tap": tap, "rv32imc_leaky_cycles": meas["leaky int8"],
            "xpulp_speedup": speedup, "bit_cycles": per_bit / speedup,
            "requant_cycles_per_element": base / speedup,
            "accumulate_cycles_per_element": acc / speedup,
            "rv32imc_lut_cycles": meas["lut int8"],
            "max_cycles_per_tap": tap / speedup, "leaky_cycles_per_element": meas["leaky int8"] / speedup,
            "lut_cycles_per_element": meas["lut int8"] / speedup}


def current() -> dict[str, float]:
    from components.cluster.timing import load_timing
    tm = load_timing()
    return derive(measure(), tm.rates[("xpulp", 8)])


def _write(path: Path, d: dict[str, float]) -> None:
    text = path.read_text()
    for key in ("bit_cycles", "requant_cycles_per_element", "accumulate_cycles_per_element",
                "max_cycles_per_tap", "leaky_cycles_per_element", "lut_cycles_per_element"):
        text, n = re.subn(rf"(?m)^(\s+{key}: )[0-9.]+", rf"\g<1>{round(d[key], 4)}", text)
        if n != 1:
            raise ValueError(f"{path}: no single '{key}:' line")
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Core-kernel costs from firmware on the ISS")
    ap.add_argument("--write", action="store_true", help="store them in kernel_timing.yaml")
    args = ap.parse_args(argv)
    d = current()
    for k, v in d.items():
        print(f"{k:32s} {v:9.4f}")
    if args.write:
        from components.cluster.timing import TIMING_FILE
        _write(TIMING_FILE, d)
        print(f"wrote {TIMING_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
