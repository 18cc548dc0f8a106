"""The static power model: energy per activity, clock-tree power and leakage as functions
of supply voltage, frequency and body bias. No time here (see :mod:`.energy`).

* dynamic: ``E = count * energy_pj[kind] * (V / Vref)^2`` (C·V² per activity), and clock trees
  ``P = tree_pj * (V / Vref)^2 * f`` while the domain is ON;
* leakage: ``P = P_ref * (V / Vref) * exp((dibl * (V - Vref) + body_factor * Vbb) / n_vt)``
  (DIBL lowers Vth as V rises; forward body bias lowers it by body_factor·Vbb), in ON and
  CLOCK_GATED domains (an OFF domain keeps ``off_fraction``);
* ABB overhead: ``abb_overhead_pj[domain] * (V / Vref)^2 * f`` per monitored domain while
  ABB is on.

All tables come from power.yaml and the chip's operating points (a :class:`PowerSpec`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .data import ActivityClass, PowerSpec, PowerTables, power_tables


class PowerError(ValueError):
    """An unknown activity class or kind (the message lists the known ones)."""


@dataclass
class PowerBreakdown:
    """Power of a workload at one operating point, per domain (mW)."""

    dynamic_mw: dict[str, float] = field(default_factory=dict)
    leakage_mw: dict[str, float] = field(default_factory=dict)

    @property
    def dynamic(self) -> float:
        return sum(self.dynamic_mw.values())

    @property
    def leakage(self) -> float:
        return sum(self.leakage_mw.values())

    @property
    def total(self) -> float:
        return self.dynamic + self.leakage

    def domain(self, name: str) -> float:
        return self.dynamic_mw.get(name, 0.0) + self.leakage_mw.get(name, 0.0)


class PowerModel:
    """Energy and power of a chip: its :class:`PowerSpec` (given by the composer) and the
    power tables (by default power.yaml, checked against ``spec``)."""

    def __init__(self, spec: PowerSpec, tables: PowerTables | None = None):
        self.plat = spec
        self.tables = tables or power_tables(spec)
        self.vref = self.plat.reference_vdd
        self.biased = {d.name: d.body_biased for d in self.plat.domains}
        self.fll_domain = {f.name: f.domain for f in self.plat.flls}

    # ----- classes ---------------------------------------------------------------------------
    def activity_class(self, name: str) -> ActivityClass:
        try:
            return self.tables.classes[name]
        except KeyError:
            raise PowerError(f"unknown activity class {name!r}; known: "
                             f"{', '.join(sorted(self.tables.classes))}") from None

    def energy_per(self, cls: str, kind: str) -> float:
        """pJ of one ``kind`` activity of ``cls`` at Vref."""
        c = self.activity_class(cls)
        try:
            return c.energy_pj[kind]
        except KeyError:
            raise PowerError(f"class {cls!r} has no activity kind {kind!r}; known: "
                             f"{', '.join(sorted(c.energy_pj))}") from None

    # ----- scaling -----------------------------------------------------------------------------
    def dyn_scale(self, vdd: float) -> float:
        """C·V² scaling of dynamic energy relative to Vref."""
        return (vdd / self.vref) ** 2

    def activity_energy_pj(self, cls: str, kind: str, count: float, vdd: float) -> float:
        return count * self.energy_per(cls, kind) * self.dyn_scale(vdd)

    def leakage_factor(self, vdd: float, vbb: float = 0.0) -> float:
        """Leakage relative to (Vref, Vbb = 0)."""
        p = self.plat
        shift = p.dibl * (vdd - self.vref) + p.body_factor * vbb   # Vth lowered by DIBL and FBB
        return (vdd / self.vref) * math.exp(shift / p.n_vt)

    def leakage_mw(self, domain: str, vdd: float, vbb: float = 0.0) -> float:
        """Leakage of a powered domain (body bias only counts where the domain is biased)."""
        bias = vbb if self.biased.get(domain, False) else 0.0
        return self.tables.leakage_mw[domain] * self.leakage_factor(vdd, bias)

    def clock_tree_mw(self, fll: str, vdd: float, freq_hz: float) -> float:
        """Clock-tree power of ``fll``'s tree in its domain at supply ``vdd``."""
        return self.tables.clock_tree_pj[fll] * self.dyn_scale(vdd) * freq_hz * 1e-9

    def dco_mw(self, fll: str, vdd_always_on: float, freq_hz: float) -> float:
        """Power of ``fll`` itself (always-on domain)."""
        return self.tables.clock_dco_pj[fll] * self.dyn_scale(vdd_always_on) * freq_hz * 1e-9

    def abb_overhead_mw(self, domain: str, vdd: float, freq_hz: float) -> float:
        """ABB generator + OCM power attributed to monitored ``domain`` while ABB is on."""
        return self.tables.abb_overhead_pj.get(domain, 0.0) * self.dyn_scale(vdd) * freq_hz * 1e-9

    # ----- whole workloads -------------------------------------------------------------------
    def workload_power(self, workload: str, vdd: float, freq_hz: float, vbb: float = 0.0,
                       abb_domains: tuple[str, ...] = ()) -> PowerBreakdown:
        """Steady-state power of a calibration workload (power.yaml ``calibration``) with the
        whole chip at ``vdd``, every FLL at its ratio of ``freq_hz``, body bias ``vbb``, and
        ABB overhead in ``abb_domains``."""
        try:
            w = self.tables.calibration[workload]
        except KeyError:
            raise PowerError(f"unknown calibration workload {workload!r}; known: "
                             f"{', '.join(sorted(self.tables.calibration))}") from None
        out = PowerBreakdown({d.name: 0.0 for d in self.plat.domains},
                             {d.name: self.leakage_mw(d.name, vdd, vbb) for d in self.plat.domains})
        freqs = {f: freq_hz * float(r) for f, r in w["clocks"].items()}
        for fll, f in freqs.items():
            out.dynamic_mw[self.fll_domain[fll]] += self.clock_tree_mw(fll, vdd, f)
            out.dynamic_mw["always_on"] += self.dco_mw(fll, vdd, f)
        main = {d.name: d.main_clock for d in self.plat.domains}
        for cls, kinds in w["per_cycle"].items():
            dom = self.activity_class(cls).domain
            f = freqs[main[dom]]
            for kind, rate in kinds.items():
                e = self.activity_energy_pj(cls, kind, float(rate), vdd)
                out.dynamic_mw[dom] += e * f * 1e-9
        for d in abb_domains:
            out.dynamic_mw[d] += self.abb_overhead_mw(d, vdd, freqs[main[d]])
        return out

    def workload_level(self, workload: str, domain: str) -> float:
        """The OCM activity level a calibration workload produces in ``domain``."""
        w = self.tables.calibration[workload]
        level = 0.0
        for cls, kinds in w["per_cycle"].items():
            c = self.activity_class(cls)
            if c.domain != domain:
                continue
            for kind, rate in kinds.items():
                if kind in c.ocm_peak:
                    level += float(rate) / c.ocm_peak[kind]
        return min(1.0, level)
