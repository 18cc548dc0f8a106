"""Word mode: every bank serves one word per cycle. Per bank, HCI-like: a round-robin
arbiter over the LIC initiators (cores, DMA, SOC port), a round-robin arbiter over the
accelerator branches (the RBE's, then ``accel1`` ...), and a multiplexer between the two
winners that alternates whenever both request (so neither side starves)."""
from __future__ import annotations

from bisect import insort
from collections import deque

from tlm import Event
from tlm.memory import as_bytes_view
from tlm.payload import OK, READ, WRITE, Command, GenericPayload

from .host import TcdmHost


class _Txn:
    """A word-mode transaction: its accesses (lists of banks) and completion event."""

    __slots__ = ("chunks", "done", "eligible", "first_edge", "payload")

    def __init__(self, chunks: list, done: Event, eligible: int, payload: GenericPayload):
        self.chunks = chunks
        self.done = done
        self.eligible = eligible
        self.first_edge = -1
        self.payload = payload


class WordPort:
    """TcdmPort mixin: the word-mode ``b_transport`` (queues the transaction's accesses at
    the arbiter)."""

    # set by TcdmPort.__init__ (the arbiter reads and updates the word-mode state)
    tcdm: TcdmHost
    name: str
    index: int
    lic: bool
    words: int
    transactions: int
    bytes: int
    word_count: int
    stall_cycles: int
    conflicts: int
    queue: deque[_Txn]
    txn: _Txn | None
    chunk: int
    cur: list[int]
    _event_name: str

    async def _b_word(self, p: GenericPayload, delay: int) -> int:
        t = self.tcdm
        sim = t.sim
        if delay:
            await sim.wait(delay)
        a = p.address
        if a >= t.base:
            a -= t.base
        n = p.length
        cmd = p.command
        if (n > 0 and a >= 0 and a + n <= t.size and (cmd == READ or cmd == WRITE)
                and p.extensions is None and p.byte_enable is None
                and (p.streaming_width is None or p.streaming_width >= n)):
            # fast path: one contiguous burst, no numpy
            data = p.data
            if data.__class__ is bytearray and len(data) == n:
                if cmd == READ:
                    data[:] = t._mv[a:a + n]
                else:
                    t._mv[a:a + n] = data
            elif cmd == READ:
                as_bytes_view(data, n)[:] = t._mv[a:a + n]
            else:
                t._mv[a:a + n] = as_bytes_view(data, n)
            w0 = a >> 2
            if (a + n - 1) >> 2 == w0:
                chunks = [[w0 % t._nbanks]]
            else:
                chunks = t._chunks_1d(a, n, self.words)
            if t.bank_port is not None:
                t.bank_port.access(cmd, (a,), n, data, None, self.name)
        else:
            r = t._access(p, a)
            if r is None:
                return 0
            chunks = t._chunks(r[0], r[1], self.words)
            if t.bank_port is not None and cmd != Command.IGNORE:
                t.bank_port.access(cmd, r[0], r[1], p.data, p.byte_enable, self.name)
        self.transactions += 1
        self.bytes += n
        done = Event(sim, self._event_name)
        t._submit(self, _Txn(chunks, done, t.clock.next_edge(sim.now), p))
        await done
        p.status = OK
        return 0


class WordArbiter:
    """Tcdm mixin: the event-driven per-bank arbiter (steps cycles only while requests are
    pending)."""

    def _submit(self, port: WordPort, txn: _Txn) -> None:
        port.word_count += sum(map(len, txn.chunks))
        if port.txn is None:
            self._start_txn(port, txn)
            insort(self._active, (port.index, port))
        else:
            port.queue.append(txn)
        if not self._running:
            self._running = True
            now = self.sim.now
            self._edge = txn.eligible
            self.sim.schedule(self._edge + self.clock.period - now, self._step)

    def _acc_winner(self, b: int, accs: list[WordPort]) -> WordPort:
        """The accelerator branch that bank ``b`` serves if the multiplexer picks the
        accelerators: round robin after the last one granted there (losers count a conflict)."""
        if len(accs) == 1:
            return accs[0]
        last = self._acc_last[b]
        win = accs[0]
        for q in accs:
            if q.index > last:
                win = q
                break
        for q in accs:
            if q is not win:
                q.conflicts += 1
        return win

    @staticmethod
    def _start_txn(port: WordPort, txn: _Txn) -> None:
        port.txn = txn
        port.chunk = 0
        port.cur = list(txn.chunks[0])

    def _step(self) -> None:
        """Arbitrate the cycle that began at ``self._edge`` (we are at its end)."""
        edge = self._edge
        self.cycles += 1
        lic_req: dict[int, list[WordPort]] = {}
        acc_req: dict[int, list[WordPort]] = {}
        taking: list[WordPort] = []
        for _, port in self._active:
            txn = port.txn
            if txn.eligible > edge:
                continue
            if txn.first_edge < 0:
                txn.first_edge = edge
            taking.append(port)
            if port.lic:
                for b in port.cur:
                    lst = lic_req.get(b)
                    if lst is None:
                        lic_req[b] = [port]
                    else:
                        lst.append(port)
            else:
                for b in port.cur:
                    lst = acc_req.get(b)
                    if lst is None:
                        acc_req[b] = [port]
                    else:
                        lst.append(port)
        lic_last = self._lic_last
        acc_last = self._acc_last
        mux_rbe = self._mux_rbe
        for b, lst in lic_req.items():
            if len(lst) == 1:
                win = lst[0]
            else:
                # round robin: the first requester after the last one granted at this bank
                self.conflict_cycles += 1
                last = lic_last[b]
                win = lst[0]
                for q in lst:
                    if q.index > last:
                        win = q
                        break
                for q in lst:
                    if q is not win:
                        q.conflicts += 1
            accs = acc_req.pop(b, None) if acc_req else None
            if accs is not None:
                if len(lst) == 1:
                    self.conflict_cycles += 1
                acc = self._acc_winner(b, accs)
                if not mux_rbe[b]:
                    # the accelerators' turn: the LIC winner waits (its pointer stays)
                    mux_rbe[b] = True
                    win.conflicts += 1
                    acc_last[b] = acc.index
                    acc.cur.remove(b)
                    continue
                acc.conflicts += 1
            mux_rbe[b] = False
            lic_last[b] = win.index
            win.cur.remove(b)
        for b, accs in acc_req.items():
            if len(accs) > 1:
                self.conflict_cycles += 1
            acc = self._acc_winner(b, accs)
            mux_rbe[b] = True
            acc_last[b] = acc.index
            acc.cur.remove(b)
        # advance the ports
        now = self.sim.now
        per = self.clock.period
        lat = self.params.latency
        finished = False
        for port in taking:
            if port.cur:
                port.stall_cycles += 1
                continue
            txn = port.txn
            port.chunk += 1
            if port.chunk < len(txn.chunks):
                port.cur = list(txn.chunks[port.chunk])
                continue
            # the transaction is complete: its last response arrives now (+ latency)
            occ = now - txn.first_edge
            if occ > txn.payload.bw_occupancy:
                txn.payload.bw_occupancy = occ
            if lat:
                txn.done.notify(lat * per)
            else:
                txn.done.notify()
            if port.queue:
                self._start_txn(port, port.queue.popleft())
            else:
                port.txn = None
                finished = True
        if finished:
            self._active = [(i, p) for i, p in self._active if p.txn is not None]
        if self._active:
            self._edge = now
            self.sim.schedule(per, self._step)
        else:
            self._running = False
