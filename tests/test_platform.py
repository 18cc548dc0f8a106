"""The assembled MARSELLUS platform: parameters by path, clocks from the FLLs, power gating."""
import pytest

from components.marsellus.facts import MEMORY_MAP as MM
from components.marsellus.platform import Marsellus
from components.pmu import PowerState
from tlm import READ, GenericPayload, InitiatorSocket, Module, Simulator
from tlm.params import ParameterError
from tlm.units import US


def test_clock_overrides_reach_the_flls():
    sim = Simulator()
    pl = Marsellus(sim, {"cluster.clock.freq": "200 MHz", "cluster.tcdm.mode": "word"})
    assert pl.pmu.clocks["cluster"].freq_hz == 200e6
    assert pl.ms.cluster_clock is pl.pmu_link.clocks["cluster"]    # the mirror, via pmu_link
    assert pl.ms.cluster_clock.freq_hz == 200e6
    assert pl.ms.tcdm.params.mode == "word"


def test_unknown_parameter_path_is_an_error_with_a_suggestion():
    with pytest.raises(ParameterError, match=r"did you mean 'cluster\.tcdm"):
        Marsellus(Simulator(), {"cluster.tcmd.mode": "word"})


def test_cluster_power_off_errors_accesses_and_loses_tcdm_contents():
    sim = Simulator(seed=4)
    pl = Marsellus(sim, {})
    tester = Module(pl.soc, "tester")
    sock = InitiatorSocket(tester, "socket")
    sock.bind(pl.ms.soc_xbar.target_socket)
    pattern = bytes(range(256)) * 16
    pl.load("soc", MM["tcdm"].base, pattern)
    out = {}

    async def go():
        p = GenericPayload(READ, MM["tcdm"].base, bytearray(16), initiator=tester.path)
        await sock.b_transport(p, 0)
        out["on"] = (p.status.name, bytes(p.data))
        assert pl.pmu.set_state("cluster", PowerState.OFF)
        await sim.wait(10 * US)
        q = GenericPayload(READ, MM["tcdm"].base, bytearray(16), initiator=tester.path)
        await sock.b_transport(q, 0)
        out["off"] = q.status.name

    sim.spawn(go(), "soc.tester.go")
    sim.run(until=100 * US)
    assert out["on"] == ("OK", pattern[:16])
    assert out["off"] == "GENERIC_ERROR"
    assert any("power domain 'cluster' is OFF" in str(e) for e in sim.errors)
    assert pl.dump("soc", MM["tcdm"].base, len(pattern)) != pattern  # contents lost


def test_one_knob_per_clock_and_the_report_states_what_ran(tmp_path):
    """The operating point sets every FLL; a clock override starts one clock elsewhere and
    the report names the departure and the frequencies and voltages actually used."""
    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    from components.marsellus.memory_system import build_memory_system
    from components.marsellus.facts import operating_points
    from components.pmu import PmuParams
    nominal = operating_points().operating_points[PmuParams.operating_point]
    # the same default everywhere: the platform and the stand-alone memory system
    assert Marsellus(Simulator(), {}).pmu.clocks["cluster"].freq_hz == nominal.freq["cluster"]
    assert build_memory_system(Simulator(), {}).cluster_clock.freq_hz == nominal.freq["cluster"]
    rep = run_scenario(load_scenario("quickstart", ["cluster.clock.freq=200MHz"]),
                       out_dir=tmp_path, plots=False)
    e = rep.energy
    assert e["operating_point"] == "nominal, cluster clock 200 MHz"
    for when in ("start", "end"):
        c = e["conditions"][when]
        assert c["clocks_hz"]["cluster"] == 200e6 and c["clocks_hz"]["soc"] == nominal.freq["soc"]
        assert c["vdd_v"]["cluster"] == pytest.approx(nominal.vdd["cluster"])
    base = run_scenario(load_scenario("quickstart"), out_dir=tmp_path / "b", plots=False)
    assert base.energy["operating_point"] == "nominal"
    assert base.energy["conditions"]["start"]["clocks_hz"]["cluster"] == nominal.freq["cluster"]
    assert rep.sim_time_ps > base.sim_time_ps     # the slower clock really ran


def test_dvfs_shows_in_the_end_conditions(tmp_path):
    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    rep = run_scenario(load_scenario("dvfs_sweep"), out_dir=tmp_path, plots=False)
    c = rep.energy["conditions"]
    assert c["start"]["clocks_hz"]["cluster"] == 420e6 and c["end"]["clocks_hz"]["cluster"] == 100e6
    assert c["end"]["vdd_v"]["cluster"] < c["start"]["vdd_v"]["cluster"]
