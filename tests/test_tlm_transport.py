"""TLM-2.0 transport: the generic payload, socket binding, b_transport and transport_dbg
into the memory target (byte enables, streaming width, ROM, errors), and DMI with
invalidation through routers (tlm/payload.py, sockets.py, memory.py, dmi.py, router.py)."""
from __future__ import annotations

import numpy as np
import pytest

from tlm import (IGNORE, INCOMPLETE, NS, OK, READ, WRITE, BindingError, Clock, Command,
                 DmiCache, DmiRegion, GenericPayload, Memory, Phase, Router, Status, Sync,
                 TargetSocket)
from tlm.memory import byte_enable_mask
from tlm.module import Module


# ----- generic payload ----------------------------------------------------------------------
def test_payload_defaults():
    """A new payload is INCOMPLETE, takes its length from the data, and has a streaming
    width equal to its length."""
    p = GenericPayload(WRITE, 0x40, bytearray(b"abcdef"), initiator="top.cpu")
    assert (p.command, p.address, p.length, p.streaming_width) == (WRITE, 0x40, 6, 6)
    assert p.status == INCOMPLETE and not p.is_ok and p.is_write and not p.is_read
    assert p.byte_enable is None and p.dmi_allowed is False and p.bw_occupancy == 0
    assert p.initiator == "top.cpu" and p.extensions is None
    q = GenericPayload(READ, 0, length=12)
    assert isinstance(q.data, bytearray) and len(q.data) == 12 and q.length == 12
    assert repr(p) == "<GP WRITE 0x40 len=6 INCOMPLETE>"


def test_payload_length_of_numpy_data_is_in_bytes():
    """The default length of a numpy array is its size in bytes, not its element count."""
    a = np.arange(4, dtype=np.uint32)
    p = GenericPayload(WRITE, 0, a)
    assert p.length == 16 and p.streaming_width == 16


def test_payload_reset_and_extensions():
    """reset() reuses a payload: new command/address/length, status INCOMPLETE, byte
    enables, DMI hint and occupancy cleared."""
    p = GenericPayload(WRITE, 4, bytearray(8), byte_enable=b"\xff\x00", streaming_width=2)
    p.status, p.dmi_allowed, p.bw_occupancy = OK, True, 500
    p.set_extension("qos", 3)
    assert p.reset(READ, 0x10, 4) is p
    assert (p.command, p.address, p.length, p.streaming_width) == (READ, 0x10, 4, 4)
    assert p.status == INCOMPLETE and p.byte_enable is None
    assert p.dmi_allowed is False and p.bw_occupancy == 0
    assert p.get_extension("qos") == 3 and p.get_extension("nope", "d") == "d"


def test_enumerations_match_systemc():
    assert (Command.READ, Command.WRITE, Command.IGNORE) == (0, 1, 2)
    assert (Status.OK, Status.INCOMPLETE, Status.GENERIC_ERROR, Status.ADDRESS_ERROR,
            Status.COMMAND_ERROR, Status.BURST_ERROR, Status.BYTE_ENABLE_ERROR) == (
        1, 0, -1, -2, -3, -4, -5)
    assert [p.name for p in Phase] == ["BEGIN_REQ", "END_REQ", "BEGIN_RESP", "END_RESP"]
    assert [s.name for s in Sync] == ["ACCEPTED", "UPDATED", "COMPLETED"]


# ----- sockets ---------------------------------------------------------------------------------
def test_binding_forwards_to_target_functions(top, make_initiator, run_proc):
    """After bind, the initiator's forward calls are the target's functions."""
    calls = []

    async def b(p, d):
        calls.append(("b", p.address, d))
        p.status = OK
        return d + 5

    def dbg(p):
        calls.append(("dbg", p.address))
        return 0

    tgt = Module(top, "tgt")
    ts = TargetSocket(tgt, "in", b_transport=b, transport_dbg=dbg)
    ini = make_initiator(top, "cpu")
    ini.socket.bind(ts)
    assert ini.socket.target is ts and ts.initiators == [ini.socket]

    async def go():
        p, d = await ini.access(READ, 0x10, length=4, delay=7)
        return d, p.status

    assert run_proc(go) == (12, OK)
    assert ini.socket.transport_dbg(GenericPayload(READ, 0x20, length=1)) == 0
    assert calls == [("b", 0x10, 7), ("dbg", 0x20)]
    # DMI is optional: a target without it refuses
    assert ini.socket.get_direct_mem_ptr(GenericPayload(READ, 0, length=1)) is None


def test_missing_target_function_is_a_binding_error(top, make_initiator):
    """Calling a forward function the bound target does not implement names both sides."""
    async def b(p, d):
        return d

    ts = TargetSocket(Module(top, "tgt"), "in", b_transport=b)
    ini = make_initiator(top, "cpu")
    ini.socket.bind(ts)
    with pytest.raises(BindingError) as ei:
        ini.socket.transport_dbg(GenericPayload(READ, 0, length=1))
    assert ei.value.path == "top.cpu.socket" and "top.tgt.in does not implement" in str(ei.value)
    with pytest.raises(BindingError, match="nb_transport_fw"):
        ini.socket.nb_transport_fw(GenericPayload(READ, 0, length=1), Phase.BEGIN_REQ, 0)


def test_several_initiators_up_to_max_bindings(top, make_initiator):
    mem = Memory(top, "mem", 64, max_bindings=2)
    a, b = make_initiator(top, "a"), make_initiator(top, "b")
    a.socket.bind(mem.socket)
    b.socket.bind(mem.socket)
    assert mem.socket.initiators == [a.socket, b.socket]


# ----- memory: b_transport ---------------------------------------------------------------------
@pytest.fixture
def mem_and_cpu(top, make_initiator):
    mem = Memory(top, "mem", 64)
    cpu = make_initiator(top, "cpu")
    cpu.socket.bind(mem.socket)
    return mem, cpu


def test_write_read_round_trip_and_stats(sim, mem_and_cpu, run_proc):
    """Written bytes read back; the target sets OK and the DMI hint; counters count."""
    mem, cpu = mem_and_cpu

    async def go():
        w, dw = await cpu.access(WRITE, 8, bytearray(b"\x01\x02\x03\x04"), delay=3)
        buf = bytearray(6)
        r, dr = await cpu.access(READ, 6, buf)
        return w.status, dw, w.dmi_allowed, r.status, dr, bytes(buf)

    assert run_proc(go) == (OK, 3, True, OK, 0, b"\x00\x00\x01\x02\x03\x04")
    assert sim.now == 0                       # b_transport annotates, it does not wait
    assert mem.dump(8, 4) == b"\x01\x02\x03\x04"
    assert sim.stats.as_dict()["top.mem"] == {
        "busy_ps": 0, "bytes_read": 6, "bytes_written": 4, "reads": 1, "writes": 1}


@pytest.mark.parametrize("make_data", [
    lambda b: np.frombuffer(bytearray(b), dtype=np.uint8).copy(),
    lambda b: memoryview(bytearray(b)),
    lambda b: np.frombuffer(bytearray(b), dtype=np.uint32).copy(),
])
def test_bytes_like_data_buffers(mem_and_cpu, run_proc, make_data):
    """numpy arrays (any dtype) and memoryviews work as data buffers."""
    mem, cpu = mem_and_cpu
    src = bytes(range(1, 17))

    async def go():
        w, _ = await cpu.access(WRITE, 16, make_data(src))
        out = make_data(bytes(16))
        r, _ = await cpu.access(READ, 16, out)
        return w.status, r.status, bytes(memoryview(out).cast("B"))

    assert run_proc(go) == (OK, OK, src)
    assert mem.dump(16, 16) == src


def test_memory_timing_latency_occupancy_contention(sim, top, make_initiator, run_proc):
    """1 GHz clock, latency 3 cycles, width 4 B/cycle: 16 bytes cost 3 + 4 cycles. A
    second access arriving while the memory is busy (until 4 ns) waits for it."""
    clk = Clock(sim, "clk", 1e9)
    mem = Memory(top, "mem", 256, clock=clk, latency=3, width=4)
    free = Memory(top, "free", 256, clock=clk, latency=3, width=4, contention=False)
    cpu, cpu2 = make_initiator(top, "cpu"), make_initiator(top, "cpu2")
    cpu.socket.bind(mem.socket)
    cpu2.socket.bind(free.socket)

    async def go():
        _, d1 = await cpu.access(READ, 0, length=16, delay=0)
        _, d2 = await cpu.access(READ, 0, length=16, delay=0)
        _, d3 = await cpu.access(READ, 0, length=16, delay=10 * NS)
        _, e1 = await cpu2.access(READ, 0, length=16)
        _, e2 = await cpu2.access(READ, 0, length=16)
        return d1, d2, d3, e1, e2

    assert run_proc(go) == (7000, 11000, 17000, 7000, 7000)
    assert mem.timing.busy_time == 12000


def test_memory_without_clock_latency_in_ps(top, make_initiator, run_proc):
    mem = Memory(top, "mem", 32, latency=250)
    cpu = make_initiator(top, "cpu")
    cpu.socket.bind(mem.socket)

    async def go():
        return (await cpu.access(READ, 0, length=32, delay=100))[1]

    assert run_proc(go) == 350


def test_ignore_command(mem_and_cpu, run_proc):
    """IGNORE is a valid command that moves no data and counts nothing."""
    mem, cpu = mem_and_cpu

    async def go():
        p, _ = await cpu.access(IGNORE, 0, bytearray(b"\xff" * 4))
        return p.status

    assert run_proc(go) == OK
    assert mem.dump(0, 4) == bytes(4) and mem.reads == mem.writes == 0


@pytest.mark.parametrize("addr,length,status,reason", [
    (62, 4, Status.ADDRESS_ERROR, "outside [0, 0x40)"),
    (-1, 2, Status.ADDRESS_ERROR, "outside [0, 0x40)"),
    (64, 1, Status.ADDRESS_ERROR, "outside [0, 0x40)"),
    (0, 0, Status.ADDRESS_ERROR, "zero-length access"),
])
def test_memory_range_errors(sim, mem_and_cpu, run_proc, addr, length, status, reason):
    """An access outside the memory gets an error response (never an exception), logged
    with the initiator, address and time; the annotated delay is unchanged."""
    mem, cpu = mem_and_cpu

    async def go():
        await sim.wait(2 * NS)
        p, d = await cpu.access(WRITE, addr, bytearray(max(length, 1)), length=length, delay=9)
        return p.status, d

    assert run_proc(go) == (status, 9)
    [rec] = sim.errors
    assert (rec.time, rec.initiator, rec.where, rec.command, rec.address, rec.length,
            rec.status, rec.reason) == (2000, "top.cpu", "top.mem", "WRITE", addr, length,
                                        status.name, reason)
    assert mem.writes == 0


def test_unknown_command_is_command_error(sim, mem_and_cpu, run_proc):
    mem, cpu = mem_and_cpu

    async def go():
        p, _ = await cpu.access(7, 0, length=4)
        return p.status

    assert run_proc(go) == Status.COMMAND_ERROR
    assert sim.errors[0].reason == "unknown command 7"


def test_data_buffer_shorter_than_length_is_an_error_response(sim, mem_and_cpu, run_proc):
    """A malformed payload (length beyond its data buffer) gets an error response, not a
    Python exception inside the memory."""
    mem, cpu = mem_and_cpu

    async def go():
        r, _ = await cpu.access(READ, 0, bytearray(4), length=8)
        w, _ = await cpu.access(WRITE, 0, bytearray(b"\xaa" * 4), length=8)
        return r.status, w.status

    assert run_proc(go) == (Status.GENERIC_ERROR, Status.GENERIC_ERROR)
    assert mem.dump(0, 8) == bytes(8)
    assert [e.status for e in sim.errors] == ["GENERIC_ERROR"] * 2


# ----- byte enables and streaming width -------------------------------------------------------
@pytest.mark.parametrize("be, after, written", [
    (b"\xff\x00", b"A\x11C\x11E\x11G\x11", 4),
    (b"\x00", b"\x11" * 8, 0),             # none enabled (a timing-only write): nothing moves
])
def test_byte_enables_on_write_repeat_over_the_data(mem_and_cpu, run_proc, be, after, written):
    """Only enabled bytes are written; a short byte-enable array repeats."""
    mem, cpu = mem_and_cpu
    mem.load(0, b"\x11" * 8)

    async def go():
        p, _ = await cpu.access(WRITE, 0, bytearray(b"ABCDEFGH"), byte_enable=be)
        return p.status

    assert run_proc(go) == OK
    assert mem.dump(0, 8) == after
    assert mem.bytes_written == written


def test_byte_enables_on_read_leave_disabled_bytes_untouched(mem_and_cpu, run_proc):
    mem, cpu = mem_and_cpu
    mem.load(0, b"abcdef")
    buf = bytearray(b"------")

    async def go():
        p, _ = await cpu.access(READ, 0, buf, byte_enable=bytes([0, 0xff, 0xff, 0]))
        return p.status

    assert run_proc(go) == OK
    assert bytes(buf) == b"-bc--f"
    assert mem.bytes_read == 3


@pytest.mark.parametrize("pattern", [b"\x00", b"\xff", b"\x01\x00", b"\x00\xff\xff",
                                     bytes([0, 3, 0, 0, 7]), b"\xff" * 9 + b"\x00"])
@pytest.mark.parametrize("n", [1, 2, 5, 64, 1000])
def test_byte_enable_mask_repeats_the_pattern_over_the_data(pattern, n):
    """The mask is the pattern repeated (or cut) to n bytes, nonzero = enabled; None when
    every byte is enabled."""
    mask = byte_enable_mask(pattern, n)
    want = [bool(pattern[i % len(pattern)]) for i in range(n)]
    if all(want):
        assert mask is None
    else:
        assert mask is not None and mask.dtype == bool and mask.tolist() == want
    assert byte_enable_mask(None, n) is None


def test_streaming_width_wraps_addresses(mem_and_cpu, run_proc):
    """With streaming width w < length, beat k accesses address + (k mod w): a write
    leaves the last beat, a read repeats the window."""
    mem, cpu = mem_and_cpu
    mem.load(0, b"xyz")
    out = bytearray(7)

    async def go():
        w, _ = await cpu.access(WRITE, 4, bytearray(b"abcdefgh"), streaming_width=2)
        r, _ = await cpu.access(READ, 0, out, streaming_width=3)
        return w.status, r.status

    assert run_proc(go) == (OK, OK)
    assert mem.dump(4, 3) == b"gh\x00"
    assert bytes(out) == b"xyzxyzx"


def test_streaming_width_with_byte_enables(mem_and_cpu, run_proc):
    mem, cpu = mem_and_cpu

    async def go():
        p, _ = await cpu.access(WRITE, 0, bytearray(b"abcdef"), streaming_width=3,
                                byte_enable=b"\xff\x00\xff\x00\xff\x00")
        return p.status

    assert run_proc(go) == OK
    # beats: a->0, (b off), c->2, (d off), e->1, (f off)
    assert mem.dump(0, 3) == b"aec"


def test_streaming_window_at_the_end_of_memory(mem_and_cpu, run_proc):
    """A FIFO-style access (streaming width 1) at the last byte only touches that byte:
    it is in range even though address + length is not."""
    mem, cpu = mem_and_cpu

    async def go():
        p, _ = await cpu.access(WRITE, 63, bytearray(b"1234"), streaming_width=1)
        return p.status

    assert run_proc(go) == OK
    assert mem.dump(63, 1) == b"4"


@pytest.mark.parametrize("kw,status", [
    ({"streaming_width": 0}, Status.BURST_ERROR),
    ({"byte_enable": b""}, Status.BYTE_ENABLE_ERROR),
])
def test_malformed_burst_attributes(sim, mem_and_cpu, run_proc, kw, status):
    mem, cpu = mem_and_cpu

    async def go():
        p, _ = await cpu.access(WRITE, 0, bytearray(4), **kw)
        return p.status

    assert run_proc(go) == status
    assert sim.errors[0].status == status.name


# ----- ROM, debug transport, loaders --------------------------------------------------------------
def test_rom_refuses_writes_but_debug_writes_reach_it(sim, top, make_initiator, run_proc):
    rom = Memory(top, "rom", 16, read_only=True)
    cpu = make_initiator(top, "cpu")
    cpu.socket.bind(rom.socket)
    assert cpu.socket.transport_dbg(GenericPayload(WRITE, 0, bytearray(b"boot"))) == 4

    async def go():
        w, _ = await cpu.access(WRITE, 0, bytearray(b"XXXX"))
        buf = bytearray(4)
        r, _ = await cpu.access(READ, 0, buf)
        return w.status, r.status, bytes(buf)

    assert run_proc(go) == (Status.COMMAND_ERROR, OK, b"boot")
    assert sim.errors[0].reason == "write to read-only memory"


def test_transport_dbg_no_time_no_side_effects(sim, mem_and_cpu):
    """transport_dbg moves data without time, statistics or error records; it returns the
    number of bytes moved (0 when it cannot)."""
    mem, cpu = mem_and_cpu
    assert cpu.socket.transport_dbg(GenericPayload(WRITE, 4, bytearray(b"dbg!"))) == 4
    buf = bytearray(6)
    assert cpu.socket.transport_dbg(GenericPayload(READ, 2, buf)) == 6
    assert bytes(buf) == b"\x00\x00dbg!"
    assert cpu.socket.transport_dbg(GenericPayload(IGNORE, 0, length=4)) == 0
    bad = GenericPayload(READ, 62, length=4)
    assert cpu.socket.transport_dbg(bad) == 0
    assert sim.now == 0
    assert mem.reads == mem.writes == mem.bytes_read == mem.bytes_written == 0
    assert sim.errors == []


def test_load_and_dump_bounds(mem_and_cpu):
    mem, _ = mem_and_cpu
    mem.load(60, np.array([1, 2, 3, 4], dtype=np.uint8))
    assert mem.dump(60, 4) == b"\x01\x02\x03\x04"
    with pytest.raises(ValueError, match="top.mem: load of 2 bytes at 0x3f"):
        mem.load(63, b"ab")
    with pytest.raises(ValueError, match="top.mem: dump"):
        mem.dump(-1, 2)


# ----- DMI -------------------------------------------------------------------------------------------
def test_dmi_region_and_cache_helpers():
    arr = np.arange(16, dtype=np.uint8)
    r = DmiRegion(0x100, 0x10F, arr, read_latency=5, write_latency=6)
    assert r.contains(0x100) and r.contains(0x10C, 4) and not r.contains(0x10D, 4)
    assert not r.contains(0xFF)
    assert list(r.view(0x104, 3)) == [4, 5, 6]
    t = r.translated(0x1000)
    assert (t.start, t.end, t.read_latency, t.write_latency) == (0x1100, 0x110F, 5, 6)
    assert t.array is arr
    cache = DmiCache()
    ro = DmiRegion(0x200, 0x20F, arr, write_allowed=False)
    cache.add(r)
    cache.add(ro)
    assert cache.lookup(0x108, 8) is r and cache.lookup(0x108, 9) is None
    assert cache.lookup(0x200, write=True) is None and cache.lookup(0x200) is ro
    cache.invalidate(0x110, 0x1FF)      # touches neither
    assert cache.regions == [r, ro] and cache.invalidations == 0
    cache.invalidate(0x10F, 0x200)      # touches both ends
    assert cache.regions == [] and cache.invalidations == 2


def test_memory_dmi_grant(sim, top, make_initiator, run_proc):
    """The memory grants its whole storage with its access latency; the region is a live
    view of the memory."""
    clk = Clock(sim, "clk", 500e6)      # 2000 ps
    mem = Memory(top, "mem", 128, clock=clk, latency=2)
    cpu = make_initiator(top, "cpu")
    cpu.socket.bind(mem.socket)
    r = cpu.socket.get_direct_mem_ptr(GenericPayload(READ, 40, length=4))
    assert (r.start, r.end, r.read_allowed, r.write_allowed) == (0, 127, True, True)
    assert (r.read_latency, r.write_latency) == (4000, 4000)
    r.view(40, 4)[:] = [9, 8, 7, 6]
    assert mem.dump(40, 4) == bytes([9, 8, 7, 6])
    assert cpu.socket.get_direct_mem_ptr(GenericPayload(READ, 128, length=1)) is None


def test_dmi_disabled_and_rom(top, make_initiator, run_proc):
    """A memory with DMI off refuses and clears the DMI hint; a ROM grants read-only."""
    mem = Memory(top, "nodmi", 16, dmi=False)
    rom = Memory(top, "rom", 16, read_only=True)
    a, b = make_initiator(top, "a"), make_initiator(top, "b")
    a.socket.bind(mem.socket)
    b.socket.bind(rom.socket)
    assert a.socket.get_direct_mem_ptr(GenericPayload(READ, 0, length=1)) is None

    async def go():
        p, _ = await a.access(READ, 0, length=4)
        return p.dmi_allowed

    assert run_proc(go) is False
    region = b.socket.get_direct_mem_ptr(GenericPayload(READ, 0, length=1))
    assert region.read_allowed and not region.write_allowed
    b.dmi.add(region)
    assert b.dmi.lookup(0, 4) is region and b.dmi.lookup(0, 4, write=True) is None


@pytest.fixture
def two_level(sim, top, make_initiator):
    """cpu -> bus (1 GHz, latency 2) -> [0x1000_0000, +0x1_0000) -> sub (latency 3)
    -> [0x100, +0x100) -> mem (0x200 bytes, latency 4): mem's first 0x100 bytes appear at
    0x1000_0100 .. 0x1000_01ff."""
    clk = Clock(sim, "clk", 1e9)
    bus = Router(top, "bus", clock=clk, latency=2)
    sub = Router(top, "sub", clock=clk, latency=3)
    mem = Memory(top, "mem", 0x200, clock=clk, latency=4)
    bus.map(0x1000_0000, 0x1_0000, sub.target_socket)
    sub.map(0x100, 0x100, mem.socket)
    cpu = make_initiator(top, "cpu")
    cpu.socket.bind(bus.target_socket)
    return cpu, bus, sub, mem


def test_dmi_through_two_routers_translated_clipped_with_latency(two_level):
    """The region seen by the initiator is in its own address space, clipped to the
    window each router decodes, and carries every hop's latency."""
    cpu, bus, sub, mem = two_level
    r = cpu.socket.get_direct_mem_ptr(GenericPayload(READ, 0x1000_0180, length=4))
    assert (r.start, r.end) == (0x1000_0100, 0x1000_01FF)
    assert r.read_latency == r.write_latency == (4 + 3 + 2) * 1000
    assert r.array.shape == (0x100,)
    r.view(0x1000_0180, 2)[:] = [0xAB, 0xCD]
    assert mem.dump(0x80, 2) == b"\xab\xcd"
    # outside every mapped window: refused
    assert cpu.socket.get_direct_mem_ptr(GenericPayload(READ, 0x1000_0000, length=1)) is None
    assert cpu.socket.get_direct_mem_ptr(GenericPayload(READ, 0x2000_0000, length=1)) is None


def test_dmi_invalidation_reaches_initiator_translated(two_level):
    """The memory's invalidation of [0x10, 0x1f] reaches the initiator as
    [0x1000_0110, 0x1000_011f] and drops the cached region; set_dmi(False) revokes all."""
    cpu, bus, sub, mem = two_level
    region = cpu.socket.get_direct_mem_ptr(GenericPayload(READ, 0x1000_0100, length=1))
    cpu.dmi.add(region)
    other = DmiRegion(0x5000, 0x5FFF, np.zeros(0x1000, np.uint8))
    cpu.dmi.add(other)
    mem.invalidate_dmi(0x10, 0x1F)
    assert cpu.invalidations == [(0x1000_0110, 0x1000_011F)]
    assert cpu.dmi.regions == [other] and cpu.dmi.invalidations == 1
    cpu.dmi.add(region)
    mem.set_dmi(False)
    assert cpu.invalidations[-1] == (0x1000_0100, 0x1000_02FF)
    assert cpu.dmi.regions == [other]
    assert cpu.socket.get_direct_mem_ptr(GenericPayload(READ, 0x1000_0100, length=1)) is None


def test_dmi_without_translation(sim, top, make_initiator):
    """translate=False: the target sees global addresses; the region is clipped to the
    mapped window and invalidations pass through unshifted."""
    bus = Router(top, "bus")
    mem = Memory(top, "mem", 0x400)
    bus.map(0x100, 0x100, mem.socket, translate=False)
    cpu = make_initiator(top, "cpu")
    cpu.socket.bind(bus.target_socket)
    r = cpu.socket.get_direct_mem_ptr(GenericPayload(READ, 0x150, length=1))
    assert (r.start, r.end) == (0x100, 0x1FF)
    r.view(0x150, 1)[:] = 7
    assert mem.dump(0x150, 1) == b"\x07"
    mem.invalidate_dmi(0x120, 0x130)
    assert cpu.invalidations == [(0x120, 0x130)]


def test_b_transport_through_two_routers(sim, two_level, run_proc):
    """The target sees the translated address; the initiator's payload address is
    restored; latencies add up (2 + 3 + 4 cycles)."""
    cpu, bus, sub, mem = two_level
    mem.load(0x44, b"hi")

    async def go():
        p, d = await cpu.access(READ, 0x1000_0144, length=2, delay=500)
        return p.status, p.address, bytes(p.data), d

    assert run_proc(go) == (OK, 0x1000_0144, b"hi", 500 + 9000)
    assert cpu.socket.transport_dbg(GenericPayload(WRITE, 0x1000_0150, bytearray(b"Z"))) == 1
    assert mem.dump(0x50, 1) == b"Z"
