"""The conservative window loop (YAWNS with idle skipping), as pure bookkeeping: no
sockets, no processes, no clocks.

Each window: T = the earliest pending activity anywhere (next event times reported by the
workers, and the times of link events held for them); every worker with something before
U = T + L (L = the smallest min_latency of the cut links) is granted [T, U) together with
its pending link events; each answers with one report (its next event time, its last
activity time and its outgoing events, batched per destination). Events sent in [T, U)
are due at >= U, so nobody ever receives an event in its past. The run ends at global
quiescence (nothing pending anywhere) or at the max time; both are partition-invariant.
Without cut links the workers are independent and run to the end in one window.

The coordinator (:mod:`cosim.distributed.coordinator`) moves the messages; this module decides
what they say.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

__all__ = ["Peer", "Grant", "Window", "WindowLoop"]


@dataclass
class Peer:
    """What the loop knows of one worker: its next event time, its last activity, and
    the batches held for it (``pending``: ``(nframes, frames)``, earliest due ``pending_min``)."""

    next_time: int | None = None
    last_time: int | None = None
    pending: list[tuple[int, list[Any]]] = field(default_factory=list)
    pending_min: int | None = None

    def eff_next(self) -> int | None:
        """The earliest activity of this worker: its own or a held event."""
        a, b = self.next_time, self.pending_min
        if a is None:
            return b
        return a if b is None or a <= b else b


@dataclass
class Grant:
    """Worker ``index`` may run [start, end) after posting the batches in ``frames``
    (``counts``: the number of raw frames after each batch's blob)."""

    index: int
    counts: list[int]
    frames: list[Any]


@dataclass
class Window:
    number: int
    start: int
    end: int | None
    grants: list[Grant]


class WindowLoop:
    """Windows over ``n`` workers with lookahead ``lookahead`` (None: no cut links) up to
    ``max_time`` (None: quiescence)."""

    def __init__(self, n: int, lookahead: int | None, max_time: int | None):
        self.peers = [Peer() for _ in range(n)]
        self.lookahead = lookahead
        self.max_time = max_time
        self.safe_time = 0          # all activity before this time is done everywhere
        self.windows = 0
        self.events_routed = 0

    def next_window(self) -> Window | None:
        """The next window and its grants (taking the held batches), or None at the end."""
        nexts = [t for t in (p.eff_next() for p in self.peers) if t is not None]
        if not nexts:
            return None
        T = min(nexts)
        max_time = self.max_time
        if max_time is not None and T >= max_time:
            return None
        L = self.lookahead
        U = T + L if L is not None else None
        if max_time is not None and (U is None or U > max_time):
            U = max_time
        grants = []
        for i, p in enumerate(self.peers):
            t = p.eff_next()
            if t is not None and (U is None or t < U):
                frames: list[Any] = []
                counts = []
                for nf, seg in p.pending:
                    counts.append(nf)
                    frames += seg
                p.pending = []
                p.pending_min = None
                grants.append(Grant(i, counts, frames))
        return Window(self.windows, T, U, grants)

    def report(self, index: int, next_time: int | None, last_time: int | None,
               desc: Sequence[Sequence[int]], parts: Sequence[Any]) -> None:
        """Worker ``index`` finished its window: note its times and hold its outgoing
        batches (``desc``: ``[dest, min_time, count, nframes]`` per batch, the batches'
        frames in ``parts``) for their destinations."""
        self.peers[index].next_time = next_time
        if last_time is not None:
            self.peers[index].last_time = last_time
        pos = 0
        for dest, tmin, count, nframes in desc:
            d = self.peers[dest]
            d.pending.append((nframes, list(parts[pos:pos + 1 + nframes])))
            if d.pending_min is None or tmin < d.pending_min:
                d.pending_min = tmin
            pos += 1 + nframes
            self.events_routed += count

    def close(self, window: Window) -> None:
        """Every granted worker reported: everything before the window's end is done."""
        self.safe_time = window.end if window.end is not None else max(
            [p.last_time or 0 for p in self.peers] + [self.safe_time])
        self.windows += 1

    def pending(self) -> bool:
        """Whether any worker has activity left (the run stopped at the max time)."""
        return any(p.eff_next() is not None for p in self.peers)

    def end_time(self, pending: bool) -> int:
        """Where the run ends: the time limit if work was left, else the last activity."""
        if pending and self.max_time is not None:
            return self.max_time
        return max([p.last_time or 0 for p in self.peers])
