"""Cluster DMA on the real memory system: copies against numpy (1D/2D, both directions, both
TCDM modes), the transfer-duration formula of docs/memory.md, DVFS, the register interface
and every bad-input case."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.cluster_dma import (CMD_EVT_EN, CMD_IRQ_EN, CMD_L2_2D,
                                    CMD_L2_TO_TCDM, CMD_TCDM_2D, ID_FULL, REG, DmaCommand,
                                    DmaError, split_bursts)
from components.l2 import bank_occupancy
from components.marsellus.facts import MEMORY_MAP
from components.marsellus.memory_system import build_memory_system
from tlm import READ, WRITE, GenericPayload, InitiatorSocket, Module, Simulator, Status
from marsellus_regions import DMA_ARGS, TCDM_ARGS  # noqa: E402

L2, L2P, TC, DMA = MEMORY_MAP["l2"], MEMORY_MAP["l2_private"], MEMORY_MAP["tcdm"], MEMORY_MAP["cluster_dma"]


def system(seed=0, fill=True, **params):
    sim = Simulator(seed=seed)
    ms = build_memory_system(sim, params)
    if fill:
        rng = np.random.default_rng(seed)
        for m in (ms.l2, ms.l2_private, ms.tcdm):
            m.array[:] = rng.integers(0, 256, m.size, dtype=np.uint8)
    return sim, ms


def snapshot(ms):
    return [m.array.copy() for m in (ms.l2, ms.l2_private, ms.tcdm, ms.rom)]


def run_cmds(sim, ms, cmds, sequential=True):
    out = []

    async def go():
        if sequential:
            for c in cmds:
                out.append(await ms.dma.run(c))
        else:
            xs = [ms.dma.submit(c) for c in cmds]
            for x in xs:
                out.append(await x)
    sim.spawn(go(), "go")
    sim.run()
    return out


def view(ms, address, n):
    """A numpy view of global [address, address+n) in whichever memory holds it."""
    m = ms.memory_at(address, n)
    a = m.local(address)
    return m.array[a:a + n]


# ----- functional: 1D and 2D against numpy -----------------------------------------------------------
def l2_addr(which, off, span):
    r = L2 if which else L2P
    return r.base + min(off, r.size - span)


@settings(max_examples=40, deadline=None)
@given(to_tcdm=st.booleans(), shared=st.booleans(), l2_off=st.integers(0, L2.size),
       tc_off=st.integers(0, TC.size), n=st.integers(1, 9000), seed=st.integers(0, 50))
def test_1d_copies_burst_mode(to_tcdm, shared, l2_off, tc_off, n, seed):
    check_1d("burst", to_tcdm, shared, l2_off, tc_off, n, seed)


@settings(max_examples=12, deadline=None)
@given(to_tcdm=st.booleans(), shared=st.booleans(), l2_off=st.integers(0, L2.size),
       tc_off=st.integers(0, TC.size), n=st.integers(1, 3000), seed=st.integers(0, 50))
def test_1d_copies_word_mode(to_tcdm, shared, l2_off, tc_off, n, seed):
    check_1d("word", to_tcdm, shared, l2_off, tc_off, n, seed)


def check_1d(mode, to_tcdm, shared, l2_off, tc_off, n, seed):
    sim, ms = system(seed, **{"cluster.tcdm.mode": mode})
    l2 = l2_addr(shared, l2_off, n)
    tc = TC.base + min(tc_off, TC.size - n)
    before = snapshot(ms)
    src = view(ms, l2, n).copy() if to_tcdm else view(ms, tc, n).copy()
    (x,) = run_cmds(sim, ms, [DmaCommand(l2, tc, n, to_tcdm)])
    assert x.ok, x
    dst = view(ms, tc if to_tcdm else l2, n)
    np.testing.assert_array_equal(dst, src)
    # nothing else changed
    dst_mem = ms.tcdm if to_tcdm else ms.memory_at(l2, n)
    for m, b in zip((ms.l2, ms.l2_private, ms.tcdm, ms.rom), before):
        if m is dst_mem:
            a = m.local(tc if to_tcdm else l2)
            b = b.copy()
            b[a:a + n] = src
        np.testing.assert_array_equal(m.array, b)
    assert ms.dma.stats.path == "cluster.dma" and not sim.errors


def geometry_2d():
    return st.tuples(st.integers(1, 24).map(lambda r: 4 * r),        # row_len
                     st.integers(1, 12),                              # rows
                     st.integers(0, 16).map(lambda e: 4 * e),         # extra L2 stride
                     st.integers(0, 16).map(lambda e: 4 * e),         # extra TCDM stride
                     st.sampled_from(["l2", "tcdm", "both"]))


@settings(max_examples=30, deadline=None)
@given(geo=geometry_2d(), to_tcdm=st.booleans(), word=st.booleans(),
       l2_off=st.integers(0, 50000), tc_off=st.integers(0, 50000), seed=st.integers(0, 20))
def test_2d_copies_against_numpy_slicing(geo, to_tcdm, word, l2_off, tc_off, seed):
    row_len, rows, xl, xt, sides = geo
    l2_stride = row_len + xl if sides in ("l2", "both") else None
    tc_stride = row_len + xt if sides in ("tcdm", "both") else None
    ls, ts = l2_stride or row_len, tc_stride or row_len
    sim, ms = system(seed, **{"cluster.tcdm.mode": "word" if word else "burst"})
    l2 = L2.base + 2 * l2_off                     # any alignment: only strides must be words
    tc = TC.base + tc_off
    src_base, src_pitch, dst_base, dst_pitch = ((l2, ls, tc, ts) if to_tcdm else (tc, ts, l2, ls))
    src_full = view(ms, src_base, (rows - 1) * src_pitch + row_len)
    src = np.lib.stride_tricks.as_strided(src_full, (rows, row_len), (src_pitch, 1)).copy()
    dst_mem = ms.memory_at(dst_base, 1)
    expected = dst_mem.array.copy()
    d0 = dst_mem.local(dst_base)
    for r in range(rows):
        expected[d0 + r * dst_pitch: d0 + r * dst_pitch + row_len] = src[r]
    cmd = DmaCommand(l2, tc, rows * row_len, to_tcdm, row_len=row_len, l2_stride=l2_stride,
                     tcdm_stride=tc_stride)
    (x,) = run_cmds(sim, ms, [cmd])
    assert x.ok
    np.testing.assert_array_equal(dst_mem.array, expected)


def test_tile_extraction_matches_numpy():
    """A 2D tile of a (64, 100) int8 tensor in L2 -> contiguous in TCDM -> back elsewhere."""
    sim, ms = system(3)
    h, w = 64, 100
    tensor = np.random.default_rng(1).integers(-128, 128, (h, w), dtype=np.int8)
    ms.load(L2.base, tensor.tobytes())
    r0, c0, th, tw = 8, 20, 16, 48
    cmds = [DmaCommand(L2.base + r0 * w + c0, TC.base, th * tw, True, row_len=tw, l2_stride=w),
            DmaCommand(L2.base + 0x8000, TC.base, th * tw, False)]
    xs = run_cmds(sim, ms, cmds)
    assert all(x.ok for x in xs)
    tile = np.frombuffer(ms.dump(TC.base, th * tw), dtype=np.int8).reshape(th, tw)
    np.testing.assert_array_equal(tile, tensor[r0:r0 + th, c0:c0 + tw])
    assert ms.dump(L2.base + 0x8000, th * tw) == tile.tobytes()


def test_modes_agree_on_a_sequence_of_transfers():
    def go(mode):
        sim, ms = system(7, **{"cluster.tcdm.mode": mode})
        cmds = [DmaCommand(L2.base + 0x100, TC.base, 5000, True),
                DmaCommand(L2.base + 0x4000, TC.base + 0x2000, 4 * 40, True, row_len=40,
                           l2_stride=100),
                DmaCommand(L2P.base + 0x10, TC.base + 8, 3000, False),
                DmaCommand(L2.base + 0x9000, TC.base + 0x2000, 160, False, row_len=16,
                           tcdm_stride=64)]
        xs = run_cmds(sim, ms, cmds, sequential=False)
        assert all(x.ok for x in xs)
        return snapshot(ms)
    for a, b in zip(go("burst"), go("word")):
        np.testing.assert_array_equal(a, b)


def test_direction_change_waits_for_bursts_in_flight():
    """TCDM -> L2 then L2 -> TCDM of the same L2 bytes, submitted back to back: the second
    must read what the first wrote."""
    sim, ms = system(5)
    a, b = TC.base, TC.base + 0x8000
    xs = run_cmds(sim, ms, [DmaCommand(L2.base, a, 8192, False),
                            DmaCommand(L2.base, b, 8192, True)], sequential=False)
    assert all(x.ok for x in xs)
    assert ms.dump(a, 8192) == ms.dump(b, 8192) == ms.dump(L2.base, 8192)


# ----- burst splitting -------------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(l2=st.integers(0, 1 << 20), n=st.integers(1, 20000), rows=st.integers(1, 4),
       gap=st.integers(0, 3000))
def test_split_bursts_follow_the_axi_rules(l2, n, rows, gap):
    row = -(-n // rows)
    cmd = DmaCommand(l2, 0, row * rows, True, row_len=row if rows > 1 else None,
                     l2_stride=row + gap if rows > 1 else None)
    bursts = split_bursts(cmd)
    covered = []
    for a, t, k in bursts:
        assert k > 0
        assert a // 4096 == (a + k - 1) // 4096                 # no 4 KiB crossing
        assert (a % 8 + k + 7) // 8 <= 256                      # <= 256 beats of 64 bit
        covered.append((a, t, k))
    # the bursts tile every row exactly, in order, on both sides
    pos = [(cmd.l2 + r * cmd.l2_step, cmd.tcdm + r * cmd.tcdm_step) for r in range(cmd.rows)]
    i = 0
    for la, ta in pos:
        left = cmd.row_bytes
        while left:
            a, t, k = covered[i]
            assert (a, t) == (la, ta)
            la, ta, left, i = la + k, ta + k, left - k, i + 1
    assert i == len(covered)


# ----- timing: the duration formula ------------------------------------------------------------------------
def hops(ms, cmd):
    """The fixed part of the duration formula of docs/memory.md (cmd + L_path + L_tcdm),
    L_path, and per burst the occupancy of each hop it crosses (each hop is a resource of
    its own: DMA port, cluster bus, TCDM port, SOC crossbar, every L2 bank)."""
    p = ms.params
    tc, ts = ms.cluster_clock.period, ms.soc_clock.period
    cdc = p["cdc"]
    l_cdc = cdc.soc_cycles * ts + cdc.cluster_cycles * tc
    l2 = ms.memory_at(cmd.l2)
    l_path = p["cluster.xbar"].latency * tc + 2 * l_cdc + (p["soc.xbar"].latency
                                                            + l2.params.latency) * ts
    dma = p["cluster.dma"]
    fixed = dma.cmd_latency * tc + l_path + p["cluster.tcdm"].latency * tc
    tcdm_port = p["cluster.tcdm"].dma_port_bytes // 4
    out = []
    for a, t, b in split_bursts(cmd, dma.beat_bytes, dma.max_burst_beats, dma.page_bytes):
        lt = t - TC.base
        occ = {"dma": math.ceil(b / dma.beat_bytes) * tc,
               "cluster.xbar": math.ceil(b / p["cluster.xbar"].width) * tc,
               "tcdm": math.ceil(((lt + b - 1) // 4 - lt // 4 + 1) / tcdm_port) * tc,
               "soc.xbar": math.ceil(b / p["soc.xbar"].width) * ts}
        words = bank_occupancy(l2.local(a), b, l2.params.banks, l2.params.bank_word_bytes,
                               l2.params.interleaving, l2.size)
        occ.update({f"bank{i}": w * ts for i, w in enumerate(words) if w})
        out.append(occ)
    return fixed, l_path, out


def formula(ms, cmd, outstanding_ok=True):
    """docs/memory.md: T = cmd*Tc + L_path + L_tcdm*Tc + sum_k occ(B_k), occ = the largest
    occupancy of the burst's hops (enough bursts in flight); with max_outstanding = 1:
    cmd*Tc + sum_k (L_path + L_tcdm*Tc + occ(B_k))."""
    fixed, l_path, occ = hops(ms, cmd)
    total = fixed + sum(max(o.values()) for o in occ)
    if outstanding_ok:
        return total
    return total + (len(occ) - 1) * (l_path + ms.params["cluster.tcdm"].latency
                                     * ms.cluster_clock.period)


def bounds(ms, cmd):
    """(lower, exact?): every hop must carry all its bursts one after the other; the
    formula is exact when one hop is the bottleneck of every burst."""
    fixed, _, occ = hops(ms, cmd)
    names = set().union(*occ)
    lower = fixed + max(sum(o.get(h, 0) for o in occ) for h in names)
    exact = any(all(o.get(h, -1) == max(o.values()) for o in occ) for h in names)
    return lower, exact


CLOCKS = [(400e6, 400e6), (400e6, 200e6), (200e6, 400e6), (100e6, 420e6), (333e6, 250e6)]


@pytest.mark.parametrize("f_soc,f_cl", CLOCKS)
@pytest.mark.parametrize("to_tcdm", [True, False])
@pytest.mark.parametrize("n_bursts", [1, 3, 16])
def test_duration_matches_the_formula(f_soc, f_cl, to_tcdm, n_bursts):
    sim, ms = system(fill=False, **{"soc.clock.freq": f_soc, "cluster.clock.freq": f_cl,
                                    "cluster.tcdm.latency": 1, "soc.l2.latency": 2})
    cmd = DmaCommand(L2.base + 0x4000, TC.base + 0x800, 2048 * n_bursts, to_tcdm)
    (x,) = run_cmds(sim, ms, [cmd])
    assert x.ok and x.duration == formula(ms, cmd)
    assert sim.stats.as_dict()["cluster.dma"]["bursts"] == n_bursts


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 256).map(lambda b: 8 * b), to_tcdm=st.booleans(),
       clocks=st.sampled_from(CLOCKS), cmd_lat=st.integers(0, 4))
def test_single_burst_duration(n, to_tcdm, clocks, cmd_lat):
    sim, ms = system(fill=False, **{"soc.clock.freq": clocks[0], "cluster.clock.freq": clocks[1],
                                    "cluster.dma.cmd_latency": cmd_lat})
    cmd = DmaCommand(L2.base + 0x1000, TC.base, n, to_tcdm)
    (x,) = run_cmds(sim, ms, [cmd])
    assert x.duration == formula(ms, cmd)


@settings(max_examples=60, deadline=None)
@given(shared=st.booleans(), l2_off=st.integers(0, 1 << 16), tc_off=st.integers(0, 1 << 14),
       n=st.integers(1, 12000), to_tcdm=st.booleans(), clocks=st.sampled_from(CLOCKS),
       rows=st.integers(1, 6), gap=st.integers(0, 64).map(lambda g: 4 * g))
def test_duration_formula_for_any_shape(shared, l2_off, tc_off, n, to_tcdm, clocks, rows, gap):
    """Any size, alignment, row count and L2 memory (the private banks are 32-bit wide:
    there the banks, not the crossbar, set the occupancy)."""
    sim, ms = system(fill=False, **{"soc.clock.freq": clocks[0], "cluster.clock.freq": clocks[1]})
    if rows > 1:
        row = max(4, (n // rows) & ~3)
        n = row * rows
        span = (rows - 1) * (row + gap) + row
        kw = dict(row_len=row, l2_stride=row + gap)
    else:
        span, kw = n, {}
    if span > 60000:
        return
    l2 = l2_addr(shared, l2_off, span)
    tc = TC.base + 8 * (min(tc_off, TC.size - n) // 8)
    cmd = DmaCommand(l2, tc, n, to_tcdm, **kw)
    (x,) = run_cmds(sim, ms, [cmd])
    assert x.ok
    lower, exact = bounds(ms, cmd)
    assert x.duration >= lower
    if min(b for *_, b in split_bursts(cmd)) >= 16 or len(split_bursts(cmd)) == 1:
        # enough bursts in flight: the formula, exact when one hop limits every burst
        assert x.duration <= formula(ms, cmd)
        if exact:
            assert x.duration == formula(ms, cmd)


def test_one_outstanding_burst_exposes_the_latency():
    sim, ms = system(fill=False, **{"cluster.dma.max_outstanding": 1})
    cmd = DmaCommand(L2.base, TC.base, 4 * 2048, True)
    (x,) = run_cmds(sim, ms, [cmd])
    assert x.duration == formula(ms, cmd, outstanding_ok=False)
    sim2, ms2 = system(fill=False)
    (y,) = run_cmds(sim2, ms2, [cmd])
    assert y.duration == formula(ms2, cmd) < x.duration


def test_transfers_of_one_direction_pipeline_back_to_back():
    sim, ms = system(fill=False)
    a = DmaCommand(L2.base, TC.base, 4096, True)
    b = DmaCommand(L2.base + 0x2000, TC.base + 0x2000, 6144, True)
    xs = run_cmds(sim, ms, [a, b], sequential=False)
    both = DmaCommand(L2.base, TC.base, 4096 + 6144, True)
    assert xs[1].end_time - xs[0].push_time == formula(ms, both)


def test_word_mode_adds_the_last_burst_into_tcdm():
    """Word mode (same clocks): L2 -> TCDM stores each burst into the TCDM after it arrived,
    so the last burst's TCDM cycles add; TCDM -> L2 streams like burst mode."""
    for to_tcdm in (True, False):
        sim, ms = system(fill=False, **{"cluster.tcdm.mode": "word"})
        cmd = DmaCommand(L2.base, TC.base, 3 * 2048, to_tcdm)
        (x,) = run_cmds(sim, ms, [cmd])
        tail = 2048 // 8 * ms.cluster_clock.period if to_tcdm else 0
        assert x.duration == formula(ms, cmd) + tail


def test_changing_the_cluster_clock_changes_dma_time():
    cmd = DmaCommand(L2.base, TC.base, 32 * 1024, True)
    durations = {}
    for f in (400e6, 200e6, 100e6):
        sim, ms = system(fill=False, **{"soc.clock.freq": 400e6, "cluster.clock.freq": f})
        (x,) = run_cmds(sim, ms, [cmd])
        assert x.duration == formula(ms, cmd)
        durations[f] = x.duration
    # cluster-bound below 400 MHz: halving the clock about doubles the time
    assert 1.9 < durations[200e6] / durations[400e6] < 2.05
    assert 1.9 < durations[100e6] / durations[200e6] < 2.05
    # a DVFS step in the middle of a transfer: between the two constant-clock times
    sim, ms = system(fill=False, **{"soc.clock.freq": 400e6, "cluster.clock.freq": 400e6})
    out = []

    async def go():
        x = ms.dma.submit(cmd)
        await sim.wait(durations[400e6] // 2)
        ms.cluster_clock.set_frequency(200e6)
        out.append(await x)
    sim.spawn(go(), "go")
    sim.run()
    assert durations[400e6] < out[0].duration < durations[200e6]


# ----- registers -----------------------------------------------------------------------------------
class Core(Module):
    """A cluster-side initiator on the cluster bus (how a core reaches the DMA registers)."""

    def __init__(self, parent, name, target):
        super().__init__(parent, name)
        self.socket = InitiatorSocket(self, "socket")
        self.socket.bind(target)

    async def wr(self, reg, value):
        p = GenericPayload(WRITE, DMA.base + REG[reg], bytearray(value.to_bytes(4, "little")),
                           initiator=self.path)
        d = await self.socket.b_transport(p, 0)
        assert p.status == Status.OK
        await self.sim.wait(d)

    async def rd(self, reg):
        p = GenericPayload(READ, DMA.base + REG[reg], bytearray(4), initiator=self.path)
        d = await self.socket.b_transport(p, 0)
        assert p.status == Status.OK
        await self.sim.wait(d)
        return int.from_bytes(p.data, "little")


def test_register_programmed_2d_transfer_with_events():
    sim, ms = system(11)
    core = Core(ms.cluster, "core0", ms.cluster_xbar.target_socket)
    fired = {"done": 0, "irq": 0}
    ms.dma.done_event.add_callback(lambda e: fired.__setitem__("done", fired["done"] + 1))
    ms.dma.irq.add_callback(lambda e: fired.__setitem__("irq", fired["irq"] + 1))
    log = {}

    async def go():
        await core.wr("TCDM_ADDR", TC.base + 0x100)
        await core.wr("L2_ADDR", L2.base + 0x40)
        await core.wr("ROW_LEN", 32)
        await core.wr("L2_STRIDE", 256)
        tid = await core.rd("CMD")
        log["tid"] = tid
        await core.wr("CMD", 8 * 32 | CMD_L2_TO_TCDM | CMD_L2_2D | CMD_EVT_EN | CMD_IRQ_EN)
        log["last"] = await core.rd("LAST_ID")
        log["busy"] = await core.rd("STATUS")
        while await core.rd("STATUS") & (1 << tid):
            pass
        log["done"] = await core.rd("DONE")
        log["alloc"] = await core.rd("FREE")
        await core.wr("FREE", 1 << tid)
        log["alloc_after"] = await core.rd("FREE")
        log["error"] = await core.rd("ERROR")
    sim.spawn(go(), "go")
    sim.run()
    tid = log["tid"]
    assert tid == 0 and log["last"] == tid and log["busy"] == 1 << tid
    assert log["done"] == 1 << tid and log["alloc"] == 1 << tid and log["alloc_after"] == 0
    assert log["error"] == 0 and fired == {"done": 1, "irq": 1}
    src = ms.l2.array[0x40:0x40 + 8 * 256].reshape(8, 256)[:, :32]
    np.testing.assert_array_equal(ms.tcdm.array[0x100:0x100 + 256], src.reshape(-1))
    assert ms.dma.regs["CMD"].doc and len(ms.dma.regs.table()) == len(REG)


def push_via_registers(core, l2, tc, word, row_len=0, l2_stride=0, tc_stride=0):
    async def go():
        await core.wr("TCDM_ADDR", tc)
        await core.wr("L2_ADDR", l2)
        await core.wr("ROW_LEN", row_len)
        await core.wr("L2_STRIDE", l2_stride)
        await core.wr("TCDM_STRIDE", tc_stride)
        await core.wr("CMD", word)
        return await core.rd("ERROR"), await core.rd("ERR_ID")
    return go()


BAD = [  # (l2, tcdm, word, row_len, l2_stride, tcdm_stride, expected error)
    (L2.end - 100, TC.base, 200 | CMD_L2_TO_TCDM, 0, 0, 0, DmaError.L2_RANGE),
    (L2.base, TC.end - 100, 200 | CMD_L2_TO_TCDM, 0, 0, 0, DmaError.TCDM_RANGE),
    (MEMORY_MAP["boot_rom"].base, TC.base, 64 | CMD_L2_TO_TCDM, 0, 0, 0, DmaError.L2_RANGE),
    (L2.base, TC.base, 64, 0, 0, 0, DmaError.NONE),   # sanity: valid TCDM -> L2
    (L2.base, TC.base, 0 | CMD_L2_TO_TCDM, 0, 0, 0, DmaError.ZERO_LEN),
    (L2.base, TC.base, 64 | CMD_L2_TO_TCDM | CMD_L2_2D, 0, 32, 0, DmaError.ZERO_LEN),
    (L2.base, TC.base, 64 | CMD_L2_TO_TCDM | CMD_L2_2D, 16, 18, 0, DmaError.GEOMETRY),
    (L2.base, TC.base, 60 | CMD_L2_TO_TCDM | CMD_TCDM_2D, 6, 0, 12, DmaError.GEOMETRY),
    (L2.base, TC.base, 60 | CMD_L2_TO_TCDM | CMD_L2_2D, 16, 32, 0, DmaError.GEOMETRY),
    (L2.base, TC.base, 64 | CMD_L2_TO_TCDM | CMD_L2_2D, 16, 8, 0, DmaError.GEOMETRY),
    (L2.end - 64, TC.base, 64 | CMD_L2_TO_TCDM | CMD_L2_2D, 16, 32, 0, DmaError.L2_RANGE),
    (L2P.end - 32, TC.base, 64 | CMD_L2_TO_TCDM, 0, 0, 0, DmaError.NONE),  # private->shared: one window
]


@pytest.mark.parametrize("case", BAD, ids=lambda c: DmaError(c[-1]).name or "OK")
def test_bad_commands_report_and_touch_nothing(case):
    l2, tc, word, rl, ls, ts, want = case
    sim, ms = system(2)
    core = Core(ms.cluster, "core0", ms.cluster_xbar.target_socket)
    errs = []
    ms.dma.error_event.add_callback(lambda e: errs.append(sim.now))
    irqs = []
    ms.dma.irq.add_callback(lambda e: irqs.append(sim.now))
    before = snapshot(ms)
    out = []

    async def go():
        out.append(await push_via_registers(core, l2, tc, word | CMD_IRQ_EN, rl, ls, ts))
        await sim.wait(100_000)
        out.append(await core.rd("STATUS"))
        await core.wr("ERROR", 0xFF)                       # write 1 to clear
        out.append(await core.rd("ERROR"))
    sim.spawn(go(), "go")
    sim.run()
    (error, err_id), status, cleared = out
    assert error == int(want) and status == 0 and cleared == 0
    if want:
        assert err_id == 0 and len(errs) == 1 and len(irqs) == 1
        for m, b in zip((ms.l2, ms.l2_private, ms.tcdm, ms.rom), before):
            np.testing.assert_array_equal(m.array, b)
        assert sim.stats.as_dict()["cluster.dma"]["failed"] == 1
    else:
        assert errs == [] and len(irqs) == 1


def test_python_check_reports_every_error_bit():
    sim, ms = system(fill=False)
    assert ms.dma.check(DmaCommand(L2.end - 4, TC.end - 4, 8)) == DmaError.L2_RANGE | DmaError.TCDM_RANGE
    x = ms.dma.submit(DmaCommand(L2.base, TC.base, 0))
    assert x.finished and x.error == DmaError.ZERO_LEN and x.id == 0 and ms.dma.free_ids == 16
    y = ms.dma.submit(DmaCommand(L2.base, TC.base, 64, auto_free=False))
    assert ms.dma.transfer(y.id) is y and ms.dma.free_ids == 15
    sim.run()
    assert y.ok and ms.dma.transfer(y.id) is y and ms.dma.free_ids == 15  # DONE until freed


def test_full_queue_drops_the_command():
    sim, ms = system(4, **{"cluster.dma.queue_depth": 4})
    core = Core(ms.cluster, "core0", ms.cluster_xbar.target_socket)
    before = snapshot(ms)
    out = {}

    async def go():
        ids = []
        for i in range(4):      # four transfers left unfreed (no AUTO_FREE)
            await push_via_registers(core, L2.base + 64 * i, TC.base + 64 * i,
                                     64 | CMD_L2_TO_TCDM)
            ids.append(await core.rd("LAST_ID"))
        out["ids"] = ids
        out["reserve"] = await core.rd("CMD")          # no free ID: the "full" value
        out["err"] = await push_via_registers(core, L2.base + 0x1000, TC.base + 0x1000,
                                              256 | CMD_L2_TO_TCDM)
        out["last"] = await core.rd("LAST_ID")
        await sim.wait(200_000)
        out["done"] = await core.rd("DONE")
        await core.wr("FREE", 1 << 2)
        out["reserve_after_free"] = await core.rd("CMD")
    sim.spawn(go(), "go")
    sim.run()
    assert out["ids"] == [0, 1, 2, 3]
    assert out["reserve"] == ID_FULL and out["last"] == ID_FULL
    assert out["err"] == (int(DmaError.FULL), ID_FULL)
    assert out["done"] == 0b1111 and out["reserve_after_free"] == 2
    st = sim.stats.as_dict()["cluster.dma"]
    assert st["dropped"] == 1 and st["alloc_full"] == 1 and st["transfers"] == 4
    # the dropped command moved nothing: TCDM differs from before only in the 4 copies
    exp = before[2].copy()
    exp[0:256] = ms.l2.array[0:256]
    np.testing.assert_array_equal(ms.tcdm.array, exp)


def test_python_run_waits_for_a_free_id_and_busy_ids_are_not_freed():
    sim, ms = system(4, **{"cluster.dma.queue_depth": 2})
    out = []

    async def go():
        a = ms.dma.submit(DmaCommand(L2.base, TC.base, 4096, True))
        b = ms.dma.submit(DmaCommand(L2.base, TC.base + 0x1000, 4096, True))
        assert ms.dma.free_ids == 0 and not ms.dma.free(a.id)
        c = await ms.dma.run(DmaCommand(L2.base, TC.base + 0x2000, 4096, True))
        out.extend([a, b, c])
    sim.spawn(go(), "go")
    sim.run()
    a, b, c = out
    assert all(x.ok for x in out) and c.push_time >= min(a.end_time, b.end_time)
    assert sim.stats.as_dict()["cluster.dma"]["free_busy_ignored"] == 1


def test_bus_error_mid_transfer_sets_bus_bit():
    """An error response the command decoder cannot foresee (here the DMA's AXI side is
    bound to a bus on which nothing is mapped) ends the transfer with BUS, and the TCDM
    is not written."""
    from components.cluster_dma import ClusterDma
    from components.tcdm import Tcdm
    from tlm import Clock, Router
    sim = Simulator()
    clk = Clock(sim, "cluster.clock", 400e6)
    cl = Module(sim, "cluster")
    tcdm = Tcdm(cl, "tcdm", clk, **TCDM_ARGS)
    dma = ClusterDma(cl, "dma", clk, **DMA_ARGS)
    empty = Router(cl, "xbar", clock=clk, latency=1)
    dma.axi.bind(empty.target_socket)
    dma.tcdm.bind(tcdm.dma_ports[0])
    dma.regs.socket.optional = True
    tcdm.array[:] = 7
    errs = []
    dma.error_event.add_callback(lambda e: errs.append(sim.now))
    out = []

    async def go():
        out.append(await dma.submit(DmaCommand(L2.base, TC.base, 8192, True)))
        out.append(await dma.submit(DmaCommand(L2.base, TC.base, 64, False)))
    sim.spawn(go(), "go")
    sim.run()
    assert [x.error for x in out] == [DmaError.BUS, DmaError.BUS] and len(errs) == 2
    assert (tcdm.array == 7).all()
    assert sim.errors and sim.errors[0].initiator == "cluster.dma"
    assert dma.error_bits == DmaError.BUS and dma.idle
