"""Modules: the hierarchy. Every module has a path (``cluster.rbe``) that keys its
parameters, statistics, traces and RNG seed."""
from __future__ import annotations

import re
from typing import Any, Coroutine

import numpy as np

from .errors import ElaborationError
from .kernel import Event, Process, Simulator

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_\[\]]*$")


class Module:
    """Base class of every component. ``parent`` is a Module, or the Simulator for a root."""

    def __init__(self, parent: "Module | Simulator", name: str):
        if not isinstance(name, str) or not _NAME_RE.match(name):
            where = parent.path if isinstance(parent, Module) else None
            raise ElaborationError(f"bad module name {name!r}: use letters, digits and _ "
                                   "(dots separate hierarchy levels)", where)
        if isinstance(parent, Module):
            self.sim: Simulator = parent.sim
            self.parent: Module | None = parent
            self.path: str = f"{parent.path}.{name}"
        else:
            self.sim = parent
            self.parent = None
            self.path = name
        self.name = name
        self.children: dict[str, Module] = {}
        if self.path in self.sim.modules:  # checked before registering anywhere
            raise ElaborationError(f"a module with path {self.path!r} already exists", self.path)
        if self.parent is not None:
            self.parent.children[name] = self
        self.sim.modules[self.path] = self
        self.stats = self.sim.stats.scope(self.path)
        self._rng: np.random.Generator | None = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path}>"

    @property
    def rng(self) -> np.random.Generator:
        """This component's RNG, seeded from (scenario seed, path)."""
        if self._rng is None:
            self._rng = self.sim.rng(self.path)
        return self._rng

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str = "run") -> Process:
        """Start a process named ``<path>.<name>``."""
        return self.sim.spawn(coro, f"{self.path}.{name}")

    def event(self, name: str) -> Event:
        return Event(self.sim, f"{self.path}.{name}")

    def trace_span(self, name: str, begin: int, end: int, **args: Any) -> None:
        tr = self.sim.tracer
        if tr is not None:
            tr.span(self.path, name, begin, end, **args)
