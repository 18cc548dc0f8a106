"""On-Chip Monitors (OCMs): pre-errors when the clock period approaches the critical path.

The OCMs sit on the 1 % of register endpoints with the least slack; a shadow flop samples a
copy of the data delayed by ``window`` (a fraction of the clock period), and a mismatch is a
*pre-error*. With relative slack ``s = 1 − f / fmax(V, Vbb)`` and the domain's activity level
``a`` (0..1: how hard the near-critical paths are exercised, from the cores'/RBE's reported
compute rate), each clock cycle flags a pre-error with probability

    a' = max(a, idle_level),   p = p_max · a' · clip(1 − (s + (1 − a')·light_margin) / window, 0, 1)

(``idle_level``: endpoints toggled by clock trees and control logic whenever the clock runs;
``light_margin``: light load toggles the near-critical endpoints through paths with that
much more slack than the critical ones, so a lightly loaded domain needs less bias), so
pre-errors appear only within ``window`` of the edge, more often the closer and the
busier. Cycles are independent, so pre-errors form a Poisson process of rate ``p · f``: the
monitor draws the time to the next one from its seeded RNG (``module.rng``: deterministic per
scenario seed and path) and redraws whenever V, Vbb, f, the activity or the domain state
changes (exact, by memorylessness). No per-cycle process runs; at zero rate nothing is
scheduled. Disabled monitors (ABB off) produce nothing.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable

from tlm import Clock, Module

from .domains import PowerDomain, PowerState

if TYPE_CHECKING:
    from tlm import Simulator

    from .delay import DelayModel


class OnChipMonitor(Module):
    """The OCMs of ``domain`` (timed by ``clock``); listeners get ``fn(monitor)`` per pre-error."""

    def __init__(self, parent: "Module | Simulator", name: str, domain: PowerDomain,
                 clock: Clock, model: "DelayModel", level: Callable[[], float], *,
                 window: float, p_max: float, idle_level: float = 0.0,
                 light_margin: float = 0.0):
        super().__init__(parent, name)
        if not 0 < window < 1 or not 0 <= p_max <= 1:
            raise ValueError(f"{self.path}: need 0 < window < 1 and 0 <= p_max <= 1")
        self.domain = domain
        self.clock = clock
        self.model = model
        self._level = level
        self.window = window
        self.p_max = p_max
        self.idle_level = idle_level
        self.light_margin = light_margin
        self.enabled = False
        self.rate_hz = 0.0
        self.pre_errors = 0
        self.last_pre_error: int | None = None
        self._listeners: list[Callable[["OnChipMonitor"], None]] = []
        self._next = self.event("next_pre_error")
        self._next.add_callback(self._fire)
        self._live = False          # nothing is scheduled while the platform is being built
        self.spawn(self._start(), "start")
        self.sim.stats.add_provider(self.path, lambda: {"pre_errors": self.pre_errors})

    async def _start(self) -> None:
        self._live = True
        self.refresh()

    def on_pre_error(self, fn: Callable[["OnChipMonitor"], None]) -> None:
        self._listeners.append(fn)

    def slack(self) -> float:
        d = self.domain
        return self.model.slack(self.clock.freq_hz, d.vdd, d.vbb)

    def probability(self) -> float:
        """Pre-error probability per cycle in the present conditions."""
        if not self.enabled or self.domain.state != PowerState.ON:
            return 0.0
        level = self.level()
        # light load exercises paths with more slack than the critical ones
        ramp = 1.0 - (self.slack() + (1.0 - level) * self.light_margin) / self.window
        return self.p_max * level * min(1.0, max(0.0, ramp))

    def level(self) -> float:
        """The activity level the monitor sees (reported work, at least the idle level)."""
        v = self._level()
        idle = self.idle_level
        if idle > v:         # min(1.0, max(v, idle)) without two builtin calls
            v = idle
        return v if v < 1.0 else 1.0

    def refresh(self) -> None:
        """Recompute the rate and redraw the time of the next pre-error."""
        self.rate_hz = self.probability() * self.clock.freq_hz
        if not self._live:
            return
        self._next.cancel()
        if self.rate_hz > 0:
            wait = self.rng.exponential(1.0 / self.rate_hz)
            self._next.notify(max(1, math.ceil(wait * 1e12)))

    def set_enabled(self, enabled: bool) -> None:
        self.enabled = enabled
        self.refresh()

    def inject(self) -> None:
        """Report a pre-error now (tests and scenarios)."""
        self._pre_error()

    def _fire(self, _ev) -> None:
        self._pre_error()
        self.refresh()

    def _pre_error(self) -> None:
        self.pre_errors += 1
        self.last_pre_error = self.sim.now
        for fn in self._listeners:
            fn(self)
