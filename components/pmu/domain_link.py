"""The PMU's link to a clock/power domain whose logic lives elsewhere (the CLUSTER).

The PMU (always-on, next to the SOC) drives the FLLs and switches the domains; the cluster
follows. A direct object reference would make the cluster see a change at once in one
process and never in another, so the control crosses a :class:`tlm.Link` like every other
cuttable connection, with a fixed latency (the level shifters and synchronisers of the
PMU's outputs), identical in one process or many:

* PMU -> domain: each FLL the domain uses is mirrored by a :class:`tlm.Clock` (``clocks``)
  that takes a new frequency ``latency`` after the FLL did; the power state is mirrored by
  a :class:`DomainMirror` (``power``) that components observe (``on_power_off``,
  ``admit``, ``lose_contents``) exactly as a PMU domain.
* domain -> PMU: activity reports of components under the domain's path travel to the
  energy ledger (:meth:`EnergyLedger.forward`), booked on arrival at that moment's supply;
  the On-Chip Monitors see them then too.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from tlm import Clock, Link, Module

from .domains import PowerDomain, PowerState

if TYPE_CHECKING:
    from .pmu import Pmu


class DomainMirror(PowerDomain):
    """A domain's power state as seen on the far side of a :class:`DomainLink`."""

    def _stat_values(self) -> dict:
        return {"state": self.state.name, "state_transitions": self.transitions}


class DomainLink(Link):
    """``<name>``: side ``a`` is the PMU, side ``b`` the component ``component`` that sits in
    PMU domain ``domain`` and is clocked by the FLLs ``flls`` (mirrored, see the module
    docstring). Call :meth:`attach` once the component module exists."""

    def __init__(self, parent: "Module", name: str, pmu: "Pmu", *, component: str,
                 domain: str, flls: Sequence[str], latency: int):
        super().__init__(parent, name, side_a=pmu.path, side_b=component, min_latency=latency)
        self.pmu = pmu
        self.component = component
        self.domain = pmu.domains[domain]
        self.clocks: dict[str, Clock] = {}
        self.power: DomainMirror | None = None
        self._freq = self.call("freq", self._set_freq, from_side="a")
        self._state = self.call("state", self._set_state, from_side="a")
        self._activity = self.call("activity", pmu.energy.book, from_side="b")
        for f in flls:
            src = pmu.clocks[f]
            self.clocks[f] = Clock(self.sim, f"{self.path}.{f}", src.freq_hz)
            src.changed.add_callback(lambda _e, f=f, src=src: self._freq.send(f, src.freq_hz))
        pmu.energy.forward(component, self._activity.send)

    def attach(self, parent: Module, name: str = "power") -> DomainMirror:
        """Create the mirrored power domain as ``parent.<name>`` (owned by the component)."""
        d = self.domain
        self.power = DomainMirror(parent, name, switchable=d.switchable,
                                  body_biased=d.body_biased, vdd=d.vdd, state=d.state)
        self.power.label = d.name
        d.on_state_change(lambda _old, new: self._state.send(int(new)))
        return self.power

    def _set_freq(self, fll: str, hz: float) -> None:
        self.clocks[fll].set_frequency(hz)

    def _set_state(self, state: int) -> None:
        if self.power is not None:
            self.power.set_state(PowerState(state))
