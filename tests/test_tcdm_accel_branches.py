"""TCDM with several accelerator branches (``accel_ports``): port list and widths, the
per-bank round robin between branches, and word-mode grants against a cycle-by-cycle
reference of the documented HCI-like policy (components/tcdm/__init__.py)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.tcdm import TcdmParams, TcdmPattern
from tlm import READ, Module, Simulator
from tlm.params import ParameterError, resolve
from test_tcdm import T, Master, make, stats


def test_ports_and_widths():
    _, _, _, t = make("word", accel_ports=3, accel_port_bytes=32)
    assert [n for n in t.ports if n.startswith(("rbe", "accel"))] == ["rbe", "accel1", "accel2"]
    assert t.accel_ports[0] is t.rbe_port and t.accel_ports[2] is t.port("accel2")
    assert t.ports["accel1"].width == 32 and t.ports["rbe"].width == 36
    _, _, _, one = make("word")
    assert one.accel_ports == [one.rbe_port] and "accel1" not in one.ports


def test_accel_params_are_bounded():
    with pytest.raises(ParameterError, match="accel_ports"):
        resolve(TcdmParams, {"accel_ports": 0}, "cluster.tcdm")
    with pytest.raises(ParameterError, match="accel_port_bytes"):
        resolve(TcdmParams, {"accel_port_bytes": 6}, "cluster.tcdm")


def test_accel_branch_moves_its_width_per_cycle():
    sim, _, top, t = make("word", accel_ports=2, accel_port_bytes=32)
    m = Master(top, "m", t.port("accel1"))
    sim.spawn(m.access(READ, 0, bytearray(64)), "p")   # 16 words, 8 per access
    sim.run()
    assert m.ends == [2 * T] and stats(sim)["accel1.words"] == 16


def test_two_accelerators_share_a_bank_half_and_half():
    sim, _, top, t = make("word", accel_ports=2)
    a, b = Master(top, "a", t.rbe_port), Master(top, "b", t.port("accel1"))
    pat = TcdmPattern(row_bytes=4, count=4, stride=128)      # 4 words, all in bank 0
    sim.spawn(a.access(READ, 0, bytearray(16), pattern=pat), "pa")
    sim.spawn(b.access(READ, 4096, bytearray(16), pattern=pat), "pb")
    sim.run()
    # rbe (lower index) in cycles 0,2,4,6; accel1 in 1,3,5,7
    assert a.ends == [7 * T] and b.ends == [8 * T]
    s = stats(sim)
    assert (s["rbe.conflicts"], s["accel1.conflicts"]) == (3, 4)
    assert s["conflict_cycles"] == 7


PORTS = ("core0", "core1", "dma0", "rbe", "accel1", "accel2")


def reference(requests: dict[str, list[int]], banks: int) -> dict[str, int]:
    """End cycle (exclusive) of each port's transaction of one-word accesses at the given
    banks: per bank, LIC round robin, accelerator round robin, and the multiplexer giving
    the bank to the side not served last there when both ask."""
    index = {n: i for i, n in enumerate(PORTS)}   # the TCDM's port order for these names
    lic = {n for n in PORTS if not n.startswith(("rbe", "accel"))}
    pos = {n: 0 for n in requests}
    lic_last = [-1] * banks
    acc_last = [-1] * banks
    acc_won = [False] * banks
    end: dict[str, int] = {}
    cycle = 0
    while len(end) < len(requests):
        want: dict[int, tuple[list[str], list[str]]] = {}
        for n, bl in requests.items():
            if n not in end:
                side = want.setdefault(bl[pos[n]], ([], []))
                side[0 if n in lic else 1].append(n)
        for b, (ls, acs) in want.items():
            def rr(names: list[str], last: int) -> str:
                names = sorted(names, key=index.get)
                return next((q for q in names if index[q] > last), names[0])
            if ls and (not acs or acc_won[b]):
                w = rr(ls, lic_last[b])
                lic_last[b] = index[w]
                acc_won[b] = False
            else:
                w = rr(acs, acc_last[b])
                acc_last[b] = index[w]
                acc_won[b] = True
            pos[w] += 1
            if pos[w] == len(requests[w]):
                end[w] = cycle + 1
        cycle += 1
    return end


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from(PORTS), st.lists(st.integers(0, 3), min_size=1, max_size=6),
                       min_size=1, max_size=len(PORTS)))
def test_word_grants_equal_the_reference_policy(requests):
    sim = Simulator(seed=3)
    from tlm import Clock
    from components.tcdm import Tcdm
    from marsellus_regions import TCDM_ARGS
    clk = Clock(sim, "clk", 400e6)
    top = Module(sim, "cluster")
    # 4 banks, the DMA port one word wide: every access is one word in one bank
    t = Tcdm(top, "tcdm", clk, TcdmParams(mode="word", banks=4, cores=2, dma_port_bytes=4,
                                          rbe_port_bytes=4, accel_ports=3, accel_port_bytes=4),
             **TCDM_ARGS)
    masters = {}
    for n, bl in requests.items():
        m = masters[n] = Master(top, f"m_{n}", t.port(n))
        rows = [4 * (b + 4 * i) for i, b in enumerate(bl)]    # word 4i + b sits in bank b
        sim.spawn(m.access(READ, 0, bytearray(4 * len(bl)), pattern=TcdmPattern(4, rows=rows)), n)
    sim.run()
    want = reference(requests, 4)
    assert {n: m.ends[0] // T for n, m in masters.items()} == want
