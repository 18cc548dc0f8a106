"""Clocks: a time base that converts cycles <-> picoseconds and can change frequency
at run time (DVFS). Clocks do not toggle a signal every cycle (that would cost two events
per cycle); models count cycles of their clock analytically."""
from __future__ import annotations

from .errors import SimulationError
from .kernel import Event, Simulator
from .units import fmt_time, period_ps


class Clock:
    """A clock of ``freq_hz``. Rising edges fall at ``t0 + k * period`` within a frequency
    segment; a frequency change starts a new segment at the time of the change (the FLL
    relocks there), keeping the whole cycles counted so far."""

    def __init__(self, sim: Simulator, name: str, freq_hz: float):
        self.sim = sim
        self.name = name
        self.changed = Event(sim, name + ".changed")
        self._t0 = sim.now
        self._c0 = 0
        self.freq_hz = float(freq_hz)
        self.period = period_ps(freq_hz)
        self.history: list[tuple[int, float]] = [(sim.now, self.freq_hz)]

    def __repr__(self) -> str:
        return f"<Clock {self.name} {self.freq_hz / 1e6:g} MHz>"

    def set_frequency(self, freq_hz: float) -> None:
        """Change the frequency now; waits in progress via ``wait_cycles`` are re-timed."""
        try:
            period = period_ps(freq_hz)
        except ValueError as e:
            raise SimulationError(str(e), self.name, self.sim.now) from None
        now = self.sim.now
        self._c0 = self.cycles_at(now)
        self._t0 = now
        self.freq_hz = float(freq_hz)
        self.period = period
        self.history.append((now, self.freq_hz))
        self.changed.notify()

    def cycles(self, n: int | float) -> int:
        """Duration of ``n`` cycles at the current frequency, in ps."""
        return round(n * self.period)

    def cycles_at(self, t: int | None = None) -> int:
        """Whole cycles elapsed from time 0 to ``t`` (default: now), over all segments
        since the last frequency change (earlier segments are already folded in)."""
        t = self.sim.now if t is None else t
        if t < self._t0:
            raise SimulationError(f"cycles_at({fmt_time(t)}) is before the last frequency change",
                                  self.name, self.sim.now)
        return self._c0 + (t - self._t0) // self.period

    def to_cycles(self, duration: int) -> float:
        """A duration in ps expressed in cycles of the current frequency."""
        return duration / self.period

    def next_edge(self, t: int | None = None) -> int:
        """Time of the first rising edge at or after ``t`` (default: now)."""
        t = self.sim.now if t is None else t
        k = -(-(t - self._t0) // self.period)
        return self._t0 + k * self.period

    async def wait_cycles(self, n: int | float) -> None:
        """Wait ``n`` cycles of this clock, following frequency changes during the wait:
        the cycles not yet elapsed are re-timed at the new frequency."""
        sim = self.sim
        remaining = float(n)
        if remaining < 0:
            raise SimulationError(f"wait_cycles({n}): negative cycle count", self.name, sim.now)
        while remaining > 0:
            start = sim.now
            period = self.period
            dur = round(remaining * period)
            if dur == 0:
                return
            fired = await sim.any_of(self.changed, timeout=dur)
            if fired is None:
                return
            remaining -= (sim.now - start) / period

    async def wait_edge(self) -> None:
        """Wait for the next rising edge strictly after now."""
        now = self.sim.now
        t = self.next_edge(now)
        if t == now:
            t += self.period
        await self.sim.wait(t - now)
