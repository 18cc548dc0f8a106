"""TCDM: burst-mode timing formula, word-mode arbitration (hand-computed cases), the two
modes' functional equivalence, bad input, DMI and power-off."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.marsellus.facts import MEMORY_MAP
from components.tcdm import PATTERN, Tcdm, TcdmParams, TcdmPattern
from tlm import READ, WRITE, Clock, GenericPayload, InitiatorSocket, Module, Simulator, Status
from tlm.params import ParameterError
from tlm.params import resolve
from marsellus_regions import TCDM_ARGS  # noqa: E402

BASE = MEMORY_MAP["tcdm"].base
SIZE = MEMORY_MAP["tcdm"].size
F = 400e6
T = 2500  # ps at 400 MHz


class Master(Module):
    """A test initiator on one TCDM port; records the end time of every access."""

    def __init__(self, parent, name, target):
        super().__init__(parent, name)
        self.invalidated: list[tuple[int, int]] = []
        self.socket = InitiatorSocket(self, "socket",
                                      invalidate_direct_mem_ptr=lambda s, e: self.invalidated.append((s, e)))
        self.socket.bind(target)
        self.ends: list[int] = []

    async def access(self, cmd, address, data, *, delay=0, pattern=None, be=None):
        p = GenericPayload(cmd, address, data, len(data), initiator=self.path)
        if pattern is not None:
            p.set_extension(PATTERN, pattern)
        p.byte_enable = be
        d = await self.socket.b_transport(p, delay)
        self.ends.append(self.sim.now + d)
        return p


def make(mode="word", **kw):
    sim = Simulator(seed=3)
    clk = Clock(sim, "clk", F)
    top = Module(sim, "cluster")
    tcdm = Tcdm(top, "tcdm", clk, TcdmParams(mode=mode, **kw), **TCDM_ARGS)
    return sim, clk, top, tcdm


def stats(sim):
    return sim.stats.as_dict().get("cluster.tcdm", {})


# ----- ports and parameters ----------------------------------------------------------------------
def test_port_api():
    sim, clk, top, t = make("burst")
    assert t.port("core3") is t.core_ports[3]
    assert t.port("dma0") is t.dma_ports[0]
    assert t.port("soc") is t.soc_port and t.port("rbe") is t.rbe_port
    assert [t.ports[n].width for n in ("core0", "dma0", "soc", "rbe")] == [4, 8, 4, 36]
    with pytest.raises(KeyError, match="core16"):
        t.port("core16")


def test_params_errors_name_path():
    with pytest.raises(ParameterError, match="cluster.tcdm.mode"):
        resolve(TcdmParams, {"mode": "fast"}, "cluster.tcdm")
    with pytest.raises(ParameterError, match="conflict_factor"):
        resolve(TcdmParams, {"conflict_factor": 0.5}, "cluster.tcdm")
    with pytest.raises(ParameterError, match="did you mean 'mode'"):
        resolve(TcdmParams, {"mdoe": "word"}, "cluster.tcdm")


# ----- burst mode: the timing formula ---------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(port=st.sampled_from(["core0", "dma0", "soc", "rbe"]), addr=st.integers(0, SIZE - 4096),
       n=st.integers(1, 4096), lat=st.integers(0, 3),
       cf=st.sampled_from([1.0, 1.25, 1.5, 2.0]), glob=st.booleans())
def test_burst_duration_formula(port, addr, n, lat, cf, glob):
    sim, clk, top, t = make("burst", latency=lat, conflict_factor=cf)
    m = Master(top, "m", t.port(port))
    k = t.ports[port].width // 4
    words = (addr + n - 1) // 4 - addr // 4 + 1
    expected = (lat + math.ceil(math.ceil(words / k) * cf - 1e-9)) * T

    async def go():
        p = await m.access(READ, addr + (BASE if glob else 0), bytearray(n))
        assert p.status == Status.OK
    sim.spawn(go(), "go")
    sim.run()
    assert m.ends == [expected]


def test_burst_port_serialises_and_occupancy_takes_the_max():
    sim, clk, top, t = make("burst")
    m = Master(top, "m", t.dma_ports[0])

    async def go():
        # two 64-byte accesses annotated at the same time: the second waits for the first
        p1 = GenericPayload(WRITE, 0, bytearray(64), initiator=m.path)
        p2 = GenericPayload(WRITE, 64, bytearray(64), initiator=m.path)
        d1 = await m.socket.b_transport(p1, 0)
        d2 = await m.socket.b_transport(p2, 0)
        assert (d1, d2) == (8 * T, 16 * T)
        # a burst whose data already streamed through a slower hop adds nothing...
        p3 = GenericPayload(WRITE, 128, bytearray(64), initiator=m.path)
        p3.bw_occupancy = 20 * T
        d3 = await m.socket.b_transport(p3, 30 * T)
        assert d3 == 30 * T
        # ...but one arriving right behind it follows its data at the port's rate
        p4 = GenericPayload(WRITE, 192, bytearray(64), initiator=m.path)
        p4.bw_occupancy = 20 * T
        d4 = await m.socket.b_transport(p4, 30 * T)
        assert d4 == 38 * T
    sim.spawn(go(), "go")
    sim.run()


# ----- word mode: hand-computed arbitration ------------------------------------------------------------
def test_single_core_burst_takes_one_cycle_per_word():
    sim, clk, top, t = make("word", latency=1)
    m = Master(top, "m", t.core_ports[5])

    async def go():
        await m.access(READ, BASE + 40, bytearray(40))   # 10 words
    sim.spawn(go(), "go")
    sim.run()
    assert m.ends == [(10 + 1) * T]
    s = stats(sim)
    assert s["core5.words"] == 10 and s["core5.stall_cycles"] == 0 and s["conflict_cycles"] == 0


def test_sixteen_cores_one_bank():
    sim, clk, top, t = make("word")
    ms = [Master(top, f"c{i}", t.core_ports[i]) for i in range(16)]
    for i, m in enumerate(ms):
        # address i*128: word 32*i, all in bank 0
        sim.spawn(m.access(READ, i * 128, bytearray(4)), f"p{i:02d}")
    sim.run()
    s = stats(sim)
    for i, m in enumerate(ms):
        assert m.ends == [(i + 1) * T]            # round robin from core 0
        assert s[f"core{i}.stall_cycles"] == i     # the last one waits 15 cycles
        assert s[f"core{i}.conflicts"] == i
    assert s["conflict_cycles"] == 15
    assert s["cycles"] == 16


def test_sixteen_cores_sixteen_banks_no_conflict():
    sim, clk, top, t = make("word")
    ms = [Master(top, f"c{i}", t.core_ports[i]) for i in range(16)]
    for i, m in enumerate(ms):
        sim.spawn(m.access(READ, 4 * i, bytearray(4)), f"p{i:02d}")
    sim.run()
    s = stats(sim)
    assert all(m.ends == [T] for m in ms)
    assert s["conflict_cycles"] == 0 and s["cycles"] == 1
    assert all(s[f"core{i}.stall_cycles"] == 0 for i in range(16))


def test_lic_round_robin_alternates():
    sim, clk, top, t = make("word")
    a, b = Master(top, "a", t.core_ports[0]), Master(top, "b", t.core_ports[1])
    pat = TcdmPattern(row_bytes=4, count=4, stride=128)      # 4 words, all in bank 0
    sim.spawn(a.access(READ, 0, bytearray(16), pattern=pat), "pa")
    sim.spawn(b.access(READ, 4096, bytearray(16), pattern=pat), "pb")
    sim.run()
    # grants alternate: a in cycles 0,2,4,6 ; b in 1,3,5,7
    assert a.ends == [7 * T] and b.ends == [8 * T]
    s = stats(sim)
    assert (s["core0.stall_cycles"], s["core1.stall_cycles"]) == (3, 4)


def test_lic_vs_rbe_multiplexer_round_robin():
    sim, clk, top, t = make("word")
    core, rbe = Master(top, "core", t.core_ports[0]), Master(top, "rbe", t.rbe_port)
    # core: 4 words in bank 0; RBE: 4 rows of 9 words at banks 0..8
    sim.spawn(core.access(READ, 0, bytearray(16), pattern=TcdmPattern(4, 4, 128)), "pc")
    sim.spawn(rbe.access(READ, 0, bytearray(144), pattern=TcdmPattern(36, 4, 128)), "pr")
    sim.run()
    # bank 0 alternates RBE, core, RBE, core...: RBE rows finish in cycles 0,2,4,6 and the
    # core's words in cycles 1,3,5,7
    assert rbe.ends == [7 * T] and core.ends == [8 * T]
    s = stats(sim)
    assert s["rbe.stall_cycles"] == 3 and s["core0.stall_cycles"] == 4
    assert s["rbe.words"] == 36 and s["core0.words"] == 4


def test_dma_port_two_words_per_cycle_and_partial_grants():
    sim, clk, top, t = make("word")
    dma, core = Master(top, "dma", t.dma_ports[0]), Master(top, "core", t.core_ports[0])
    # DMA: 16 words from word 0 (banks 0..15, 2 per cycle); core hits bank 1 at cycle 0
    sim.spawn(dma.access(WRITE, 0, bytearray(64)), "pd")
    sim.spawn(core.access(READ, 4 + 128, bytearray(4)), "pc")
    sim.run()
    # cycle 0: bank 0 -> dma, bank 1: core (index 0) beats dma (index 16); dma finishes
    # its first access in cycle 1 and the remaining 7 accesses in cycles 2..8
    assert core.ends == [T]
    assert dma.ends == [9 * T]
    s = stats(sim)
    assert s["dma0.stall_cycles"] == 1 and s["dma0.conflicts"] == 1


def test_request_joins_the_first_edge_at_or_after_its_time():
    sim, clk, top, t = make("word")
    m = Master(top, "m", t.core_ports[0])

    async def go():
        await m.access(READ, 0, bytearray(4), delay=T // 2)   # mid-cycle -> edge T
        await m.access(READ, 0, bytearray(4))                 # at 2T, an edge -> edge 2T
    sim.spawn(go(), "go")
    sim.run()
    assert m.ends == [2 * T, 3 * T]


def test_arbiter_sleeps_while_idle():
    sim, clk, top, t = make("word")
    m = Master(top, "m", t.core_ports[0])

    async def go():
        await m.access(READ, 0, bytearray(8))
        await sim.wait(1_000_000)                  # 400 idle cycles
        await m.access(WRITE, 0, bytearray(12))
    sim.spawn(go(), "go")
    sim.run()
    assert stats(sim)["cycles"] == 2 + 3


def test_same_port_transactions_queue_in_order():
    sim, clk, top, t = make("word")
    m = Master(top, "m", t.dma_ports[0])
    sim.spawn(m.access(READ, 0, bytearray(16)), "p1")    # 2 cycles
    sim.spawn(m.access(READ, 64, bytearray(32)), "p2")   # 4 cycles, after p1
    sim.run()
    assert sorted(m.ends) == [2 * T, 6 * T]


# ----- functional equivalence of the two modes --------------------------------------------------------
PORTS = ["core0", "core7", "dma0", "soc", "rbe"]


def ops_strategy():
    op = st.tuples(st.sampled_from(PORTS), st.sampled_from([READ, WRITE]),
                   st.integers(0, SIZE - 1), st.integers(1, 300),
                   st.one_of(st.none(), st.tuples(st.integers(1, 40), st.integers(1, 6),
                                                  st.integers(0, 400))),
                   st.booleans(), st.integers(0, 2 ** 32 - 1))
    return st.lists(op, min_size=1, max_size=12)


def run_ops(mode, ops, init, concurrent):
    sim, clk, top, t = make(mode)
    t.load(0, init)
    masters = {n: Master(top, f"m_{n}", t.port(n)) for n in PORTS}
    reads: dict[int, tuple] = {}

    async def one(i, port, cmd, addr, n, pat, use_be, seed):
        rng = np.random.default_rng(seed)
        pattern = None
        if pat is not None:
            row, count, stride = pat
            pattern = TcdmPattern(row, count, stride)
            n = row * count
            addr = min(addr, SIZE - ((count - 1) * stride + row))
        else:
            addr = min(addr, SIZE - n)
        data = bytearray(rng.integers(0, 256, n, dtype=np.uint8).tobytes())
        be = bytes(rng.integers(0, 2, 5, dtype=np.uint8) * 0xFF) if use_be else None
        p = await masters[port].access(cmd, BASE + addr, data, pattern=pattern, be=be)
        reads[i] = (p.status, bytes(data) if cmd == READ else None)

    async def seq():
        for i, op in enumerate(ops):
            await one(i, *op)

    if concurrent:
        for i, op in enumerate(ops):
            sim.spawn(one(i, *op), f"op{i:03d}")
    else:
        sim.spawn(seq(), "seq")
    sim.run()
    return t.array.copy(), reads


@settings(max_examples=40, deadline=None)
@given(ops=ops_strategy(), seed=st.integers(0, 1000))
def test_word_and_burst_modes_agree_sequential(ops, seed):
    init = np.random.default_rng(seed).integers(0, 256, SIZE, dtype=np.uint8)
    mem_b, reads_b = run_ops("burst", ops, init, False)
    mem_w, reads_w = run_ops("word", ops, init, False)
    np.testing.assert_array_equal(mem_b, mem_w)
    assert reads_b == reads_w


@settings(max_examples=20, deadline=None)
@given(sizes=st.lists(st.integers(1, 200), min_size=2, max_size=16), seed=st.integers(0, 99))
def test_word_and_burst_modes_agree_concurrent_disjoint(sizes, seed):
    # concurrent initiators on disjoint regions (a race-free program): same final contents
    rng = np.random.default_rng(seed)
    init = rng.integers(0, 256, SIZE, dtype=np.uint8)
    ops = []
    for i, n in enumerate(sizes):
        port = PORTS[i % len(PORTS)]
        ops.append((port, WRITE if i % 2 else READ, i * 4096 + int(rng.integers(0, 1024)), n,
                    None, bool(i % 3 == 0), int(rng.integers(0, 2 ** 31))))
    mem_b, reads_b = run_ops("burst", ops, init, True)
    mem_w, reads_w = run_ops("word", ops, init, True)
    np.testing.assert_array_equal(mem_b, mem_w)
    assert reads_b == reads_w


def test_pattern_rows_and_byte_enables_against_numpy():
    sim, clk, top, t = make("word")
    m = Master(top, "m", t.rbe_port)
    init = np.arange(SIZE, dtype=np.uint32).astype(np.uint8)
    t.load(0, init)
    rows = np.array([0, 1000, 36, 4000], dtype=np.int64) * 4
    out = bytearray(4 * 36)
    src = bytearray(range(144))
    be = bytes([0xFF] * 4 + [0] * 4)   # write every other word

    async def go():
        await m.access(READ, 0, out, pattern=TcdmPattern(36, rows=rows + BASE))
        await m.access(WRITE, 8192, src, pattern=TcdmPattern(36, count=4, stride=100), be=be)
    sim.spawn(go(), "go")
    sim.run()
    want = np.concatenate([init[r:r + 36] for r in rows])
    assert bytes(out) == want.tobytes()
    exp = init.copy()
    mask = np.resize(np.frombuffer(be, dtype=np.uint8), 144) != 0
    idx = (8192 + np.arange(4)[:, None] * 100 + np.arange(36)).reshape(-1)
    exp[idx[mask]] = np.frombuffer(src, dtype=np.uint8)[mask]
    np.testing.assert_array_equal(t.array, exp)


# ----- bad input ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["burst", "word"])
@pytest.mark.parametrize("addr,n,pattern,status", [
    (SIZE - 8, 16, None, Status.ADDRESS_ERROR),                      # crosses the end
    (SIZE, 4, None, Status.ADDRESS_ERROR),                           # just past the end
    (0, 0, None, Status.ADDRESS_ERROR),                              # zero length
    (0, 40, TcdmPattern(36, 2, 64), Status.BURST_ERROR),             # pattern != length
    (SIZE - 90, 72, TcdmPattern(36, 2, 64), Status.ADDRESS_ERROR),   # last row past the end
])
def test_bad_accesses_error_without_corruption(mode, addr, n, pattern, status):
    sim, clk, top, t = make(mode)
    m = Master(top, "m", t.core_ports[0])
    init = np.random.default_rng(0).integers(0, 256, SIZE, dtype=np.uint8)
    t.load(0, init)
    res = []

    async def go():
        p = await m.access(WRITE, BASE + addr, bytearray(b"\xee" * n), pattern=pattern)
        res.append(p.status)
    sim.spawn(go(), "go")
    sim.run()
    assert res == [status]
    np.testing.assert_array_equal(t.array, init)
    assert sim.errors and sim.errors[-1].initiator == "cluster.m"
    assert sim.errors[-1].where == "cluster.tcdm"


# ----- DMI, debug, power-off --------------------------------------------------------------------------------
def test_dmi_burst_mode_only_and_clear_invalidates():
    sim, clk, top, t = make("burst")
    m = Master(top, "m", t.core_ports[0])
    region = m.socket.get_direct_mem_ptr(GenericPayload(READ, BASE + 16, length=4))
    assert region is not None and region.start == BASE and region.end == BASE + SIZE - 1
    region.view(BASE + 16, 4)[:] = [1, 2, 3, 4]
    assert t.dump(BASE + 16, 4) == bytes([1, 2, 3, 4])
    t.clear()
    assert not t.array.any()
    assert (BASE, BASE + SIZE - 1) in m.invalidated
    sim2, _, top2, t2 = make("word")
    m2 = Master(top2, "m", t2.core_ports[0])
    assert m2.socket.get_direct_mem_ptr(GenericPayload(READ, BASE, length=4)) is None


def test_transport_dbg_reads_and_writes_without_time():
    sim, clk, top, t = make("word")
    m = Master(top, "m", t.soc_port)
    p = GenericPayload(WRITE, BASE + 100, bytearray(b"abcd"))
    assert m.socket.transport_dbg(p) == 4
    q = GenericPayload(READ, 100, bytearray(4))
    assert m.socket.transport_dbg(q) == 4 and bytes(q.data) == b"abcd"
    assert stats(sim).get("cycles", 0) == 0 and sim.now == 0
