"""Approximately-timed transport (nb_transport_fw/bw, the four base-protocol phases)
through the memory and the router, backward-path routing with several initiators, and
the payload event queue (tlm/memory.py, router.py, sockets.py, peq.py)."""
from __future__ import annotations

import pytest

from tlm import (NS, OK, READ, WRITE, BindingError, Clock, GenericPayload, Memory,
                 PayloadEventQueue, Phase, Router, Status, Sync)

BREQ, EREQ, BRESP, ERESP = Phase.BEGIN_REQ, Phase.END_REQ, Phase.BEGIN_RESP, Phase.END_RESP


class Recorder:
    """A backward-path function that records (phase, time, address, status) and answers
    BEGIN_RESP with ``answer``."""

    def __init__(self, sim, answer=Sync.COMPLETED):
        self.sim, self.answer, self.log = sim, answer, []

    def __call__(self, p, phase, d):
        self.log.append((phase, self.sim.now + d, p.address, p.status))
        return (self.answer, ERESP if self.answer == Sync.COMPLETED else phase, d)


@pytest.fixture
def clk(sim):
    return Clock(sim, "clk", 1e9)


def test_memory_at_phases_and_timing(sim, top, make_initiator, clk):
    """BEGIN_REQ is accepted at once with END_REQ on the return path; BEGIN_RESP follows
    on the backward path after incoming delay + occupancy + latency + response_delay."""
    mem = Memory(top, "mem", 64, clock=clk, latency=3, width=4, response_delay=500)
    mem.load(0, b"abcdefgh")
    rec = Recorder(sim)
    cpu = make_initiator(top, "cpu", nb_bw=rec)
    cpu.socket.bind(mem.socket)
    p = GenericPayload(READ, 0, length=8)
    ret = []

    async def go():
        await sim.wait(10 * NS)
        ret.append(cpu.socket.nb_transport_fw(p, BREQ, 2 * NS))

    sim.spawn(go(), "cpu.run")
    sim.run()
    assert ret == [(Sync.UPDATED, EREQ, 2 * NS)]
    # 10 ns + 2 ns (annotated) + 2 cycles occupancy + 3 cycles latency + 500 ps
    assert rec.log == [(BRESP, 17_500, 0, OK)]
    assert bytes(p.data) == b"abcdefgh"


def test_end_resp_on_forward_path_completes(sim, top, make_initiator, clk):
    """An initiator that accepts BEGIN_RESP and sends END_RESP gets COMPLETED."""
    mem = Memory(top, "mem", 64, clock=clk, latency=1)
    rec = Recorder(sim, answer=Sync.ACCEPTED)
    cpu = make_initiator(top, "cpu", nb_bw=rec)
    cpu.socket.bind(mem.socket)
    p = GenericPayload(WRITE, 4, bytearray(b"wxyz"))
    cpu.socket.nb_transport_fw(p, BREQ, 0)
    sim.run()
    assert rec.log == [(BRESP, 1000, 4, OK)]
    assert cpu.socket.nb_transport_fw(p, ERESP, 0) == (Sync.COMPLETED, ERESP, 0)
    assert mem.dump(4, 4) == b"wxyz"
    assert mem.socket._nb_route == {}


def test_memory_nb_error_response(sim, top, make_initiator, clk):
    """An out-of-range AT access gets BEGIN_RESP with ADDRESS_ERROR and is logged."""
    mem = Memory(top, "mem", 16, clock=clk, latency=2)
    rec = Recorder(sim)
    cpu = make_initiator(top, "cpu", nb_bw=rec)
    cpu.socket.bind(mem.socket)
    p = GenericPayload(READ, 14, length=4, initiator="top.cpu")
    assert cpu.socket.nb_transport_fw(p, BREQ, 0)[:2] == (Sync.UPDATED, EREQ)
    sim.run()
    assert rec.log == [(BRESP, 2000, 14, Status.ADDRESS_ERROR)]
    assert [(e.initiator, e.address, e.status) for e in sim.errors] == [
        ("top.cpu", 14, "ADDRESS_ERROR")]


def test_router_nb_translates_and_restores(sim, top, make_initiator, clk):
    """Through a router (latency 2 cycles, base 0x8000) the memory sees local addresses,
    the initiator sees its own at BEGIN_RESP and after END_RESP; the hop latency is
    added to BEGIN_REQ's delay."""
    bus = Router(top, "bus", clock=clk, latency=2)
    mem = Memory(top, "mem", 64, clock=clk, latency=1)
    bus.map(0x8000, 64, mem.socket)
    rec = Recorder(sim, answer=Sync.ACCEPTED)
    cpu = make_initiator(top, "cpu", nb_bw=rec)
    cpu.socket.bind(bus.target_socket)
    mem.load(0x20, b"ok")
    p = GenericPayload(READ, 0x8020, length=2)
    assert cpu.socket.nb_transport_fw(p, BREQ, 0) == (Sync.UPDATED, EREQ, 2000)
    assert p.address == 0x20          # in flight below the router
    sim.run()
    assert rec.log == [(BRESP, 3000, 0x8020, OK)]
    assert cpu.socket.nb_transport_fw(p, ERESP, 0)[0] == Sync.COMPLETED
    assert p.address == 0x8020 and bytes(p.data) == b"ok"
    assert bus._nb_orig == {}


def test_router_nb_unmapped_completes_with_error(sim, top, make_initiator):
    bus = Router(top, "bus", latency=100)
    bus.map(0, 16, Memory(top, "mem", 16).socket)
    cpu = make_initiator(top, "cpu", nb_bw=Recorder(sim))
    cpu.socket.bind(bus.target_socket)
    p = GenericPayload(WRITE, 0x40, bytearray(4), initiator="top.cpu")
    assert cpu.socket.nb_transport_fw(p, BREQ, 7) == (Sync.COMPLETED, BRESP, 7)
    assert p.status == Status.ADDRESS_ERROR
    assert (sim.errors[0].initiator, sim.errors[0].where) == ("top.cpu", "top.bus")


def test_backward_path_reaches_the_right_initiator(sim, top, make_initiator, clk):
    """Two initiators through one router into one memory: each BEGIN_RESP goes back to
    the initiator that sent the request."""
    bus = Router(top, "bus", clock=clk, latency=1)
    mem = Memory(top, "mem", 64, clock=clk, latency=1, width=4)
    bus.map(0, 64, mem.socket)
    ra, rb = Recorder(sim), Recorder(sim)
    a = make_initiator(top, "a", nb_bw=ra)
    b = make_initiator(top, "b", nb_bw=rb)
    a.socket.bind(bus.target_socket)
    b.socket.bind(bus.target_socket)
    pa, pb = GenericPayload(READ, 0, length=4), GenericPayload(READ, 32, length=8)
    a.socket.nb_transport_fw(pa, BREQ, 0)
    b.socket.nb_transport_fw(pb, BREQ, 0)
    sim.run()
    # a: hop 1 + occupancy 1 + latency 1; b waits for a's occupancy (1..2 ns): 1+1+2+1
    assert ra.log == [(BRESP, 3000, 0, OK)]
    assert rb.log == [(BRESP, 5000, 32, OK)]


def test_unknown_payload_on_backward_path(sim, top, make_initiator):
    """nb_transport_bw for a payload the socket never saw, with several initiators bound,
    is a BindingError naming the target socket."""
    mem = Memory(top, "mem", 16)
    for n in "ab":
        make_initiator(top, n, nb_bw=Recorder(sim)).socket.bind(mem.socket)
    with pytest.raises(BindingError) as ei:
        mem.socket.nb_transport_bw(GenericPayload(READ, 0, length=1), BRESP, 0)
    assert ei.value.path == "top.mem.socket"


def test_initiator_without_backward_function(sim, top, make_initiator):
    mem = Memory(top, "mem", 16, latency=10)
    cpu = make_initiator(top, "cpu")
    cpu.socket.bind(mem.socket)
    cpu.socket.nb_transport_fw(GenericPayload(READ, 0, length=1), BREQ, 0)
    with pytest.raises(BindingError) as ei:
        sim.run()
    assert ei.value.path == "top.cpu.socket" and ei.value.time == 10
    assert "no backward function" in str(ei.value)


def test_payload_event_queue_orders_by_time_then_notification(sim):
    """PEQ entries are delivered at their times; same-time entries keep notification
    order; a zero delay is a delta later."""
    got = []
    peq = PayloadEventQueue(sim, lambda p, ph: got.append((sim.now, sim.delta, p.address, ph)))
    p = [GenericPayload(READ, i, length=1) for i in range(4)]

    async def go():
        await sim.wait(5)
        peq.notify(p[0], BRESP, 10)
        peq.notify(p[1], EREQ, 3)
        peq.notify(p[2], BRESP, 10)
        peq.notify(p[3], EREQ, 0)
        got.append("notified")

    sim.spawn(go(), "p")
    sim.run()
    assert got[0] == "notified"
    assert [(t, a, ph) for t, _, a, ph in got[1:]] == [
        (5, 3, EREQ), (8, 1, EREQ), (15, 0, BRESP), (15, 2, BRESP)]
