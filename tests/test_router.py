"""The address-decoding router (tlm/router.py, tlm/timing.py): decoding and translation,
per-hop latency, occupancy max-rule, contention models, error responses and map checks."""
from __future__ import annotations

import pytest

from tlm import (NS, OK, READ, WRITE, Clock, ElaborationError, GenericPayload, Memory,
                 Router, SimulationError, Status, TargetSocket)
from tlm.module import Module


@pytest.fixture
def clk(sim):
    return Clock(sim, "clk", 1e9)  # 1000 ps per cycle


def build_bus(top, make_initiator, clk=None, **router_kw):
    """cpu -> bus; bus maps m0 at [0, 0x100) and m1 at [0x1000, 0x1100) (translated)."""
    bus = Router(top, "bus", clock=clk, **router_kw)
    m0 = Memory(top, "m0", 0x100)
    m1 = Memory(top, "m1", 0x100)
    bus.map(0x0, 0x100, m0.socket)
    bus.map(0x1000, 0x100, m1.socket)
    cpu = make_initiator(top, "cpu")
    cpu.socket.bind(bus.target_socket)
    return cpu, bus, m0, m1


# ----- decoding ----------------------------------------------------------------------------------
def test_decode_and_translation(top, make_initiator, run_proc):
    """Each range reaches its target at addresses relative to its base; the initiator's
    payload keeps its global address."""
    cpu, bus, m0, m1 = build_bus(top, make_initiator)

    async def go():
        w, _ = await cpu.access(WRITE, 0x1010, bytearray(b"m1"))
        v, _ = await cpu.access(WRITE, 0x0010, bytearray(b"m0"))
        return w.status, w.address, v.status

    assert run_proc(go) == (OK, 0x1010, OK)
    assert m1.dump(0x10, 2) == b"m1" and m0.dump(0x10, 2) == b"m0"
    assert bus.decode(0x10FF).name == "m1" and bus.decode(0x10FF, 2) is None
    assert bus.decode(0x100) is None and bus.decode(0x0FFF) is None
    assert bus.decode(-1) is None and bus.decode(0).name == "m0"


def test_map_without_translation(top, make_initiator, run_proc):
    bus = Router(top, "bus")
    mem = Memory(top, "mem", 0x200)
    bus.map(0x100, 0x100, mem.socket, translate=False)
    cpu = make_initiator(top, "cpu")
    cpu.socket.bind(bus.target_socket)

    async def go():
        p, _ = await cpu.access(WRITE, 0x180, bytearray(b"x"))
        return p.status

    assert run_proc(go) == OK
    assert mem.dump(0x180, 1) == b"x" and mem.dump(0x80, 1) == b"\x00"


def test_router_never_sets_ok(top, make_initiator, run_proc):
    """A target that forgets the status leaves it INCOMPLETE: the router does not set OK."""
    async def lazy(p, d):
        return d

    tgt = TargetSocket(Module(top, "lazy"), "in", b_transport=lazy)
    bus = Router(top, "bus", latency=10)
    bus.map(0, 0x10, tgt)
    cpu = make_initiator(top, "cpu")
    cpu.socket.bind(bus.target_socket)

    async def go():
        p, d = await cpu.access(READ, 4, length=4)
        return p.status, d

    assert run_proc(go) == (Status.INCOMPLETE, 10)


# ----- latency and occupancy -------------------------------------------------------------------
def chain(sim, top, make_initiator, clk, mem_width):
    """cpu -> r1 (lat 2, 8 B/cyc) -> r2 (lat 3, 16 B/cyc) -> mem (lat 1, mem_width B/cyc)."""
    r1 = Router(top, "r1", clock=clk, latency=2, width=8)
    r2 = Router(top, "r2", clock=clk, latency=3, width=16)
    mem = Memory(top, "mem", 0x1000, clock=clk, latency=1, width=mem_width)
    r1.map(0x8000, 0x1000, r2.target_socket)
    r2.map(0x0, 0x1000, mem.socket)
    cpu = make_initiator(top, "cpu")
    cpu.socket.bind(r1.target_socket)
    return cpu, mem


@pytest.mark.parametrize("mem_width,expected", [
    # latencies 2+3+1 = 6 cycles; occupancy of 64 B: r1 8, r2 4, mem 64/4 = 16 cycles
    (4, 6000 + 16000),
    # mem 64/32 = 2 cycles: the max is r1's 8 cycles
    (32, 6000 + 8000),
])
def test_latency_adds_up_occupancy_takes_the_maximum(sim, top, make_initiator, clk, run_proc,
                                                    mem_width, expected):
    cpu, mem = chain(sim, top, make_initiator, clk, mem_width)

    async def go():
        p, d = await cpu.access(READ, 0x8040, length=64, delay=250)
        return p.status, d, p.bw_occupancy

    assert run_proc(go) == (OK, 250 + expected, max(8000, 64 // mem_width * 1000))


def test_latency_only_router_without_clock(top, make_initiator, run_proc):
    """Without a clock, latency is in ps and there is no occupancy."""
    cpu, bus, m0, m1 = build_bus(top, make_initiator, latency=1500)

    async def go():
        return (await cpu.access(READ, 0x1000, length=64, delay=20))[1]

    assert run_proc(go) == 1520


def contention_delays(sim, top, make_initiator, clk, run_proc, contention):
    """Router (lat 1, 4 B/cyc) over two zero-latency memories; four 16-byte reads issued
    at t=0 with delay 0 (m0, m0, m1) then one at t=20 ns (m1)."""
    cpu, bus, m0, m1 = build_bus(top, make_initiator, clk, latency=1, width=4,
                                 contention=contention)

    async def go():
        out = []
        for addr in (0x0, 0x40, 0x1000):
            out.append((await cpu.access(READ, addr, length=16))[1])
        await sim.wait(20 * NS)
        out.append((await cpu.access(READ, 0x1000, length=16))[1])
        return out

    return run_proc(go), bus


def test_per_target_contention(sim, top, make_initiator, clk, run_proc):
    """per_target: the second access to the busy m0 waits 4 ns; m1 is independent; a
    later access finds the target free again."""
    delays, bus = contention_delays(sim, top, make_initiator, clk, run_proc, "per_target")
    assert delays == [5000, 9000, 5000, 5000]
    assert bus._stat_values() == {
        "m0.transactions": 2, "m0.bytes": 32, "m0.busy_ps": 8000,
        "m1.transactions": 2, "m1.bytes": 32, "m1.busy_ps": 8000}


def test_shared_contention_serialises_across_targets(sim, top, make_initiator, clk, run_proc):
    """shared (a bus): m1's access also waits for the two m0 accesses (busy until 8 ns)."""
    delays, _ = contention_delays(sim, top, make_initiator, clk, run_proc, "shared")
    assert delays == [5000, 9000, 13000, 5000]


def test_no_contention(sim, top, make_initiator, clk, run_proc):
    delays, _ = contention_delays(sim, top, make_initiator, clk, run_proc, "none")
    assert delays == [5000, 5000, 5000, 5000]


def test_back_to_back_at_annotated_time_does_not_wait(top, make_initiator, clk, run_proc):
    """A loosely-timed initiator issuing its next access at the previous annotated delay
    arrives after the target's busy interval and does not wait."""
    cpu, *_ = build_bus(top, make_initiator, clk, latency=1, width=4)

    async def go():
        d = (await cpu.access(READ, 0x0, length=16))[1]
        return d, (await cpu.access(READ, 0x0, length=16, delay=d))[1]

    assert run_proc(go) == (5000, 10000)


def test_hop_timing_validation(clk):
    with pytest.raises(SimulationError, match="needs a clock"):
        Router(Module(clk.sim, "x"), "bus", width=4)
    from tlm import HopTiming
    with pytest.raises(SimulationError, match="latency must be >= 0"):
        HopTiming(clk, latency=-1)
    h = HopTiming(clk, latency=2, width=8)
    assert (h.latency_ps(), h.ps_per_byte()) == (2000, 125.0)


# ----- errors -----------------------------------------------------------------------------------
def test_unmapped_address_is_address_error_logged(sim, top, make_initiator, clk, run_proc):
    """An address no range maps gets ADDRESS_ERROR (no exception) plus the router's
    latency, and a record naming the initiator path, address, router and time."""
    cpu, bus, m0, m1 = build_bus(top, make_initiator, clk, latency=2)

    async def go():
        await sim.wait(7 * NS)
        p, d = await cpu.access(WRITE, 0x800, bytearray(4), delay=100)
        return p.status, p.address, d

    assert run_proc(go) == (Status.ADDRESS_ERROR, 0x800, 2100)
    [rec] = sim.errors
    assert (rec.time, rec.initiator, rec.where, rec.command, rec.address, rec.length,
            rec.status, rec.reason) == (7000, "top.cpu", "top.bus", "WRITE", 0x800, 4,
                                        "ADDRESS_ERROR", "no target mapped at this address")
    assert "top.cpu" in str(rec) and "0x00000800" in str(rec) and "7 ns" in str(rec)


@pytest.mark.parametrize("addr", [-4, 0x100, 0x0FFF, 0x2000])
def test_addresses_outside_every_range(sim, top, make_initiator, run_proc, addr):
    cpu, bus, m0, m1 = build_bus(top, make_initiator)

    async def go():
        return (await cpu.access(READ, addr, length=1))[0].status

    assert run_proc(go) == Status.ADDRESS_ERROR
    assert sim.errors[0].address == addr


def test_access_crossing_end_of_range(sim, top, make_initiator, run_proc):
    """An access that starts inside a range but ends past it is an ADDRESS_ERROR and
    touches no target."""
    cpu, bus, m0, m1 = build_bus(top, make_initiator)

    async def go():
        return (await cpu.access(WRITE, 0xFE, bytearray(4)))[0].status

    assert run_proc(go) == Status.ADDRESS_ERROR
    assert sim.errors[0].reason == "access crosses the end of the mapped range"
    assert m0.writes == 0 and m0.dump(0xFE, 2) == b"\x00\x00"


def test_streaming_window_at_end_of_range_is_routed(sim, top, make_initiator, run_proc):
    """A streaming-width-1 access at the last byte of a range addresses only that byte."""
    cpu, bus, m0, m1 = build_bus(top, make_initiator)

    async def go():
        return (await cpu.access(WRITE, 0x10FF, bytearray(b"abc"), streaming_width=1))[0].status

    assert run_proc(go) == OK
    assert m1.dump(0xFF, 1) == b"c" and sim.errors == []


def test_transport_dbg_miss_returns_zero_without_error(sim, top, make_initiator):
    cpu, bus, m0, m1 = build_bus(top, make_initiator)
    assert cpu.socket.transport_dbg(GenericPayload(READ, 0x800, length=4)) == 0
    assert cpu.socket.transport_dbg(GenericPayload(READ, 0xFE, length=4)) == 0
    assert sim.errors == []


def test_overlapping_map_is_an_elaboration_error(top):
    bus = Router(top, "bus")
    a, b, c = (Memory(top, n, 0x100) for n in "abc")
    bus.map(0x100, 0x100, a.socket)
    with pytest.raises(ElaborationError) as ei:
        bus.map(0x1F0, 0x100, b.socket)
    assert ei.value.path == "top.bus"
    assert "[0x1f0, 0x2f0)" in str(ei.value) and "[0x100, 0x200) of top.a.socket" in str(ei.value)
    with pytest.raises(ElaborationError):
        bus.map(0x0, 0x101, b.socket)
    bus.map(0x200, 0x100, b.socket)      # adjacent: fine
    bus.map(0x0, 0x100, c.socket)
    assert [r.name for r in bus._routes] == ["c", "a", "b"]


@pytest.mark.parametrize("base,size", [(0, 0), (-0x10, 0x10), (0x10, -1)])
def test_bad_ranges_are_elaboration_errors(top, base, size):
    bus = Router(top, "bus")
    with pytest.raises(ElaborationError, match="bad range"):
        bus.map(base, size, Memory(top, "m", 0x10).socket)


def test_bad_contention_model(top):
    with pytest.raises(ElaborationError, match="contention must be"):
        Router(top, "bus", contention="roundrobin")
