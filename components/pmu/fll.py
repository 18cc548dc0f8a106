"""The three FLLs (SOC, peripherals, CLUSTER) and their register bank.

An FLL drives a :class:`tlm.Clock`. Writing a new target frequency starts a relock: the
output keeps the old frequency for ``lock_time``, then switches (``Clock.set_frequency``,
so ``wait_cycles`` in progress re-time) and LOCKED is set again. A write during a relock
restarts it with the new target.

The register map is ``fll.registers.yaml`` beside this file (tables in docs/registers.md):
one UNIT block per FLL, in the order soc = 0, periph = 1, cluster = 2: STATUS (LOCKED, sticky
BAD_REQUEST: a target out of range), FREQ_KHZ (a write starts a relock), FREQ_NOW_KHZ, CLEAR.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tlm import Clock, Module, RegisterBank
from tlm.regmap import load_regmap

if TYPE_CHECKING:
    from tlm import Simulator

#: The register map (components/pmu/fll.registers.yaml); the names below derive from it.
MAP = load_regmap(Path(__file__).with_name("fll.registers.yaml"))
_UNIT = MAP.array("UNIT")
LOCKED = _UNIT.register("STATUS").field("LOCKED").mask
BAD_REQUEST = _UNIT.register("STATUS").field("BAD_REQUEST").mask
FLL_STRIDE = _UNIT.stride


class Fll(Module):
    """One FLL driving ``clock`` (created if not given)."""

    def __init__(self, parent: "Module | Simulator", name: str, *, freq_hz: float,
                 lock_time: int, f_min: float, f_max: float, clock: Clock | None = None):
        super().__init__(parent, name)
        self.clock = clock if clock is not None else Clock(self.sim, self.path, freq_hz)
        if clock is not None and clock.freq_hz != freq_hz:
            self.clock.set_frequency(freq_hz)
        self.lock_time = int(lock_time)
        self.f_min, self.f_max = f_min, f_max
        self.target_hz = self.clock.freq_hz
        self.locked = True
        self.bad_request = False
        self._gen = 0
        self.relocks = 0
        self.sim.stats.add_provider(self.path, lambda: {
            "freq_khz": round(self.clock.freq_hz / 1e3), "relocks": self.relocks})

    def set_now(self, freq_hz: float) -> None:
        """Set the frequency at once (elaboration / operating-point presets)."""
        self._gen += 1
        self.target_hz = float(freq_hz)
        self.locked = True
        if self.clock.freq_hz != self.target_hz:
            self.clock.set_frequency(self.target_hz)

    def set_target(self, freq_hz: float) -> bool:
        """Relock to ``freq_hz``; False (BAD_REQUEST set, nothing changes) if out of range."""
        if not self.f_min <= freq_hz <= self.f_max:
            self.bad_request = True
            return False
        self._gen += 1
        self.target_hz = float(freq_hz)
        self.locked = False
        self.relocks += 1
        self.sim.schedule(self.lock_time, self._lock, self._gen)
        return True

    def _lock(self, gen: int) -> None:
        if gen != self._gen:
            return
        self.locked = True
        if self.clock.freq_hz != self.target_hz:
            self.clock.set_frequency(self.target_hz)


class FllBank(RegisterBank):
    """The FLLs' register file (map in the module docstring); the FLLs are its children."""

    def __init__(self, parent: "Module | Simulator", name: str, size: int, *,
                 clock: Clock | None = None):
        super().__init__(parent, name, size, clock=clock)
        self.flls: dict[str, Fll] = {}

    def add_fll(self, fll: Fll) -> None:
        i = len(self.flls)
        self.flls[fll.name] = fll
        self.add_map(_UNIT, {   # names, access, reset and docs: fll.registers.yaml
            "STATUS": dict(read=lambda f=fll: (
                (LOCKED if f.locked else 0) | (BAD_REQUEST if f.bad_request else 0))),
            "FREQ_KHZ": dict(read=lambda f=fll: round(f.target_hz / 1e3),
                             write=lambda v, f=fll: f.set_target(v * 1e3)),
            "FREQ_NOW_KHZ": dict(read=lambda f=fll: round(f.clock.freq_hz / 1e3)),
            "CLEAR": dict(write=lambda v, f=fll: self._clear(f, v)),
        }, index=i, prefix=f"{fll.name.upper()}_")

    @staticmethod
    def _clear(f: Fll, v: int) -> None:
        if v & BAD_REQUEST:
            f.bad_request = False
