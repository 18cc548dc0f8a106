"""The calibrated timing model of the cluster kernels.

:class:`KernelTiming` turns the work of one chunk into compute cycles, from the constants in
``kernel_timing.yaml`` (facts from marsellus.md, documented estimates, and fitted per-core
rates). :func:`estimate_cycles` gives the contention-free duration of a whole kernel from
its plan (the simulation in TCDM burst mode with no conflict factor reproduces it), and
:mod:`.calibration` fits the per-core rates so that the calibration workloads reproduce the
facts (``python -m components.cluster.calibration``; :func:`write_fitted` stores them).
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import yaml

from tlm.files import read_text
from tlm.yamlfast import load_file

if TYPE_CHECKING:
    from .core import Step
    from .event_unit import EventUnitParams

__all__ = ["TIMING_FILE", "ISAS", "BITS", "KernelTiming", "TimingDataError", "estimate_cycles",
           "load_timing", "write_fitted"]

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
                                  "`python -m components.cluster.calibration --write`")
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

    def requant_chunk(self, outputs: int) -> float:
        """``outputs`` int32 accumulators requantised to int8: conv2d's per-output
        requantisation (measured on the ISS) and an element-wise chunk's overhead."""
        return outputs * self.cv["requant_cycles_per_output"] + self.ew["chunk_overhead_cycles"]

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
                                  "`python -m components.cluster.calibration --write`")
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


def write_fitted(path: Path, fitted: dict) -> None:
    """Replace the ``fitted:`` section at the end of the data file ``path`` with ``fitted``."""
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
