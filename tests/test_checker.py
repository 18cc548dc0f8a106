"""The base-protocol checker (tlm/checker.py): each rule of its docstring is provoked by
a deliberately broken initiator or target and reported exactly once under its name; a
correct loosely-timed and approximately-timed exchange with the memory passes."""
from __future__ import annotations

import numpy as np
import pytest

from tlm import (NS, OK, READ, WRITE, Clock, DmiRegion, GenericPayload, Memory, Phase,
                 ProcessError, ProtocolError, Router, Sync, TargetSocket,
                 insert_checker)
from tlm.module import Module

ACC, UPD, CMP = Sync.ACCEPTED, Sync.UPDATED, Sync.COMPLETED
BREQ, EREQ, BRESP, ERESP = Phase.BEGIN_REQ, Phase.END_REQ, Phase.BEGIN_RESP, Phase.END_RESP


class FakeTarget(Module):
    """A target whose b_transport / dbg / DMI / nb behaviour a test supplies; the defaults
    behave correctly (set OK, keep the delay)."""

    def __init__(self, parent, name, *, b=None, dbg=None, dmi=None, nb=None):
        super().__init__(parent, name)
        self._b_fn, self._dbg_fn, self._dmi_fn, self._nb_fn = b, dbg, dmi, nb
        self.socket = TargetSocket(self, "socket", b_transport=self.b_transport,
                                   transport_dbg=self.dbg, get_direct_mem_ptr=self.dmi,
                                   nb_transport_fw=self.nb)

    async def b_transport(self, p, d):
        if self._b_fn is not None:
            return await self._b_fn(p, d)
        p.status = OK
        return d

    def dbg(self, p):
        return self._dbg_fn(p) if self._dbg_fn else p.length

    def dmi(self, p):
        if self._dmi_fn:
            return self._dmi_fn(p)
        return DmiRegion(0, 0xFF, np.zeros(0x100, np.uint8))

    def nb(self, p, phase, d):
        if self._nb_fn:
            return self._nb_fn(p, phase, d)
        return ACC, phase, d


@pytest.fixture
def rig(top, make_initiator):
    """``rig(**target_fns, raise_on_violation=False)`` -> (cpu, checker, target)."""
    def build(raise_on_violation=False, nb_bw=None, **fns):
        tgt = FakeTarget(top, "tgt", **fns)
        cpu = make_initiator(top, "cpu", nb_bw=nb_bw or (lambda p, ph, d: (ACC, ph, d)))
        chk = insert_checker(top, "chk", cpu.socket, tgt.socket,
                             raise_on_violation=raise_on_violation)
        return cpu, chk, tgt
    return build


def rules(chk):
    return [v.rule for v in chk.violations]


def run_b(sim, cpu, **payload_kw):
    """One b_transport through the checker with a payload built from ``payload_kw``."""
    delay = payload_kw.pop("delay", 0)
    status = payload_kw.pop("status", None)
    p = GenericPayload(payload_kw.pop("command", READ), payload_kw.pop("address", 0),
                       payload_kw.pop("data", bytearray(4)), **payload_kw)
    if status is not None:
        p.status = status

    async def go():
        return await cpu.socket.b_transport(p, delay)

    sim.spawn(go(), "cpu.run")
    sim.run()
    return p


# ----- b_transport rules -------------------------------------------------------------------------
def test_status_incomplete(sim, rig):
    """An upstream component that set OK before the target is caught."""
    cpu, chk, _ = rig()
    run_b(sim, cpu, status=OK)
    assert rules(chk) == ["status-incomplete"]


def test_response_status(sim, rig):
    async def forgetful(p, d):
        return d

    cpu, chk, _ = rig(b=forgetful)
    run_b(sim, cpu)
    assert rules(chk) == ["response-status"]


@pytest.mark.parametrize("kw", [{"length": 8}, {"length": 0}, {"data": None, "length": 4}])
def test_length(sim, rig, kw):
    """length must be >= 1 and fit the data buffer (and a READ needs a buffer)."""
    cpu, chk, _ = rig()
    p = GenericPayload(READ, 0, bytearray(4))
    p.length = kw["length"]
    if "data" in kw:
        p.data = None

    async def go():
        await cpu.socket.b_transport(p, 0)

    sim.spawn(go(), "cpu.run")
    sim.run()
    assert rules(chk) == ["length"]


def test_streaming_width(sim, rig):
    cpu, chk, _ = rig()
    run_b(sim, cpu, streaming_width=0)
    assert rules(chk) == ["streaming-width"]


def test_byte_enable_length(sim, rig):
    cpu, chk, _ = rig()
    run_b(sim, cpu, byte_enable=b"")
    assert rules(chk) == ["byte-enable-length"]


@pytest.mark.parametrize("address", [-1, 2**64 - 2])
def test_address_range(sim, rig, address):
    cpu, chk, _ = rig()
    run_b(sim, cpu, address=address)
    assert rules(chk) == ["address-range"]


def test_command(sim, rig):
    cpu, chk, _ = rig()
    run_b(sim, cpu, command=9)
    assert rules(chk) == ["command"]


def test_delay_negative(sim, rig):
    cpu, chk, _ = rig()
    run_b(sim, cpu, delay=-1)
    assert rules(chk) == ["delay-negative"]


def test_delay_decreased(sim, rig):
    async def time_traveller(p, d):
        p.status = OK
        return d - 1

    cpu, chk, _ = rig(b=time_traveller)
    run_b(sim, cpu, delay=10)
    assert rules(chk) == ["delay-decreased"]


def test_data_pointer(sim, rig):
    async def replacer(p, d):
        p.data = bytearray(p.length)
        p.status = OK
        return d

    cpu, chk, _ = rig(b=replacer)
    run_b(sim, cpu)
    assert rules(chk) == ["data-pointer"]


def test_payload_in_flight(sim, rig):
    """The same payload sent by a second process while the first call is still waiting
    in the target."""
    async def slow(p, d):
        await sim.wait(10 * NS)
        p.status = OK
        return d

    cpu, chk, _ = rig(b=slow)
    p = GenericPayload(READ, 0, bytearray(4))

    async def first():
        await cpu.socket.b_transport(p, 0)

    async def second():
        await sim.wait(1 * NS)
        await cpu.socket.b_transport(p, 0)

    sim.spawn(first(), "a")
    sim.spawn(second(), "b")
    sim.run()
    assert rules(chk) == ["payload-in-flight"]
    assert chk.violations[0].time == 1 * NS


def test_violation_raises_protocol_error_with_path_and_time(sim, rig):
    """In the default mode the violation is raised as ProtocolError naming the checker
    path, the rule and the time; in a process it surfaces as a ProcessError cause."""
    async def forgetful(p, d):
        await sim.wait(3 * NS)
        return d

    cpu, chk, _ = rig(raise_on_violation=True, b=forgetful)
    with pytest.raises(ProcessError) as ei:
        run_b(sim, cpu)
    err = ei.value.__cause__
    assert isinstance(err, ProtocolError)
    assert (err.rule, err.path, err.time) == ("response-status", "top.chk", 3 * NS)
    assert str(err).startswith("top.chk at 3 ns: [response-status]")
    assert ei.value.path == "cpu.run"


# ----- debug and DMI rules -----------------------------------------------------------------------
def test_dmi_range(rig):
    cpu, chk, _ = rig(dmi=lambda p: DmiRegion(0x100, 0x1FF, np.zeros(0x100, np.uint8)))
    cpu.socket.get_direct_mem_ptr(GenericPayload(READ, 0x20, length=1))
    assert rules(chk) == ["dmi-range"]


def test_dbg_length(rig):
    cpu, chk, _ = rig(dbg=lambda p: p.length + 1)
    assert cpu.socket.transport_dbg(GenericPayload(READ, 0, length=4)) == 5
    assert rules(chk) == ["dbg-length"]


def test_dbg_and_dmi_pass_when_correct(rig):
    cpu, chk, _ = rig()
    assert cpu.socket.transport_dbg(GenericPayload(READ, 0, length=4)) == 4
    assert cpu.socket.get_direct_mem_ptr(GenericPayload(READ, 0x20, length=1)) is not None
    assert rules(chk) == []


# ----- nb_transport rules ------------------------------------------------------------------------
def test_phase_order(rig):
    """END_RESP for a payload that never received BEGIN_RESP."""
    cpu, chk, _ = rig(nb=lambda p, ph, d: (CMP, ph, d))
    p = GenericPayload(READ, 0, length=4)
    p.status = OK
    cpu.socket.nb_transport_fw(p, ERESP, 0)
    assert rules(chk) == ["phase-order"]


def test_phase_order_raises_in_default_mode(sim, rig):
    cpu, chk, _ = rig(raise_on_violation=True)
    with pytest.raises(ProtocolError) as ei:
        cpu.socket.nb_transport_fw(GenericPayload(READ, 0, length=4), ERESP, 0)
    assert (ei.value.rule, ei.value.path, ei.value.time) == ("phase-order", "top.chk", 0)


def test_phase_direction_forward(rig):
    """END_REQ is a backward-path phase: sent forward it is a phase-direction error."""
    cpu, chk, _ = rig()
    cpu.socket.nb_transport_fw(GenericPayload(READ, 0, length=4), EREQ, 0)
    assert rules(chk) == ["phase-direction"]


def test_phase_direction_backward(rig):
    """A target that sends END_RESP on the backward path."""
    cpu, chk, tgt = rig(nb=lambda p, ph, d: (UPD, EREQ, d))
    p = GenericPayload(READ, 0, length=4)
    cpu.socket.nb_transport_fw(p, BREQ, 0)
    p.status = OK
    tgt.socket.nb_transport_bw(p, ERESP, 0)
    assert rules(chk) == ["phase-direction"]


def test_one_outstanding_request(rig):
    """A second BEGIN_REQ before the first request got END_REQ."""
    cpu, chk, _ = rig()          # the target accepts and never ends the request
    cpu.socket.nb_transport_fw(GenericPayload(READ, 0, length=4), BREQ, 0)
    cpu.socket.nb_transport_fw(GenericPayload(READ, 4, length=4), BREQ, 0)
    assert rules(chk) == ["one-outstanding-request"]


def test_one_outstanding_response(rig):
    """The target starts a second response while the first is still open (the initiator
    accepted BEGIN_RESP but has not sent END_RESP yet)."""
    cpu, chk, tgt = rig(nb=lambda p, ph, d: (UPD, EREQ, d))
    p1, p2 = GenericPayload(READ, 0, length=4), GenericPayload(READ, 4, length=4)
    for p in (p1, p2):
        cpu.socket.nb_transport_fw(p, BREQ, 0)
        p.status = OK
    assert tgt.socket.nb_transport_bw(p1, BRESP, 0)[0] == ACC
    tgt.socket.nb_transport_bw(p2, BRESP, 0)
    assert rules(chk) == ["one-outstanding-response"]


def test_nb_delay_negative(rig):
    cpu, chk, _ = rig(nb=lambda p, ph, d: (UPD, EREQ, d))
    cpu.socket.nb_transport_fw(GenericPayload(READ, 0, length=4), BREQ, -5)
    assert rules(chk) == ["delay-negative"]


def test_nb_delay_decreased(top, make_initiator):
    tgt = FakeTarget(top, "tgt", nb=lambda p, ph, d: (UPD, EREQ, d - 2))
    cpu = make_initiator(top, "cpu", nb_bw=lambda p, ph, d: (ACC, ph, d))
    chk = insert_checker(top, "chk", cpu.socket, tgt.socket, raise_on_violation=False)
    cpu.socket.nb_transport_fw(GenericPayload(READ, 0, length=4), BREQ, 10)
    assert rules(chk) == ["delay-decreased"]


def test_nb_response_status_on_completion(rig):
    """A target completing a request on the return path without a status."""
    cpu, chk, _ = rig(nb=lambda p, ph, d: (CMP, BRESP, d))
    cpu.socket.nb_transport_fw(GenericPayload(READ, 0, length=4), BREQ, 0)
    assert rules(chk) == ["response-status"]


def test_nb_response_status_on_begin_resp(rig):
    """BEGIN_RESP is the response: sending it with status INCOMPLETE is a violation."""
    cpu, chk, tgt = rig(nb=lambda p, ph, d: (UPD, EREQ, d))
    p = GenericPayload(READ, 0, length=4)
    cpu.socket.nb_transport_fw(p, BREQ, 0)
    tgt.socket.nb_transport_bw(p, BRESP, 0)
    assert rules(chk) == ["response-status"]


# ----- correct exchanges pass ---------------------------------------------------------------------
def test_correct_lt_exchange_with_memory_passes(sim, top, make_initiator, run_proc):
    mem = Memory(top, "mem", 64, latency=3 * NS)
    cpu = make_initiator(top, "cpu")
    chk = insert_checker(top, "chk", cpu.socket, mem.socket)

    async def go():
        w, d = await cpu.access(WRITE, 0, bytearray(b"abcd"), delay=1)
        buf = bytearray(4)
        r, d2 = await cpu.access(READ, 0, buf, delay=d)
        return w.status, r.status, bytes(buf), d2

    assert run_proc(go) == (OK, OK, b"abcd", 1 + 2 * 3 * NS)
    assert chk.violations == [] and chk.transactions == 2


class AtInitiator:
    """An approximately-timed initiator driving the base protocol correctly: it sends
    BEGIN_REQ only after the previous END_REQ, and ends each response either by returning
    COMPLETED or by an END_RESP on the forward path one delta later."""

    def __init__(self, sim, cpu, complete_on_return: bool):
        self.sim, self.cpu, self.complete = sim, cpu, complete_on_return
        self.req_done = sim.event("req_done")
        self.log: list[tuple] = []

    def bw(self, p, phase, d):
        self.log.append((phase.name, self.sim.now + d, p.address, p.status))
        if phase == BRESP:
            if self.complete:
                return CMP, ERESP, d
            self.sim.schedule(d, self.end_resp, p)
            return ACC, phase, d
        if phase == EREQ:
            self.req_done.notify(d)
        return ACC, phase, d

    def end_resp(self, p):
        self.log.append(("END_RESP", self.sim.now, p.address, p.status))
        self.cpu.socket.nb_transport_fw(p, ERESP, 0)

    async def send(self, p):
        sync, phase, d = self.cpu.socket.nb_transport_fw(p, BREQ, 0)
        self.log.append((f"{sync.name}/{phase.name}", self.sim.now + d, p.address, p.status))
        if phase == EREQ or sync == CMP:
            await self.sim.wait(d)
        else:
            await self.req_done


@pytest.mark.parametrize("complete_on_return", [True, False])
@pytest.mark.parametrize("via_router", [False, True])
def test_correct_at_exchange_with_memory_passes(sim, top, make_initiator, complete_on_return,
                                               via_router):
    """Pipelined AT reads and writes into a clocked memory (latency 2 cycles, 4 B/cycle),
    optionally through a router (latency 1 cycle, base 0x4000): no violations, data
    correct, responses at the hand-computed times."""
    clk = Clock(sim, "clk", 1e9)
    mem = Memory(top, "mem", 256, clock=clk, latency=2, width=4)
    mem.load(0x10, b"0123456789abcdef")
    holder = {}
    cpu = make_initiator(top, "cpu", nb_bw=lambda p, ph, d: holder["ini"].bw(p, ph, d))
    if via_router:
        bus = Router(top, "bus", clock=clk, latency=1)
        bus.map(0x4000, 0x100, mem.socket)
        chk = insert_checker(top, "chk", cpu.socket, bus.target_socket)
        base = 0x4000
    else:
        chk = insert_checker(top, "chk", cpu.socket, mem.socket)
        base = 0
    ini = holder["ini"] = AtInitiator(sim, cpu, complete_on_return)
    r1 = GenericPayload(READ, base + 0x10, length=8, initiator="top.cpu")
    r2 = GenericPayload(READ, base + 0x18, length=8, initiator="top.cpu")
    w = GenericPayload(WRITE, base + 0x40, bytearray(b"WXYZ"), initiator="top.cpu")

    async def go():
        await ini.send(r1)
        await ini.send(r2)
        await sim.wait_until(20 * NS)
        await ini.send(w)

    sim.spawn(go(), "cpu.run")
    sim.run()
    assert chk.violations == []
    assert bytes(r1.data) == b"01234567" and bytes(r2.data) == b"89abcdef"
    assert mem.dump(0x40, 4) == b"WXYZ"
    assert [p.status for p in (r1, r2, w)] == [OK, OK, OK]
    assert [p.address for p in (r1, r2, w)] == [base + 0x10, base + 0x18, base + 0x40]
    # response times: r1 = 2 (occupancy) + 2 (latency) cycles; r2 waits for r1's
    # occupancy (busy until 2 ns): 2 + 2 + 2 = 6 ns; the write at 20 ns: 1 + 2 cycles.
    hop = 1000 if via_router else 0
    resp = [(t, a) for ph, t, a, _ in ini.log if ph == "BEGIN_RESP"]
    assert resp == [(4000 + hop, base + 0x10), (6000 + hop, base + 0x18),
                    (23000 + hop, base + 0x40)]
    assert chk.transactions == 3
