"""The SOC <-> CLUSTER crossing: latency in two clock domains, the DVFS-safe lookahead,
occupancy carried across, event wires, and an emulated process cut (msgpack messages)."""
from __future__ import annotations

import math

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.cdc import Cdc, CdcParams
from tlm import (READ, WRITE, Clock, GenericPayload, InitiatorSocket, Memory, Module, Router,
                 Simulator, Status)
from tlm.errors import ProcessError, SimulationError
from tlm.params import ParameterError
from tlm.units import period_ps


class Master(Module):
    def __init__(self, parent, name, target):
        super().__init__(parent, name)
        self.socket = InitiatorSocket(self, "socket")
        self.socket.bind(target)

    async def timed(self, cmd, address, data):
        """One access; returns (payload, elapsed ps including the annotated delay)."""
        t0 = self.sim.now
        p = GenericPayload(cmd, address, data, len(data), initiator=self.path)
        d = await self.socket.b_transport(p, 0)
        return p, self.sim.now + d - t0


def build(f_soc=400e6, f_cl=200e6, params=None, xbar_width=None, mem_latency=0):
    """SOC: soc.xbar -> soc.mem ; cluster: cluster.xbar -> cluster.mem; cdc in between."""
    sim = Simulator()
    cs, cc = Clock(sim, "soc.clock", f_soc), Clock(sim, "cluster.clock", f_cl)
    soc, cl = Module(sim, "soc"), Module(sim, "cluster")
    cdc = Cdc(sim, "cdc", cs, cc, params or CdcParams())
    sx = Router(soc, "xbar", clock=cs, latency=1, width=xbar_width)
    cx = Router(cl, "xbar", clock=cc, latency=1, width=xbar_width)
    smem = Memory(soc, "mem", 0x10000, clock=cs, latency=mem_latency)
    cmem = Memory(cl, "mem", 0x10000, clock=cc, latency=mem_latency)
    sx.map(0x1000_0000, 0x10000, smem.socket)
    sx.map(0x2000_0000, 0x10000, cdc.to_cluster.target_socket, translate=False)
    cx.map(0x2000_0000, 0x10000, cmem.socket)
    cx.map(0x1000_0000, 0x10000, cdc.to_soc.target_socket, translate=False)
    cdc.to_soc.initiator_socket.bind(sx.target_socket)
    cdc.to_cluster.initiator_socket.bind(cx.target_socket)
    return sim, cs, cc, soc, cl, cdc, sx, cx, smem, cmem


def run(sim, coro):
    out = []

    async def go():
        out.append(await coro)
    sim.spawn(go(), "go")
    sim.run()
    return out[0]


def test_latency_and_lookahead_formulas():
    prm = CdcParams(soc_cycles=2, cluster_cycles=3, soc_fmax=500e6, cluster_fmax=600e6)
    sim, cs, cc, *_ = build(400e6, 200e6, prm)
    cdc = sim.modules["cdc"]
    assert cdc.current_latency() == 2 * cs.period + 3 * cc.period == 2 * 2500 + 3 * 5000
    assert cdc.min_latency == 2 * period_ps(500e6) + 3 * period_ps(600e6)
    assert cdc.side_of == {"a": "soc", "b": "cluster"}
    assert cdc in sim.links


@pytest.mark.parametrize("direction", ["c2s", "s2c"])
def test_round_trip_is_two_latencies_plus_the_target(direction):
    sim, cs, cc, soc, cl, cdc, sx, cx, smem, cmem = build(mem_latency=3)
    if direction == "c2s":
        m, addr, per_target = Master(cl, "m", cx.target_socket), 0x1000_0040, cs.period
        first_hop, far_hop = cc.period, cs.period
    else:
        m, addr, per_target = Master(soc, "m", sx.target_socket), 0x2000_0040, cc.period
        first_hop, far_hop = cs.period, cc.period
    p, elapsed = run(sim, m.timed(WRITE, addr, bytearray(b"abcd")))
    assert p.status == Status.OK
    lat = 2 * cs.period + 3 * cc.period
    assert elapsed == first_hop + lat + far_hop + 3 * per_target + lat


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 4096), f_soc=st.sampled_from([100e6, 250e6, 400e6]),
       f_cl=st.sampled_from([100e6, 200e6, 420e6]))
def test_occupancy_takes_the_max_across_the_crossing(n, f_soc, f_cl):
    """A burst from the cluster to SOC memory through two 64-bit crossbars in different
    clock domains streams through the FIFOs: beats x the slower period, not the sum."""
    sim, cs, cc, soc, cl, cdc, sx, cx, smem, cmem = build(f_soc, f_cl, xbar_width=8)
    m = Master(cl, "m", cx.target_socket)
    p, elapsed = run(sim, m.timed(READ, 0x1000_0000, bytearray(n)))
    assert p.status == Status.OK
    lat = cdc.current_latency()
    beats = math.ceil(n / 8)
    assert elapsed == cc.period + 2 * lat + cs.period + beats * max(cs.period, cc.period)


def test_dvfs_changes_latency_and_fmax_is_enforced():
    prm = CdcParams(cluster_fmax=500e6)
    sim, cs, cc, soc, cl, cdc, sx, cx, smem, cmem = build(400e6, 200e6, prm)
    m = Master(cl, "m", cx.target_socket)
    times = []

    async def go():
        for f in (200e6, 400e6, 600e6):
            cc.set_frequency(f)
            _, e = await m.timed(READ, 0x1000_0000, bytearray(4))
            times.append(e)
    sim.spawn(go(), "go")
    with pytest.raises(ProcessError, match="cdc.cluster_fmax"):
        sim.run()
    lat = lambda fc: 2 * 2500 + 3 * period_ps(fc)  # noqa: E731
    assert times == [period_ps(f) + 2 * lat(f) + 2500 for f in (200e6, 400e6)]


def test_clock_above_fmax_at_build_is_a_parameter_error():
    with pytest.raises(ParameterError, match="cdc.cluster_fmax"):
        build(400e6, 700e6)


def test_bad_parameters_name_the_path():
    from tlm.params import resolve
    with pytest.raises(ParameterError, match="cdc"):
        resolve(CdcParams, {"soc_cycles": 0, "cluster_cycles": 0}, "cdc")
    assert resolve(CdcParams, {"cluster_fmax": "550 MHz"}, "cdc").cluster_fmax == 550e6


def test_event_and_wire_cross_with_the_latency():
    sim, cs, cc, soc, cl, cdc, sx, cx, smem, cmem = build()
    ev = cdc.event_to_soc("dma_eoj")
    wire = cdc.wire_to_cluster("fetch_en")
    seen = []

    async def soc_side():
        await ev.event
        seen.append(("ev", sim.now))

    async def cl_side():
        await wire.signal.changed
        seen.append(("wire", sim.now, wire.signal.value))

    async def drive():
        await sim.wait(1000)
        ev.notify()
        wire.write(1)
    for f, n in ((soc_side, "a"), (cl_side, "b"), (drive, "c")):
        sim.spawn(f(), n)
    sim.run()
    lat = cdc.current_latency()
    assert ("ev", 1000 + lat) in seen and ("wire", 1000 + lat, 1) in seen


def cut(sim, cdc):
    """Emulate a process boundary: every message is msgpack-encoded and decoded, then
    delivered at its time through the kernel's ordered link path."""
    def remote(link, from_side, t, key, channel, message):
        msg = msgpack.unpackb(msgpack.packb(message, use_bin_type=True), raw=False)
        sim.post(t, tuple(key), link.deliver, channel, msg)
    cdc.remote = remote


def traffic(cut_it):
    sim, cs, cc, soc, cl, cdc, sx, cx, smem, cmem = build(xbar_width=8)
    if cut_it:
        cut(sim, cdc)
    smem.load(0, bytes(range(256)) * 16)
    a, b = Master(cl, "a", cx.target_socket), Master(soc, "b", sx.target_socket)
    log = []

    async def cluster_side():
        for i in range(4):
            p, e = await a.timed(READ, 0x1000_0000 + 512 * i, bytearray(512))
            log.append(("a", sim.now, e, bytes(p.data)))
            await a.timed(WRITE, 0x1000_8000 + 8 * i, bytearray(b"x" * 8))

    async def soc_side():
        for i in range(4):
            p, e = await b.timed(WRITE, 0x2000_0000 + 64 * i, bytearray(bytes([i]) * 64))
            log.append(("b", sim.now, e, int(p.status)))
    sim.spawn(cluster_side(), "a")
    sim.spawn(soc_side(), "b")
    sim.run()
    return log, sim.now, smem.array.tobytes(), cmem.array.tobytes()


def test_a_cut_crossing_gives_identical_results():
    assert traffic(False) == traffic(True)


def test_debug_transport_only_in_one_process():
    sim, cs, cc, soc, cl, cdc, sx, cx, smem, cmem = build()
    m = Master(cl, "m", cx.target_socket)
    smem.load(0x10, b"dbg!")
    p = GenericPayload(READ, 0x1000_0010, bytearray(4))
    assert m.socket.transport_dbg(p) == 4 and bytes(p.data) == b"dbg!"
    cut(sim, cdc)
    with pytest.raises(SimulationError, match="cut between processes"):
        m.socket.transport_dbg(GenericPayload(READ, 0x1000_0010, bytearray(4)))
