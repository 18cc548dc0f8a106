"""Burst mode (fast): a port moves the data at once and takes ``latency + ceil(beats *
conflict_factor)`` cycles, serialised per port like a streaming hop."""
from __future__ import annotations

import math

from tlm.memory import as_bytes_view
from tlm.payload import OK, READ, WRITE, Command, GenericPayload, Status

from .host import TcdmHost


class BurstPort:
    """TcdmPort mixin: the burst-mode ``b_transport``."""

    # set by TcdmPort.__init__
    tcdm: TcdmHost
    words: int
    transactions: int
    bytes: int
    busy_until: int

    async def _b_burst(self, p: GenericPayload, delay: int) -> int:
        t = self.tcdm
        a = p.address
        if a >= t.base:
            a -= t.base
        n = p.length
        if (p.extensions is None and p.byte_enable is None and n > 0 and a >= 0
                and a + n <= t.size and (p.streaming_width is None or p.streaming_width >= n)):
            cmd = p.command
            if cmd == READ:
                as_bytes_view(p.data, n)[:] = t._mv[a:a + n]
            elif cmd == WRITE:
                t._mv[a:a + n] = as_bytes_view(p.data, n)
            elif cmd != Command.IGNORE:
                return t._fail(p, Status.COMMAND_ERROR, f"unknown command {cmd!r}", delay)
            words = ((a + n - 1) >> 2) - (a >> 2) + 1
            beats = -(-words // self.words)
        else:
            r = t._access(p, a)
            if r is None:
                return delay
            beats = int(t._row_beats(r[0], r[1], self.words).sum())
        self.transactions += 1
        self.bytes += n
        prm = t.params
        cf = prm.conflict_factor
        cycles = beats if cf == 1.0 else math.ceil(beats * cf - 1e-9)
        per = t.clock.period
        occ = cycles * per
        # a streaming hop (see tlm.timing.HopTiming): the data cycles that overlapped
        # earlier hops (bw_occupancy) are behind us; queue behind the port's last burst
        start = t.sim.now + delay
        seen = p.bw_occupancy
        end = start + occ - seen if occ > seen else start
        after = self.busy_until + occ
        if after > end:
            end = after
        self.busy_until = end
        delay += end - start
        if occ > seen:
            p.bw_occupancy = occ
        p.status = OK
        p.dmi_allowed = True
        return delay + prm.latency * per
