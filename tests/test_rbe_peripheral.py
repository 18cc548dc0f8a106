"""The RBE as a TLM peripheral: programmed through its registers, bit-exact through the
TCDM, two queued jobs, errors as status + event, TCDM contention as stalls."""
from __future__ import annotations

import numpy as np
import pytest

from components.marsellus.facts import MEMORY_MAP as MM
from components.rbe import REGMAP, Mode, encode_job, job_cycles
from components.rbe import layout as rl
from components.rbe.peripheral import Rbe
from components.rbe.stimuli import ByteMemory, place_layer, random_layer
from components.tcdm import Tcdm, TcdmParams
from tlm import READ, WRITE, Clock, GenericPayload, InitiatorSocket, Module, Simulator
from marsellus_regions import RBE_ARGS, TCDM_ARGS  # noqa: E402

CTL = {n: r.offset for n, r in REGMAP.control.items()}
BASE = MM["tcdm"].base


class Bench:
    def __init__(self, mode: str = "burst", conflict_factor: float = 1.0):
        self.sim = Simulator()
        top = Module(self.sim, "cluster")
        self.clk = Clock(self.sim, "cluster.clk", 400e6)
        self.tcdm = Tcdm(top, "tcdm", self.clk,
                         TcdmParams(mode=mode, conflict_factor=conflict_factor), **TCDM_ARGS)
        self.rbe = Rbe(top, "rbe", clock=self.clk, tcdm_word_mode=lambda: mode == "word",
                       **RBE_ARGS)
        self.rbe.tcdm.bind(self.tcdm.rbe_port)
        self.cpu = InitiatorSocket(top, "cpu")
        self.cpu.bind(self.rbe.regs.socket)
        self.events = []
        self.rbe.done.add_callback(lambda e: self.events.append(self.sim.now))

    async def wr(self, off: int, v: int) -> None:
        p = GenericPayload(WRITE, off, bytearray(v.to_bytes(4, "little")))
        await self.cpu.b_transport(p, 0)
        assert p.is_ok

    async def rd(self, off: int) -> int:
        p = GenericPayload(READ, off, bytearray(4))
        await self.cpu.b_transport(p, 0)
        return int.from_bytes(p.data, "little")

    async def program(self, job) -> int:
        jid = await self.rd(CTL["ACQUIRE"])
        for off, v in encode_job(job):
            await self.wr(off, v)
        await self.wr(CTL["TRIGGER"], 0)
        return jid

    def place(self, layer, addr=BASE):
        mem = ByteMemory(MM["tcdm"].size, BASE)
        mem.data[:] = self.tcdm.array
        job = place_layer(layer, mem, addr)
        self.tcdm.load(BASE, mem.data.tobytes())
        return job

    def output(self, job) -> np.ndarray:
        n = job.h_out * job.w_out * (job.k_out // 32) * job.o_bits * 4
        a = job.y_addr - BASE
        return rl.unpack_activations(rl.from_bytes(self.tcdm.array[a:a + n],
                                                   (job.h_out, job.w_out, job.k_out // 32, job.o_bits)))


@pytest.mark.parametrize("mode", ["burst", "word"])
@pytest.mark.parametrize("conv,bits", [(Mode.CONV3X3, (4, 8, 4)), (Mode.CONV1X1, (3, 5, 7)),
                                        (Mode.CONV3X3, (2, 2, 8))])
def test_job_through_registers_is_bit_exact(mode, conv, bits):
    b = Bench(mode)
    layer = random_layer(np.random.default_rng(7), h_out=5, w_out=4, k_in=64, k_out=32,
                         w_bits=bits[0], i_bits=bits[1], o_bits=bits[2], mode=conv)
    job = b.place(layer)

    async def fw():
        await b.program(job)
        await b.rbe.done

    b.sim.spawn(fw(), "cluster.fw")
    b.sim.run()
    assert np.array_equal(b.output(job), layer.golden)
    rec = b.rbe.jobs[-1]
    assert rec.error == 0
    # no contention: the job takes exactly the cycle model's ideal time
    assert rec.end - rec.start == job_cycles(job).ideal * b.clk.period


def test_two_queued_jobs_run_back_to_back_with_two_events():
    b = Bench()
    rng = np.random.default_rng(3)
    l1 = random_layer(rng, h_out=3, w_out=3, k_in=32, k_out=32, w_bits=2, i_bits=4, o_bits=4)
    l2 = random_layer(rng, h_out=4, w_out=3, k_in=32, k_out=64, w_bits=3, i_bits=3, o_bits=2)
    j1 = b.place(l1, BASE)
    j2 = b.place(l2, BASE + 0x8000)
    ids = []

    async def fw():
        ids.append(await b.program(j1))
        ids.append(await b.program(j2))
        assert await b.rd(CTL["ACQUIRE"]) == REGMAP.acquire_busy  # both contexts in use
        while await b.rd(CTL["FINISHED"]) < 2:
            await b.sim.wait(1000)

    b.sim.spawn(fw(), "cluster.fw")
    b.sim.run()
    assert ids == [0, 1]
    assert len(b.events) == 2 and b.events[0] < b.events[1]
    r1, r2 = b.rbe.jobs
    assert r2.start == r1.end  # the second job starts when the first ends
    assert np.array_equal(b.output(j1), l1.golden) and np.array_equal(b.output(j2), l2.golden)


def test_invalid_job_raises_event_and_error_without_touching_memory():
    b = Bench()
    layer = random_layer(np.random.default_rng(1), h_out=3, w_out=3, k_in=32, k_out=32,
                         w_bits=2, i_bits=2, o_bits=2)
    job = b.place(layer)
    before = b.tcdm.array.copy()
    bad = {off: v for off, v in encode_job(job)}
    prec = next(r for r in REGMAP.job if r.name == "PRECISION")
    wfield = next(f for f in prec.fields if f.name == "w_bits")
    bad[prec.offset] = wfield.put(bad[prec.offset], 9)   # 9-bit weights: unsupported
    status = {}

    async def fw():
        await b.rd(CTL["ACQUIRE"])
        for off, v in bad.items():
            await b.wr(off, v)
        await b.wr(CTL["TRIGGER"], 0)
        await b.rbe.done
        status["s"] = await b.rd(CTL["STATUS"])

    b.sim.spawn(fw(), "cluster.fw")
    b.sim.run()
    s = status["s"]
    assert REGMAP.status("ERR_JOB_INVALID").get(s) == 1
    assert REGMAP.status("LAST_ERROR").get(s) == 1  # RbeError.W_BITS
    assert np.array_equal(b.tcdm.array, before)
    assert b.rbe.jobs[-1].error == 1 and len(b.events) == 1


def test_trigger_without_job_sets_error_and_raises_no_event():
    b = Bench()
    out = {}

    async def fw():
        await b.wr(CTL["TRIGGER"], 0)
        await b.sim.wait(100_000)
        out["s"] = await b.rd(CTL["STATUS"])

    b.sim.spawn(fw(), "cluster.fw")
    b.sim.run()
    assert REGMAP.status("ERR_TRIGGER_NO_JOB").get(out["s"]) == 1
    assert b.events == [] and b.rbe.jobs == []


def _contended_time(mode: str, factor: float = 1.0, hammer: bool = True) -> tuple[int, int]:
    b = Bench(mode, factor)
    layer = random_layer(np.random.default_rng(5), h_out=3, w_out=6, k_in=32, k_out=32,
                         w_bits=2, i_bits=4, o_bits=4)
    job = b.place(layer)
    cores = []
    for i in range(8):
        s = InitiatorSocket(b.sim.modules["cluster"], f"core{i}")
        s.bind(b.tcdm.core_ports[i])
        cores.append(s)

    async def core(s):
        for _ in range(400):  # every core streams over the banks the RBE uses
            p = GenericPayload(READ, job.w_addr, bytearray(64))
            d = await s.b_transport(p, 0)
            await b.sim.wait(d)

    async def fw():
        await b.program(job)
        await b.rbe.done

    if hammer:
        for i, s in enumerate(cores):
            b.sim.spawn(core(s), f"cluster.core{i}.k")
    b.sim.spawn(fw(), "cluster.fw")
    b.sim.run()
    rec = b.rbe.jobs[-1]
    assert np.array_equal(b.output(job), layer.golden)
    return rec.end - rec.start, rec.cycles.stalls.total


def test_word_mode_contention_shows_as_stalls():
    quiet, stalls0 = _contended_time("word", hammer=False)
    busy, stalls = _contended_time("word")
    assert stalls0 == 0 and stalls > 0
    assert busy > quiet


def test_burst_mode_conflict_factor_slows_the_streamer():
    t1, s1 = _contended_time("burst", 1.0, hammer=False)
    t2, s2 = _contended_time("burst", 1.5, hammer=False)
    assert s1 == 0 and s2 > 0 and t2 > t1
