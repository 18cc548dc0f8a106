"""Core-kernel costs measured on our ISS: firmware/bench_kernels.c, bench_pool.c and
bench_core_kernels.c (RV32IMC) on the FC.

The firmware runs each kernel's inner loop on N and 2N elements between marker lines; the
difference of the two intervals (stdout line times) is N elements' worth of inner loop in
core cycles (ISS: instructions x CPI plus stalls). From bench_kernels.c:

* ``add_requant`` at 8/8/8 and 4/4/4 bits: cycles per element = base + bits x per-bit,
  solved for per-bit (unpack/pack of one channel-bit) and base (requantisation);
* ``avgpool`` accumulate at 8 bits: minus 8 x per-bit, the add per element;
* an int8 dot product: scalar RV32IMC cycles per MAC;

from bench_pool.c:

* ``maxpool`` over 3x3 windows: per tap (a load and a compare), the element's cost / 9;
* ``leaky``: int8 LeakyRelu (a multiplier per side of the zero point, a shift rounding
  half to even, clip) per element;
* ``lut``: an int8 table look-up per element.

The paper gives the cluster's plain-Xpulp int8 matmul rate (kernel_timing.yaml, fitted
``xpulp`` 8-bit MACs/cycle/core); ``speedup`` = that rate x the scalar cycles per MAC is
the Xpulp SIMD speed-up over RV32IMC, applied to every bit-plane and bench_pool per-element cost
(assumption, docs/cluster.md: the bit-plane loops vectorise like the dot product, 4 lanes
of 8 bits, hardware loops and post-increment loads).

From bench_core_kernels.c (:func:`measure_core`, :func:`derive_core`): im2col, conv and
pool requantisation, int8 add, fc per MAC and per output, and each call's fixed set-up.
These loops get per-loop factors: their instruction ratio RV32IMC / Xpulp (table
``iss_loops`` of kernel_timing.yaml) times the cycles-per-instruction ratio the dot
product shows. ``python -m cosim.kernel_costs`` prints the derivation; ``--write`` stores
it in components/cluster/kernel_timing.yaml.
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

from tlm.files import read_text

ROOT = Path(__file__).resolve().parents[1]
ELF = ROOT / "firmware" / "build" / "bench_kernels.elf"
ELF_POOL = ROOT / "firmware" / "build" / "bench_pool.elf"
#: pixels of the first run (the firmware's NMAX / 2) and channels per pixel (one word)
N_PIXELS, CHANNELS = 8, 32
#: the configurations of each program, in the order it runs them
PROGRAMS = {ELF: ("add_requant 8/8/8", "add_requant 4/4/4", "avgpool 8", "dot int8"),
            ELF_POOL: ("maxpool 3x3", "leaky int8", "lut int8")}
CONFIGS = tuple(c for cs in PROGRAMS.values() for c in cs)


def marker_times(elf: Path, markers: int) -> tuple[list[int], int, float]:
    """Run ``elf`` on the FC alone; returns the stdout lines' times (ps), the clock period (ps)
    and the core's cycles per instruction. ``markers`` lines are expected."""
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
    if len(times) != markers:
        raise RuntimeError(f"{elf.name}: {len(times)} marker lines, expected {markers}")
    return times, clock.period, float(fc.params.cpi)


def intervals(times: list[int], period: float, i: int) -> tuple[float, float]:
    """Cycles of configuration ``i``'s two runs (N, then 2N elements) between its markers."""
    t0, t1, t2 = times[3 * i:3 * i + 3]
    return (t1 - t0) / period, (t2 - t1) / period


def measure(elf: Path | None = None) -> dict[str, float]:
    """FC cycles per element (pixel x channel, or MAC) of each configuration of ``elf``'s
    (default: of every program's, i.e. CONFIGS)."""
    if elf is None:
        return {k: v for e in PROGRAMS for k, v in measure(e).items()}
    configs = PROGRAMS[elf]
    times, period, _ = marker_times(elf, 3 * len(configs))
    res = {}
    for i, name in enumerate(configs):
        a, b = intervals(times, period, i)
        res[name] = (b - a) / (N_PIXELS * CHANNELS)
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
            "xpulp_speedup": speedup, "bit_cycles": per_bit / speedup,
            "requant_cycles_per_element": base / speedup,
            "accumulate_cycles_per_element": acc / speedup,
            "rv32imc_max_cycles_per_tap": tap, "rv32imc_leaky_cycles": meas["leaky int8"],
            "rv32imc_lut_cycles": meas["lut int8"],
            "max_cycles_per_tap": tap / speedup, "leaky_cycles_per_element": meas["leaky int8"] / speedup,
            "lut_cycles_per_element": meas["lut int8"] / speedup}


def current() -> dict[str, float]:
    from components.cluster.timing import load_timing
    tm = load_timing()
    return derive(measure(), tm.rates[("xpulp", 8)])


def _write(path: Path, d: dict[str, float]) -> None:
    text = read_text(path, "package_data")
    for key in ("bit_cycles", "requant_cycles_per_element", "accumulate_cycles_per_element",
                "max_cycles_per_tap", "leaky_cycles_per_element", "lut_cycles_per_element"):
        text, n = re.subn(rf"(?m)^(\s+{key}: )[0-9.]+", rf"\g<1>{round(d[key], 4)}", text)
        if n != 1:
            raise ValueError(f"{path}: no single '{key}:' line")
    path.write_text(text)


# ----- the int8 core kernels: firmware/bench_core_kernels.c -------------------------------------
CORE_ELF = ROOT / "firmware" / "build" / "bench_core_kernels.elf"
#: configurations of bench_core_kernels.c in order, with the elements the second run adds
#: over the first (N = 8): output pixels x patch bytes, outputs, elements, MACs, outputs
CORE_CONFIGS = {"empty": 1, "im2col": 8 * 9 * 32, "conv_requant": 8 * 16, "add_int8": 8 * 16,
                "pool_requant": 8 * 16, "fc_mac": 2 * 8 * 32, "fc_output": 2 * 8, "dot": 8 * 16}
#: MACs of each output of the "fc_output" configuration (K = 32)
FC_OUTPUT_K = 32


def measure_core(elf: Path = CORE_ELF) -> dict[str, dict[str, float]]:
    """Per configuration of CORE_CONFIGS: ``per``, FC cycles per element; ``fixed``, the
    cycles of one call beyond its elements (set-up, prologue) without the markers' own cost."""
    times, period, cpi = marker_times(elf, 3 * len(CORE_CONFIGS))
    res: dict[str, dict[str, float]] = {}
    empty = intervals(times, period, 0)[0]
    for i, (name, count) in enumerate(CORE_CONFIGS.items()):
        a, b = intervals(times, period, i)
        res[name] = {"per": (b - a) / count, "fixed": (2 * a - b) - empty, "cpi": cpi}
    return res


def derive_core(meas: dict[str, dict[str, float]], xpulp_int8_macs_per_cycle: float,
                counts: dict[str, dict[str, float]], dot: float) -> dict[str, float]:
    """The kernel_timing.yaml costs of the int8 core kernels from the measurement.

    ``counts[loop]`` gives the instructions per element of the compiled RV32IMC loop
    (``rv32imc``, from its disassembly) and of the same loop written for Xpulp (``xpulp``).
    A loop runs ``rv32imc / xpulp`` times fewer instructions on Xpulp; ``cpi_ratio`` corrects
    for the cluster's cycles per instruction, fixed by the paper's int8 matmul rate: the
    dot product's measured cycles per MAC (``dot``, from bench_kernels.c: the speed-up the
    bit-plane costs use) x that rate, over its instruction ratio."""
    speedup = xpulp_int8_macs_per_cycle * dot
    cpi_ratio = speedup / (counts["dot"]["rv32imc"] / counts["dot"]["xpulp"])
    d: dict[str, float] = {"xpulp_speedup": speedup, "cpi_ratio": cpi_ratio}
    for loop in ("im2col", "conv_requant", "add_int8", "pool_requant", "fc_mac", "fc_output"):
        c = counts[loop]
        d[f"{loop}_factor"] = c["rv32imc"] / c["xpulp"] * cpi_ratio
    per = {k: v["per"] for k, v in meas.items()}
    fc_out_raw = per["fc_output"] - FC_OUTPUT_K * per["fc_mac"]
    d.update({
        "rv32imc_im2col_per_byte": per["im2col"], "rv32imc_conv_requant": per["conv_requant"],
        "rv32imc_add_int8": per["add_int8"], "rv32imc_pool_requant": per["pool_requant"],
        "rv32imc_fc_per_mac": per["fc_mac"], "rv32imc_fc_per_output": fc_out_raw,
        "rv32imc_dot_per_mac": dot,
        "rv32imc_row_fixed": meas["im2col"]["fixed"] + meas["conv_requant"]["fixed"],
        "im2col_cycles_per_byte": per["im2col"] / d["im2col_factor"],
        "conv_requant_cycles_per_output": per["conv_requant"] / d["conv_requant_factor"],
        # straight-line set-up code (call, prologue, loop entry): no loop feature applies
        "row_overhead_cycles": (meas["im2col"]["fixed"] + meas["conv_requant"]["fixed"]) / cpi_ratio,
        "add_int8_cycles_per_element": per["add_int8"] / d["add_int8_factor"],
        "pool_requant_cycles_per_output": per["pool_requant"] / d["pool_requant_factor"],
        "fc_output_overhead_cycles": fc_out_raw / d["fc_output_factor"],
    })
    fc_mac = per["fc_mac"] / d["fc_mac_factor"]
    d["fc_rate_vs_matmul_int8_xpulp"] = 1.0 / (xpulp_int8_macs_per_cycle * fc_mac)
    return d


def current_core() -> dict[str, float]:
    from components.cluster.timing import load_timing
    tm = load_timing()
    return derive_core(measure_core(), tm.rates[("xpulp", 8)], tm.data["iss_loops"],
                       measure()["dot int8"])


#: (section, key) in kernel_timing.yaml <- derive_core value, rounding, raw-value comment
CORE_KEYS = (
    ("conv", "im2col_cycles_per_byte", "im2col_cycles_per_byte", 4,
     "RV32IMC {rv32imc_im2col_per_byte:.3f} / {im2col_factor:.3f}"),
    ("conv", "requant_cycles_per_output", "conv_requant_cycles_per_output", 3,
     "RV32IMC {rv32imc_conv_requant:.3f} / {conv_requant_factor:.3f}"),
    ("conv", "row_overhead_cycles", "row_overhead_cycles", 1,
     "RV32IMC {rv32imc_row_fixed:.0f} (im2col + requant set-up) / {cpi_ratio:.3f}"),
    ("eltwise", "add_int8_cycles_per_element", "add_int8_cycles_per_element", 3,
     "RV32IMC {rv32imc_add_int8:.3f} / {add_int8_factor:.3f}"),
    ("pool", "requant_cycles_per_output", "pool_requant_cycles_per_output", 3,
     "RV32IMC {rv32imc_pool_requant:.3f} / {pool_requant_factor:.3f}"),
    ("fc", "rate_vs_matmul_int8_xpulp", "fc_rate_vs_matmul_int8_xpulp", 4,
     "RV32IMC {rv32imc_fc_per_mac:.3f}/MAC / {fc_mac_factor:.3f} vs the matmul rate"),
    ("fc", "output_overhead_cycles", "fc_output_overhead_cycles", 3,
     "RV32IMC {rv32imc_fc_per_output:.3f} / {fc_output_factor:.3f}"),
)


def _write_core(path: Path, d: dict[str, float]) -> None:
    """Set each CORE_KEYS value (and its comment) inside its top-level section."""
    text = read_text(path, "package_data")
    for section, key, name, nd, note in CORE_KEYS:
        sec = re.search(rf"(?ms)^{section}:.*?(?=^\S|\Z)", text)
        if sec is None:
            raise ValueError(f"{path}: no section '{section}:'")
        body, n = re.subn(rf"(?m)^(\s+{key}: )[0-9.]+.*$",
                          lambda m: f"{m.group(1)}{round(d[name], nd)}   # measured: " + note.format(**d),
                          sec.group(0))
        if n != 1:
            raise ValueError(f"{path}: no single '{key}:' line in section '{section}'")
        text = text[:sec.start()] + body + text[sec.end():]
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Core-kernel costs from firmware on the ISS")
    ap.add_argument("--write", action="store_true", help="store them in kernel_timing.yaml")
    args = ap.parse_args(argv)
    d, dc = current(), current_core()
    for k, v in {**d, **dc}.items():
        print(f"{k:32s} {v:9.4f}")
    if args.write:
        from components.cluster.timing import TIMING_FILE
        _write(TIMING_FILE, d)
        _write_core(TIMING_FILE, dc)
        print(f"wrote {TIMING_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
