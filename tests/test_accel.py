"""The common accelerator interface (components/accel.py): the shared job loop, rejection,
retirement, accounting, the executor swap point, and the report's ``accelerators`` section
that every accelerator fills the same way."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from components.accel import Accelerator, JobRecord, accelerators  # noqa: E402
from tlm import Clock, GenericPayload, Memory, Simulator  # noqa: E402
from tlm.payload import READ, WRITE  # noqa: E402


@dataclass(frozen=True)
class ScaleJob:
    src: int
    dst: int
    n: int


class Scaler(Accelerator[ScaleJob]):
    """A small accelerator for the test: doubles ``n`` bytes from ``src`` into ``dst``
    through one memory port, one cycle per 4 bytes; jobs come from a command queue and a
    job with ``n == 0`` is rejected with code 7."""

    kind = "scaler"

    def __init__(self, parent, name, *, clock):
        super().__init__(parent, name, clock=clock)
        self.mem = self.add_port("mem")
        self.queue: list[ScaleJob] = []
        self.next_id = 0
        self.start()

    def submit(self, job: ScaleJob) -> None:
        self.queue.append(job)
        self.kick()

    def next_job(self):
        if not self.queue:
            return None
        job = self.queue.pop(0)
        self.next_id += 1
        return self.next_id, (job if job.n else 7)

    async def execute(self, job_id, job, start):
        p = GenericPayload(READ, job.src, bytearray(job.n))
        await self.mem.b_transport(p, 0)
        out = (np.frombuffer(bytes(p.data), np.uint8) * 2).astype(np.uint8)
        await self.clock.wait_cycles(job.n // 4)
        await self.mem.b_transport(GenericPayload(WRITE, job.dst, bytearray(out.tobytes())), 0)
        self.account(start, job.n // 4, job.n // 8, job.n, {"mem": 2 * job.n})
        return JobRecord(job_id, start, self.sim.now, 0)


def _platform():
    sim = Simulator()
    clock = Clock(sim, "clk", 100e6)
    mem = Memory(sim, "mem", 4096)
    acc = Scaler(sim, "scaler", clock=clock)
    acc.mem.bind(mem.socket)
    mem.array[:64] = np.arange(64, dtype=np.uint8)
    return sim, mem, acc


def test_job_loop_runs_jobs_in_order_and_notifies_done():
    sim, mem, acc = _platform()
    seen: list[int] = []

    async def host():
        acc.submit(ScaleJob(0, 1024, 64))
        acc.submit(ScaleJob(0, 0, 0))          # rejected: ends at once with its code
        acc.submit(ScaleJob(0, 2048, 32))
        while len(acc.jobs) < 3:     # a notification nobody waits for is lost, as in SystemC
            await acc.done
            seen.append(sim.now)

    sim.spawn(host(), "host")
    sim.run()
    assert list(mem.array[1024:1088]) == [(2 * i) & 0xFF for i in range(64)]
    assert list(mem.array[2048:2080]) == [2 * i for i in range(32)]
    assert [j.error for j in acc.jobs] == [0, 7, 0]
    assert [j.job_id for j in acc.jobs] == [1, 2, 3]
    assert seen[0] == acc.jobs[0].end and seen[-1] == acc.jobs[2].end
    assert acc.jobs[0].end - acc.jobs[0].start >= 16 * acc.clock.period
    e = acc.report_entry()
    assert (e.kind, e.jobs, e.errors, e.cycles, e.ideal_cycles, e.ops) == ("scaler", 3, 1, 24, 12, 96)
    assert e.bytes == {"mem": 192} and e.utilisation == pytest.approx(0.5)
    assert e.busy_ps == sum(j.end - j.start for j in acc.jobs if not j.error)
    assert accelerators(sim.modules) == [acc]


def test_the_executor_is_the_swap_point():
    sim, mem, acc = _platform()
    model = acc.executor
    calls: list[int] = []

    async def stand_in(job_id, job, start):    # what an RTL transactor does, minus the RTL
        calls.append(job_id)
        return await model(job_id, job, start)

    acc.executor = stand_in
    acc.submit(ScaleJob(0, 512, 16))
    sim.run()
    assert calls == [1] and list(mem.array[512:528]) == [2 * i for i in range(16)]


def test_retire_can_drop_a_job():
    sim, mem, acc = _platform()
    acc.retire = lambda job_id, record: job_id != 1   # e.g. aborted by a soft clear
    acc.submit(ScaleJob(0, 512, 16))
    acc.submit(ScaleJob(0, 768, 16))
    sim.run()
    assert [j.job_id for j in acc.jobs] == [2]


def test_report_has_one_entry_per_accelerator(tmp_path):
    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    rep = run_scenario(load_scenario("quickstart"), out_dir=tmp_path, plots=False)
    e = rep.extra["accelerators"]["cluster.rbe"]
    stats = rep.stats["cluster.rbe"]
    assert e["kind"] == "rbe" and e["jobs"] == stats["jobs"] == 4 and e["errors"] == 0
    assert e["busy_ps"] == stats["busy_ps"] and e["ops"] == stats["ops"]
    assert 0 < e["ideal_cycles"] < e["cycles"] and 0 < e["utilisation"] < 1
    assert e["bytes"]["tcdm"] > 0
    # energy is what the PMU's ledger booked for the block
    assert e["energy_j"] == rep.energy["per_component_j"]["cluster.rbe"] > 0


def test_without_a_power_model_energy_is_unknown(tmp_path):
    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    rep = run_scenario(load_scenario("mini_rbe"), out_dir=tmp_path, plots=False)
    e = rep.extra["accelerators"]["soc.rbe"]
    assert e["jobs"] == 1 and e["energy_j"] is None and e["cycles"] > 0


def test_an_idle_accelerator_under_a_power_model_used_no_energy(tmp_path):
    from cosim.launch import run_scenario
    from cosim.scenario import load_scenario
    rep = run_scenario(load_scenario("dma_copy"), out_dir=tmp_path, plots=False)
    e = rep.extra["accelerators"]["cluster.rbe"]
    assert rep.energy is not None and e["jobs"] == 0 and e["energy_j"] == 0.0
