"""Critical-path delay model: fmax as a function of supply voltage and body bias.

Each *path family* follows the alpha-power law with an EKV-style smooth overdrive, so it
stays finite near threshold:

    ov(V, Vbb)    = 2·n·vT · ln(1 + exp((V − Vth + k_bb·Vbb) / (2·n·vT)))
    delay(V, Vbb) = d0 + k · V / ov^alpha                       [ps]

``k_bb`` (V/V) is the body factor: forward body bias lowers the threshold by k_bb·Vbb,
which speeds the family up (k_bb = 0: not body-biased). The chip's critical path is the
slowest family, so ``fmax = 1 / max(delay)``. Two families describe MARSELLUS (fitted in
docs/power.md): the *logic* (body-biased, limits fmax from ~0.57 V up) and the *SRAM
access* path (bit cells not body-biased, steep near its threshold, limits fmax at 0.5 V).
The parameters live in the chip's operating points (:class:`components.pmu.data.PowerSpec`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class PathFamily:
    """One family of critical paths (see the module docstring for the formula)."""

    name: str
    k_ps: float          # delay scale (ps · V^(alpha-1))
    vth: float           # threshold voltage at zero body bias (V)
    alpha: float         # velocity-saturation index
    body_factor: float   # dVth / dVbb (V/V); 0 = not body-biased
    d0_ps: float = 0.0   # voltage-independent part (wires)

    def delay_ps(self, vdd: float, vbb: float, n_vt: float) -> float:
        x = (vdd - self.vth + self.body_factor * vbb) / (2.0 * n_vt)
        ov = 2.0 * n_vt * (x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x)))
        return self.d0_ps + self.k_ps * vdd / ov ** self.alpha


class DelayModel:
    """fmax(V, Vbb) of a domain: the slowest of ``families``, times ``scale``."""

    def __init__(self, families: Sequence[PathFamily], n_vt: float, scale: float = 1.0):
        if not families:
            raise ValueError("a delay model needs at least one path family")
        self.families = tuple(families)
        self.n_vt = n_vt
        self.scale = scale

    def delay_ps(self, vdd: float, vbb: float = 0.0) -> float:
        """Critical-path delay in ps (the slowest family)."""
        return max(f.delay_ps(vdd, vbb, self.n_vt) for f in self.families) / self.scale

    def limiting(self, vdd: float, vbb: float = 0.0) -> str:
        """Name of the family that limits fmax at (vdd, vbb)."""
        return max(self.families, key=lambda f: f.delay_ps(vdd, vbb, self.n_vt)).name

    def fmax_hz(self, vdd: float, vbb: float = 0.0) -> float:
        return 1e12 / self.delay_ps(vdd, vbb)

    def slack(self, freq_hz: float, vdd: float, vbb: float = 0.0) -> float:
        """Relative slack ``1 − f/fmax`` of a clock at ``freq_hz`` (< 0: timing error)."""
        return 1.0 - freq_hz / self.fmax_hz(vdd, vbb)

    def vmin(self, freq_hz: float, vbb: float = 0.0, lo: float = 0.3, hi: float = 1.2,
             tol: float = 1e-5) -> float | None:
        """Lowest supply (V) at which ``freq_hz`` meets timing with body bias ``vbb``
        (bisection; fmax grows with V), or None above ``hi``."""
        if self.fmax_hz(hi, vbb) < freq_hz:
            return None
        if self.fmax_hz(lo, vbb) >= freq_hz:
            return lo
        while hi - lo > tol:
            mid = 0.5 * (lo + hi)
            if self.fmax_hz(mid, vbb) >= freq_hz:
                hi = mid
            else:
                lo = mid
        return hi

    def boost(self, vdd: float, vbb: float) -> float:
        """fmax gain of body bias ``vbb`` at ``vdd`` (1.3 = +30 %)."""
        return self.fmax_hz(vdd, vbb) / self.fmax_hz(vdd, 0.0)
