"""L2 (shared and private), boot ROM and the SOC AXI crossbar: bank timing formula, contention,
ROM protection, range errors, DMI."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.l2 import (BankedMemory, L2Params, L2PrivateParams, RomParams, SocXbar,
                           SocXbarParams, bank_occupancy)
from components.marsellus.facts import MEMORY_MAP
from tlm import (READ, WRITE, Clock, GenericPayload, HopTiming, InitiatorSocket, Module,
                 Simulator, Status)

L2, L2P, ROM = MEMORY_MAP["l2"], MEMORY_MAP["l2_private"], MEMORY_MAP["boot_rom"]
TS = 2500  # SOC clock period at 400 MHz


class Master(Module):
    def __init__(self, parent, name, target, width=None, clock=None):
        super().__init__(parent, name)
        self.socket = InitiatorSocket(self, "socket")
        self.socket.bind(target)
        # an initiator's own port width (e.g. the uDMA's 128-bit L2 port)
        self.port = HopTiming(clock, 0, width, True, self.path) if width else None

    async def access(self, cmd, address, data, delay=0):
        p = GenericPayload(cmd, address, data, len(data), initiator=self.path)
        if self.port is not None:
            delay = self.port.apply(p, delay, self.sim.now)
        d = await self.socket.b_transport(p, delay)
        return p, d


def soc(xbar_lat=2, l2_lat=1):
    sim = Simulator()
    clk = Clock(sim, "soc.clock", 400e6)
    top = Module(sim, "soc")
    l2 = BankedMemory(top, "l2", L2, clk, L2Params(latency=l2_lat))
    l2p = BankedMemory(top, "l2_private", L2P, clk, L2PrivateParams(latency=l2_lat))
    rom = BankedMemory(top, "rom", ROM, clk, RomParams(latency=l2_lat), read_only=True)
    xbar = SocXbar(top, "xbar", clk, SocXbarParams(latency=xbar_lat))
    for m in (l2, l2p, rom):
        xbar.map_region(m.region, m.socket)
    return sim, clk, top, l2, l2p, rom, xbar


def run(sim, coro):
    out = []

    async def go():
        out.append(await coro)
    sim.spawn(go(), "go")
    sim.run()
    return out[0]


# ----- the bank formula ------------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(addr=st.integers(0, 4000), n=st.integers(1, 5000), banks=st.sampled_from([1, 2, 4, 8]),
       contiguous=st.booleans())
def test_bank_occupancy_matches_a_word_count(addr, n, banks, contiguous):
    size = 1 << 14
    words = np.arange(addr // 4, (addr + n - 1) // 4 + 1)
    bank = words // (size // 4 // banks) if contiguous else words % banks
    want = np.bincount(bank, minlength=banks).tolist()
    got = bank_occupancy(addr, n, banks, 4, "contiguous" if contiguous else "word", size)
    assert got == want


@settings(max_examples=80, deadline=None)
@given(which=st.sampled_from(["l2", "l2_private", "rom"]), off=st.integers(0, 0x1F00),
       n=st.integers(1, 2048), xbar_lat=st.integers(0, 3), l2_lat=st.integers(0, 3),
       cmd=st.sampled_from([READ, WRITE]))
def test_access_through_crossbar_matches_formula(which, off, n, xbar_lat, l2_lat, cmd):
    sim, clk, top, l2, l2p, rom, xbar = soc(xbar_lat, l2_lat)
    mem = {"l2": l2, "l2_private": l2p, "rom": rom}[which]
    if mem is rom:
        cmd = READ
    off = min(off, mem.size - n)
    m = Master(top, "m", xbar.target_socket)
    p, d = run(sim, m.access(cmd, mem.base + off, bytearray(n)))
    assert p.status == Status.OK
    xbar_occ = math.ceil(n / 8)
    bank_occ = max(bank_occupancy(off, n, mem.params.banks, 4, mem.params.interleaving, mem.size))
    # latency adds up, occupancy takes the max
    assert d == (xbar_lat + l2_lat + max(xbar_occ, bank_occ)) * TS


def test_interleaving_gives_wide_initiators_four_banks():
    """A 128-bit initiator bound directly to L2 (like the uDMA port): the 4 interleaved banks
    serve 16 B/cycle, the contiguous private banks only 4 B/cycle."""
    sim, clk, top, l2, l2p, rom, xbar = soc(0, 0)
    a = Master(top, "a", l2.socket, 16, clk)
    _, d_shared = run(sim, a.access(READ, L2.base, bytearray(1024)))
    sim2, clk2, top2, l22, l2p2, _, _ = soc(0, 0)
    b = Master(top2, "b", l2p2.socket, 16, clk2)
    _, d_private = run(sim2, b.access(READ, L2P.base, bytearray(1024)))
    assert d_shared == 1024 // 16 * TS
    assert d_private == 1024 // 4 * TS


def test_private_banks_work_in_parallel_and_serialise_per_bank():
    sim, clk, top, l2, l2p, rom, xbar = soc(0, 0)
    a = Master(top, "a", l2p.socket)
    b = Master(top, "b", l2p.socket)
    half = L2P.size // 2
    res = {}

    async def go():
        _, res["a"] = await a.access(READ, 0, bytearray(64))          # bank 0, 16 words
        _, res["b_other"] = await b.access(READ, half, bytearray(64))  # bank 1: parallel
        _, res["b_same"] = await b.access(READ, 64, bytearray(64))     # bank 0: waits
    sim.spawn(go(), "go")
    sim.run()
    assert res == {"a": 16 * TS, "b_other": 16 * TS, "b_same": 32 * TS}


def test_crossbar_contention_is_per_target():
    sim, clk, top, l2, l2p, rom, xbar = soc(1, 0)
    a, b, c = (Master(top, n, xbar.target_socket) for n in "abc")
    res = {}

    async def go():
        _, res["a"] = await a.access(READ, L2.base, bytearray(256))     # 32 beats
        _, res["b"] = await b.access(READ, L2.base + 4096, bytearray(256))  # same target
        _, res["c"] = await c.access(READ, ROM.base, bytearray(256))    # other target
    sim.spawn(go(), "go")
    sim.run()
    assert res["a"] == (1 + 32) * TS
    assert res["b"] == (1 + 64) * TS
    assert res["c"] == (1 + 64) * TS  # ROM: one 32-bit bank -> 64 cycles, no wait on L2


# ----- ROM -----------------------------------------------------------------------------------------------
def test_rom_write_is_a_command_error_and_debug_write_loads_it():
    sim, clk, top, l2, l2p, rom, xbar = soc()
    m = Master(top, "m", xbar.target_socket)
    image = bytes(range(256)) * 4
    assert m.socket.transport_dbg(GenericPayload(WRITE, ROM.base, bytearray(image))) == len(image)
    p, _ = run(sim, m.access(WRITE, ROM.base + 8, bytearray(b"\xff" * 16)))
    assert p.status == Status.COMMAND_ERROR
    assert rom.dump(ROM.base, len(image)) == image
    err = sim.errors[-1]
    assert err.initiator == "soc.m" and err.where == "soc.rom" and err.address == 8
    sim2, _, top2, _, _, rom2, xbar2 = soc()
    m2 = Master(top2, "m", xbar2.target_socket)
    rom2.load(ROM.base, image)
    q, _ = run(sim2, m2.access(READ, ROM.base, bytearray(len(image))))
    assert q.status == Status.OK and bytes(q.data) == image
    region = m2.socket.get_direct_mem_ptr(GenericPayload(READ, ROM.base, length=4))
    assert region is not None and region.read_allowed and not region.write_allowed


# ----- range errors, DMI ------------------------------------------------------------------------------------
@pytest.mark.parametrize("address,n", [(L2.end - 4, 8), (L2.end, 4), (ROM.end - 2, 4),
                                       (L2P.base - 8, 4)])
def test_out_of_range_is_an_address_error_without_corruption(address, n):
    sim, clk, top, l2, l2p, rom, xbar = soc()
    m = Master(top, "m", xbar.target_socket)
    before = [x.array.copy() for x in (l2, l2p, rom)]
    p, _ = run(sim, m.access(WRITE, address, bytearray(b"\xab" * n)))
    assert p.status == Status.ADDRESS_ERROR
    for x, b in zip((l2, l2p, rom), before):
        np.testing.assert_array_equal(x.array, b)
    assert sim.errors[-1].initiator == "soc.m"


def test_direct_access_out_of_range_and_zero_length():
    sim, clk, top, l2, l2p, rom, xbar = soc()
    m = Master(top, "m", l2.socket)
    p, _ = run(sim, m.access(WRITE, L2.size - 4, bytearray(8)))
    assert p.status == Status.ADDRESS_ERROR and sim.errors[-1].where == "soc.l2"
    sim2, _, top2, l22, _, _, _ = soc()
    m2 = Master(top2, "m", l22.socket)
    q, _ = run(sim2, m2.access(READ, L2.base, bytearray(0)))
    assert q.status == Status.ADDRESS_ERROR


def test_dmi_through_the_crossbar():
    sim, clk, top, l2, l2p, rom, xbar = soc(2, 1)
    m = Master(top, "m", xbar.target_socket)
    r = m.socket.get_direct_mem_ptr(GenericPayload(READ, L2.base + 100, length=4))
    assert (r.start, r.end) == (L2.base, L2.end - 1) and r.write_allowed
    assert r.read_latency == (2 + 1 + 1) * TS   # crossbar + L2 latency + one word
    r.view(L2.base + 100, 4)[:] = [9, 8, 7, 6]
    p, _ = run(sim, m.access(READ, L2.base + 100, bytearray(4)))
    assert bytes(p.data) == bytes([9, 8, 7, 6])


def test_local_and_global_addresses_reach_the_same_bytes():
    sim, clk, top, l2, l2p, rom, xbar = soc()
    a = Master(top, "a", l2.socket)
    run(sim, a.access(WRITE, L2.base + 0x40, bytearray(b"hello")))
    assert l2.dump(0x40, 5) == b"hello" and l2.dump(L2.base + 0x40, 5) == b"hello"


# ----- streaming hops ------------------------------------------------------------------------------------
@pytest.mark.parametrize("router", ["tlm", "crossbar"])
def test_short_burst_behind_a_long_one_through_two_crossbars(router):
    """2 KiB then 64 B, back to back through two 64-bit hops. The second hop sees each burst
    after its data streamed through the first, so the short burst only follows the long
    one's data (256 + 8 cycles), instead of waiting for a second 256-cycle reservation."""
    from components.l2 import Crossbar
    from tlm import Memory, Router
    sim = Simulator()
    clk = Clock(sim, "clk", 400e6)
    top = Module(sim, "top")
    cls = Crossbar if router == "crossbar" else Router
    x1 = cls(top, "x1", clock=clk, latency=0, width=8)
    x2 = cls(top, "x2", clock=clk, latency=0, width=8)
    mem = Memory(top, "mem", 1 << 16)
    x2.map(0, 1 << 16, mem.socket)
    x1.map(0, 1 << 16, x2.target_socket)
    m = Master(top, "m", x1.target_socket)
    res = []

    async def go():
        res.append((await m.access(READ, 0, bytearray(2048)))[1])
        res.append((await m.access(READ, 4096, bytearray(64)))[1])
    sim.spawn(go(), "go")
    sim.run()
    assert res[0] == 256 * TS
    assert res[1] == 264 * TS
