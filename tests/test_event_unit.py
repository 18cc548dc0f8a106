"""Event Unit: barriers, per-core sleep/wake, event lines (DMA/RBE inputs over a link),
memory-mapped registers driven by a real b_transport initiator, the cluster -> SOC event."""
from __future__ import annotations

import pytest

from components.cluster.event_unit import (BARRIER_BASE, BARRIER_REG, CORE_REG, CORE_STRIDE,
                                           EVT_BARRIER, EVT_DMA, EVT_RBE, GLOBAL_REG, SW_EVENT_BASE,
                                           EventUnit, EventUnitParams)
from tlm import READ, WRITE, Clock, GenericPayload, InitiatorSocket, Link, Module, Simulator
from marsellus_regions import EVENT_UNIT_ARGS  # noqa: E402

PERIOD = 2381          # 420 MHz


@pytest.fixture
def env():
    sim = Simulator(3)
    clk = Clock(sim, "cluster_clk", 420e6)
    top = Module(sim, "cluster")
    eu = EventUnit(top, "event_unit", clk, 16, **EVENT_UNIT_ARGS)
    return sim, clk, eu


def test_barrier_releases_all_cores_together_after_the_last_arrival(env):
    sim, clk, eu = env
    p = eu.params
    n = 8
    eu.configure_barrier(0, (1 << n) - 1)
    passed = {}
    arrive = {i: (3 * i + 5) % 11 * 10 for i in range(n)}   # cycles, last one is not core n-1

    async def core(i):
        await clk.wait_cycles(arrive[i])
        await eu.barrier(i, 0)
        passed[i] = sim.now

    for i in range(n):
        sim.spawn(core(i), f"core{i}")
    sim.run()
    last = max(arrive.values())
    expect = (last + p.trigger_cycles + p.release_cycles + p.wakeup_cycles) * PERIOD
    assert set(passed.values()) == {expect}, "no core passes before the last one arrived"
    assert p.barrier_cycles == 6
    assert eu.barriers[0].completed == 1 and eu.barriers[0].status == 0   # re-armed
    for i in range(n):       # every core slept from its arrival to the release
        c = eu.cores[i]
        assert c.wakeups == 1 and c.buffer & (1 << EVT_BARRIER) == 0
        assert c.sleep_ps == expect - (arrive[i] + p.trigger_cycles) * PERIOD


def test_barrier_is_reusable_and_only_its_participants_count(env):
    sim, clk, eu = env
    eu.configure_barrier(1, 0b0110)
    log = []

    async def core(i, delays):
        for d in delays:
            await clk.wait_cycles(d)
            await eu.barrier(i, 1)
            log.append((i, sim.now))

    sim.spawn(core(1, [5, 1]), "a")
    sim.spawn(core(2, [1, 30]), "b")
    eu.arrive(1, 0b1001)                # non-participants are ignored
    sim.run()
    times = sorted({t for _, t in log})
    assert len(times) == 2 and len(log) == 4
    assert times[0] == (5 + 6) * PERIOD
    assert times[1] == times[0] + (30 + 6) * PERIOD


def test_a_sleeping_core_has_no_activity_and_ignores_unmasked_events(env):
    sim, clk, eu = env
    got = []

    async def sleeper():
        got.append(await eu.wait(3, mask=1 << 1, clear=True))
        got.append(sim.now)

    sim.spawn(sleeper(), "sleeper")
    sim.run()
    # asleep: nothing at all is scheduled (no polling), the process is suspended
    assert sim.next_event_time() is None and not got and eu.cores[3].sleeping
    eu.trigger(1 << 5)                       # not in the mask: no wake-up, stays buffered
    sim.run()
    assert not got and eu.cores[3].wakeups == 0 and eu.cores[3].buffer == 1 << 5
    assert sim.next_event_time() is None
    t0 = sim.now
    eu.trigger(1 << 1, cores=1 << 3)
    sim.run()
    assert got == [1 << 1, t0 + eu.params.wakeup_cycles * PERIOD]
    assert eu.cores[3].buffer == 1 << 5      # only the bits that ended the wait are consumed
    assert eu.cores[3].wakeups == 1


def test_wait_returns_at_once_when_the_event_is_pending_and_without_a_mask(env):
    sim, clk, eu = env
    eu.trigger(1 << 2)
    res = []

    async def p():
        res.append(await eu.wait(0, mask=0b110, clear=False))
        res.append(sim.now)
        res.append(await eu.wait(1, mask=0))        # would hang in hardware: reported
        res.append(sim.now)

    sim.spawn(p(), "p")
    sim.run()
    assert res == [0b100, 0, 0, 0]
    assert eu.cores[0].buffer == 0b100 and eu.cores[0].wakeups == 0
    assert eu.stats.get("errors.wait_without_mask") == 1


def test_dma_and_rbe_lines_from_events_and_link_events(env):
    sim, clk, eu = env
    dma_done = sim.event("dma.done")
    link = Link(sim, "rbe_link", side_a="rbe", side_b="cluster", min_latency=3 * PERIOD)
    rbe_eoj = link.event("end_of_job", from_side="a")
    eu.connect(EVT_DMA, dma_done)
    eu.connect(EVT_RBE, rbe_eoj)            # the LinkEvent's receiving side
    woke = []

    async def core(i):
        bits = await eu.wait(i, 1 << EVT_DMA | 1 << EVT_RBE)
        woke.append((i, bits, sim.now))

    async def driver():
        await clk.wait_cycles(10)
        dma_done.notify()
        await clk.wait_cycles(10)
        rbe_eoj.notify()

    sim.spawn(core(0), "c0")
    sim.spawn(driver(), "drv")
    sim.run()
    assert woke == [(0, 1 << EVT_DMA, (10 + 2) * PERIOD)]
    # the RBE event arrived over the link (latency 3 cycles) into every core's buffer
    assert all(c.buffer & (1 << EVT_RBE) for c in eu.cores)
    assert eu.line_counts[EVT_DMA] == 1 and eu.line_counts[EVT_RBE] == 1
    with pytest.raises(TypeError):
        eu.connect(EVT_DMA, object())


class Host(Module):
    """A bus initiator (the SOC core, or a test) on the Event Unit's registers."""

    def __init__(self, parent, name):
        super().__init__(parent, name)
        self.socket = InitiatorSocket(self, "socket")

    async def write(self, addr, value):
        p = GenericPayload(WRITE, addr, bytearray(value.to_bytes(4, "little")), 4, initiator=self.path)
        d = await self.socket.b_transport(p, 0)
        await self.sim.wait(d)
        assert p.is_ok, p

    async def read(self, addr):
        p = GenericPayload(READ, addr, bytearray(4), 4, initiator=self.path)
        d = await self.socket.b_transport(p, 0)
        await self.sim.wait(d)
        assert p.is_ok, p
        return int.from_bytes(p.data, "little")


def test_registers_mask_sw_events_blocking_wait_barrier_and_soc_event(env):
    sim, clk, eu = env
    host = Host(sim, "host")
    other = Host(sim, "core5_bus")
    host.socket.bind(eu.regs.socket)
    other.socket.bind(eu.regs.socket)
    soc_link = Link(sim, "cdc", side_a="soc", side_b="cluster", min_latency=4 * PERIOD)
    eoj = soc_link.event("cluster_eoj", from_side="b")
    eu.bind_soc(eoj)
    c5 = 5 * CORE_STRIDE
    log = []

    async def waiter():          # core 5 executes its elw: the read blocks until the event
        await other.write(c5 + CORE_REG["EVT_MASK"], 1 << 3)
        v = await other.read(c5 + CORE_REG["EVT_WAIT_CLEAR"])
        log.append(("woke", v, sim.now))

    async def soc_side():
        await eoj.event
        log.append(("soc", sim.now))

    async def drv():
        await clk.wait_cycles(20)
        await host.write(SW_EVENT_BASE + 4 * 3, 1 << 5 | 1 << 6)       # sw event 3 -> cores 5, 6
        assert await host.read(6 * CORE_STRIDE + CORE_REG["EVT_BUFFER"]) == 1 << 3
        await host.write(6 * CORE_STRIDE + CORE_REG["EVT_BUFFER_CLEAR"], 1 << 3)
        assert await host.read(6 * CORE_STRIDE + CORE_REG["EVT_BUFFER"]) == 0
        await host.write(6 * CORE_STRIDE + CORE_REG["EVT_MASK_OR"], 0b1010)
        await host.write(6 * CORE_STRIDE + CORE_REG["EVT_MASK_AND"], 0b0010)
        assert await host.read(6 * CORE_STRIDE + CORE_REG["EVT_MASK"]) == 0b1000
        # barrier 2 through registers
        bb = BARRIER_BASE + 2 * 0x20
        await host.write(bb + BARRIER_REG["PARTICIPANTS"], 0b11)
        await host.write(bb + BARRIER_REG["TRIGGER"], 0b01)
        assert await host.read(bb + BARRIER_REG["STATUS"]) == 0b01
        await host.write(bb + BARRIER_REG["TRIGGER"], 0b10)
        assert await host.read(bb + BARRIER_REG["STATUS"]) == 0           # released, re-armed
        await clk.wait_cycles(5)
        assert await host.read(CORE_REG["EVT_BUFFER"]) & (1 << EVT_BARRIER)
        assert await host.read(GLOBAL_REG["INFO"]) == 16 | (8 << 8)
        await host.write(GLOBAL_REG["SOC_EVENT"], 1)
        log.append(("sent", sim.now))
        assert await host.read(GLOBAL_REG["SOC_EVENT_COUNT"]) == 1

    sim.spawn(waiter(), "waiter")
    sim.spawn(drv(), "drv")
    sim.spawn(soc_side(), "soc")
    sim.run()
    woke = [e for e in log if e[0] == "woke"][0]
    assert woke[1] == 1 << 3
    assert woke[2] >= 20 * PERIOD + eu.params.wakeup_cycles * PERIOD
    assert eu.cores[5].buffer & (1 << 3) == 0                         # wait-and-clear
    sent = [e for e in log if e[0] == "sent"][0][1]
    got = [e for e in log if e[0] == "soc"][0][1]
    assert got - sent <= 4 * PERIOD and got > sent - PERIOD             # over the link
    assert eu.soc_events == 1


def test_bad_register_accesses_get_tlm_errors(env):
    sim, clk, eu = env
    host = Host(sim, "host")
    host.socket.bind(eu.regs.socket)
    res = []

    async def p():
        for addr, n in [(0x7F0, 4), (0x002, 4), (0x000, 8)]:
            q = GenericPayload(READ, addr, bytearray(8), n, initiator=host.path)
            await host.socket.b_transport(q, 0)
            res.append(q.status.name)

    sim.spawn(p(), "p")
    sim.run()
    assert res == ["ADDRESS_ERROR", "BURST_ERROR", "BURST_ERROR"]
    assert len(sim.errors) == 3 and sim.errors[0].initiator == "host"


def test_params_are_checked():
    with pytest.raises(ValueError):
        EventUnitParams(n_barriers=0).validate()
    with pytest.raises(ValueError):
        EventUnitParams(wakeup_cycles=-1).validate()
