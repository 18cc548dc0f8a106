"""FlexiSAGA's PE array, decompression unit and controller in Amaranth HDL (dOS, dWS, dIS
and sOS; integer PEs).

Generated to Verilog by ``rtl/flexisaga/gen.py`` (docs/flexisaga.md, "RTL"). Every cycle of
a job belongs to one phase of the step model (accelerators/flexisaga/model/array.py), so the RTL
takes exactly the model's cycles. OS family: META (sOS: the tile's bit arrays, P words a
cycle), LOAD (one weight column into the left column, one input row into the top row, P
words a cycle, DecU zeros cost no read), PROP (R + C - 1 cycles; every PE holding a weight
and an input of the slice multiplies-accumulates once and writes both into its right and
lower neighbour), STORE (the R x C sums, P words a cycle). WS/IS families: CLOAD (the
stationary tile with the first slice, the moving edge, the previous K block's partial
sums), CPROP (R + C - 1 cycles; partial sums move right (WS) or down (IS) and the far
edge stores them). LAT: ``mem_latency`` cycles a tile.

Memory: a word memory inside the block (MEM_WORDS x 32 bit, read combinationally) with P
DecU ports; the host loads it through ``ld_*`` and reads it back through ``rb_*`` while
idle. The controller reads the sOS tile table through its own port, not a DecU port (the
model counts DecU words only). Job registers are input ports (word addresses in this
memory); ``start`` begins a job, ``done`` pulses at its end.
"""
from __future__ import annotations

import math

from amaranth.hdl import Array, Cat, Const, Elaboratable, Module, Mux, Signal
from amaranth.lib.memory import Memory

DOS, DWS, DIS, SOS = 0, 1, 2, 3


class FlexiSagaArray(Elaboratable):
    """R x C PEs (integer, ``word_bits`` two's complement), P memory ports."""

    def __init__(self, rows: int = 4, cols: int = 4, ports: int = 8, word_bits: int = 32,
                 latency: int = 1, mem_words: int = 4096, max_k: int = 64):
        self.R, self.C, self.P, self.WB, self.LAT = rows, cols, ports, word_bits, latency
        self.MW, self.MAX_K = mem_words, max_k
        self.AW = max(1, math.ceil(math.log2(mem_words)))
        self.OW = math.ceil(max_k / 32)                     # outer-bit words
        self.EW = math.ceil(max_k * rows / 32)              # element-bit words
        aw = self.AW
        self.ld_en = Signal()
        self.ld_addr = Signal(aw)
        self.ld_data = Signal(32)
        self.rb_addr = Signal(aw)
        self.rb_data = Signal(32)
        self.start = Signal()
        self.dataflow = Signal(3)
        self.m = Signal(16)
        self.k = Signal(16)
        self.n = Signal(16)
        self.w_base = Signal(aw)
        self.w_table = Signal(aw)
        self.i_base = Signal(aw)
        self.ldi = Signal(aw)
        self.o_base = Signal(aw)
        self.ldo = Signal(aw)
        self.busy = Signal()
        self.done = Signal()
        self.error = Signal()
        self.cycles = Signal(32)
        self.macs = Signal(32)
        self.reads = Signal(32)
        self.writes = Signal(32)

    def ports(self) -> list[Signal]:
        return [self.ld_en, self.ld_addr, self.ld_data, self.rb_addr, self.rb_data, self.start,
                self.dataflow, self.m, self.k, self.n, self.w_base, self.w_table, self.i_base,
                self.ldi, self.o_base, self.ldo, self.busy, self.done, self.error, self.cycles,
                self.macs, self.reads, self.writes]

    def elaborate(self, platform: object) -> Module:
        m = Module()
        R, C, P, WB, AW = self.R, self.C, self.P, self.WB, self.AW
        mem = Memory(shape=32, depth=self.MW, init=[])
        m.submodules.mem = mem
        rports = [mem.read_port(domain="comb") for _ in range(P)]
        wports = [mem.write_port() for _ in range(P)]
        ctl = mem.read_port(domain="comb")      # tile table (busy) / read-back (idle)

        # ---------------- PE grid ----------------
        wreg = [[Signal(WB, name=f"w_{r}_{c}") for c in range(C)] for r in range(R)]
        ireg = [[Signal(WB, name=f"i_{r}_{c}") for c in range(C)] for r in range(R)]
        preg = [[Signal(WB, name=f"p_{r}_{c}") for c in range(C)] for r in range(R)]
        vw = [[Signal(name=f"vw_{r}_{c}") for c in range(C)] for r in range(R)]
        vi = [[Signal(name=f"vi_{r}_{c}") for c in range(C)] for r in range(R)]
        fired = [[Signal(name=f"fired_{r}_{c}") for c in range(C)] for r in range(R)]

        # ---------------- controller state ----------------
        state = Signal(3)
        IDLE, META, LOAD, PROP, STORE, LATW, CLOAD, CPROP = range(8)
        sparse = Signal()
        # WS / IS ("chain" families): the resident operand, the partial sum moving along
        ws, isf = Signal(), Signal()
        chain = ws | isf
        pin = [[Signal(WB, name=f"pin_{r}_{c}") for c in range(C)] for r in range(R)]
        vpin = [[Signal(name=f"vpin_{r}_{c}") for c in range(C)] for r in range(R)]
        vres = [[Signal(name=f"vres_{r}_{c}") for c in range(C)] for r in range(R)]
        kb = Signal(16)                      # first reduction index of the tile (WS, IS)
        sl = Signal(16)                      # slice: the input column (WS) or weight row (IS)
        m0, n0 = Signal(16), Signal(16)
        rr, cc = Signal(range(R + 1)), Signal(range(C + 1))
        tile = Signal(16)
        j = Signal(16)                       # cycle within a multi-cycle phase
        pc = Signal(range(R + C + 1))        # propagation step
        kfrom = Signal(17)
        eoff = Signal(range(self.MAX_K * R + 1))
        vptr = Signal(AW)
        tbase = Signal(AW)
        wrow = Signal(AW + 16)
        lat = Signal(range(self.LAT + 2))
        meta = Signal(32 * (self.OW + self.EW))
        q0 = Signal(16)
        mac_en = Signal()
        m.d.comb += self.busy.eq(state != IDLE)

        # ---- combinational views ----
        ow = Signal(8)
        m.d.comb += ow.eq((self.k + 31) >> 5)
        kmask = Cat(*(self.k > b for b in range(self.MAX_K)))       # columns that exist
        outer = Signal(self.MAX_K)
        m.d.comb += outer.eq(meta[:self.MAX_K] & kmask)
        # the outer words as they will be after this META cycle (bypass of this cycle's reads)
        view = []
        for w in range(self.OW):
            v = Signal(32, name=f"outer_view_{w}")
            m.d.comb += v.eq(meta.word_select(w, 32))
            for p in range(P):
                with m.If((state == META) & (q0 + p == w)):
                    m.d.comb += v.eq(rports[p].data)
            view.append(v)
        outer_v = Signal(self.MAX_K)
        m.d.comb += outer_v.eq(Cat(*view)[:self.MAX_K] & kmask)
        nnzc = Signal(range(self.MAX_K + 1))
        m.d.comb += nnzc.eq(sum(outer_v[b] for b in range(self.MAX_K)))
        ew = Signal(16)
        m.d.comb += ew.eq((nnzc * rr + 31) >> 5)
        # next processed column >= kfrom
        above = Signal(self.MAX_K)
        m.d.comb += above.eq(outer & Cat(*(kfrom <= b for b in range(self.MAX_K))))
        first = Signal(range(self.MAX_K + 1))
        m.d.comb += first.eq(self.MAX_K)
        for b in reversed(range(self.MAX_K)):
            with m.If(above[b]):
                m.d.comb += first.eq(b)
        kk = Signal(17)
        more = Signal()
        m.d.comb += [kk.eq(Mux(sparse, first, kfrom)),
                     more.eq(Mux(sparse, above.any(), kfrom < self.k))]

        # element bits of the processed column, request index of each row
        ebits = Signal(R)
        ebase = Signal(range(32 * (self.OW + self.EW) + 1))
        m.d.comb += ebase.eq((ow << 5) + eoff)
        for r in range(R):
            m.d.comb += ebits[r].eq(Mux(sparse, meta.bit_select(ebase + r, 1), 1) & (r < rr))
        qrow = []
        acc = Const(0, range(R + 1))
        for r in range(R):
            q = Signal(range(R + 1), name=f"qrow_{r}")
            m.d.comb += q.eq(acc)
            qrow.append(q)
            acc = q + ebits[r]
        nw = Signal(range(R + 1))
        m.d.comb += nw.eq(acc)
        irow = Signal(AW + 17)
        m.d.comb += irow.eq(self.i_base + kk * self.ldi + n0)

        # ---------------- memory ports ----------------
        # LOAD requests: q < nw weights, then cc inputs
        last_load = Signal()
        m.d.comb += last_load.eq(q0 + P >= nw + cc)
        for p in range(P):
            q = Signal(16, name=f"lq_{p}")
            m.d.comb += q.eq(q0 + p)
            addr = Signal(AW, name=f"raddr_{p}")
            with m.Switch(state):
                with m.Case(META):
                    m.d.comb += addr.eq(tbase + q)
                with m.Case(LOAD):
                    with m.If(q < nw):
                        m.d.comb += addr.eq(Mux(sparse, vptr + q, wrow + q * self.k + kk))
                    with m.Else():
                        m.d.comb += addr.eq(irow + q - nw)
            m.d.comb += rports[p].addr.eq(addr)

        # STORE requests: a cursor (row, col) per port over the rr x cc outputs
        srow, scol = Signal(range(R + 1)), Signal(range(C + 1))
        cur = []
        r_, c_ = srow, scol
        for p in range(P):
            rp, cp = Signal(range(R + 2), name=f"sr_{p}"), Signal(range(C + 1), name=f"sc_{p}")
            m.d.comb += [rp.eq(r_), cp.eq(c_)]
            cur.append((rp, cp))
            wrap = cp + 1 == cc
            r_, c_ = Mux(wrap, rp + 1, rp), Mux(wrap, 0, cp + 1)
        pflat = Array([Array([preg[r][c] for c in range(C)] + [Const(0, WB)]) for r in range(R)]
                      + [Array([Const(0, WB)] * (C + 1))])
        nout = Signal(range(R * C + 1))
        m.d.comb += nout.eq(rr * cc)
        last_store = Signal()
        m.d.comb += last_store.eq(q0 + P >= nout)
        for p in range(P):
            rp, cp = cur[p]
            wp = wports[p]
            val = Signal(WB, name=f"sval_{p}")
            m.d.comb += val.eq(pflat[rp][cp])
            with m.If(state == IDLE):
                if p == 0:
                    m.d.comb += [wp.addr.eq(self.ld_addr), wp.data.eq(self.ld_data), wp.en.eq(self.ld_en)]
            with m.Elif(state == STORE):
                m.d.comb += [wp.addr.eq(self.o_base + (m0 + rp) * self.ldo + n0 + cp),
                             wp.data.eq(val.as_signed()), wp.en.eq(q0 + p < nout)]
        # the tile table word of the tile that begins at the next edge (the first at start)
        nt = Signal(16)
        m.d.comb += nt.eq(Mux(state == IDLE, 0, Mux(n0 + C >= self.n, tile + 1, tile)))
        m.d.comb += [ctl.addr.eq(Mux((state == IDLE) & ~self.start, self.rb_addr, self.w_table + nt)),
                     self.rb_data.eq(ctl.data)]

        # WS / IS LOAD requests: the stationary tile (first slice), the moving edge, the
        # partial sums of the previous K block (from O)
        first_sl = Signal()
        m.d.comb += first_sl.eq(sl == 0)
        S = Signal(16)
        m.d.comb += S.eq(Mux(first_sl, rr * cc, 0))
        reqs = []         # (index, valid, address, destination)
        for r in range(R):
            for c in range(C):
                q = Signal(16, name=f"cq_{r}_{c}")
                m.d.comb += q.eq(r * cc + c)
                a = Mux(ws, self.w_base + (m0 + r) * self.k + kb + c,
                        self.i_base + (kb + r) * self.ldi + n0 + c)
                reqs.append((q, first_sl & (r < rr) & (c < cc), a, "res", r, c))
        for e in range(max(R, C)):
            q = Signal(16, name=f"cm_{e}")
            m.d.comb += q.eq(S + e)
            if e < C:   # WS: input I[kb + e, sl] into the top row
                reqs.append((q, ws & (e < cc), self.i_base + (kb + e) * self.ldi + sl, 2, 0, e))
            if e < R:   # IS: weight W[sl, kb + e] into the left column
                reqs.append((q, isf & (e < rr), self.w_base + sl * self.k + kb + e, 3, e, 0))
            qp = Signal(16, name=f"cp_{e}")
            m.d.comb += qp.eq(S + Mux(ws, cc, rr) + e)
            if e < R:   # WS: partial sum O[m0 + e, sl] into the left column
                reqs.append((qp, ws & (kb != 0) & (e < rr), self.o_base + (m0 + e) * self.ldo + sl, 4, e, 0))
            if e < C:   # IS: partial sum O[sl, n0 + e] into the top row
                reqs.append((qp, isf & (kb != 0) & (e < cc), self.o_base + sl * self.ldo + n0 + e, 4, 0, e))
        ctotal = Signal(16)
        m.d.comb += ctotal.eq(S + Mux(ws, cc, rr) + Mux(kb != 0, Mux(ws, rr, cc), 0))
        last_cload = Signal()
        m.d.comb += last_cload.eq(q0 + P >= ctotal)
        with m.If(state == CLOAD):
            for p in range(P):
                for q, valid, a, _kind, _r, _c in reqs:
                    with m.If(valid & (q == q0 + p)):
                        m.d.comb += rports[p].addr.eq(a)

        # ---------------- counters ----------------
        with m.If(state != IDLE):
            m.d.sync += self.cycles.eq(self.cycles + 1)
        with m.If(state == META):
            m.d.sync += self.reads.eq(self.reads + Mux(q0 + P > ow + ew, ow + ew - q0, P))
        with m.If(state == LOAD):
            m.d.sync += self.reads.eq(self.reads + Mux(last_load, nw + cc - q0, P))
        with m.If(state == STORE):
            m.d.sync += self.writes.eq(self.writes + Mux(last_store, nout - q0, P))
        with m.If(state == CLOAD):
            m.d.sync += self.reads.eq(self.reads + Mux(last_cload, ctotal - q0, P))

        # ---------------- the PEs ----------------
        m.d.comb += mac_en.eq(state == PROP)
        nmacs = []
        for r in range(R):
            for c in range(C):
                ready = Signal(name=f"fire_{r}_{c}")
                m.d.comb += ready.eq(mac_en & ~chain & vw[r][c] & vi[r][c] & ~fired[r][c])
                nmacs.append(ready)
                with m.If(ready):
                    m.d.sync += [preg[r][c].eq(preg[r][c] + wreg[r][c] * ireg[r][c]), fired[r][c].eq(1)]
                    if c + 1 < C:
                        m.d.sync += [wreg[r][c + 1].eq(wreg[r][c]), vw[r][c + 1].eq(1)]
                    if r + 1 < R:
                        m.d.sync += [ireg[r + 1][c].eq(ireg[r][c]), vi[r + 1][c].eq(1)]
        stores = []
        for r in range(R):
            for c in range(C):
                ready = Signal(name=f"cfire_{r}_{c}")
                m.d.comb += ready.eq((state == CPROP) & vpin[r][c] & ~fired[r][c]
                                     & (~vres[r][c] | Mux(ws, vi[r][c], vw[r][c])))
                out = Signal(WB, name=f"cout_{r}_{c}")
                m.d.comb += out.eq(Mux(vres[r][c], pin[r][c] + wreg[r][c] * ireg[r][c], pin[r][c]))
                nmacs.append(ready & vres[r][c])
                with m.If(ready):
                    m.d.sync += fired[r][c].eq(1)
                    with m.If(vres[r][c]):
                        with m.If(ws):
                            if r + 1 < R:
                                m.d.sync += [ireg[r + 1][c].eq(ireg[r][c]), vi[r + 1][c].eq(1)]
                        with m.Else():
                            if c + 1 < C:
                                m.d.sync += [wreg[r][c + 1].eq(wreg[r][c]), vw[r][c + 1].eq(1)]
                    # the sum moves right (WS) or down (IS); the last column / row stores it
                    if c + 1 < C:
                        with m.If(ws):
                            m.d.sync += [pin[r][c + 1].eq(out), vpin[r][c + 1].eq(1)]
                    if r + 1 < R:
                        with m.If(isf):
                            m.d.sync += [pin[r + 1][c].eq(out), vpin[r + 1][c].eq(1)]
                if c == C - 1:
                    stores.append((ready & ws, r % P, self.o_base + (m0 + r) * self.ldo + sl, out))
                if r == R - 1:
                    stores.append((ready & isf & (c < cc), c % P, self.o_base + sl * self.ldo + n0 + c, out))
        with m.If(state == CPROP):
            for en, p, a, v in stores:
                with m.If(en):
                    m.d.comb += [wports[p].addr.eq(a), wports[p].data.eq(v.as_signed()), wports[p].en.eq(1)]
            m.d.sync += self.writes.eq(self.writes + sum(en for en, _p, _a, _v in stores))
        m.d.sync += self.macs.eq(self.macs + sum(nmacs))

        def clear_slice() -> list:
            return [s.eq(0) for row in vw + vi + fired + vpin for s in row]

        def begin_tile(nm0: object, nn0: object, ntile: object) -> None:
            """Enter the tile at (nm0, nn0): clear the sums, take the tile's base."""
            m.d.sync += [m0.eq(nm0), n0.eq(nn0), tile.eq(ntile), j.eq(0), q0.eq(0), kfrom.eq(0), eoff.eq(0),
                         rr.eq(Mux(self.m - nm0 < R, self.m - nm0, R)),
                         cc.eq(Mux(self.n - nn0 < C, self.n - nn0, C)),
                         wrow.eq(self.w_base + nm0 * self.k), srow.eq(0), scol.eq(0)]
            m.d.sync += [s.eq(0) for row in preg for s in row]
            m.d.sync += clear_slice()
            m.d.sync += state.eq(Mux(sparse, META, LOAD))

        def next_tile() -> None:
            """After a tile's last cycle: the next output tile (row-major over strips), or done."""
            with m.If(n0 + C < self.n):
                begin_tile(m0, n0 + C, tile)
                m.d.sync += tbase.eq(self.w_base + ctl.data)
            with m.Elif(m0 + R < self.m):
                begin_tile(m0 + R, 0, tile + 1)
                m.d.sync += tbase.eq(self.w_base + ctl.data)
            with m.Else():
                m.d.sync += [state.eq(IDLE), self.done.eq(1)]

        def begin_chain(nm0: object, nn0: object, nkb: object) -> None:
            """Enter a WS tile (rows nm0.., K block nkb..) or IS tile (columns nn0.., K block nkb..)."""
            m.d.sync += [m0.eq(nm0), n0.eq(nn0), kb.eq(nkb), sl.eq(0), q0.eq(0), state.eq(CLOAD),
                         rr.eq(Mux(ws, Mux(self.m - nm0 < R, self.m - nm0, R), Mux(self.k - nkb < R, self.k - nkb, R))),
                         cc.eq(Mux(ws, Mux(self.k - nkb < C, self.k - nkb, C), Mux(self.n - nn0 < C, self.n - nn0, C)))]
            m.d.sync += [s.eq(0) for row in vres for s in row]
            m.d.sync += clear_slice()

        def next_chain() -> None:
            """After a WS/IS tile: the next row chunk / K block, or done."""
            with m.If(ws & (m0 + R < self.m)):
                begin_chain(m0 + R, n0, kb)
            with m.Elif(ws & (kb + C < self.k)):
                begin_chain(0, n0, kb + C)
            with m.Elif(isf & (kb + R < self.k)):
                begin_chain(m0, n0, kb + R)
            with m.Elif(isf & (n0 + C < self.n)):
                begin_chain(m0, n0 + C, 0)
            with m.Else():
                m.d.sync += [state.eq(IDLE), self.done.eq(1)]

        # ---------------- the controller ----------------
        with m.Switch(state):
            with m.Case(IDLE):
                m.d.sync += self.done.eq(0)
                with m.If(self.start):
                    m.d.sync += [self.cycles.eq(0), self.macs.eq(0), self.reads.eq(0), self.writes.eq(0),
                                 self.error.eq(0), sparse.eq(self.dataflow == SOS),
                                 ws.eq(self.dataflow == DWS), isf.eq(self.dataflow == DIS)]
                    ok = (self.dataflow <= SOS) & (self.m != 0) & \
                        (self.k != 0) & (self.n != 0) & ((self.dataflow == DOS) | (self.k <= self.MAX_K))
                    with m.If(ok):
                        m.d.sync += [m0.eq(0), n0.eq(0), tile.eq(0), j.eq(0), q0.eq(0), kfrom.eq(0),
                                     eoff.eq(0), srow.eq(0), scol.eq(0),
                                     rr.eq(Mux(self.m < R, self.m, R)), cc.eq(Mux(self.n < C, self.n, C)),
                                     wrow.eq(self.w_base), tbase.eq(self.w_base + ctl.data)]
                        m.d.sync += [s.eq(0) for row in preg for s in row]
                        m.d.sync += clear_slice()
                        m.d.sync += state.eq(Mux(self.dataflow == SOS, META, LOAD))
                        with m.If((self.dataflow == DWS) | (self.dataflow == DIS)):
                            m.d.sync += [kb.eq(0), sl.eq(0), state.eq(CLOAD),
                                         rr.eq(Mux(self.dataflow == DWS, Mux(self.m < R, self.m, R),
                                                   Mux(self.k < R, self.k, R))),
                                         cc.eq(Mux(self.dataflow == DWS, Mux(self.k < C, self.k, C),
                                                   Mux(self.n < C, self.n, C)))]
                            m.d.sync += [s.eq(0) for row in vres for s in row]
                    with m.Else():
                        m.d.sync += [self.error.eq(1), self.done.eq(1)]
            with m.Case(META):
                for w in range(self.OW + self.EW):
                    for p in range(P):
                        with m.If(q0 + p == w):
                            m.d.sync += meta.word_select(w, 32).eq(rports[p].data)
                with m.If(q0 + P >= ow + ew):
                    m.d.sync += [q0.eq(0), vptr.eq(tbase + ow + ew)]
                    m.d.sync += state.eq(Mux(nnzc == 0, STORE, LOAD))
                with m.Else():
                    m.d.sync += q0.eq(q0 + P)
            with m.Case(LOAD):
                with m.If(q0 == 0):
                    m.d.sync += clear_slice()
                    for r in range(R):
                        with m.If(r < rr):
                            m.d.sync += [vw[r][0].eq(1), wreg[r][0].eq(0)]
                    for c in range(C):
                        with m.If(c < cc):
                            m.d.sync += vi[0][c].eq(1)
                for p in range(P):
                    for r in range(R):
                        with m.If(ebits[r] & (qrow[r] == q0 + p)):
                            m.d.sync += wreg[r][0].eq(rports[p].data[:WB])
                    for c in range(C):
                        with m.If((c < cc) & (nw + c == q0 + p)):
                            m.d.sync += ireg[0][c].eq(rports[p].data[:WB])
                with m.If(last_load):
                    m.d.sync += [q0.eq(0), pc.eq(0), kfrom.eq(kk + 1), eoff.eq(eoff + rr),
                                 vptr.eq(vptr + nw), state.eq(PROP)]
                with m.Else():
                    m.d.sync += q0.eq(q0 + P)
            with m.Case(PROP):
                with m.If(pc == R + C - 2):
                    m.d.sync += state.eq(Mux(more, LOAD, STORE))
                with m.Else():
                    m.d.sync += pc.eq(pc + 1)
            with m.Case(STORE):
                with m.If(last_store):
                    m.d.sync += [q0.eq(0), lat.eq(0)]
                    if self.LAT:
                        m.d.sync += state.eq(LATW)
                    else:
                        next_tile()
                with m.Else():
                    m.d.sync += [q0.eq(q0 + P), srow.eq(r_), scol.eq(c_)]
            with m.Case(CLOAD):
                with m.If(q0 == 0):
                    m.d.sync += clear_slice()
                    for r in range(R):
                        for c in range(C):
                            with m.If(first_sl & (r < rr) & (c < cc)):
                                m.d.sync += vres[r][c].eq(1)
                    for r in range(R):
                        with m.If(ws & (r < rr)):
                            m.d.sync += [vpin[r][0].eq(1), pin[r][0].eq(0)]
                        with m.If(isf & (r < rr)):
                            m.d.sync += vw[r][0].eq(1)
                    for c in range(C):
                        with m.If(isf & (c < cc)):
                            m.d.sync += [vpin[0][c].eq(1), pin[0][c].eq(0)]
                        with m.If(ws & (c < cc)):
                            m.d.sync += vi[0][c].eq(1)
                for p in range(P):
                    for q, valid, _a, kind, r, c in reqs:
                        dst = {0: wreg, 1: ireg, 2: ireg, 3: wreg, 4: pin}
                        with m.If(valid & (q == q0 + p)):
                            if kind != "res":
                                m.d.sync += dst[kind][r][c].eq(rports[p].data[:WB])
                            else:   # the stationary tile: W (WS) or I (IS)
                                with m.If(ws):
                                    m.d.sync += wreg[r][c].eq(rports[p].data[:WB])
                                with m.Else():
                                    m.d.sync += ireg[r][c].eq(rports[p].data[:WB])
                with m.If(last_cload):
                    m.d.sync += [q0.eq(0), pc.eq(0), state.eq(CPROP)]
                with m.Else():
                    m.d.sync += q0.eq(q0 + P)
            with m.Case(CPROP):
                with m.If(pc == R + C - 2):
                    with m.If(sl + 1 < Mux(ws, self.n, self.m)):
                        m.d.sync += [sl.eq(sl + 1), q0.eq(0), state.eq(CLOAD)]
                    with m.Else():
                        m.d.sync += lat.eq(0)
                        if self.LAT:
                            m.d.sync += state.eq(LATW)
                        else:
                            next_chain()
                with m.Else():
                    m.d.sync += pc.eq(pc + 1)
            with m.Case(LATW):
                with m.If((lat == self.LAT - 1) & chain):
                    next_chain()
                with m.Elif(lat == self.LAT - 1):
                    next_tile()
                with m.Else():
                    m.d.sync += lat.eq(lat + 1)
        return m
