"""Temporal decoupling: a quantum keeper whose sync points are multiples of the global
quantum, so every initiator synchronises at the same points in time (which keeps the
event order independent of how fast each initiator runs ahead)."""
from __future__ import annotations

from .errors import SimulationError
from .kernel import Simulator


class QuantumKeeper:
    """Tracks a process's local time offset ahead of ``sim.now``.

    ``inc(d)`` advances local time; ``need_sync()`` is true once local time reaches the next
    multiple of the quantum; ``await sync()`` lets simulated time catch up with local time.
    The quantum is ``sim.global_quantum`` unless one is given (0 = sync on every need)."""

    __slots__ = ("sim", "name", "quantum", "local", "next_sync")

    def __init__(self, sim: Simulator, quantum: int | None = None, name: str = "quantum_keeper"):
        self.sim = sim
        self.name = name
        self.quantum = sim.global_quantum if quantum is None else quantum
        if self.quantum < 0:
            raise SimulationError(f"quantum must be >= 0, got {self.quantum}", name, sim.now)
        self.local = 0
        self.next_sync = self._boundary_after(sim.now)

    def _boundary_after(self, t: int) -> int:
        q = self.quantum
        return t if q == 0 else (t // q + 1) * q

    @property
    def current_time(self) -> int:
        """``sim.now`` plus the local offset."""
        return self.sim.now + self.local

    def inc(self, delay: int) -> None:
        if delay < 0:
            raise SimulationError(f"quantum keeper: negative increment {delay} ps", self.name, self.sim.now)
        self.local += delay

    def set(self, local: int) -> None:
        if local < 0:
            raise SimulationError(f"quantum keeper: negative local time {local} ps", self.name, self.sim.now)
        self.local = local

    def need_sync(self) -> bool:
        return self.sim.now + self.local >= self.next_sync

    async def sync(self) -> None:
        """Wait for the local offset, then aim at the next quantum boundary."""
        if self.local:
            await self.sim.wait(self.local)
        self.local = 0
        self.next_sync = self._boundary_after(self.sim.now)

    def reset(self) -> None:
        self.local = 0
        self.next_sync = self._boundary_after(self.sim.now)
