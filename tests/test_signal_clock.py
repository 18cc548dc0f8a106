"""Signals (evaluate/update semantics, change events) and clocks (period rounding, cycle
counting across frequency changes, re-timed waits) — tlm/signal.py, tlm/clock.py."""
from __future__ import annotations

import pytest

from tlm import NS, Clock, ProcessError, SimulationError, Signal, period_ps


# ----- Signal ---------------------------------------------------------------------------------
def test_write_visible_only_after_update_phase(sim):
    """A write is invisible in the writing evaluation phase and visible one delta later."""
    s = Signal(sim, "s", 0)
    seen = []

    async def p():
        await sim.wait(3)
        s.write(5)
        seen.append((sim.now, sim.delta, s.read()))
        await sim.wait(0)
        seen.append((sim.now, sim.delta, s.read(), s.value))

    sim.spawn(p(), "p")
    sim.run()
    assert seen == [(3, 0, 0), (3, 1, 5, 5)]


def test_changed_fires_at_next_delta(sim):
    """`changed` wakes waiters in the delta after the write, with the new value visible."""
    s = Signal(sim, "s", 0)
    log = []

    async def reader():
        await s.changed
        log.append(("changed", sim.now, sim.delta, s.read()))

    async def writer():
        await sim.wait(10)
        await sim.wait(0)
        s.write(7)

    sim.spawn(reader(), "a")
    sim.spawn(writer(), "b")
    sim.run()
    assert log == [("changed", 10, 2, 7)]


def test_last_write_in_a_phase_wins(sim):
    """Several writes in one evaluation phase: the last one (in evaluation order, i.e.
    initial processes in name order) is the value after the update."""
    s = Signal(sim, "s", 0)
    values = []

    async def w(v):
        s.write(v)

    async def single():
        await sim.wait(5)
        s.write(1)
        s.write(2)
        s.write(3)
        await sim.wait(0)
        values.append(s.read())

    sim.spawn(w(20), "w2")
    sim.spawn(w(10), "w1")
    sim.spawn(w(30), "w3")
    sim.run(until=1)
    assert s.read() == 30
    sim.spawn(single(), "single")
    sim.run()
    assert values == [3]


def test_no_event_when_value_unchanged(sim):
    """Writing the current value (or writing and reverting in one phase) notifies nothing."""
    s = Signal(sim, "s", 4)
    log = []

    async def reader():
        r = await sim.any_of(s.changed, timeout=50)
        log.append((r, sim.now))

    async def writer():
        await sim.wait(5)
        s.write(4)
        await sim.wait(5)
        s.write(9)
        s.write(4)

    sim.spawn(reader(), "a")
    sim.spawn(writer(), "b")
    sim.run()
    assert log == [(None, 50)]
    assert s.read() == 4


def test_posedge_and_negedge(sim):
    """Boolean signals notify posedge on false->true and negedge on true->false, each
    together with `changed`, at the next delta."""
    s = Signal(sim, "irq", False)
    log = []

    async def watch(ev, tag):
        while True:
            await ev
            log.append((tag, sim.now, sim.delta, s.read()))

    async def drive():
        for t, v in [(10, True), (20, True), (30, False), (40, True)]:
            await sim.wait_until(t)
            s.write(v)

    sim.spawn(watch(s.posedge, "pos"), "a_pos")
    sim.spawn(watch(s.negedge, "neg"), "b_neg")
    sim.spawn(watch(s.changed, "chg"), "c_chg")
    sim.spawn(drive(), "d")
    sim.run()
    assert log == [("chg", 10, 1, True), ("pos", 10, 1, True),
                   ("chg", 30, 1, False), ("neg", 30, 1, False),
                   ("chg", 40, 1, True), ("pos", 40, 1, True)]


def test_force_only_before_run(sim):
    """force() sets the value silently before the run, and is refused during it."""
    s = Signal(sim, "s", 0)
    s.force(3)
    assert s.read() == 3

    async def p():
        s.force(4)

    sim.spawn(p(), "p")
    with pytest.raises(ProcessError) as ei:
        sim.run()
    assert isinstance(ei.value.__cause__, SimulationError)
    assert ei.value.__cause__.path == "s"
    assert "force() is only allowed before" in str(ei.value)
    assert s.read() == 3


# ----- Clock ------------------------------------------------------------------------------------
def test_period_rounding():
    """Periods are whole ps rounded to nearest."""
    assert period_ps(420e6) == 2381
    assert period_ps(1e9) == 1000
    assert period_ps(300e6) == 3333
    assert period_ps(600e6) == 1667
    with pytest.raises(ValueError):
        period_ps(0)
    with pytest.raises(ValueError):
        period_ps(2e12)


def test_clock_cycles_and_to_cycles(sim):
    clk = Clock(sim, "clk", 420e6)
    assert clk.period == 2381
    assert clk.cycles(3) == 7143
    assert clk.cycles(0.5) == 1190  # round(1190.5) to even
    assert clk.to_cycles(4762) == 2.0
    assert clk.freq_hz == 420e6


def test_cycles_at_across_frequency_change(sim):
    """Whole cycles are counted per segment; a change keeps the whole cycles so far."""
    clk = Clock(sim, "clk", 100e6)  # 10_000 ps

    async def p():
        await sim.wait(25_000)
        assert clk.cycles_at() == 2
        clk.set_frequency(200e6)  # 5_000 ps, new segment starts at 25_000
        await sim.wait(15_000)
        return clk.cycles_at(), clk.cycles_at(40_000 + 4_999), clk.cycles_at(45_000)

    proc = sim.spawn(p(), "p")
    sim.run()
    assert proc.result == (5, 5, 6)
    assert clk.history == [(0, 100e6), (25_000, 200e6)]
    with pytest.raises(SimulationError, match="before the last frequency change"):
        clk.cycles_at(24_000)


def test_next_edge_and_wait_edge(sim):
    """Edges fall at t0 + k*period of the current segment; wait_edge is strictly after now."""
    clk = Clock(sim, "clk", 100e6)
    assert clk.next_edge(0) == 0
    assert clk.next_edge(1) == 10_000
    assert clk.next_edge(10_000) == 10_000

    async def p():
        await clk.wait_edge()
        t1 = sim.now
        await sim.wait_until(25_000)
        clk.set_frequency(200e6)
        t2 = clk.next_edge(26_000), clk.next_edge(25_000)
        await sim.wait(1_000)
        await clk.wait_edge()
        return t1, t2, sim.now

    proc = sim.spawn(p(), "p")
    sim.run()
    assert proc.result == (10_000, (30_000, 25_000), 30_000)


def test_wait_cycles_without_change(sim):
    clk = Clock(sim, "clk", 420e6)

    async def p():
        await clk.wait_cycles(10)
        return sim.now

    proc = sim.spawn(p(), "p")
    sim.run()
    assert proc.result == 23_810


def test_wait_cycles_retimed_on_frequency_change(sim):
    """wait_cycles(10) at 100 MHz from t=0; at 35 ns (3.5 cycles) the clock goes to
    200 MHz: 6.5 cycles remain at 5 ns -> 32.5 ns more -> ends at 67.5 ns. A second wait
    across two changes: 10 cycles from 100 ns at 200 MHz; at 110 ns (2 cycles) -> 50 MHz
    (20 ns); at 150 ns (2 more cycles) -> 100 MHz: 6 cycles * 10 ns -> ends at 210 ns."""
    clk = Clock(sim, "clk", 100e6)
    ends = []

    async def waiter():
        await clk.wait_cycles(10)
        ends.append(sim.now)
        await sim.wait_until(100 * NS)
        await clk.wait_cycles(10)
        ends.append(sim.now)

    async def dvfs():
        await sim.wait(35 * NS)
        clk.set_frequency(200e6)
        await sim.wait_until(110 * NS)
        clk.set_frequency(50e6)
        await sim.wait_until(150 * NS)
        clk.set_frequency(100e6)

    sim.spawn(waiter(), "a")
    sim.spawn(dvfs(), "b")
    sim.run()
    assert ends == [67_500, 210_000]


def test_set_frequency_notifies_changed(sim):
    """set_frequency notifies `changed` immediately."""
    clk = Clock(sim, "clk", 100e6)
    log = []

    async def watch():
        await clk.changed
        log.append((sim.now, sim.delta, clk.period))

    async def change():
        await sim.wait(7)
        clk.set_frequency(250e6)

    sim.spawn(watch(), "a")
    sim.spawn(change(), "b")
    sim.run()
    assert log == [(7, 0, 4000)]


@pytest.mark.parametrize("bad", [0, -5e6, 0.0])
def test_set_frequency_to_zero_is_a_clear_error(sim, bad):
    """A non-positive frequency is a SimulationError naming the clock and the time;
    the clock keeps its previous frequency."""
    clk = Clock(sim, "soc.fll", 100e6)
    sim.run(until=3 * NS)
    with pytest.raises(SimulationError) as ei:
        clk.set_frequency(bad)
    assert ei.value.path == "soc.fll" and ei.value.time == 3 * NS
    assert "frequency must be > 0" in str(ei.value)
    assert clk.period == 10_000 and clk.history == [(0, 100e6)]


def test_wait_cycles_negative_is_an_error(sim):
    clk = Clock(sim, "clk", 100e6)

    async def p():
        await clk.wait_cycles(-1)

    sim.spawn(p(), "p")
    with pytest.raises(ProcessError) as ei:
        sim.run()
    assert isinstance(ei.value.__cause__, SimulationError)
    assert ei.value.__cause__.path == "clk"
    assert "negative cycle count" in str(ei.value)
