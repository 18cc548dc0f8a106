"""Energy accounting: activity reporting, per-component and per-domain energy, background
power, the event-driven time series."""
from __future__ import annotations

import pytest

from components.pmu import (Pmu, PowerError, PowerState, integrate, power_of,
                            replay_workload, report_activity)
from tlm import Module, Simulator
from tlm.units import US
from marsellus_regions import PMU_ARGS  # noqa: E402

W = "matmul_int8_macload"


def setup(op: str = "nominal", seed: int = 1, **params):
    sim = Simulator(seed=seed)
    pmu = Pmu(sim, "pmu", {"operating_point": op, **params}, **PMU_ARGS)
    cluster = Module(sim, "cluster")
    rbe = Module(cluster, "rbe")
    return sim, pmu, rbe


def test_one_line_reporting_books_energy_per_component_and_domain():
    sim, pmu, rbe = setup()
    e_op = pmu.model.energy_per("rbe", "op")
    report_activity(rbe, "op", 1_000_000)                     # class from power.yaml bindings
    stats = sim.stats.as_dict()
    assert stats["pmu.energy.components"]["cluster.rbe"] == pytest.approx(1e6 * e_op)
    assert stats["pmu.cluster"]["dynamic_pj"] == pytest.approx(1e6 * e_op)
    pmu.apply_operating_point("low")                          # 0.5 V: C*V^2
    report_activity(rbe, "op", 1_000_000)
    assert power_of(sim).totals()["components"]["cluster.rbe"] == \
        pytest.approx(1e6 * e_op * (1 + (0.5 / 0.8) ** 2))


def test_reporting_without_a_pmu_does_nothing():
    sim = Simulator()
    m = Module(sim, "rbe")
    report_activity(m, "op", 10)                              # no PMU in this platform
    assert power_of(sim) is None and sim.stats.as_dict() == {}


def test_unbound_paths_unknown_kinds_and_class_conflicts_are_errors():
    sim, pmu, _ = setup()
    with pytest.raises(PowerError, match="no activity class binds.*register"):
        pmu.activity("soc.mystery", "op", 1)
    port = pmu.energy.register("soc.mystery", "soc_periph")
    port.add("access", 3)
    assert port.counts == {"access": 3}
    with pytest.raises(PowerError, match="already registered"):
        pmu.energy.register("soc.mystery", "l2")
    with pytest.raises(PowerError, match="no activity kind 'flop'.*known: access"):
        port.add("flop", 1)


def test_background_energy_is_integrated_analytically():
    sim, pmu, _ = setup()
    sim.run(10 * US)
    m = pmu.model
    for name, d in pmu.domains.items():
        clock = sum(m.clock_tree_mw(f, d.vdd, c.freq_hz) for f, c in pmu.clocks.items()
                    if pmu.fll_domain[f] == name)
        if name == "always_on":
            clock += sum(m.dco_mw(f, d.vdd, c.freq_hz) for f, c in pmu.clocks.items())
        e = pmu.energy.domain_energy(name)
        assert e["clock_pj"] == pytest.approx(clock * 10 * US * 1e-3)
        assert e["leakage_pj"] == pytest.approx(m.leakage_mw(name, d.vdd) * 10 * US * 1e-3)


def test_clock_gated_and_off_domains():
    sim, pmu, rbe = setup()

    async def fw():
        pmu.set_state("cluster", PowerState.CLOCK_GATED)
        await sim.wait(10 * US)
        pmu.set_state("cluster", PowerState.OFF)
        report_activity(rbe, "op", 1000)                      # work in an OFF domain
        await sim.wait(10 * US)

    sim.spawn(fw(), "fw")
    sim.run()
    ts = pmu.timeseries(period=0)
    gated = [s for s in ts if s.state["cluster"] == "CLOCK_GATED"]
    off = [s for s in ts if s.state["cluster"] == "OFF"]
    assert gated and off
    assert all(s.dynamic_mw["cluster"] == 0 and s.leakage_mw["cluster"] > 0 for s in gated)
    assert all(s.power_mw["cluster"] == 0 for s in off)
    st = sim.stats.as_dict()
    assert st["pmu.cluster"]["activity_while_not_on"] == 1
    assert st["pmu.energy.components"].get("cluster.rbe", 0) == 0


def dvfs_run(seed: int = 3) -> tuple[Simulator, Pmu]:
    sim, pmu, rbe = setup("signoff", seed=seed, abb=True)

    async def fw():
        work = sim.spawn(replay_workload(pmu, W, 80 * US), "work")
        report_activity(rbe, "op", 5e6, over=7 * US)
        await sim.wait(5 * US)
        pmu.set_frequency("cluster", 300e6)
        await sim.wait(20 * US)
        pmu.set_vdd("cluster", 0.66)
        pmu.set_vdd("soc", 0.66)
        await sim.wait(20 * US)
        pmu.set_frequency("cluster", 400e6)
        await work

    sim.spawn(fw(), "fw")
    sim.run()
    return sim, pmu


def test_timeseries_integrates_to_the_totals_and_splits_at_changes():
    sim, pmu = dvfs_run()
    ts = pmu.timeseries()
    assert integrate(ts) == pytest.approx(pmu.energy.total_pj(), rel=1e-9)
    assert ts[0].time == 0 and ts[-1].time + ts[-1].duration == sim.now
    assert all(a.time + a.duration == b.time for a, b in zip(ts, ts[1:]))
    assert all(s.duration <= pmu.params.sample_period for s in ts)
    times = {s.time for s in ts}
    changes = [t for t, _ in pmu.clocks["cluster"].history if 0 < t < sim.now]
    changes += [t for t, _ in pmu.abb.history if 0 < t < sim.now]
    assert changes and all(t in times for t in changes)
    f = {s.freq_hz["cluster"] for s in ts}
    assert {300e6, 400e6} <= f
    assert min(s.vdd["cluster"] for s in ts) == pytest.approx(0.66)
    assert max(s.vbb["cluster"] for s in ts) > 0
    # power follows the work: the RBE burst in the first 7 us shows
    assert ts[0].dynamic_mw["cluster"] > ts[20].dynamic_mw["cluster"]
    row = ts[3].as_dict()
    assert set(row) == {"time_ps", "duration_ps", "total_mw", "power_mw", "dynamic_mw",
                        "leakage_mw", "vdd", "vbb", "state", "freq_hz"}


def test_sampling_is_event_driven():
    sim, pmu = dvfs_run()
    assert sim.next_event_time() is None         # nothing left running: no sampler process
    only_changes = pmu.timeseries(period=0)
    every_us = pmu.timeseries()
    assert len(only_changes) < len(every_us)
    assert integrate(only_changes) == pytest.approx(integrate(every_us), rel=1e-9)


def test_reported_compute_rate_drives_the_activity_level():
    sim, pmu, _ = setup()
    seen = []
    pmu.energy.on_level_change(lambda d, lvl: seen.append((sim.now, d, lvl)))
    sim.spawn(replay_workload(pmu, W, 3 * US), "work")
    sim.run()
    expected = pmu.model.workload_level(W, "cluster")
    assert expected == pytest.approx(101.2 / 128)
    levels = [lvl for _, d, lvl in seen if d == "cluster"]
    assert levels[0] == pytest.approx(expected) and levels[-1] == 0.0
    assert pmu.energy.level("cluster") == 0.0


def test_energy_and_timeseries_are_deterministic():
    a = dvfs_run(seed=5)[1]
    b = dvfs_run(seed=5)[1]
    assert [s.as_dict() for s in a.timeseries()] == [s.as_dict() for s in b.timeseries()]
    assert a.energy.totals() == b.energy.totals()
