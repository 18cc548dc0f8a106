"""Calibration report: the PMU/power model with the MARSELLUS operating points against the
MARSELLUS facts (marsellus.md).

    python -m components.marsellus.calibrate      # prints the table docs/power.md shows

Every "model" value is computed here from the data files (the static models, plus short
simulations for the ABB energy figures); the facts are the measured numbers.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tlm import Region, Simulator
from tlm.units import US

from ..pmu import Pmu, PowerModel, abb_tables, integrate, replay_workload
from .facts import operating_points

W = "matmul_int8_macload"

# The calibration PMU is driven programmatically, never mapped on a bus: its register banks
# only need a size (4 KiB each, the size a platform map gives them).
_UNMAPPED = {"region": Region("pmu", 0, 0x1000, "always_on", "peripheral", "not mapped"),
             "fll_region": Region("fll", 0, 0x1000, "always_on", "peripheral", "not mapped")}


@dataclass(frozen=True)
class Row:
    quantity: str
    fact: float
    model: float
    unit: str
    relation: str = "="          # "=": reproduce the fact; ">=": the fact is a lower bound

    @property
    def error(self) -> float:
        return self.model / self.fact - 1


def vbb_max() -> float:
    c = abb_tables()["controller"]
    return c["max_code"] * c["vbb_step_v"]


def abb_energy(vdd: float | None, abb: bool, seed: int = 1, start: int = 60 * US,
               duration: int = 200 * US) -> float:
    """Energy (pJ) of the int8 matmul at 400 MHz after the supply ramp to ``vdd``."""
    sim = Simulator(seed=seed)
    pmu = Pmu(sim, "pmu", {"operating_point": "signoff", "abb": abb}, chip=operating_points(),
              **_UNMAPPED)

    async def ramp() -> None:
        if vdd is not None:
            pmu.set_vdd("soc", vdd)
            pmu.set_vdd("cluster", vdd)

    sim.spawn(replay_workload(pmu, W, duration), "work")
    sim.spawn(ramp(), "ramp")
    sim.run()
    return integrate([s for s in pmu.timeseries() if s.time >= start])


def report(simulate: bool = True) -> list[Row]:
    m = PowerModel(operating_points())
    d = operating_points().delay_model("cluster")
    hi = m.workload_power(W, 0.80, d.fmax_hz(0.80))
    lo = m.workload_power(W, 0.50, d.fmax_hz(0.50))
    nominal = m.workload_power(W, 0.80, 420e6)
    mon = tuple(abb_tables()["monitored_domains"])
    rows = [
        Row("fmax at 0.8 V", 420, d.fmax_hz(0.80) / 1e6, "MHz"),
        Row("fmax at 0.5 V", 100, d.fmax_hz(0.50) / 1e6, "MHz"),
        Row("lowest VDD for 400 MHz, no ABB", 0.74, d.vmin(400e6), "V"),
        Row("fmax at 0.65 V with ABB (400 MHz runs)", 400, d.fmax_hz(0.65, vbb_max()) / 1e6,
            "MHz", ">="),
        Row("max ABB frequency boost", 1.30,
            max(d.boost(v, vbb_max()) for v in np.arange(0.5, 0.8001, 0.0025)), "x"),
        Row("int8 matmul power, 0.8 V / 420 MHz", 123, nominal.total, "mW"),
        Row("dynamic share", 0.946, nominal.dynamic / nominal.total, ""),
        Row("dynamic power 0.8 V -> 0.5 V (at fmax)", 10.7, hi.dynamic / lo.dynamic, "x"),
        Row("leakage 0.8 V -> 0.5 V", 3.5, hi.leakage / lo.leakage, "x"),
        Row("chip power, low end (0.5 V, fmax)", 12.8, lo.total, "mW"),
        Row("cluster efficiency, MAC&LOAD", 250 * 1.51,
            25.45 * 1.67 / (nominal.domain("cluster") * 1e-3), "Gop/s/W"),
        Row("ABB overhead", 0.004,
            m.workload_power(W, 0.80, 420e6, abb_domains=mon).total / nominal.total - 1, ""),
    ]
    if simulate:
        e80, e74, e65 = abb_energy(None, False), abb_energy(0.74, False), abb_energy(0.65, True)
        rows += [Row("energy saving 0.65 V+ABB vs 0.8 V (400 MHz)", 0.30, 1 - e65 / e80, ""),
                 Row("energy saving 0.65 V+ABB vs 0.74 V (400 MHz)", 0.16, 1 - e65 / e74, "")]
    return rows


VOLTAGES = (0.50, 0.55, 0.60, 0.65, 0.70, 0.74, 0.80)


def fmax_table(voltages: tuple[float, ...] = VOLTAGES) -> list[dict]:
    """fmax without and with maximum ABB per supply (the model's operating range)."""
    d = operating_points().delay_model("cluster")
    top = vbb_max()
    return [{"vdd": v, "fmax_mhz": d.fmax_hz(v) / 1e6, "fmax_abb_mhz": d.fmax_hz(v, top) / 1e6,
             "limiting": d.limiting(v), "limiting_abb": d.limiting(v, top)}
            for v in voltages]


def main() -> None:
    print(f"{'quantity':48s} {'fact':>10s} {'model':>9s} {'error':>7s}")
    for r in report():
        if r.relation == "=":
            err, rel = f"{100 * r.error:+6.1f}%", ""
        else:
            err, rel = ("  (ok) " if r.model >= r.fact else "  FAIL "), ">="
        print(f"{r.quantity:48s} {rel:>2s}{r.fact:8.4g} {r.model:9.4g} {err} {r.unit}")
    print()
    print(f"{'VDD':>5s} {'fmax':>8s} {'fmax ABB':>9s}  limiting")
    for row in fmax_table():
        print(f"{row['vdd']:5.2f} {row['fmax_mhz']:8.1f} {row['fmax_abb_mhz']:9.1f}  "
              f"{row['limiting']}/{row['limiting_abb']}")


if __name__ == "__main__":
    main()
