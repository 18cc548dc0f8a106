"""Quantum keeper (tlm/quantum.py): quantum boundaries are multiples of the global
quantum; need_sync / sync / inc / set / reset; bad values rejected."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tlm import QuantumKeeper, SimulationError, Simulator


def test_need_sync_at_next_multiple_and_sync(sim):
    """need_sync becomes true once local time reaches the next multiple; sync lets
    simulated time catch up with local time and aims at the following multiple."""
    sim.global_quantum = 100
    out = []

    async def p():
        qk = QuantumKeeper(sim)
        assert (qk.quantum, qk.next_sync, qk.local) == (100, 100, 0)
        for _ in range(3):
            qk.inc(30)
            out.append(qk.need_sync())
        qk.inc(10)                      # local time 100: the boundary
        out.append((qk.need_sync(), qk.current_time))
        await qk.sync()
        out.append((sim.now, qk.local, qk.next_sync, qk.need_sync()))

    sim.spawn(p(), "p")
    sim.run()
    assert out == [False, False, False, (True, 100), (100, 0, 200, False)]


def test_boundaries_are_global_multiples_not_relative_to_creation(sim):
    """A keeper created (or reset) at t=130 with quantum 100 aims at 200, not 230."""
    sim.global_quantum = 100

    async def p():
        await sim.wait(130)
        qk = QuantumKeeper(sim)
        first = qk.next_sync
        await sim.wait(145)             # now 275
        qk.reset()
        return first, qk.next_sync, qk.local

    proc = sim.spawn(p(), "p")
    sim.run()
    assert proc.result == (200, 300, 0)


def test_overshoot_syncs_at_local_time(sim):
    """SystemC semantics: an increment that jumps past a boundary syncs at the local time
    (here 130, not a multiple); the next boundary is again a multiple (200)."""
    async def p():
        qk = QuantumKeeper(sim, quantum=100)
        qk.inc(130)
        assert qk.need_sync()
        await qk.sync()
        return sim.now, qk.next_sync

    proc = sim.spawn(p(), "p")
    sim.run()
    assert proc.result == (130, 200)


@settings(max_examples=25, deadline=None)
@given(quantum=st.sampled_from([40, 100, 200]),
       initiators=st.lists(st.tuples(st.sampled_from([1, 2, 4, 5, 10, 20]),
                                     st.integers(1, 60)), min_size=1, max_size=3))
def test_initiators_with_aligned_steps_sync_on_common_multiples(quantum, initiators):
    """Initiators advancing by a step that divides the quantum, each at its own pace, all
    synchronise exactly at the multiples of the global quantum they cross."""
    sim = Simulator()
    sim.global_quantum = quantum
    syncs: list[tuple[str, int]] = []
    ends: dict[str, int] = {}

    def make(name, step, count):
        async def initiator():
            qk = QuantumKeeper(sim, name=name)
            for _ in range(count):
                qk.inc(step)
                if qk.need_sync():
                    await qk.sync()
                    syncs.append((name, sim.now))
            await qk.sync()
            ends[name] = sim.now
        return initiator

    for i, (step, count) in enumerate(initiators):
        sim.spawn(make(f"i{i}", step, count)(), f"i{i}")
    sim.run()
    for i, (step, count) in enumerate(initiators):
        total = step * count
        expected = [k * quantum for k in range(1, total // quantum + 1)]
        assert [t for n, t in syncs if n == f"i{i}"] == expected
        assert ends[f"i{i}"] == total      # no time lost or added


def test_explicit_quantum_and_zero_quantum(sim):
    """An explicit quantum overrides the global one; quantum 0 means sync on every need."""
    sim.global_quantum = 1000
    assert QuantumKeeper(sim, quantum=64).quantum == 64

    async def p():
        qk = QuantumKeeper(sim, quantum=0)
        assert qk.need_sync()
        qk.inc(7)
        await qk.sync()
        return sim.now, qk.need_sync()

    proc = sim.spawn(p(), "p")
    sim.run()
    assert proc.result == (7, True)


def test_sync_without_local_offset_does_not_wait(sim):
    async def p():
        qk = QuantumKeeper(sim, quantum=50)
        await qk.sync()
        return sim.now, sim.delta, qk.next_sync

    proc = sim.spawn(p(), "p")
    sim.run()
    assert proc.result == (0, 0, 50)


def test_set_and_current_time(sim):
    qk = QuantumKeeper(sim, quantum=50)
    qk.set(35)
    assert (qk.local, qk.current_time, qk.need_sync()) == (35, 35, False)
    qk.set(50)
    assert qk.need_sync()


def test_negative_values_rejected(sim):
    """Negative increments, local times and quanta are SimulationErrors naming the keeper
    and the time."""
    sim.run(until=20)
    qk = QuantumKeeper(sim, quantum=10, name="cpu.qk")
    with pytest.raises(SimulationError) as ei:
        qk.inc(-1)
    assert ei.value.path == "cpu.qk" and ei.value.time == 20
    assert "negative increment" in str(ei.value)
    with pytest.raises(SimulationError, match="negative local time"):
        qk.set(-5)
    assert qk.local == 0
    with pytest.raises(SimulationError, match="quantum must be >= 0"):
        QuantumKeeper(sim, quantum=-1)
