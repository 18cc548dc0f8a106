"""Offload from the SOC side: a real b_transport initiator crosses a SOC<->CLUSTER link,
programs the cluster control registers with an args block in TCDM, and waits for the
end-of-job event that comes back over the link. Errors end in STATUS codes, never hangs."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from components.cluster import Cluster, JobError, ops
from components.cluster.ctrl import (REG, STATUS_BUSY, STATUS_DONE, STATUS_ERROR,
                                     STATUS_START_IGNORED)
from components.cluster.event_unit import BARRIER_REG, CORE_REG, GLOBAL_REG
from components.cluster.kernels import KERNELS
from components.marsellus.facts import MEMORY_MAP
from components.tcdm import Tcdm
from tlm import READ, WRITE, Clock, GenericPayload, InitiatorSocket, Link, Module, Router, Simulator
from marsellus_regions import CLUSTER_ARGS, PMU_ARGS, TCDM_ARGS  # noqa: E402

MAP = MEMORY_MAP
B = MAP["tcdm"].base
CTRL = MAP["cluster_ctrl"].base
EU = MAP["event_unit"].base
ARGS = B + 0x1F000
DOCS = Path(__file__).resolve().parents[1] / "docs" / "cluster.md"


class Soc(Module):
    """The SOC side: one bus initiator and the end-of-job event it receives."""

    def __init__(self, parent, name):
        super().__init__(parent, name)
        self.bus = InitiatorSocket(self, "bus")

    async def write(self, addr, data):
        data = bytearray(data if isinstance(data, (bytes, bytearray)) else int(data).to_bytes(4, "little"))
        p = GenericPayload(WRITE, addr, data, len(data), initiator=self.path)
        await self.sim.wait(await self.bus.b_transport(p, 0))
        assert p.is_ok, (hex(addr), p)

    async def read(self, addr, n=4):
        p = GenericPayload(READ, addr, bytearray(n), n, initiator=self.path)
        await self.sim.wait(await self.bus.b_transport(p, 0))
        assert p.is_ok, (hex(addr), p)
        return bytes(p.data) if n != 4 else int.from_bytes(p.data, "little")


@pytest.fixture
def plat():
    sim = Simulator(7)
    clk = Clock(sim, "cluster_clk", 420e6)
    cl = Cluster(sim, "cluster", clock=clk, **CLUSTER_ARGS)
    tcdm = Tcdm(cl, "tcdm", clk, **TCDM_ARGS)
    cl.bind_tcdm(tcdm)
    bus = Router(cl, "periph_bus", clock=clk, latency=1)
    bus.map(B, MAP["tcdm"].size, tcdm.soc_port, "tcdm", translate=False)
    bus.map(CTRL, MAP["cluster_ctrl"].size, cl.ctrl.regs.socket, "ctrl")
    bus.map(EU, MAP["event_unit"].size, cl.event_unit.regs.socket, "event_unit")
    cdc = Link(sim, "cdc", side_a="soc", side_b="cluster", min_latency=3 * clk.period)
    s2c = cdc.transport("s2c", initiator_side="a")
    s2c.initiator_socket.bind(bus.target_socket)
    soc = Soc(sim, "soc")
    soc.bus.bind(s2c.target_socket)
    eoj = cdc.event("cluster_eoj", from_side="b")
    cl.bind_soc(eoj)
    return sim, clk, cl, tcdm, soc, eoj


def matmul_data(seed=0, m=24, n=16, k=64, bits=8):
    rng = np.random.default_rng(seed)
    lo, hi = ops.int_range(bits, True)
    return rng.integers(lo, hi + 1, (m, k)), rng.integers(lo, hi + 1, (n, k))


async def wait_eoj(eoj, seen):
    """Wait for end-of-job number ``seen + 1`` (the SOC side latches the event: a job that
    fails at once may signal before the firmware starts waiting)."""
    while eoj.count <= seen:
        await eoj.event


async def offload(soc, kid, args_ptr, cores, eoj):
    seen = eoj.count
    await soc.write(CTRL + REG["KERNEL"], kid)
    await soc.write(CTRL + REG["ARGS"], args_ptr)
    await soc.write(CTRL + REG["CORES"], cores)
    await soc.write(CTRL + REG["START"], 1)
    busy = await soc.read(CTRL + REG["STATUS"])
    await wait_eoj(eoj, seen)
    return busy, await soc.read(CTRL + REG["STATUS"])


def test_offload_a_matmul_through_the_registers(plat):
    sim, clk, cl, tcdm, soc, eoj = plat
    a, w = matmul_data()
    m, k = a.shape
    n = w.shape[0]
    k_mm = KERNELS["matmul"]
    args = k_mm.normalize(dict(m=m, n=n, k=k, bits=8, isa="macload", a=B, w=B + 0x2000, out=B + 0x4000))
    out = {}

    async def firmware():
        assert (await soc.read(CTRL + REG["INFO"])) == 16 | (len(KERNELS) << 8) | (1 << 16)
        await soc.write(B, a.astype(np.int8).tobytes())                  # data in over the bus
        await soc.write(B + 0x2000, w.astype(np.int8).tobytes())
        await soc.write(ARGS, np.array(k_mm.encode(args), "<u4").tobytes())
        t0 = sim.now
        out["busy"], out["status"] = await offload(soc, k_mm.kid, ARGS, 8, eoj)
        out["latency"] = sim.now - t0
        out["jobs"] = await soc.read(CTRL + REG["JOBS"])
        out["cycles"] = await soc.read(CTRL + REG["CYCLES"])
        out["c"] = np.frombuffer(await soc.read(B + 0x4000, m * n * 4), "<i4").reshape(m, n)

    sim.spawn(firmware(), "fw")
    sim.run()
    assert out["busy"] & STATUS_BUSY
    assert out["status"] == STATUS_DONE
    assert out["jobs"] == 1
    assert np.array_equal(out["c"], a @ w.T)
    run = cl.runs[-1]
    assert run.ok and run.cores == 8 and out["cycles"] == run.cycles
    assert out["latency"] > run.duration                  # plus the crossings and the bus
    # the Python API takes the same path, minus the master's fetch of the 8-word args block
    out2 = {}

    async def api():
        out2["run"] = await cl.run_kernel("matmul", 8, **args)

    sim.spawn(api(), "api")
    sim.run()
    assert 0 < run.cycles - out2["run"].cycles <= 10
    assert cl.event_unit.soc_events == 2                 # both ended with the SOC event


@pytest.mark.parametrize("case,code", [
    ("bad_kernel", JobError.BAD_KERNEL), ("bad_cores", JobError.BAD_CORES),
    ("bad_ptr", JobError.BAD_ARGS_PTR), ("bad_args", JobError.BAD_ARGS)])
def test_bad_offloads_end_with_an_error_status_and_the_event(plat, case, code):
    sim, clk, cl, tcdm, soc, eoj = plat
    k_mm = KERNELS["matmul"]
    good = k_mm.normalize(dict(m=4, n=4, k=16, a=B, w=B + 0x100, out=B + 0x200))
    words = k_mm.encode({**good, "k": 3, "bits": 4} if case == "bad_args" else good)
    kid = 99 if case == "bad_kernel" else k_mm.kid
    cores = 20 if case == "bad_cores" else 4
    ptr = MAP["l2"].base if case == "bad_ptr" else ARGS
    out = {}

    async def firmware():
        await soc.write(ARGS, np.array(words, "<u4").tobytes())
        out["busy"], out["status"] = await offload(soc, kid, ptr, cores, eoj)

    sim.spawn(firmware(), "fw")
    sim.run()
    assert out["status"] == STATUS_DONE | STATUS_ERROR | (int(code) << 8)
    assert cl.runs == [] and cl.ctrl.jobs == 1 and cl.event_unit.soc_events == 1
    if case == "bad_args":
        assert "multiple of 2" in cl.ctrl.last_error


def test_start_while_busy_is_ignored_and_flagged(plat):
    sim, clk, cl, tcdm, soc, eoj = plat
    k_mm = KERNELS["matmul"]
    words = k_mm.encode(k_mm.normalize(dict(m=32, n=32, k=64, a=B, w=B + 0x800, out=B + 0x1000)))
    out = {}

    async def firmware():
        await soc.write(ARGS, np.array(words, "<u4").tobytes())
        await soc.write(CTRL + REG["KERNEL"], k_mm.kid)
        await soc.write(CTRL + REG["ARGS"], ARGS)
        await soc.write(CTRL + REG["START"], 1)
        await soc.write(CTRL + REG["START"], 1)           # still busy: ignored
        out["mid"] = await soc.read(CTRL + REG["STATUS"])
        await wait_eoj(eoj, 0)
        out["end"] = await soc.read(CTRL + REG["STATUS"])

    sim.spawn(firmware(), "fw")
    sim.run()
    assert out["mid"] == STATUS_BUSY | STATUS_START_IGNORED
    assert out["end"] == STATUS_DONE
    assert len(cl.runs) == 1 and cl.ctrl.stats.get("starts_ignored") == 1


def test_python_calls_wait_for_a_running_offload(plat):
    sim, clk, cl, tcdm, soc, eoj = plat
    k_mm = KERNELS["matmul"]
    args = k_mm.normalize(dict(m=32, n=32, k=64, a=B, w=B + 0x800, out=B + 0x1000))

    async def firmware():
        await soc.write(ARGS, np.array(k_mm.encode(args), "<u4").tobytes())
        await offload(soc, k_mm.kid, ARGS, 0, eoj)        # CORES = 0: all cores

    async def api():
        await clk.wait_cycles(100)                         # the offload is running by then
        await cl.run_kernel("add_int8", 16, n=64, a=B + 0x8000, b=B + 0x8100, out=B + 0x8200)

    sim.spawn(firmware(), "fw")
    sim.spawn(api(), "api")
    sim.run()
    first, second = cl.runs
    assert first.kernel == "matmul" and first.cores == 16
    assert second.start >= first.end


def test_firmware_style_wait_on_the_event_unit(plat):
    """Cores (or the FC) can sleep on the Event Unit registers while the cluster works: a
    software event raised through SW_EVENT wakes a blocked EVT_WAIT_CLEAR read."""
    sim, clk, cl, tcdm, soc, eoj = plat
    got = {}

    async def sleeper():
        await soc.write(EU + 2 * 0x40 + CORE_REG["EVT_MASK"], 1 << 4)
        got["bits"] = await soc.read(EU + 2 * 0x40 + CORE_REG["EVT_WAIT_CLEAR"])
        got["t"] = sim.now

    async def waker():
        await clk.wait_cycles(50)
        cl.event_unit.trigger(1 << 4, cores=1 << 2)
        got["raised"] = sim.now

    sim.spawn(sleeper(), "sleeper")
    sim.spawn(waker(), "waker")
    sim.run()
    assert got["bits"] == 1 << 4 and got["t"] > got["raised"]


def test_docs_name_every_kernel_argument_and_register():
    text = DOCS.read_text()
    for k in KERNELS.values():
        assert f"`{k.name}`" in text, k.name
        for a in k.args:
            assert f"`{a.name}`" in text, (k.name, a.name)
    for name in list(REG) + list(CORE_REG) + list(BARRIER_REG) + list(GLOBAL_REG):
        assert name in text, name
    for e in JobError:
        assert e.name in text, e.name


# ----- power: activity into the PMU's energy ledger, power-off mid-job -------------------------------
def pmu_platform():
    import components.pmu as pmu_mod
    sim = Simulator(11)
    pmu = pmu_mod.Pmu(sim, "pmu", {"operating_point": "nominal"}, **PMU_ARGS)
    clk = pmu.clocks["cluster"]
    cl = Cluster(sim, "cluster", clock=clk, **CLUSTER_ARGS)
    tcdm = Tcdm(cl, "tcdm", clk, **TCDM_ARGS)
    cl.bind_tcdm(tcdm)
    cl.attach_power(pmu.domains["cluster"])
    return sim, pmu, pmu_mod, clk, cl, tcdm


def test_core_activity_reaches_the_energy_ledger():
    sim, pmu, pmu_mod, clk, cl, tcdm = pmu_platform()
    out = {}

    async def main():
        out["run"] = await cl.run_kernel("matmul", 16, m=64, n=64, k=256, bits=8, isa="macload",
                                         a=B, w=B + 0x8000, out=B + 0x10000)

    sim.spawn(main(), "main")
    sim.run(10**9)                       # 1 ms: the PMU's own processes never run dry
    run = out["run"]
    ports = [pmu.energy.register(f"cluster.core{i}") for i in range(16)]
    assert sum(p.counts["op"] for p in ports) == run.ops
    instr = sum(p.counts["instr"] for p in ports)
    # the PMU's calibration workload assumes 101.2 op/cycle and 15.4 instr/cycle
    assert run.ops / run.cycles == pytest.approx(101.2, rel=0.005)
    assert instr / run.cycles == pytest.approx(15.4, rel=0.03)
    assert all(p.energy_pj > 0 for p in ports)


def test_power_off_aborts_a_running_job_and_resets_the_cluster():
    sim, pmu, pmu_mod, clk, cl, tcdm = pmu_platform()
    dom = pmu.domains["cluster"]
    out = {}
    args = dict(m=64, n=64, k=256, bits=8, a=B, w=B + 0x8000, out=B + 0x10000)

    async def main():
        out["first"] = await cl.run_kernel("matmul", 16, **args)
        dom.set_state(pmu_mod.PowerState.ON)
        out["second"] = await cl.run_kernel("matmul", 4, **args)

    async def cut():
        await clk.wait_cycles(5000)
        assert cl.ctrl.busy
        dom.set_state(pmu_mod.PowerState.OFF)

    sim.spawn(main(), "main")
    sim.spawn(cut(), "cut")
    sim.run(10**9)
    first, second = out["first"], out["second"]
    assert first.error == JobError.POWER_OFF and not first.ok
    assert first.duration < cl.estimate("matmul", 16, **args) * clk.period
    assert second.ok and cl.event_unit.soc_events == 1          # only the second one signalled
    assert not any(c.sleeping for c in cl.event_unit.cores)
    assert cl.stats.get("jobs_aborted") == 1
