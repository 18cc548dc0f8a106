"""Supply regulators: one per domain, slewing the domain's VDD towards a target in steps.

A new target (from the PMU's VDD register) starts a ramp: the supply moves by ``step_mv``
every ``step_mv / slew`` until it reaches the target, so a transition takes
``|ΔV| / slew`` (0.8 V -> 0.65 V at 10 mV/µs: 15 µs). Each step is a change the timing
check, the OCMs and the energy accounting see. Voltages are kept in integer mV so that
ramps are exact.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from tlm import Module
from tlm.units import US

from .domains import PowerDomain

if TYPE_CHECKING:
    from tlm import Simulator


class Regulator(Module):
    """The supply of ``domain``: ``set_target(mv)`` starts a ramp; ``busy`` while ramping."""

    def __init__(self, parent: "Module | Simulator", name: str, domain: PowerDomain, *,
                 step_mv: int, slew_v_per_us: float, range_mv: tuple[int, int]):
        super().__init__(parent, name)
        if step_mv <= 0 or slew_v_per_us <= 0:
            raise ValueError(f"{self.path}: step and slew must be > 0")
        self.domain = domain
        self.step_mv = int(step_mv)
        self.step_time = max(1, round(step_mv / 1000 / slew_v_per_us * US))
        self.range_mv = range_mv
        self.mv = round(domain.vdd * 1000)
        self.target_mv = self.mv
        self._gen = 0            # invalidates a pending step when the target changes
        self.ramps = 0

    @property
    def busy(self) -> bool:
        return self.mv != self.target_mv

    def in_range(self, mv: int) -> bool:
        return self.range_mv[0] <= mv <= self.range_mv[1]

    def set_now(self, mv: int) -> None:
        """Set the supply at once (elaboration / operating-point presets), no ramp."""
        self._gen += 1
        self.mv = self.target_mv = int(mv)
        self.domain.set_vdd(self.mv / 1000)

    def set_target(self, mv: int) -> bool:
        """Ramp towards ``mv``; False (and nothing changes) if it is out of range."""
        mv = int(mv)
        if not self.in_range(mv):
            return False
        self.target_mv = mv
        self._gen += 1
        if self.busy:
            self.ramps += 1
            self.sim.schedule(self.step_time, self._step, self._gen)
        return True

    def transition_time(self, mv: int) -> int:
        """Time (ps) a ramp from the present supply to ``mv`` takes."""
        steps = -(-abs(int(mv) - self.mv) // self.step_mv)
        return steps * self.step_time

    def _step(self, gen: int) -> None:
        if gen != self._gen:
            return
        d = self.target_mv - self.mv
        self.mv += max(-self.step_mv, min(self.step_mv, d))
        self.domain.set_vdd(self.mv / 1000)
        if self.busy:
            self.sim.schedule(self.step_time, self._step, gen)
