"""The calibrated timing model of the cluster kernels.

:class:`KernelTiming` turns the work of one chunk into compute cycles, from the constants in
``kernel_timing.yaml`` (facts from marsellus.md, documented estimates, and fitted per-core
rates). :func:`estimate_cycles` gives the contention-free duration of a whole kernel from
its plan (the simulation in TCDM burst mode with no conflict factor reproduces it), and
:func:`calibrate` fits the per-core rates so that the calibration workloads reproduce the
facts. ``python -m components.cluster.timing`` prints the calibration table; ``--write``
stores freshly fitted rates in the data file.
"""
from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import yaml

from tlm.files import read_text
from tlm.yamlfast import load_file

if TYPE_CHECKING:
    from .core import Step
    from .event_unit import EventUnitParams

__all__ = ["TIMING_FILE", "ISAS", "KernelTiming", "estimate_cycles", "calibrate",
           "CalibrationRow", "calibration_table", "load_timing"]

TIMING_FILE = Path(__file__).with_name("kernel_timing.yaml")
#: Instruction-set variants of the integer kernels: plain Xpulp (sub-byte operands unpacked
#: to 8 bit in software), XpulpNN (nibble/crumb SIMD dot products), XpulpNN + MAC&LOAD.
ISAS = ("xpulp", "xpulpnn", "macload")
BITS = (8, 4, 2)


class TimingDataError(ValueError):
    """The timing data file is malformed (names the file and key)."""


class KernelTiming:
    """Compute cycles of kernel chunks. Build with :func:`load_timing` (cached per file)."""

    def __init__(self, data: dict[str, Any], source: str = "<data>"):
        self.data = data
        self.source = source
        try:
            self.reference_hz = float(data["reference_frequency_hz"])
            job = data["job"]
            self.dispatch_cycles = float(job["dispatch_cycles"])
            self.setup_cycles = float(job["setup_cycles"])
            self.eoj_cycles = float(job["eoj_cycles"])
            self.issue_ratio = float(job["issue_ratio"])
            self.mm = data["matmul"]
            self.cv = data["conv"]
            self.ew = data["eltwise"]
            self.pl = data["pool"]
            self.fcp = data["fc"]
            self.ft = data["fft"]
            fitted = data["fitted"]
            rates = fitted["matmul_macs_per_cycle"]
            self.rates = {(isa, int(b)): float(rates[isa][b]) for isa in ISAS for b in BITS}
            self.fft_c0 = float(fitted["fft_butterfly_cycles_fp32"])
        except (KeyError, TypeError) as e:
            raise TimingDataError(f"{source}: missing or malformed key {e}") from None

    def with_fitted(self, rates: dict[tuple[str, int], float] | None = None,
                    fft_c0: float | None = None) -> "KernelTiming":
        """A copy with other fitted constants (used while calibrating)."""
        t = KernelTiming(self.data, self.source)
        if rates:
            t.rates = {**self.rates, **rates}
        if fft_c0 is not None:
            t.fft_c0 = fft_c0
        return t

    # ----- matmul / conv / fc ------------------------------------------------------------------
    def matmul_rate(self, isa: str, bits: int) -> float:
        """MACs per cycle of one core."""
        r = self.rates[(isa, bits)]
        if not r > 0:
            raise TimingDataError(f"{self.source}: fitted rate of {isa}/{bits}-bit is {r}; run "
                                  "`python -m components.cluster.timing --write`")
        return r

    def matmul_chunk(self, rows: int, n: int, k: int, bits: int, isa: str) -> float:
        return rows * n * k / self.matmul_rate(isa, bits) + self.mm["chunk_overhead_cycles"]

    def conv_row(self, wo: int, cout: int, patch: int, isa: str) -> float:
        """One output row: im2col of ``wo`` patches of ``patch`` bytes, the matmul, and the
        requantisation of ``wo * cout`` outputs."""
        cv = self.cv
        return (wo * patch * cv["im2col_cycles_per_byte"]
                + wo * cout * patch / self.matmul_rate(isa, 8)
                + wo * cout * cv["requant_cycles_per_output"] + cv["row_overhead_cycles"])

    def fc_chunk(self, outputs: int, k: int) -> float:
        rate = self.matmul_rate("xpulp", 8) * self.fcp["rate_vs_matmul_int8_xpulp"]
        return outputs * k / rate + outputs * self.fcp["output_overhead_cycles"]

    # ----- element-wise and pooling ------------------------------------------------------------
    def add_int8_chunk(self, elements: int) -> float:
        ew = self.ew
        return elements * ew["add_int8_cycles_per_element"] + ew["chunk_overhead_cycles"]

    def add_bitplane_chunk(self, elements: int, i1: int, i2: int, o: int) -> float:
        ew = self.ew
        return (elements * ((i1 + i2 + o) * ew["bit_cycles"] + ew["requant_cycles_per_element"])
                + ew["chunk_overhead_cycles"])

    def pool_chunk(self, pixels: int, channels: int, bits: int) -> float:
        pl = self.pl
        per = bits * self.ew["bit_cycles"] + pl["accumulate_cycles_per_element"]
        return (pixels * channels * per + channels * pl["requant_cycles_per_output"]
                + pl["chunk_overhead_cycles"])

    # ----- FFT ---------------------------------------------------------------------------------
    def fft_butterfly(self, cores: int, precision: str) -> float:
        """Cycles of one radix-2 butterfly on one core when ``cores`` run: the FP32 base
        (fitted), /fp16_speedup for FP16, plus stalls on FPUs shared by two active cores."""
        ft = self.ft
        if not self.fft_c0 > 0:
            raise TimingDataError(f"{self.source}: fitted FFT butterfly cycles missing; run "
                                  "`python -m components.cluster.timing --write`")
        c0 = self.fft_c0 / (ft["fp16_speedup"] if precision == "fp16" else 1.0)
        nf = ft["n_fpus"]
        shared = max(0, 2 * (cores - nf)) / cores if cores > nf else 0.0
        fp = ft["fp_ops_per_butterfly"]
        return c0 + fp * shared * ft["fpu_conflict_stall"] * (fp / c0)

    def fft_twiddle_init(self, entries: int) -> float:
        """Computing and storing ``entries`` twiddle factors (sin/cos by polynomial)."""
        ft = self.ft
        return entries * ft["twiddle_cycles_per_entry"] + ft["stage_overhead_cycles"]

    def fft_stage(self, butterflies: int, cores: int, precision: str, bitrev_points: int = 0) -> float:
        ft = self.ft
        return (butterflies * self.fft_butterfly(cores, precision)
                + bitrev_points * ft["bitrev_cycles_per_point"] + ft["stage_overhead_cycles"])


@lru_cache(maxsize=8)
def _load(path: str) -> KernelTiming:
    try:
        data = load_file(path)       # bounded (tlm.files): a timing_file may be a user's
    except (OSError, ValueError, yaml.YAMLError) as e:
        raise TimingDataError(f"{path}: {e}") from None
    if not isinstance(data, dict):
        raise TimingDataError(f"{path}: expected a mapping")
    return KernelTiming(data, str(path))


def load_timing(path: str | Path | None = None) -> KernelTiming:
    """The timing model of ``path`` (default: ``kernel_timing.yaml`` beside this module)."""
    return _load(str(Path(path) if path else TIMING_FILE))


# ----- analytical duration of a kernel -----------------------------------------------------------
def estimate_cycles(steps: Sequence[Sequence["Step"]], tm: KernelTiming,
                    eu: "EventUnitParams") -> float:
    """Contention-free cycles of a job from START to end of job: dispatch, every core's
    steps (chunk = max(compute, words)), barriers (last arrival + trigger + release +
    wakeup), end of job. Mirrors what the simulation does (docs/cluster.md)."""
    from .core import Barrier

    n = len(steps)
    t = [tm.dispatch_cycles] * n
    pos = [0] * n
    while True:
        at_barrier = 0
        for i in range(n):
            s = steps[i]
            j = pos[i]
            ti = t[i]
            while j < len(s) and not isinstance(s[j], Barrier):
                ch = s[j]
                ti += max(ch.cycles, float(ch.words))
                j += 1
            t[i] = ti
            pos[i] = j
            if j < len(s):
                at_barrier += 1
        if at_barrier == 0:
            break
        if at_barrier != n:
            raise ValueError("inconsistent plan: not every core reaches the barrier")
        release = max(t) + eu.trigger_cycles + eu.release_cycles
        t = [release + eu.wakeup_cycles] * n
        pos = [p + 1 for p in pos]
    return max(t) + tm.eoj_cycles


# ----- calibration -------------------------------------------------------------------------------
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


def _matmul_throughput(tm: KernelTiming, eu: "EventUnitParams", wl: dict, isa: str, bits: int) -> float:
    from .kernels import KERNELS, job_steps
    k = KERNELS["matmul"]
    args = k.normalize({"m": wl["m"], "n": wl["n"], "k": wl["k"], "bits": bits, "isa": isa,
                        "a": 0, "w": 0x8000, "out": 0x10000})
    steps = job_steps(k, args, wl["cores"], tm)
    return k.total_ops(args) / estimate_cycles(steps, tm, eu)


def _fft_throughput(tm: KernelTiming, eu: "EventUnitParams", wl: dict) -> float:
    from .kernels import KERNELS, job_steps
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


def calibrate(tm: KernelTiming | None = None, eu: "EventUnitParams | None" = None) -> dict:
    """Fit the per-core rates to the facts; returns the ``fitted`` mapping of the data file."""
    from .event_unit import EventUnitParams
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


def calibration_table(tm: KernelTiming | None = None, eu: "EventUnitParams | None" = None) -> list[CalibrationRow]:
    """Each calibration figure with what the (stored) model gives for it analytically."""
    from .event_unit import EventUnitParams
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


def _write_fitted(path: Path, fitted: dict) -> None:
    text = read_text(path, "package_data")
    mm = fitted["matmul_macs_per_cycle"]
    block = ["fitted:", "  matmul_macs_per_cycle:"]
    for isa in ISAS:
        block.append(f"    {isa}: {{" + ", ".join(f"{b}: {mm[isa][b]}" for b in BITS) + "}")
    block.append(f"  fft_butterfly_cycles_fp32: {fitted['fft_butterfly_cycles_fp32']}")
    new, n = re.subn(r"(?ms)^fitted:\n.*\Z", "\n".join(block) + "\n", text)
    if n != 1:
        raise TimingDataError(f"{path}: no 'fitted:' section at the end of the file")
    path.write_text(new)
    _load.cache_clear()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Calibrate / show the cluster kernel timing model")
    ap.add_argument("--write", action="store_true", help="store the fitted rates in the data file")
    ap.add_argument("--file", type=Path, default=TIMING_FILE)
    args = ap.parse_args(argv)
    tm = load_timing(args.file)
    if args.write:
        _write_fitted(args.file, calibrate(tm))
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
