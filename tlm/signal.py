"""Signals: wires with SystemC evaluate/update semantics.

A write during the evaluation phase becomes visible only in the update phase; a change of
value notifies ``changed`` (and ``posedge``/``negedge`` for booleans) at the next delta.
"""
from __future__ import annotations

from typing import Any, Generic, TypeVar

from .errors import SimulationError
from .kernel import Event, Simulator

T = TypeVar("T")


class Signal(Generic[T]):
    """A wire. ``read()``/``value`` give the current value, ``write(v)`` requests an update."""

    __slots__ = ("sim", "name", "_cur", "_new", "_pending", "changed", "_pos", "_neg", "_writer")

    def __init__(self, sim: Simulator, name: str, init: T = 0):  # type: ignore[assignment]
        self.sim = sim
        self.name = name
        self._cur = init
        self._new = init
        self._pending = False
        self.changed = Event(sim, name + ".changed")
        self._pos: Event | None = None
        self._neg: Event | None = None
        self._writer: str | None = None

    def __repr__(self) -> str:
        return f"<Signal {self.name}={self._cur!r}>"

    @property
    def value(self) -> T:
        return self._cur

    def read(self) -> T:
        return self._cur

    def write(self, value: T) -> None:
        """Request ``value``; the last write in an evaluation phase wins (deterministically,
        since the evaluation order is deterministic)."""
        self._new = value
        if not self._pending:
            self._pending = True
            self.sim._updates.append(self)

    @property
    def posedge(self) -> Event:
        """Notified when a boolean signal goes from false to true."""
        if self._pos is None:
            self._pos = Event(self.sim, self.name + ".posedge")
        return self._pos

    @property
    def negedge(self) -> Event:
        """Notified when a boolean signal goes from true to false."""
        if self._neg is None:
            self._neg = Event(self.sim, self.name + ".negedge")
        return self._neg

    def _update(self) -> None:
        self._pending = False
        new = self._new
        old = self._cur
        if new is old or new == old:
            return
        self._cur = new
        self.changed.notify(0)
        if self._pos is not None and new and not old:
            self._pos.notify(0)
        if self._neg is not None and old and not new:
            self._neg.notify(0)

    def force(self, value: Any) -> None:
        """Set the value immediately without events (for reset/initialisation before run)."""
        if self.sim._running:
            raise SimulationError("force() is only allowed before the simulation runs", self.name, self.sim.now)
        self._cur = self._new = value
