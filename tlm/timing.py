"""Timing of one hop (a router port, a memory port): latency plus bandwidth occupancy.

Along a path, latencies add up and occupancy takes the maximum: each hop adds only the part
of its occupancy that exceeds the largest one already met (``GenericPayload.bw_occupancy``),
so a burst through a 64-bit crossbar into a 32-bit memory costs sum(latencies) +
length/4 cycles, not length/8 + length/4.

Contention: a hop streams its data behind the hops before it (cut-through). A burst that
arrives at ``start = now + delay`` ends at

    end = max(start + max(0, occ - bw_occupancy), busy_until + occ)

— its own data has streamed through, and it followed the previous burst's data at this
hop's rate — and the hop is busy until ``end``. (Keeping the hop busy for its whole
occupancy after the arrival would reserve time it never used, so a short burst queued
behind a long one through two hops would wait twice.) For a first hop
(``bw_occupancy == 0``) this is simply "wait until free, then occupy"."""
from __future__ import annotations

from .clock import Clock
from .errors import SimulationError
from .payload import GenericPayload


class HopTiming:
    """``latency`` in cycles of ``clock`` (or in ps when ``clock`` is None), ``width`` in
    bytes per cycle (None: no occupancy), ``contention``: track the busy interval."""

    __slots__ = ("clock", "latency", "width", "contention", "busy_until", "busy_time")

    def __init__(self, clock: Clock | None = None, latency: int = 0, width: int | None = None,
                 contention: bool = True, where: str = ""):
        if latency < 0:
            raise SimulationError(f"latency must be >= 0, got {latency}", where)
        if width is not None and (clock is None or width <= 0):
            raise SimulationError("a width (bytes/cycle) needs a clock and must be > 0", where)
        self.clock = clock
        self.latency = latency
        self.width = width
        self.contention = contention
        self.busy_until = 0
        self.busy_time = 0  # ps this hop was occupied (utilisation statistic)

    def apply(self, p: GenericPayload, delay: int, now: int) -> int:
        """Return ``delay`` extended by this hop's latency, wait and extra occupancy."""
        clk = self.clock
        if clk is None:
            return delay + self.latency
        per = clk.period
        w = self.width
        if w is not None:
            occ = -(-p.length // w) * per
            seen = p.bw_occupancy
            start = now + delay
            end = start + occ - seen if occ > seen else start
            if self.contention:
                after = self.busy_until + occ
                if after > end:
                    end = after
                self.busy_until = end
            self.busy_time += occ
            delay += end - start
            if occ > seen:
                p.bw_occupancy = occ
        return delay + self.latency * per

    def latency_ps(self) -> int:
        return self.latency if self.clock is None else self.latency * self.clock.period

    def ps_per_byte(self) -> float:
        return 0.0 if self.width is None or self.clock is None else self.clock.period / self.width
