"""Replaying a calibration workload's activity (power.yaml ``calibration``) in simulated
time: for tests, calibration runs and scenarios that want a known load without running
the real kernels (``abb_phases``-style power studies)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from tlm.units import US

if TYPE_CHECKING:
    from .pmu import Pmu


async def replay_workload(pmu: "Pmu", workload: str, duration: int, *, chunk: int = US,
                          scale: float = 1.0, prefix: str = "workload") -> None:
    """Report ``workload``'s per-cycle activity for ``duration`` ps, one ``chunk`` at a
    time, at the cluster clock's present frequency (so DVFS changes the work done per
    chunk). Components are named ``<prefix>.<class>``; ``scale`` multiplies every rate
    (e.g. 0.1 for a light phase)."""
    sim = pmu.sim
    per_cycle = pmu.model.tables.calibration[workload]["per_cycle"]
    clk = pmu.clocks["cluster"]
    end = sim.now + duration
    while sim.now < end:
        dt = min(chunk, end - sim.now)
        cycles = dt / clk.period
        for cls, kinds in per_cycle.items():
            for kind, rate in kinds.items():
                pmu.energy.activity(f"{prefix}.{cls}", kind, rate * scale * cycles, over=dt,
                                    cls=cls)
        await sim.wait(dt)
