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


# ----- bounded however long the run (issue 29) -------------------------------------------------
def _per_domain_energy(series) -> dict[str, float]:
    """Energy (pJ) per domain under a series."""
    return {d: sum(s.power_mw[d] * s.duration * 1e-3 for s in series) for d in series[0].power_mw}


def test_a_series_over_max_samples_is_decimated_to_the_exact_averages():
    sim, pmu = dvfs_run()
    full = pmu.timeseries()
    assert pmu.energy.coarse_period(sim.now, len(full)) == 0 < pmu.energy.coarse_period(sim.now, len(full) - 1)
    assert [s.as_dict() for s in pmu.timeseries(max_samples=len(full))] == [s.as_dict() for s in full]
    step = pmu.energy.coarse_period(sim.now, 8)
    assert step % pmu.params.sample_period == 0 and step * 8 >= sim.now > step * 7
    coarse = pmu.timeseries(max_samples=8)
    assert len(coarse) == 8 and [s.time for s in coarse] == [i * step for i in range(8)]
    assert coarse[-1].time + coarse[-1].duration == sim.now
    # every domain's energy is the full series' (background and activity alike)
    want, got = _per_domain_energy(full), _per_domain_energy(coarse)
    assert got == pytest.approx(want, rel=1e-9)
    assert integrate(coarse) == pytest.approx(pmu.energy.total_pj(), rel=1e-9)
    # each sample is the average of the full samples inside it; the state is the one at its start
    inside = [s for s in full if s.time + s.duration <= step]
    avg = sum(s.power_mw["cluster"] * s.duration for s in inside) / step
    assert coarse[0].power_mw["cluster"] == pytest.approx(avg, rel=1e-9)
    assert coarse[3].freq_hz == next(s.freq_hz for s in full if s.time <= 3 * step < s.time + s.duration)


def _steady_work(spans: int):
    """One RBE burst in the first half of every microsecond, ``spans`` times."""
    sim, pmu, rbe = setup()

    async def work():
        for _ in range(spans):
            report_activity(rbe, "op", 1000, over=US // 2)
            await sim.wait(US)

    sim.spawn(work(), "work")
    sim.run()
    return pmu


def test_activity_spans_past_the_cap_are_folded_keeping_the_energy(monkeypatch):
    kept = _steady_work(1000)
    assert kept.energy.folded() == 0 and len(kept.energy._accts["cluster"].spans) == 1000
    import components.pmu.energy as energy
    monkeypatch.setattr(energy, "MAX_SPANS", 400)
    folded = _steady_work(1000)
    assert len(folded.energy._accts["cluster"].spans) <= 400
    width = folded.energy.folded()
    assert width > US and width % US == 0
    assert folded.energy.total_pj() == pytest.approx(kept.energy.total_pj(), rel=1e-12)
    a, b = kept.timeseries(), folded.timeseries()
    assert integrate(b) == pytest.approx(folded.energy.total_pj(), rel=1e-9)
    # one burst per microsecond: each 1 us sample holds the same energy, folded or not
    assert [s.time for s in a] == [s.time for s in b]
    assert [s.dynamic_mw["cluster"] for s in b] == pytest.approx([s.dynamic_mw["cluster"] for s in a], rel=1e-9)


# ----- activity booked when it happens (issue 14) ---------------------------------------------
def _activity_mw(sample, domain: str, idle: float) -> float:
    return sample.power_mw[domain] - idle


def test_core_chunks_are_booked_over_start_to_end():
    """A 16-core kernel on the platform: the cores' energy (ops, instructions, TCDM words)
    lies in [kernel start, kernel end) of the power series, none of it after the end."""
    from components.marsellus.platform import Marsellus
    from components.marsellus.facts import MEMORY_MAP
    sim = Simulator(seed=1)
    pl = Marsellus(sim, {})
    b = MEMORY_MAP["tcdm"].base
    n = 8192
    times = {}

    async def job():
        await sim.wait(5 * US)
        times["start"] = sim.now
        run = await pl.cl.run_kernel("add_int8", 16, n=n, a=b, b=b + 0x4000, out=b + 0x8000)
        times["end"] = sim.now
        times["run"] = run
        await sim.wait(20 * US)                 # idle after the kernel

    sim.spawn(job(), "job")
    sim.run()
    t0, t1 = times["start"], times["end"]
    assert t1 - t0 > 2 * US
    ledger = pl.pmu.energy
    core_pj = sum(v for p, v in ledger.totals()["components"].items() if ".core" in p)
    assert core_pj > 0
    series = ledger.timeseries(period=US // 4)
    idle = series[0].power_mw["cluster"]          # before the kernel: clock tree + leakage
    after = [s for s in series if s.time >= t1 + US // 4]
    assert after and all(_activity_mw(s, "cluster", idle) == pytest.approx(0, abs=1e-9) for s in after)
    before = [s for s in series if s.time + s.duration <= t0]
    assert all(_activity_mw(s, "cluster", idle) == pytest.approx(0, abs=1e-9) for s in before)
    inside = sum(_activity_mw(s, "cluster", idle) * s.duration * 1e-3 for s in series
                 if s.time < t1 + US // 4)
    assert inside == pytest.approx(core_pj, rel=1e-6)
    # the power is a plateau over the kernel, not a burst at its end
    mid = [s for s in series if t0 + US // 2 <= s.time and s.time + s.duration <= t1 - US // 2]
    assert mid and min(_activity_mw(s, "cluster", idle) for s in mid) > 0


def test_rbe_ops_are_booked_over_its_compute_phases():
    """One RBE job: ops booked from the first COMPUTE (after setup and the first LOAD) to
    the end of the last (before the last NORMQUANT and STREAMOUT), spread over that
    interval (a plateau), not into the time left after the traffic replay."""
    import numpy as np
    from components.marsellus.facts import MEMORY_MAP as MM
    from components.rbe import REGMAP, CycleParams, encode_job, job_cycles
    from components.rbe.peripheral import Rbe, RbeParams
    from components.rbe.stimuli import ByteMemory, place_layer, random_layer
    from components.tcdm import Tcdm
    from tlm import READ, WRITE, Clock, GenericPayload, InitiatorSocket
    from marsellus_regions import RBE_ARGS, TCDM_ARGS  # noqa: E402
    sim = Simulator(seed=1)
    pmu = Pmu(sim, "pmu", {"operating_point": "signoff"}, **PMU_ARGS)
    top = Module(sim, "cluster")
    clk = Clock(sim, "cluster.clk", 400e6)
    tcdm = Tcdm(top, "tcdm", clk, **TCDM_ARGS)
    # the paper timing: its first LOAD (25 pixels) and tail are counted by hand below
    rbe = Rbe(top, "rbe", clock=clk, params=RbeParams(timing="paper"), **RBE_ARGS)
    rbe.tcdm.bind(tcdm.rbe_port)
    cpu = InitiatorSocket(top, "cpu")
    cpu.bind(rbe.regs.socket)
    booked = []

    def hook(kind, n, over, start=None, unit=None):      # what the platform's wiring does
        booked.append((kind, n, over, start, unit))
        pmu.activity(rbe.path if unit is None else f"{rbe.path}.{unit}", kind, n, over,
                     cls=unit, start=start)

    rbe.activity.append(hook)
    layer = random_layer(np.random.default_rng(3), h_out=12, w_out=12, k_in=64, k_out=64,
                         w_bits=2, i_bits=4, o_bits=4)
    mem = ByteMemory(MM["tcdm"].size, MM["tcdm"].base)
    job = place_layer(layer, mem, MM["tcdm"].base)
    tcdm.load(MM["tcdm"].base, mem.data.tobytes())

    async def wr(off, v):
        p = GenericPayload(WRITE, off, bytearray(int(v).to_bytes(4, "little")))
        await cpu.b_transport(p, 0)

    async def go():
        await sim.wait(2 * US)
        acquire = GenericPayload(READ, REGMAP.control["ACQUIRE"].offset, bytearray(4))
        await cpu.b_transport(acquire, 0)
        for off, v in encode_job(job):
            await wr(off, v)
        await wr(REGMAP.control["TRIGGER"].offset, 0)
        await rbe.done
        await sim.wait(10 * US)

    sim.spawn(go(), "go")
    sim.run()
    rec = rbe.jobs[0]
    assert rec.error == 0
    c = job_cycles(job, params=CycleParams.paper())
    period = clk.period
    ops = [(n, over, start) for kind, n, over, start, unit in booked if kind == "op"]
    assert sum(n for n, _o, _s in ops) == c.ops == 2 * 12 * 12 * 64 * 64 * 9
    first = min(s for _n, _o, s in ops)
    last = max(s + o for _n, o, s in ops)
    assert first == rec.start + round((c.setup + 25) * period)        # setup + first LOAD
    tail = 16 + 9 * 4                                                  # last NQ + STREAMOUT
    assert last == pytest.approx(rec.end - tail * period, abs=period)
    assert rec.end - rec.start == c.total * period
    # a plateau: each quarter of the compute interval holds about a quarter of the ops
    q = (last - first) // 4
    series = pmu.timeseries(period=q, until=rec.end + 5 * US)
    idle = series[0].power_mw["cluster"]
    energies = [_activity_mw(s, "cluster", idle) * s.duration for s in series
                if s.time >= first and s.time + s.duration <= last]
    assert len(energies) >= 2
    assert max(energies) < 1.35 * min(energies)
    # the RBE's TCDM words were booked as TCDM energy over the job
    words = [(n, over, start) for kind, n, over, start, unit in booked if unit == "tcdm"]
    assert words == [(9 * sum(c.accesses.values()), c.total * period, rec.start)]


def test_every_activity_of_a_run_is_booked_at_its_rate():
    """quickstart (uDMA from HyperRAM, cluster DMA, RBE at W=4/I=8, 0.8 V): each power
    class's energy equals the block's own counters times power.yaml's rates, recomputed
    here from the statistics; the report carries them per class."""
    import tempfile
    from pathlib import Path
    from components.rbe import Mode, RbeJob, job_cycles
    from cosim.runner import run_here
    from cosim.scenario import load_scenario
    with tempfile.TemporaryDirectory() as tmp:
        rep, run, _ = run_here(load_scenario("quickstart"), Path(tmp))
    st = rep.stats
    pmu = run.platform.pmu
    assert pmu.domains["cluster"].vdd == pmu.domains["soc"].vdd == 0.8   # (V/0.8)^2 = 1
    e = pmu.model.energy_per
    got = st["pmu.energy.classes"]
    dma = st["cluster.dma"]["bytes"]
    l2 = st["soc.l2"]["bytes_read"] + st["soc.l2"]["bytes_written"]
    udma = st["soc.udma"]["rx.bytes"] + st["soc.udma"]["tx.bytes"]
    assert min(dma, l2, udma) > 0
    assert got["cluster_dma"] == pytest.approx(dma * e("cluster_dma", "byte"))
    assert got["interconnect"] == pytest.approx(dma * e("interconnect", "byte"))
    assert got["l2"] == pytest.approx(l2 * e("l2", "byte"))
    assert got["udma"] == pytest.approx(udma * e("udma", "byte"))
    assert got["hyperram"] == pytest.approx(udma * e("hyperram", "byte"))
    rbe = st["cluster.rbe"]
    ops, cycles = rbe["ops"], rbe["cycles.compute"]
    # quickstart's layer: 4-bit weights, 8-bit activations: W*I one-bit products per MAC
    assert got["rbe"] == pytest.approx(ops * e("rbe", "op") + ops // 2 * 4 * 8 * e("rbe", "bitop")
                                       + cycles * e("rbe", "cycle"))
    # TCDM: the RBE's 288-bit accesses (9 words), the DMA's bytes, the SOC port's words
    jobs = run.platform.rbe.jobs
    words = 9 * sum(sum(j.cycles.accesses.values()) for j in jobs)
    soc_words = st["cluster.tcdm"].get("soc.words", 0)
    assert got["tcdm"] == pytest.approx(words * e("tcdm", "access") + dma * e("tcdm", "byte")
                                        + soc_words * e("tcdm", "access"))
    # the precision dependence: per op at the peak's W=2/I=4 as the former flat 0.074 pJ,
    # W=I=8 about 5.7x that
    per_op = {wi: e("rbe", "op") + wi / 2 * e("rbe", "bitop") for wi in (2 * 4, 8 * 8)}
    assert per_op[8] == pytest.approx(0.074)
    assert per_op[64] / per_op[8] == pytest.approx(0.424 / 0.074)
    # the report: per class in J, the existing per-component/per-domain keys kept
    energy = rep.energy
    assert energy["per_class_j"]["rbe"] == pytest.approx(got["rbe"] * 1e-12)
    assert set(energy) >= {"per_domain_j", "per_component_j", "total_j", "average_power_w"}
    # per layer: the chip energy over the layer's span (the layer table's)
    row = rep.extra["layers"]["rows"][0]
    inside = integrate([s for s in pmu.timeseries(period=0)
                        if row["start_ps"] <= s.time and s.time + s.duration <= row["end_ps"]])
    assert energy["per_layer_j"] == {"conv": pytest.approx(inside * 1e-12, rel=1e-3)}
    assert sum(energy["per_class_j"].values()) == pytest.approx(
        sum(st[f"pmu.{d}"]["dynamic_pj"] for d in ("cluster", "soc", "always_on")) * 1e-12)
    assert cycles == sum(j.cycles.compute for j in jobs) and job_cycles(RbeJob.dense(
        x_addr=0, w_addr=0, nq_addr=0, y_addr=0, h_out=3, w_out=3, k_in=32, k_out=32,
        w_bits=4, i_bits=8, o_bits=8, mode=Mode.CONV3X3)).compute == 2 * (32 * 4 + 17) + 2
    # (the default open-RTL timing, docs/rbe.md: per pass 32*W + 17, per K_in tile 2)
