"""Real timing errors: a clock faster than its domain's critical path allows.

Whenever a domain that is ON changes supply, body bias or the frequency of one of its
clocks (or is switched ON), every clock of the domain is checked against
``fmax(V, Vbb)`` of the delay model. A violation produces a :class:`TimingErrorRecord`
(time, domain, clock, f, V, Vbb, fmax, limiting path family) — one per violation episode:
a new record only after the clock met timing again.

What happens then is the PMU parameter ``timing_error``:

* ``"stop"`` (default): the run ends with a :class:`TimingError` (a SimulationError naming
  the domain and the time) raised out of ``sim.run()`` at the next delta cycle;
* ``"record"``: the run goes on (a real chip would compute garbage); the records are in
  ``pmu.timing_errors``, counted in the statistics (scope ``pmu``: ``timing_errors`` and
  ``timing_errors.<domain>``) and in the PMU's TIMING_ERRORS register, for the report.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tlm import SimulationError
from tlm.units import fmt_time

from .domains import PowerState

if TYPE_CHECKING:
    from tlm import Clock, Simulator

    from .delay import DelayModel
    from .domains import PowerDomain


class TimingError(SimulationError):
    """A real timing error (``record`` holds the details)."""

    def __init__(self, record: "TimingErrorRecord"):
        self.record = record
        super().__init__(record.message, record.domain_path, record.time)


@dataclass(frozen=True)
class TimingErrorRecord:
    """One timing violation as the report shows it."""

    time: int
    domain: str
    domain_path: str
    clock: str
    freq_hz: float
    vdd: float
    vbb: float
    fmax_hz: float
    limiting: str

    @property
    def message(self) -> str:
        return (f"timing error in domain {self.domain!r}: clock {self.clock} at "
                f"{self.freq_hz / 1e6:.1f} MHz > fmax {self.fmax_hz / 1e6:.1f} MHz at "
                f"VDD {self.vdd:.3f} V, body bias {self.vbb:.2f} V "
                f"(limited by {self.limiting} paths)")

    def __str__(self) -> str:
        return f"{fmt_time(self.time)}: {self.message}"

    def as_dict(self) -> dict:
        return {"time_ps": self.time, "domain": self.domain, "clock": self.clock,
                "freq_hz": self.freq_hz, "vdd": self.vdd, "vbb": self.vbb,
                "fmax_hz": self.fmax_hz, "limiting": self.limiting}


class TimingGuard:
    """Checks the clocks of each domain; ``records`` lists every violation."""

    def __init__(self, sim: "Simulator", mode: str = "stop"):
        if mode not in ("stop", "record"):
            raise ValueError(f"timing_error must be 'stop' or 'record', got {mode!r}")
        self.sim = sim
        self.mode = mode
        self.records: list[TimingErrorRecord] = []
        self._violating: set[str] = set()
        self.counts: dict[str, int] = {}

    def check(self, domain: "PowerDomain", clocks: list[tuple[str, "Clock"]],
              model: "DelayModel", margin: float = 0.0) -> None:
        """Check ``clocks`` against the fmax of the paths the present load exercises: the
        critical ones under full load, ones with ``margin`` more relative slack under light
        load (the same effective slack the On-Chip Monitors see)."""
        if domain.state != PowerState.ON:
            for name, _ in clocks:
                self._violating.discard(name)
            return
        fmax = model.fmax_hz(domain.vdd, domain.vbb) * (1.0 + margin)
        for name, clk in clocks:
            if clk.freq_hz <= fmax:
                self._violating.discard(name)
                continue
            if name in self._violating:
                continue
            self._violating.add(name)
            rec = TimingErrorRecord(self.sim.now, domain.name, domain.path, name, clk.freq_hz,
                                    domain.vdd, domain.vbb, fmax,
                                    model.limiting(domain.vdd, domain.vbb))
            self.records.append(rec)
            self.counts[domain.name] = self.counts.get(domain.name, 0) + 1
            if self.mode == "stop":
                self.sim.schedule(0, self._raise, rec)

    @staticmethod
    def _raise(rec: TimingErrorRecord) -> None:
        raise TimingError(rec)
