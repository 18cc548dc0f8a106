"""The register-mapped PMU: FLL and PMU registers driven by real b_transport accesses at
their MEMORY_MAP addresses, domain states and the power-off contract, DVFS."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from components.marsellus.facts import MEMORY_MAP
from components.pmu import DomainGate, Pmu, PowerState
from components.pmu.fll import BAD_REQUEST as FLL_BAD, FLL_STRIDE, LOCKED
from components.pmu.pmu import (BAD_REQUEST, DOMAIN_BASE, DOMAIN_STRIDE, SWITCH_BUSY,
                                VDD_BUSY)
from tlm import (OK, READ, WRITE, GenericPayload, InitiatorSocket, Memory, Module,
                 ParameterError, Router, Simulator, Status)
from tlm.units import NS, US
from marsellus_regions import PMU_ARGS  # noqa: E402

PMU = MEMORY_MAP["pmu"].base
FLL = MEMORY_MAP["fll"].base
FLL_INDEX = {"soc": 0, "periph": 1, "cluster": 2}
DOMAIN_INDEX = {"always_on": 0, "soc": 1, "cluster": 2}


class Cpu(Module):
    """A firmware stand-in: 32-bit loads/stores over the bus, waiting the annotated delay."""

    def __init__(self, parent, name: str):
        super().__init__(parent, name)
        self.socket = InitiatorSocket(self, "socket")

    async def access(self, cmd, addr: int, value: int = 0, length: int = 4) -> GenericPayload:
        p = GenericPayload(cmd, addr, bytearray(value.to_bytes(length, "little")), length,
                           initiator=self.path)
        d = await self.socket.b_transport(p, 0)
        await self.sim.wait(d)
        return p

    async def write(self, addr: int, value: int) -> None:
        p = await self.access(WRITE, addr, value)
        assert p.status == OK, p

    async def read(self, addr: int) -> int:
        p = await self.access(READ, addr)
        assert p.status == OK, p
        return int.from_bytes(p.data[:4], "little")


def platform(seed: int = 1, **params):
    sim = Simulator(seed=seed)
    top = Module(sim, "soc")
    pmu = Pmu(top, "pmu", params, **PMU_ARGS)
    bus = Router(top, "bus")
    bus.map(PMU, MEMORY_MAP["pmu"].size, pmu.regs.socket)
    bus.map(FLL, MEMORY_MAP["fll"].size, pmu.fll.socket)
    cpu = Cpu(top, "fc")
    cpu.socket.bind(bus.target_socket)
    return sim, top, pmu, bus, cpu


def fll_reg(fll: str, off: int) -> int:
    return FLL + FLL_STRIDE * FLL_INDEX[fll] + off


def dom_reg(domain: str, off: int) -> int:
    return PMU + DOMAIN_BASE + DOMAIN_STRIDE * DOMAIN_INDEX[domain] + off


def run(sim, fn):
    proc = sim.spawn(fn(), "firmware")
    sim.run()
    assert proc.done
    return proc.result


def test_info_register_at_memory_map_address():
    sim, _, pmu, _, cpu = platform()
    assert run(sim, lambda: cpu.read(PMU + 0x0)) == 3 | (1 << 8)


def test_fll_relock_through_registers():
    sim, _, pmu, _, cpu = platform()
    clk = pmu.clocks["cluster"]
    lock = pmu.params.lock_time

    async def fw():
        await cpu.write(fll_reg("cluster", 0x4), 300_000)          # 300 MHz
        t_write = sim.now
        assert await cpu.read(fll_reg("cluster", 0x0)) & LOCKED == 0
        assert clk.freq_hz == 420e6                                 # old frequency while locking
        while not await cpu.read(fll_reg("cluster", 0x0)) & LOCKED:
            await sim.wait(100 * NS)
        assert await cpu.read(fll_reg("cluster", 0x8)) == 300_000
        return t_write

    t_write = run(sim, fw)
    assert clk.freq_hz == 300e6
    t_change = clk.history[-1][0]
    assert t_change - t_write <= lock < t_change - t_write + pmu.clocks["periph"].period * 2


def test_fll_rejects_out_of_range_target():
    sim, _, pmu, _, cpu = platform()

    async def fw():
        await cpu.write(fll_reg("soc", 0x4), 2_000_000)            # 2 GHz: above f_max
        st = await cpu.read(fll_reg("soc", 0x0))
        await cpu.write(fll_reg("soc", 0xC), FLL_BAD)
        return st, await cpu.read(fll_reg("soc", 0x0))

    st, cleared = run(sim, fw)
    assert st & FLL_BAD and st & LOCKED and not cleared & FLL_BAD
    assert pmu.clocks["soc"].freq_hz == 420e6


def test_frequency_change_mid_run_changes_durations():
    """A process waiting cluster cycles finishes later when the firmware halves the
    cluster clock mid-run: the cycles left are re-timed at the new frequency."""
    n = 20_000

    def once(change: bool) -> tuple[int, int | None]:
        sim, _, pmu, _, cpu = platform()
        clk = pmu.clocks["cluster"]

        async def kernel():
            await clk.wait_cycles(n)
            return sim.now

        async def fw():
            if change:
                await sim.wait(10 * US)
                await cpu.write(fll_reg("cluster", 0x4), 210_000)

        k = sim.spawn(kernel(), "kernel")
        sim.spawn(fw(), "fw")
        sim.run()
        return k.result, (clk.history[-1][0] if change else None)

    fixed, _ = once(False)
    changed, t_sw = once(True)
    p1, p2 = round(1e12 / 420e6), round(1e12 / 210e6)
    assert fixed == pytest.approx(n * p1, abs=p1)
    done = t_sw / p1
    assert changed == pytest.approx(t_sw + (n - done) * p2, abs=p2)
    assert changed > fixed


def test_supply_ramp_through_registers():
    sim, _, pmu, _, cpu = platform()
    reg = pmu.regulators["cluster"]

    async def fw():
        # DVFS order: lower the frequency first (and wait for lock), then the supply
        await cpu.write(fll_reg("cluster", 0x4), 300_000)
        await cpu.write(fll_reg("soc", 0x4), 300_000)
        while not await cpu.read(fll_reg("cluster", 0x0)) & LOCKED:
            await sim.wait(1 * US)
        await cpu.write(dom_reg("cluster", 0x4), 700)
        t0 = sim.now
        busy = await cpu.read(dom_reg("cluster", 0xC)) & VDD_BUSY
        await sim.wait(5 * US)
        mid = await cpu.read(dom_reg("cluster", 0x8))
        while await cpu.read(dom_reg("cluster", 0xC)) & VDD_BUSY:
            await sim.wait(100 * NS)
        await cpu.write(dom_reg("cluster", 0x4), 400)               # below the supply range
        bad = await cpu.read(dom_reg("cluster", 0xC)) & BAD_REQUEST
        return t0, busy, mid, bad, await cpu.read(dom_reg("cluster", 0x4))

    t0, busy, mid, bad, target = run(sim, fw)
    assert busy and 700 < mid < 800 and bad and target == 700
    assert pmu.domains["cluster"].vdd == pytest.approx(0.70) and pmu.timing_errors == []
    slew = pmu.params.vdd_slew_v_per_us
    assert reg.transition_time(800) == pytest.approx(0.1 / slew * US)   # 100 mV at the slew


def test_domain_off_calls_hooks_and_accesses_error():
    sim, top, pmu, bus, cpu = platform()
    dom = pmu.domains["cluster"]
    tcdm = Memory(top, "tcdm", MEMORY_MAP["tcdm"].size)
    gate = DomainGate(top, "tcdm_gate", dom)
    gate.initiator_socket.bind(tcdm.socket)
    bus.map(MEMORY_MAP["tcdm"].base, MEMORY_MAP["tcdm"].size, gate.target_socket)
    tcdm.array[:] = 0xAB
    dom.lose_contents(tcdm.array)
    calls = []
    dom.on_power_off(lambda: calls.append(("off", sim.now, dom.is_on)))
    dom.on_power_on(lambda: calls.append(("on", sim.now, dom.is_on)))
    base = MEMORY_MAP["tcdm"].base
    t_on = pmu.params.power_on_time

    async def fw():
        assert (await cpu.access(WRITE, base, 0x1234)).status == OK
        await cpu.write(dom_reg("cluster", 0x0), int(PowerState.OFF))
        off = await cpu.access(READ, base)
        state = await cpu.read(dom_reg("cluster", 0x0))
        t_req = sim.now
        await cpu.write(dom_reg("cluster", 0x0), int(PowerState.ON))
        powering = await cpu.read(dom_reg("cluster", 0x0c)) & SWITCH_BUSY
        early = await cpu.access(READ, base)
        await sim.wait(t_on)
        late = await cpu.access(READ, base)
        return off, state, t_req, powering, early, late

    off, state, t_req, powering, early, late = run(sim, fw)
    assert off.status == Status.GENERIC_ERROR and state == PowerState.OFF
    err = [e for e in sim.errors if e.where == gate.path]
    assert len(err) == 2 and "'cluster' is OFF" in err[0].reason and err[0].initiator == cpu.path
    assert powering and early.status == Status.GENERIC_ERROR and late.status == OK
    assert [c[0] for c in calls] == ["off", "on"]
    assert calls[0][2] is False and t_req + t_on <= calls[1][1] <= t_req + t_on + 10 * NS
    # contents lost: seeded garbage, not the data written before
    assert not np.all(tcdm.array == 0xAB)
    assert int.from_bytes(late.data[:4], "little") != 0x1234


def test_clock_gated_domain_stalls_accesses_until_on():
    sim, top, pmu, bus, cpu = platform()
    dom = pmu.domains["cluster"]
    mem = Memory(top, "l1", 4096)
    gate = DomainGate(top, "gate", dom)
    gate.initiator_socket.bind(mem.socket)
    bus.map(MEMORY_MAP["tcdm"].base, 4096, gate.target_socket)

    async def fw():
        await cpu.write(dom_reg("cluster", 0x0), int(PowerState.CLOCK_GATED))
        waker = sim.spawn(wake(), "waker")
        p = await cpu.access(READ, MEMORY_MAP["tcdm"].base)
        await waker
        return p, sim.now

    async def wake():
        await sim.wait(3 * US)
        pmu.set_state("cluster", PowerState.ON)

    p, t = run(sim, fw)
    assert p.status == OK and t >= 3 * US


def test_always_on_domain_cannot_be_switched_off():
    sim, _, pmu, _, cpu = platform()

    async def fw():
        await cpu.write(dom_reg("always_on", 0x0), int(PowerState.OFF))
        await cpu.write(dom_reg("soc", 0x0), 7)                    # not a state
        return (await cpu.read(dom_reg("always_on", 0xC)), await cpu.read(dom_reg("soc", 0xC)))

    ao, soc = run(sim, fw)
    assert ao & BAD_REQUEST and soc & BAD_REQUEST
    assert pmu.domains["always_on"].state == PowerState.ON
    assert pmu.domains["soc"].state == PowerState.ON


def test_abb_manual_and_automatic_through_registers():
    sim, _, pmu, _, cpu = platform(operating_point="signoff")
    cfg = pmu.abb.fsm.cfg

    async def fw():
        await cpu.write(PMU + 0x4, 5 << 8)                         # manual, code 5
        busy = await cpu.read(PMU + 0x8)
        await sim.wait((cfg.raise_cycles + 2) * pmu.abb.period)
        manual = (await cpu.read(PMU + 0x8), await cpu.read(PMU + 0xC))
        await cpu.write(PMU + 0x4, 1)                              # automatic
        return busy, manual, await cpu.read(PMU + 0x4)

    busy, (status, vbb_mv), ctrl = run(sim, fw)
    assert busy & (1 << 12) and (busy >> 8) & 3 == 1               # BUSY, RAISE
    assert status & 0x1F == 5 and vbb_mv == round(5 * pmu.abb.vbb_step_v * 1000)
    assert ctrl & 1 and pmu.abb_enabled
    assert pmu.domains["cluster"].vbb == pytest.approx(0.25)


def test_operating_point_presets_and_settled_bias():
    sim = Simulator()
    pmu = Pmu(sim, "pmu", {"operating_point": "boost_470"}, **PMU_ARGS)        # needs ABB at 0.8 V
    assert pmu.abb_enabled and pmu.abb.code == pmu.settled_code() > 0
    assert pmu.fmax("cluster") > 470e6
    pmu.apply_operating_point("low")
    assert pmu.domains["cluster"].vdd == 0.5 and pmu.clocks["cluster"].freq_hz == 100e6
    assert pmu.abb.code == 0 and not pmu.abb_enabled
    sim.run(10 * US)
    assert pmu.timing_errors == []


def test_bad_parameters_name_their_path():
    sim = Simulator()
    with pytest.raises(ParameterError, match=r"pmu\.abb_quiet_windw.*did you mean"):
        Pmu(sim, "pmu", {"abb_quiet_windw": "10 us"}, **PMU_ARGS)
    with pytest.raises(ParameterError, match="unknown operating point 'turbo'") as e:
        Pmu(Simulator(), "pmu", {"operating_point": "turbo"}, **PMU_ARGS)
    assert e.value.path == "pmu.operating_point"
    p = Pmu(Simulator(), "pmu", {"abb_quiet_window": "50 us", "lock_time": "1 us"}, **PMU_ARGS)
    assert p.abb.fsm.cfg.quiet_cycles == 5000 and p.fll.flls["soc"].lock_time == 1 * US


def test_docs_list_every_register():
    """docs/power.md documents every register with its offset (as the code defines it)."""
    doc = (Path(__file__).parents[1] / "docs" / "power.md").read_text()
    sim, _, pmu, _, _ = platform()
    for r in pmu.regs.table():
        if r["offset"] < DOMAIN_BASE:
            assert f"| 0x{r['offset']:03X} | {r['name']} |" in doc, r["name"]
        else:
            i, rel = divmod(r["offset"] - DOMAIN_BASE, DOMAIN_STRIDE)
            prefix = list(pmu.domains)[i].upper() + "_"
            assert r["name"].startswith(prefix)
            assert f"| +0x{rel:02X} | {r['name'][len(prefix):]} |" in doc, r["name"]
    for r in pmu.fll.table():
        i, rel = divmod(r["offset"], FLL_STRIDE)
        prefix = list(pmu.fll.flls)[i].upper() + "_"
        assert f"| +0x{rel:X} | {r['name'][len(prefix):]} |" in doc, r["name"]
