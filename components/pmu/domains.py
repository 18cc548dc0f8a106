"""Power domains: state (OFF / ON / CLOCK_GATED), supply, body bias, and the hooks other
components register with.

The contract for components that live in a switchable domain (TCDM, cluster, ...):

* **Accesses.** A target in a domain answers with an error while the domain is OFF: call
  ``if not domain.admit(payload): return delay`` first thing in ``b_transport`` (it sets
  ``GENERIC_ERROR`` and logs a ``TlmErrorRecord`` naming the domain). While the domain is
  CLOCK_GATED the access stalls until the clock runs again: ``if not await
  domain.guard(payload): return delay`` does both. Targets that cannot be changed can be
  wrapped in a :class:`DomainGate`.
* **State loss.** ``domain.on_power_off(fn)`` calls ``fn()`` when the domain goes OFF (its
  SRAMs lose their contents): e.g. ``domain.lose_contents(memory.array)`` fills an array
  with seeded garbage, as real SRAMs power up random. Revoke DMI pointers there too.
  ``domain.on_power_on(fn)`` is called when it is powered again.
* **Observing.** ``domain.state``, ``domain.is_on`` (powered: ON or CLOCK_GATED),
  ``domain.is_active`` (ON: clocked), ``domain.changed`` (an Event notified immediately on
  every state change), ``domain.vdd`` and ``domain.vbb`` (volts).

Hooks run synchronously, in registration order, at the simulated time of the change.
"""
from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, Callable

import numpy as np

from tlm import GenericPayload, InitiatorSocket, Module, SimulationError, Status, TargetSocket
from tlm.payload import record_error

if TYPE_CHECKING:
    from tlm import Simulator
    from tlm.dmi import DmiRegion


class PowerState(IntEnum):
    """Register encoding of a domain's state."""

    OFF = 0
    ON = 1
    CLOCK_GATED = 2


class PowerDomain(Module):
    """One power domain. The PMU changes it; components observe it and register hooks."""

    def __init__(self, parent: "Module | Simulator", name: str, *, switchable: bool = True,
                 body_biased: bool = True, vdd: float = 0.8,
                 state: PowerState = PowerState.ON):
        super().__init__(parent, name)
        self.switchable = switchable
        self.body_biased = body_biased
        self.state = PowerState(state)
        self.vdd = float(vdd)
        self.vbb = 0.0
        self.changed = self.event("changed")
        self._off_hooks: list[Callable[[], None]] = []
        self._on_hooks: list[Callable[[], None]] = []
        self._state_hooks: list[Callable[[PowerState, PowerState], None]] = []
        self._elec_hooks: list[Callable[["PowerDomain"], None]] = []
        self.transitions = 0
        self.label = name          # the name errors use (a mirror keeps its source's)
        self.sim.stats.add_provider(self.path, self._stat_values)

    def __repr__(self) -> str:
        return f"<PowerDomain {self.path} {self.state.name} {self.vdd:.3f} V>"

    def _stat_values(self) -> dict:
        return {"state": self.state.name, "vdd_mv": round(self.vdd * 1000),
                "vbb_mv": round(self.vbb * 1000), "state_transitions": self.transitions}

    # ----- observing ----------------------------------------------------------------------
    @property
    def is_on(self) -> bool:
        """Powered (ON or CLOCK_GATED): state is retained."""
        return self.state != PowerState.OFF

    @property
    def is_active(self) -> bool:
        """ON: powered and clocked."""
        return self.state == PowerState.ON

    def on_power_off(self, fn: Callable[[], None]) -> None:
        """Call ``fn()`` whenever the domain goes OFF (after ``state`` is updated)."""
        self._off_hooks.append(fn)

    def on_power_on(self, fn: Callable[[], None]) -> None:
        """Call ``fn()`` whenever the domain is powered again (OFF -> ON or CLOCK_GATED)."""
        self._on_hooks.append(fn)

    def on_state_change(self, fn: Callable[[PowerState, PowerState], None]) -> None:
        """Call ``fn(old, new)`` on every state change."""
        self._state_hooks.append(fn)

    def on_electrical_change(self, fn: Callable[["PowerDomain"], None]) -> None:
        """Call ``fn(domain)`` after any change of state, supply or body bias, or of the
        frequency of one of the domain's clocks (the PMU's accounting and checks use it)."""
        self._elec_hooks.append(fn)

    def lose_contents(self, array: np.ndarray) -> None:
        """Register a power-off hook that fills ``array`` (uint8) with garbage from this
        domain's seeded RNG: an SRAM that was off holds random data, not zeros."""
        def scramble() -> None:
            array[...] = self.rng.integers(0, 256, array.shape, dtype=np.uint8)
        self.on_power_off(scramble)

    # ----- the access contract ------------------------------------------------------------
    def admit(self, p: GenericPayload, where: str | None = None) -> bool:
        """False (and ``p`` answered with GENERIC_ERROR, logged) if the domain is OFF."""
        if self.state == PowerState.OFF:
            record_error(self.sim, p, where or self.path, Status.GENERIC_ERROR,
                         f"power domain {self.label!r} is OFF")
            return False
        return True

    async def guard(self, p: GenericPayload, where: str | None = None) -> bool:
        """Like :meth:`admit`, but a CLOCK_GATED domain first stalls the access until it is
        ON again (or answers the error if it goes OFF meanwhile)."""
        while self.state == PowerState.CLOCK_GATED:
            await self.changed
        return self.admit(p, where)

    async def wait_active(self) -> None:
        """Wait until the domain is ON."""
        while self.state != PowerState.ON:
            await self.changed

    # ----- changes (made by the PMU) --------------------------------------------------------
    def set_state(self, new: PowerState) -> None:
        new = PowerState(new)
        old = self.state
        if new == old:
            return
        if not self.switchable and new != PowerState.ON:
            raise SimulationError(f"domain {self.name!r} cannot be switched {new.name}",
                                  self.path, self.sim.now)
        self.state = new
        self.transitions += 1
        if new == PowerState.OFF:
            for fn in self._off_hooks:
                fn()
        elif old == PowerState.OFF:
            for fn in self._on_hooks:
                fn()
        for fn in self._state_hooks:
            fn(old, new)
        self._electrical()
        self.changed.notify()

    def set_vdd(self, vdd: float) -> None:
        if vdd != self.vdd:
            self.vdd = float(vdd)
            self._electrical()

    def set_vbb(self, vbb: float) -> None:
        if not self.body_biased:
            return
        if vbb != self.vbb:
            self.vbb = float(vbb)
            self._electrical()

    def _electrical(self) -> None:
        for fn in self._elec_hooks:
            fn(self)


class DomainGate(Module):
    """A pass-through in front of a target that knows nothing about power: accesses while
    ``domain`` is OFF get GENERIC_ERROR, while CLOCK_GATED they stall; DMI is refused while
    OFF and revoked when the domain goes OFF. Bind initiators to ``target_socket`` and
    ``initiator_socket`` to the real target."""

    def __init__(self, parent: "Module | Simulator", name: str, domain: PowerDomain,
                 max_bindings: int = 64):
        super().__init__(parent, name)
        self.domain = domain
        self.target_socket = TargetSocket(self, "target", b_transport=self.b_transport,
                                          transport_dbg=self.transport_dbg,
                                          get_direct_mem_ptr=self.get_direct_mem_ptr,
                                          max_bindings=max_bindings)
        self.initiator_socket = InitiatorSocket(
            self, "initiator",
            invalidate_direct_mem_ptr=self.target_socket.invalidate_direct_mem_ptr)
        # DMI would bypass the gate: revoke it whenever the domain stops being ON
        domain.on_state_change(self._state_changed)

    def _state_changed(self, old: PowerState, new: PowerState) -> None:
        if new != PowerState.ON:
            self.target_socket.invalidate_direct_mem_ptr(0, (1 << 64) - 1)

    async def b_transport(self, p: GenericPayload, delay: int) -> int:
        # an ON domain (nearly every access) admits at once: no guard coroutine
        if self.domain.state != PowerState.ON and not await self.domain.guard(p, self.path):
            return delay
        return await self.initiator_socket.b_transport(p, delay)

    def transport_dbg(self, p: GenericPayload) -> int:
        if not self.domain.is_on:
            return 0
        return self.initiator_socket.transport_dbg(p)

    def get_direct_mem_ptr(self, p: GenericPayload) -> "DmiRegion | None":
        if not self.domain.is_active:
            return None
        return self.initiator_socket.get_direct_mem_ptr(p)
