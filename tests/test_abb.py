"""ABB: the controller FSM (cycle level), the generator in time, the OCMs, and the
measured ABB facts reproduced by whole-PMU runs (marsellus.md)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.pmu import (AbbConfig, AbbFsm, AbbState, Pmu, TimingError, integrate,
                            replay_workload)
from tlm import Simulator
from tlm.units import NS, US
from marsellus_regions import PMU_ARGS  # noqa: E402

W = "matmul_int8_macload"
MHZ = 1e6


# ----- the FSM, cycle by cycle ---------------------------------------------------------------
SMALL = AbbConfig(max_code=4, raise_codes=2, relax_codes=1, raise_cycles=3, relax_cycles=2,
                  quiet_cycles=5)


def test_fsm_raise_takes_raise_cycles():
    f = AbbFsm(SMALL)
    f.step(True, True, True)                       # edge 0: pre-error captured
    assert (f.state, f.code, f.target, f.busy) == (AbbState.RAISE, 0, 2, True)
    for _ in range(SMALL.raise_cycles - 1):
        f.step(True, False, True)
        assert f.code == 0
    f.step(True, False, True)                      # edge raise_cycles: bias applied
    assert (f.state, f.code, f.quiet) == (AbbState.MONITOR, 2, 0)


def test_fsm_relaxes_one_step_after_quiet_window():
    f = AbbFsm(SMALL, code=2)
    for _ in range(SMALL.quiet_cycles - 1):
        f.step(True, False, True)
    assert f.state == AbbState.MONITOR
    f.step(True, False, True)
    assert (f.state, f.target) == (AbbState.RELAX, 1)
    for _ in range(SMALL.relax_cycles):
        f.step(True, False, True)
    assert (f.state, f.code) == (AbbState.MONITOR, 1)


def test_fsm_quiet_window_frozen_while_idle():
    f = AbbFsm(SMALL, code=1)
    for _ in range(100):
        f.step(True, False, False)
    assert (f.state, f.code, f.quiet) == (AbbState.MONITOR, 1, 0)
    idle = AbbFsm(AbbConfig(**{**SMALL.__dict__, "relax_when_idle": True}), code=1)
    for _ in range(SMALL.quiet_cycles + SMALL.relax_cycles):
        idle.step(True, False, False)
    assert idle.code == 0


def test_fsm_pre_error_aborts_relaxation_and_saturates():
    f = AbbFsm(SMALL, code=3)
    f.advance(SMALL.quiet_cycles, True, True)
    assert f.state == AbbState.RELAX
    f.step(True, True, True)                       # pre-error while relaxing: raise instead
    assert (f.state, f.target) == (AbbState.RAISE, 4)
    f.advance(SMALL.raise_cycles, True, True)
    assert f.code == 4
    f.step(True, True, True)                       # at MAX_CODE: saturation, no transition
    assert (f.state, f.code, f.sat, f.saturations) == (AbbState.MONITOR, 4, True, 1)


def test_fsm_manual_mode_follows_manual_code_and_ignores_pre_errors():
    f = AbbFsm(SMALL, code=0)
    f.step(False, True, True, manual_code=3)
    assert (f.state, f.target) == (AbbState.RAISE, 3)
    f.advance(SMALL.raise_cycles, False, True, manual_code=3)
    assert f.code == 3
    f.advance(50, False, True, manual_code=3)
    assert (f.code, f.state) == (3, AbbState.MONITOR)
    f.step(False, False, True, manual_code=9)       # clamped to MAX_CODE
    assert f.target == SMALL.max_code


inputs = st.tuples(st.booleans(), st.booleans(), st.integers(0, 6))   # en, active, manual


@settings(max_examples=200, deadline=None)
@given(cfg=st.builds(AbbConfig, max_code=st.integers(1, 6), raise_codes=st.integers(1, 3),
                     relax_codes=st.integers(1, 3), raise_cycles=st.integers(1, 5),
                     relax_cycles=st.integers(1, 5), quiet_cycles=st.integers(1, 7),
                     relax_when_idle=st.booleans()),
       script=st.lists(st.tuples(inputs, st.integers(0, 25), st.booleans()), max_size=25))
def test_fsm_advance_equals_stepping(cfg, script):
    """advance(n) (what the event-driven generator uses) == n single steps, and
    edges_to_change predicts exactly the edge where the code changes."""
    a, b = AbbFsm(cfg), AbbFsm(cfg)
    for (en, active, manual), n, pre in script:
        if pre:
            a.step(en, True, active, manual)
            b.step(en, True, active, manual)
        m = a.edges_to_change(en, active, manual)
        code0 = a.code
        a.advance(n, en, active, manual)
        for i in range(n):
            b.step(en, False, active, manual)
            if m is not None and i + 1 < m:
                assert b.code == code0
            if m is not None and i + 1 == m:
                assert b.code != code0
        if m is None:
            assert b.code == code0
        assert a.snapshot() == b.snapshot()


# ----- the generator in simulated time ------------------------------------------------------------
def make_pmu(seed: int = 1, **params) -> tuple[Simulator, Pmu]:
    sim = Simulator(seed=seed)
    return sim, Pmu(sim, "pmu", params, **PMU_ARGS)


def test_bias_rises_after_pre_error_and_relaxes_when_quiet():
    """Cause and effect: a pre-error under load raises the bias; it relaxes only once the
    load is lighter than the load that needed it (relax_load_ratio of it) and has been
    quiet for the window while work runs; idle holds it; a steady load never relaxes."""
    sim, pmu = make_pmu(operating_point="signoff", abb=True)   # 400 MHz at 0.8 V: ample slack
    cfg = pmu.abb.fsm.cfg
    period = pmu.abb.period
    t_pre = 1234 * NS
    edge = -(-t_pre // period) * period if t_pre % period else t_pre + period
    raise_t = cfg.raise_cycles * period
    relax_t = cfg.relax_cycles * period
    quiet = cfg.quiet_cycles * period
    assert raise_t == pytest.approx(0.66 * US, abs=period)        # marsellus.md: ~0.66 us
    assert pmu.params.abb_relax_load_ratio == 0.5

    async def drive():
        pmu.energy.set_level("cluster", "test", 0.8)
        await sim.wait(t_pre)
        pmu.ocms["cluster"].inject()                              # at load 0.8
        await sim.wait(60 * US - t_pre)                           # steady: 3 windows, held
        pmu.energy.set_level("cluster", "test", 0.0)             # idle: bias held
        await sim.wait(40 * US)
        pmu.energy.set_level("cluster", "test", 0.3)             # light work: relaxes
        await sim.wait(30 * US)
        pmu.energy.set_level("cluster", "test", 0.0)

    sim.spawn(drive(), "drive")
    sim.run()
    step = pmu.abb.vbb_step_v
    up = edge + raise_t
    down = 100 * US + quiet + relax_t
    assert pmu.abb.history == [(0, 0.0), (up, step), (down, 0.0)]
    assert pmu.domains["cluster"].vbb == 0.0
    assert pmu.abb.fsm.raises == 1 and pmu.abb.fsm.relaxes == 1


def test_ocm_pre_errors_follow_slack_and_activity():
    sim, pmu = make_pmu(operating_point="signoff", abb=True)
    ocm = pmu.ocms["cluster"]
    m = ocm.light_margin
    assert 0 < m <= ocm.window / 2
    pmu.energy.set_level("cluster", "test", 1.0)
    assert ocm.slack() > ocm.window and ocm.probability() == 0.0  # 400 MHz at 0.8 V: quiet
    pmu.regulators["cluster"].set_now(745)                         # within the window
    s = ocm.slack()
    assert 0 < s < ocm.window - m

    def p(level):          # docs/power.md: light load exercises paths with more slack
        return level * ocm.p_max * (1 - (s + (1 - level) * m) / ocm.window)

    assert ocm.probability() == pytest.approx(p(1.0))
    assert p(1.0) == pytest.approx(ocm.p_max * (1 - s / ocm.window))
    pmu.energy.set_level("cluster", "test", 0.5)
    assert ocm.probability() == pytest.approx(p(0.5))
    pmu.energy.set_level("cluster", "test", 0.0)     # idle: clock trees still toggle a little
    assert ocm.probability() == pytest.approx(p(ocm.idle_level))
    assert 0 < ocm.idle_level < 0.5


@pytest.mark.parametrize("level", [0.8, 0.3, 0.0])
def test_pre_errors_are_poisson_and_scale_with_activity(level):
    sim, pmu = make_pmu(operating_point="signoff", abb=False)
    ocm = pmu.ocms["cluster"]
    ocm.set_enabled(True)                 # monitors on, controller off: count raw pre-errors
    pmu.regulators["cluster"].set_now(745)
    pmu.energy.set_level("cluster", "test", level)
    sim.run(200 * US)
    pmu.energy.set_level("cluster", "test", 0.0)
    a = max(level, ocm.idle_level)
    p = a * ocm.p_max * (1 - (ocm.slack() + (1 - a) * ocm.light_margin) / ocm.window)
    expected = p * pmu.clocks["cluster"].freq_hz * 200e-6
    assert expected > 50
    assert abs(ocm.pre_errors - expected) < 5 * expected ** 0.5 + 1


# ----- the measured facts, end to end ------------------------------------------------------------
def run_work(sim: Simulator, pmu: Pmu, duration: int, vdd: float | None = None,
             domains: tuple[str, ...] = ("soc", "cluster")) -> None:
    async def ramp():
        if vdd is not None:
            for d in domains:
                assert pmu.set_vdd(d, vdd)

    sim.spawn(replay_workload(pmu, W, duration), "work")
    sim.spawn(ramp(), "ramp")
    sim.run()


def test_400mhz_at_0v74_runs_without_abb():
    sim, pmu = make_pmu(operating_point="signoff", abb=False)
    run_work(sim, pmu, 60 * US, vdd=0.74)
    assert pmu.timing_errors == [] and pmu.domains["cluster"].vdd == pytest.approx(0.74)
    assert pmu.domains["cluster"].vbb == 0.0


def test_400mhz_below_0v74_without_abb_is_a_timing_error():
    sim, pmu = make_pmu(operating_point="signoff", abb=False)
    with pytest.raises(TimingError) as ei:
        run_work(sim, pmu, 60 * US, vdd=0.73, domains=("cluster",))
    rec = ei.value.record
    reg = pmu.regulators["cluster"]
    # the first 5 mV step that leaves fmax below 400 MHz: 0.735 V
    assert rec.vdd == pytest.approx(0.735)
    assert rec.time == reg.step_time * round((0.80 - 0.735) / 0.005) == ei.value.time
    assert (rec.domain, rec.clock, rec.freq_hz, rec.vbb) == ("cluster", "cluster", 400 * MHZ, 0.0)
    assert rec.fmax_hz < rec.freq_hz
    assert "cluster" in str(ei.value) and "400.0 MHz" in str(ei.value)


def test_timing_error_record_mode_keeps_running_and_reports():
    sim, pmu = make_pmu(operating_point="signoff", abb=False, timing_error="record")
    run_work(sim, pmu, 60 * US, vdd=0.70, domains=("cluster",))
    assert sim.now >= 60 * US
    assert len(pmu.timing_errors) == 1                 # one violation episode
    assert sim.stats.as_dict()["pmu"]["timing_errors.cluster"] == 1
    assert pmu.regs["TIMING_ERRORS"].read() == 1


def abb_run(seed: int = 1, vdd: float = 0.65, abb: bool = True, op: str = "signoff",
            duration: int = 200 * US) -> tuple[Simulator, Pmu]:
    sim, pmu = make_pmu(seed, operating_point=op, abb=abb)
    run_work(sim, pmu, duration, vdd=vdd)
    return sim, pmu


def test_with_abb_400mhz_runs_at_0v65():
    sim, pmu = abb_run()
    assert pmu.timing_errors == []
    assert pmu.domains["cluster"].vdd == pytest.approx(0.65)
    fsm = pmu.abb.fsm
    assert fsm.raises > 0 and pmu.ocms["cluster"].pre_errors > 0
    # the bias settled where the OCM window is just clear (one step below at most)
    assert pmu.settled_code() - 1 <= fsm.code <= pmu.settled_code()
    assert pmu.domains["soc"].vbb == pmu.domains["cluster"].vbb == pmu.abb.vbb > 0


def steady_energy(pmu: Pmu, start: int) -> float:
    return integrate([s for s in pmu.timeseries() if s.time >= start])


def test_energy_at_0v65_with_abb_is_about_30_percent_lower():
    start = 40 * US                      # after the 30 us supply ramp (5 mV/us)
    e80 = steady_energy(abb_run(vdd=None, abb=False)[1], start)     # 0.8 V, 400 MHz
    e74 = steady_energy(abb_run(vdd=0.74, abb=False)[1], start)
    e65 = steady_energy(abb_run(vdd=0.65, abb=True)[1], start)
    assert 1 - e65 / e80 == pytest.approx(0.30, abs=0.03)          # -30 % vs 0.8 V
    assert 1 - e65 / e74 == pytest.approx(0.16, abs=0.03)          # -16 % vs 0.74 V


def test_bias_relaxes_step_by_step_when_slack_returns():
    sim, pmu = make_pmu(operating_point="signoff", abb=True)
    cfg = pmu.abb.fsm.cfg

    async def scenario():
        pmu.set_vdd("soc", 0.65)
        pmu.set_vdd("cluster", 0.65)
        await replay_workload(pmu, W, 60 * US)
        pmu.set_vdd("soc", 0.80)
        pmu.set_vdd("cluster", 0.80)                   # ample slack: no more pre-errors
        await replay_workload(pmu, W, 400 * US, scale=0.2)

    sim.spawn(scenario(), "scenario")
    sim.run()
    assert pmu.timing_errors == []
    ramp = pmu.regulators["cluster"].step_time * round((0.80 - 0.65) / 0.005)
    hist = [(t, v) for t, v in pmu.abb.history if t > 60 * US + ramp]
    assert hist and hist[-1][1] == 0.0
    assert all(b[1] < a[1] for a, b in zip(hist, hist[1:]))          # only down steps
    step = (cfg.quiet_cycles + cfg.relax_cycles) * pmu.abb.period
    assert all(b[0] - a[0] == step for a, b in zip(hist, hist[1:]))


def test_abb_is_deterministic_per_seed():
    a = abb_run(seed=7, duration=80 * US)[1]
    b = abb_run(seed=7, duration=80 * US)[1]
    c = abb_run(seed=8, duration=80 * US)[1]
    assert a.abb.history == b.abb.history
    assert a.energy.total_pj() == b.energy.total_pj()
    assert a.ocms["cluster"].pre_errors == b.ocms["cluster"].pre_errors
    assert a.abb.history != c.abb.history


def test_idle_domains_are_protected_and_the_bias_is_held():
    """No work at all: the clock trees' background toggling (idle_level) still produces
    pre-errors as the supply ramps down, so the ABB follows; once safe the bias is held
    (the quiet window only counts while work runs) and the simulation simply ends."""
    sim, pmu = make_pmu(operating_point="signoff", abb=True)

    async def ramp():
        pmu.set_vdd("soc", 0.65)
        pmu.set_vdd("cluster", 0.65)
        await sim.wait(300 * US)

    sim.spawn(ramp(), "ramp")
    sim.run()
    assert pmu.timing_errors == [] and pmu.domains["cluster"].vdd == pytest.approx(0.65)
    assert pmu.energy.level("cluster") == 0.0 and pmu.abb.fsm.relaxes == 0
    last_change = pmu.abb.history[-1][0]
    # settled for what idle logic exercises (less than full load needs)
    idle = pmu.params.ocm_idle_level
    assert pmu.abb.code == pmu.settled_code(idle) < pmu.settled_code() and last_change < 40 * US
    assert sim.next_event_time() is None


def test_abb_phases_bias_follows_the_compute_phases():
    """The library scenario abb_phases (RBE-heavy, data-marshalling, core-heavy phases at
    470 MHz with ABB): every bias raise happens in a compute phase, every relaxation in
    the data-marshalling phase (light load, work running), no phase both raises and
    relaxes, and each round shows the cycle; no timing error."""
    import tempfile
    from pathlib import Path
    from cosim.runner import run_here
    from cosim.scenario import load_scenario
    import cosim.plots as plots
    sc = load_scenario("abb_phases")
    with tempfile.TemporaryDirectory() as tmp:
        rep, run, outcome = run_here(sc, Path(tmp))
        figs = []
        saved = plots.save_png
        plots.save_png = lambda fig, path: figs.append(fig)
        try:
            assert plots.plot_power(sc, outcome, Path(tmp) / "power.png")
        finally:
            plots.save_png = saved
    assert all(c.passed for c in rep.checks)
    pmu = run.platform.pmu
    assert pmu.timing_errors == []
    # phases: consecutive tasks of one op ('rbe', 'kernel' = heavy; 'dma' = quiet)
    recs = sorted((r for r in run.host.records.values() if r.op in ("rbe", "kernel", "dma")),
                  key=lambda r: r.start)
    phases: list[list] = []
    for r in recs:
        if phases and phases[-1][0] == r.op:
            phases[-1][2] = r.end
        else:
            phases.append([r.op, r.start, r.end])
    assert [p[0] for p in phases] == ["rbe", "dma", "kernel"] * 3

    def phase_at(t):
        hits = [i for i, p in enumerate(phases) if p[1] <= t < p[2]]
        assert hits, f"bias change at {t} ps outside every phase"
        return hits[0]

    hist = pmu.abb.history
    moves: dict[int, set[str]] = {}
    for (_t0, v0), (t1, v1) in zip(hist, hist[1:]):
        if t1 == 0:
            continue                                  # the operating point's preset
        i = phase_at(t1)
        moves.setdefault(i, set()).add("up" if v1 > v0 else "down")
        assert (phases[i][0] == "dma") == (v1 < v0), (phases[i], t1, v0, v1)
    assert all(len(m) == 1 for m in moves.values())  # no raise/relax cycling in a phase
    # the power plot shades the compute phases behind the power and body-bias panels
    power_ax = figs[0].axes[0]
    [bias_ax] = [ax for ax in figs[0].axes if ax.get_ylabel() == "body bias (V)"]
    kinds = [p[0] != "dma" for p in phases]       # back-to-back compute phases merge
    heavy = sum(1 for i, h in enumerate(kinds) if h and (i == 0 or not kinds[i - 1]))
    assert len(power_ax.patches) == len(bias_ax.patches) == heavy
    assert "body bias changed 6 times" in power_ax.get_title()
    rounds = [moves.get(3 * k + 1) for k in range(3)]
    assert rounds[0] == {"down"} and sum(m == {"down"} for m in rounds) >= 2
    assert sum(m == {"up"} for i, m in moves.items() if phases[i][0] != "dma") >= 2
