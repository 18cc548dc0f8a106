"""Bad input (issue 2): each mistake gives a clear error naming the component path and
the simulated time — or, for accesses, the proper TLM error response."""
from __future__ import annotations

import asyncio
import types

import pytest

from tlm import (NS, OK, READ, WRITE, BindingError, ElaborationError, GenericPayload,
                 InitiatorSocket, Memory, Phase, ProcessError, Router, SimulationError,
                 Simulator, Status, TargetSocket)
from tlm.module import Module


def run_failing(sim, fn, name="top.worker.run", at=5 * NS):
    """Run ``fn`` as a process after waiting ``at`` ps; return the ProcessError."""
    async def proc():
        await sim.wait(at)
        await fn()

    sim.spawn(proc(), name)
    with pytest.raises(ProcessError) as ei:
        sim.run()
    err = ei.value
    assert err.path == name and err.time == at
    assert str(err).startswith(f"{name} at 5 ns: process raised")
    return err


# ----- binding -----------------------------------------------------------------------------------
def test_binding_a_socket_twice(top, make_initiator):
    m1, m2 = Memory(top, "m1", 16), Memory(top, "m2", 16)
    cpu = make_initiator(top, "cpu")
    cpu.socket.bind(m1.socket)
    with pytest.raises(BindingError) as ei:
        cpu.socket.bind(m2.socket)
    assert ei.value.path == "top.cpu.socket"
    assert "already bound to top.m1.socket; cannot also bind to top.m2.socket" in str(ei.value)
    assert cpu.socket.target is m1.socket and m2.socket.initiators == []


def test_binding_beyond_max_bindings(top, make_initiator):
    mem = Memory(top, "mem", 16, max_bindings=1)
    make_initiator(top, "a").socket.bind(mem.socket)
    b = make_initiator(top, "b")
    with pytest.raises(BindingError) as ei:
        b.socket.bind(mem.socket)
    assert ei.value.path == "top.mem.socket"
    assert "max_bindings=1" in str(ei.value) and "cannot bind top.b.socket" in str(ei.value)
    assert b.socket.target is None and len(mem.socket.initiators) == 1


def test_binding_to_something_else_than_a_target_socket(top, make_initiator):
    a, b = make_initiator(top, "a"), make_initiator(top, "b")
    with pytest.raises(BindingError, match="can only bind to a target socket"):
        a.socket.bind(b.socket)
    with pytest.raises(BindingError):
        a.socket.bind(Memory(top, "mem", 4))


def test_unbound_initiator_socket_fails_elaboration(sim, top, make_initiator):
    make_initiator(top, "cpu")
    with pytest.raises(BindingError) as ei:
        sim.run()
    assert ei.value.path == "top.cpu.socket"
    assert "initiator socket is not bound" in str(ei.value)


def test_unbound_target_socket_fails_elaboration(sim, top):
    Memory(top, "mem", 16)
    with pytest.raises(BindingError) as ei:
        sim.run()
    assert ei.value.path == "top.mem.socket"
    assert "target socket is not bound" in str(ei.value)


def test_unbound_optional_socket_used(sim, top, make_initiator):
    """An optional socket passes elaboration; using it unbound is a BindingError naming
    the socket and the time (a ProcessError cause inside a process)."""
    cpu = make_initiator(top, "cpu", optional=True)

    async def use():
        await cpu.socket.b_transport(GenericPayload(READ, 0, length=4), 0)

    err = run_failing(sim, use)
    cause = err.__cause__
    assert isinstance(cause, BindingError)
    assert (cause.path, cause.time) == ("top.cpu.socket", 5 * NS)
    assert "b_transport called on an unbound initiator socket" in str(err)
    with pytest.raises(BindingError, match="transport_dbg called on an unbound"):
        cpu.socket.transport_dbg(GenericPayload(READ, 0, length=4))
    with pytest.raises(BindingError, match="nb_transport_fw called on an unbound"):
        cpu.socket.nb_transport_fw(GenericPayload(READ, 0, length=4), Phase.BEGIN_REQ, 0)


def test_target_b_transport_must_be_async(top):
    def sync_b(p, d):
        return d

    with pytest.raises(BindingError, match="must be an 'async def' function") as ei:
        TargetSocket(Module(top, "t"), "in", b_transport=sync_b)
    assert ei.value.path == "top.t.in"


# ----- waiting on things that are not awaitable ---------------------------------------------------
def test_wait_on_a_string(sim):
    async def bad():
        await sim.wait("x")

    err = run_failing(sim, bad)
    assert "a delay must be an integer number of ps" in str(err) and "'x'" in str(err)


def test_wait_on_a_non_integer_delay(sim):
    async def bad():
        await sim.wait(1.5)

    assert "1.5" in str(run_failing(sim, bad))


def test_await_an_asyncio_future(sim):
    loop = asyncio.new_event_loop()
    try:
        fut = loop.create_future()

        async def bad():
            await fut

        err = run_failing(sim, bad)
    finally:
        loop.close()
    assert "cannot wait on" in str(err) and "asyncio awaitables are not supported" in str(err)


@pytest.mark.parametrize("thing", [object(), None, 2.5, "ns"])
def test_yield_of_a_foreign_object(sim, thing):
    """A generator-based coroutine that yields something the kernel does not know."""
    @types.coroutine
    def foreign():
        yield thing

    async def bad():
        await foreign()

    err = run_failing(sim, bad)
    assert f"awaited {thing!r}, which the simulator cannot wait on" in str(err)


def test_await_asyncio_sleep(sim):
    async def bad():
        await asyncio.sleep(0)

    assert "cannot wait on" in str(run_failing(sim, bad))


# ----- negative delays --------------------------------------------------------------------------
def test_negative_wait(sim):
    async def bad():
        await sim.wait(-3)

    err = run_failing(sim, bad)
    assert "wait(): negative delay (-3 ps)" in str(err)


def test_negative_yield_from_a_raw_coroutine(sim):
    @types.coroutine
    def raw():
        yield -5

    async def bad():
        await raw()

    assert "negative delay -5 ps" in str(run_failing(sim, bad))


def test_negative_notify_inside_a_process(sim, top):
    ev = top.event("irq")

    async def bad():
        ev.notify(-1)

    err = run_failing(sim, bad)
    assert "top.irq: event notified with a negative delay (-1 ps)" in str(err)


def test_negative_notify_outside_a_process(sim, top):
    ev = top.event("irq")
    sim.run(until=2 * NS)
    with pytest.raises(SimulationError) as ei:
        ev.notify(-7)
    assert (ei.value.path, ei.value.time) == ("top.irq", 2 * NS)
    assert not ev.pending


def test_negative_schedule(sim):
    sim.run(until=3 * NS)
    with pytest.raises(SimulationError, match=r"schedule\(\): negative delay") as ei:
        sim.schedule(-1, print)
    assert ei.value.time == 3 * NS

    async def bad():
        sim.schedule(-2, print)

    sim2 = Simulator()
    assert "schedule(): negative delay (-2 ps)" in str(run_failing(sim2, bad))


def test_negative_any_of_timeout_and_past_wait_until(sim):
    ev = sim.event("e")
    with pytest.raises(SimulationError, match="any_of timeout: negative delay"):
        sim.any_of(ev, timeout=-1)

    async def bad():
        await sim.wait_until(1 * NS)

    assert "wait_until(1 ns) is in the past" in str(run_failing(sim, bad))


# ----- accesses outside every mapped range -------------------------------------------------------
def test_access_outside_every_range_is_a_tlm_error_response(sim, top, make_initiator, run_proc):
    """No exception inside the model: the initiator gets ADDRESS_ERROR, the report gets
    a record with the initiator path, address and time, and the run goes on."""
    bus = Router(top, "bus", latency=100)
    mem = Memory(top, "mem", 0x100)
    bus.map(0x1000, 0x100, mem.socket)
    cpu = make_initiator(top, "cpu")
    cpu.socket.bind(bus.target_socket)

    async def go():
        await sim.wait(4 * NS)
        bad, _ = await cpu.access(WRITE, 0xDEAD_0000, bytearray(4))
        good, _ = await cpu.access(WRITE, 0x1000, bytearray(b"ok"))
        return bad.status, good.status

    assert run_proc(go) == (Status.ADDRESS_ERROR, OK)
    [rec] = sim.errors
    assert (rec.initiator, rec.address, rec.time, rec.where) == (
        "top.cpu", 0xDEAD_0000, 4 * NS, "top.bus")
    assert str(rec) == ("4 ns: WRITE 0xdead0000 (+4) from top.cpu -> ADDRESS_ERROR at "
                        "top.bus: no target mapped at this address")


def test_malformed_command_is_an_error_response(sim, top, make_initiator, run_proc):
    """Even a command outside the enumeration gets an error response and a readable
    record rather than an exception."""
    mem = Memory(top, "mem", 16)
    cpu = make_initiator(top, "cpu")
    cpu.socket.bind(mem.socket)

    async def go():
        return (await cpu.access(42, 0, length=4))[0].status

    assert run_proc(go) == Status.COMMAND_ERROR
    assert sim.errors[0].command == "42" and "unknown command 42" in str(sim.errors[0])


# ----- a process raising ------------------------------------------------------------------------
def test_process_raising_names_path_and_time_and_chains_cause(sim):
    async def helper():
        raise ValueError("boom")

    async def bad():
        await helper()

    err = run_failing(sim, bad)
    assert isinstance(err.__cause__, ValueError) and str(err.__cause__) == "boom"
    assert str(err) == "top.worker.run at 5 ns: process raised ValueError: boom"


def test_process_error_stops_the_run(sim):
    log = []

    async def bad():
        await sim.wait(5)
        raise RuntimeError("x")

    async def other():
        await sim.wait(10)
        log.append(sim.now)

    sim.spawn(bad(), "a")
    sim.spawn(other(), "b")
    with pytest.raises(ProcessError):
        sim.run()
    assert log == [] and sim.now == 5


def test_module_process_error_names_module_path(sim, top):
    m = Module(top, "dma")

    async def bad():
        await sim.wait(5 * NS)
        {}["missing"]

    m.spawn(bad(), "engine")
    with pytest.raises(ProcessError) as ei:
        sim.run()
    assert ei.value.path == "top.dma.engine" and ei.value.time == 5 * NS
    assert isinstance(ei.value.__cause__, KeyError)


# ----- spawn -------------------------------------------------------------------------------------
def test_spawn_of_a_non_coroutine(sim, top):
    async def forgot_to_call():
        pass

    def gen():
        yield 1

    for thing in (forgot_to_call, gen(), 42):
        with pytest.raises(SimulationError, match="spawn\\(\\) needs a coroutine object") as ei:
            sim.spawn(thing, "p")
        assert ei.value.path == "p" and ei.value.time == 0
    with pytest.raises(SimulationError) as ei:
        Module(top, "m").spawn(forgot_to_call)
    assert ei.value.path == "top.m.run"


# ----- module hierarchy and process names ------------------------------------------------------
def test_duplicate_module_paths(sim, top):
    first = Module(top, "l2")
    with pytest.raises(ElaborationError) as ei:
        Module(top, "l2")
    assert ei.value.path == "top.l2" and "already exists" in str(ei.value)
    assert top.children["l2"] is first and sim.modules["top.l2"] is first
    with pytest.raises(ElaborationError):
        Module(sim, "top")


@pytest.mark.parametrize("name", ["", "a.b", "1abc", "a b", "x-y", "é", 5, None])
def test_bad_module_names(sim, top, name):
    with pytest.raises(ElaborationError, match="bad module name") as ei:
        Module(top, name)
    assert ei.value.path == "top"
    assert list(top.children) == []


def test_good_module_names(top):
    for n in ("core_0", "core[3]", "_x", "L2"):
        assert Module(top, n).path == f"top.{n}"


def test_duplicate_initial_process_names(sim):
    async def p():
        pass

    coros = [p() for _ in range(5)]
    for n, c in zip(("b", "a", "b", "c", "a"), coros):
        sim.spawn(c, n)
    with pytest.raises(ElaborationError, match="share the name\\(s\\) a, b"):
        sim.run()
    for c in coros:
        c.close()


def test_socket_path_and_elaboration_hooks_run_first(sim, top):
    """Elaboration hooks run before the binding checks (a hook may bind sockets)."""
    m = Memory(top, "mem", 4)
    owner = Module(top, "cpu")
    sock = InitiatorSocket(owner, "port")
    sim.on_elaboration(lambda: sock.bind(m.socket))
    sim.run()
    assert sock.target is m.socket
