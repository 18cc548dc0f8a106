"""Errors the kernel and the TLM layer raise, each naming a component path and a time."""
from __future__ import annotations

from .units import fmt_time


class SimulationError(Exception):
    """A user-facing simulation error: what went wrong, where (path) and when (time, ps)."""

    def __init__(self, message: str, path: str | None = None, time: int | None = None):
        self.message = message
        self.path = path
        self.time = time
        super().__init__(self._format())

    def _format(self) -> str:
        where = []
        if self.path:
            where.append(self.path)
        if self.time is not None:
            where.append(f"at {fmt_time(self.time)}")
        return f"{' '.join(where)}: {self.message}" if where else self.message


class BindingError(SimulationError):
    """A socket bound twice, bound to the wrong kind of socket, or left unbound."""


class ElaborationError(SimulationError):
    """The module hierarchy is inconsistent (duplicate paths, bad names, ...)."""


class ProcessError(SimulationError):
    """A process raised; the original exception is chained as ``__cause__``."""


class CausalityError(SimulationError):
    """An event arrived in its receiver's past (never silently reordered)."""


class ProtocolError(SimulationError):
    """A TLM-2.0 base-protocol rule was broken (raised by the protocol checker)."""

    def __init__(self, rule: str, message: str, path: str | None = None, time: int | None = None):
        self.rule = rule
        super().__init__(f"[{rule}] {message}", path, time)
