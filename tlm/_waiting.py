"""The waiting half of :class:`tlm.kernel.Simulator`, kept interpreted on purpose.

``sim.wait`` and ``sim.wait_until`` are ``@types.coroutine`` generators: a compiled (mypyc)
generator is not awaitable, so they live here, in a module that is never compiled, as the
Python base class of the (possibly compiled) ``Simulator``. Being a Python base class also
gives compiled ``Simulator`` instances a ``__dict__`` and weak-referenceability (the PMU
keeps a ``WeakKeyDictionary`` keyed by simulator).
"""
from __future__ import annotations

import types
from typing import Any, Generator, Protocol, cast

from .errors import SimulationError
from .units import fmt_time

# The classes ``wait`` accepts; tlm.kernel fills this in once they exist (kernel imports
# this module for the base class, so this module cannot import kernel at import time).
WAITABLE: tuple[type, ...] = ()


class _Clocked(Protocol):
    """What the waiters use of the Simulator they are mixed into (typed here, not imported:
    tlm.kernel builds on this module)."""

    now: int

    def _check_delay(self, delay: Any, what: str) -> int: ...

    def _where(self) -> str | None: ...


class Waiting:
    """``await sim.wait(...)`` and ``await sim.wait_until(...)``; mixed into Simulator."""

    @types.coroutine
    def wait(self, what: Any = 0) -> Generator[Any, Any, Any]:
        """``await sim.wait(delay_ps)`` (0 = one delta cycle), or ``await sim.wait(event)``."""
        if what.__class__ is int and what >= 0:
            yield what
        elif isinstance(what, WAITABLE):
            return (yield from cast(Any, what).__await__())
        else:
            yield cast(_Clocked, self)._check_delay(what, "wait()")

    @types.coroutine
    def wait_until(self, t: int) -> Generator[Any, Any, None]:
        """Wait until absolute time ``t`` (ps); ``t`` must not be in the past."""
        sim = cast(_Clocked, self)
        if t < sim.now:
            raise SimulationError(f"wait_until({fmt_time(t)}) is in the past", sim._where(), sim.now)
        yield t - sim.now
