"""Energy of blocks that do not report their own activity, metered from their counters.

A :class:`CounterMeter` watches cumulative counters of blocks it does not own (bytes an L2
served, bytes a uDMA channel moved, ...) and books their growth as activity of a power
class. The composition says when to look (:meth:`CounterMeter.poll`: at the end of a
transfer, when another report reaches the ledger, before statistics are read). A counter's
growth is placed over ``[now - busy, now)`` when the block also counts its busy time
(``busy`` = the growth of that counter since the last look), else over the interval since
the last look: energy totals are exact, placement in time is as good as the looks.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from tlm import Simulator


@dataclass
class _Source:
    path: str
    cls: str
    kind: str
    count: Callable[[], float]
    busy: Callable[[], int] | None
    last: float = 0.0
    last_busy: int = 0


#: ``poll`` has not looked the ledger up yet (it does only when a counter grew)
_NO_LEDGER = object()


class CounterMeter:
    """Books the growth of cumulative counters as activity (see the module docstring)."""

    def __init__(self, sim: "Simulator"):
        self.sim = sim
        self.sources: list[_Source] = []
        self._since = 0

    def add(self, path: str, cls: str, kind: str, count: Callable[[], float],
            busy: Callable[[], int] | None = None) -> None:
        """Meter ``count()`` (cumulative) as ``kind`` activities of class ``cls`` booked for
        component ``path``; ``busy()`` (cumulative ps), if given, places them in time."""
        self.sources.append(_Source(path, cls, kind, count, busy, float(count()),
                                    int(busy()) if busy is not None else 0))

    def poll(self) -> None:
        """Book what every counter gained since the last poll."""
        now = self.sim.now
        since = self._since
        self._since = now
        ledger: Any = _NO_LEDGER
        for s in self.sources:
            c = float(s.count())
            d = c - s.last
            if d <= 0:
                continue       # the common case (a poll per report): nothing else to do
            s.last = c
            t0 = since
            if s.busy is not None:
                b = int(s.busy())
                db = b - s.last_busy
                s.last_busy = b
                if 0 < db < now - since:
                    t0 = now - db
            if ledger is _NO_LEDGER:
                from .pmu import power_of   # the ledger of this simulation (none: nothing to book)
                ledger = power_of(self.sim)
            if ledger is not None:
                ledger.activity(s.path, s.kind, d, over=now - t0, cls=s.cls, start=t0)
