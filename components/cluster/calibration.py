"""Calibration of the cluster kernel timing (:mod:`.timing`): the per-core matmul rates and
the FP32 FFT butterfly cycles are fitted so that the calibration workloads, planned by the
kernels (:mod:`.kernels`) and timed by :func:`.timing.estimate_cycles`, reproduce the
marsellus.md figures (docs/cluster.md, "What is calibrated").

``python -m components.cluster.calibration`` prints the calibration table; ``--write``
stores freshly fitted rates in ``kernel_timing.yaml``.
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .event_unit import EventUnitParams
from .kernels import KERNELS, job_steps
from .timing import BITS, ISAS, TIMING_FILE, KernelTiming, estimate_cycles, load_timing, write_fitted

__all__ = ["CalibrationRow", "calibrate", "calibration_table", "main"]


@dataclass(frozen=True)
class CalibrationRow:
    """One calibration figure: the fact (as marsellus.md states it), its target in
    ops/cycle at the reference frequency, and what the model gives."""

    key: str
    what: str
    fact: str
    target: float          # ops (or flops) per cycle
    model: float

    @property
    def error(self) -> float:
        return self.model / self.target - 1.0


def _targets(data: dict) -> list[tuple[str, str, str, float, str, int]]:
    """(key, description, fact text, target ops/cycle, isa, bits) of each matmul figure."""
    f = data["facts"]
    base = f["matmul_int8_xpulp_gops"] * 1e9 / float(data["reference_frequency_hz"])
    ml = f["macload_speedup_int8"]
    out = [("xpulp/8", "int8 matmul, plain Xpulp", f"{f['matmul_int8_xpulp_gops']} Gop/s", base, "xpulp", 8),
           ("xpulpnn/8", "int8 matmul, XpulpNN (same SIMD as Xpulp at 8 bit)", "= xpulp/8", base, "xpulpnn", 8),
           ("macload/8", "int8 matmul, MAC&LOAD", f"+{round((ml - 1) * 100)} %", base * ml, "macload", 8)]
    for b in (4, 2):
        s = f["macload_speedup_vs_int8_xpulp"][b]
        red = f["xpulpnn_instruction_reduction"][b]
        out.append((f"macload/{b}", f"int{b} matmul, MAC&LOAD", f"{s}x baseline", base * s, "macload", b))
        # assumption: MAC&LOAD brings the same gain at every precision
        out.append((f"xpulpnn/{b}", f"int{b} matmul, XpulpNN without MAC&LOAD",
                    f"{s}x / {ml} (derived)", base * s / ml, "xpulpnn", b))
        # assumption: equal IPC, so throughput scales with the instruction count
        out.append((f"xpulp/{b}", f"int{b} matmul, plain Xpulp", f"{red:g}x more instr. (derived)",
                    base * s / ml / red, "xpulp", b))
    return out


def _matmul_throughput(tm: KernelTiming, eu: EventUnitParams, wl: dict, isa: str, bits: int) -> float:
    k = KERNELS["matmul"]
    args = k.normalize({"m": wl["m"], "n": wl["n"], "k": wl["k"], "bits": bits, "isa": isa,
                        "a": 0, "w": 0x8000, "out": 0x10000})
    steps = job_steps(k, args, wl["cores"], tm)
    return k.total_ops(args) / estimate_cycles(steps, tm, eu)


def _fft_throughput(tm: KernelTiming, eu: EventUnitParams, wl: dict) -> float:
    k = KERNELS["fft"]
    args = k.normalize({"n": wl["n"], "precision": wl["precision"], "src": 0, "dst": 0x8000,
                        "twiddles": 0x10000})
    steps = job_steps(k, args, wl["cores"], tm)
    return k.total_ops(args) / estimate_cycles(steps, tm, eu)


def _solve(f: Callable[[float], float], target: float, increasing: bool,
           lo: float = 1e-4, hi: float = 1e4) -> float:
    """x in [lo, hi] with f(x) == target for f monotone there (geometric bisection)."""
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        v = f(mid)
        if (v < target) == increasing:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1 + 1e-12:
            break
    return math.sqrt(lo * hi)


def calibrate(tm: KernelTiming | None = None, eu: EventUnitParams | None = None) -> dict:
    """Fit the per-core rates to the facts; returns the ``fitted`` mapping of the data file."""
    tm = tm or load_timing()
    eu = eu or EventUnitParams()
    data = tm.data
    wl = data["workloads"]
    rates: dict[tuple[str, int], float] = {}
    for _key, _what, _fact, target, isa, bits in _targets(data):
        rates[(isa, bits)] = _solve(
            lambda r: _matmul_throughput(tm.with_fitted({(isa, bits): r}), eu, wl["matmul"], isa, bits),
            target, increasing=True)
    fft_target = float(data["facts"]["fft_2048_flop_per_cycle"])
    # a core issues at most one FP op per cycle: a butterfly takes at least fp_ops cycles
    # (below that the FPU-sharing term would not be monotone)
    c0 = _solve(lambda c: _fft_throughput(tm.with_fitted(fft_c0=c), eu, wl["fft"]), fft_target,
                increasing=False, lo=float(data["fft"]["fp_ops_per_butterfly"]))
    return {"matmul_macs_per_cycle": {isa: {b: round(rates[(isa, b)], 6) for b in BITS} for isa in ISAS},
            "fft_butterfly_cycles_fp32": round(c0, 6)}


def calibration_table(tm: KernelTiming | None = None, eu: EventUnitParams | None = None) -> list[CalibrationRow]:
    """Each calibration figure with what the (stored) model gives for it analytically."""
    tm = tm or load_timing()
    eu = eu or EventUnitParams()
    data = tm.data
    wl = data["workloads"]
    rows = [CalibrationRow(key, what, fact, target, _matmul_throughput(tm, eu, wl["matmul"], isa, bits))
            for key, what, fact, target, isa, bits in _targets(data)]
    f = data["facts"]["fft_2048_flop_per_cycle"]
    rows.append(CalibrationRow("fft/fp32", "2048-point FP32 FFT, 16 cores", f"{f} flop/cycle",
                               float(f), _fft_throughput(tm, eu, wl["fft"])))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Calibrate / show the cluster kernel timing model")
    ap.add_argument("--write", action="store_true", help="store the fitted rates in the data file")
    ap.add_argument("--file", type=Path, default=TIMING_FILE)
    args = ap.parse_args(argv)
    tm = load_timing(args.file)
    if args.write:
        write_fitted(args.file, calibrate(tm))
        tm = load_timing(args.file)
    hz = tm.reference_hz
    print(f"{'figure':12s} {'fact':28s} {'target op/c':>11s} {'model op/c':>11s} "
          f"{'model Gop/s':>11s} {'error':>8s}")
    for r in calibration_table(tm):
        print(f"{r.key:12s} {r.fact:28s} {r.target:11.3f} {r.model:11.3f} "
              f"{r.model * hz / 1e9:11.3f} {r.error * 100:7.3f}%")
    for isa in ISAS:
        print(f"rate {isa:8s}: " + ", ".join(f"{b}-bit {tm.rates[(isa, b)]:.4f} MAC/cycle/core" for b in BITS))
    print(f"FFT FP32 butterfly: {tm.fft_c0:.3f} cycles (1 core, no FPU sharing)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
