"""The assembled MARSELLUS platform: parameters by path, clocks from the FLLs, power gating."""
import numpy as np
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
