"""cocotb testbench of rtl/rbe (rbe_top) driven through the bridge's adapters.

Cases come from the environment (set by tests/test_rtl_blocks.py):
``RBE_TB_CASES`` = JSON list of layers {mode, h_out, w_out, k_in, k_out, w, i, o, seed,
backpressure}; results (cycles, stalls, pass/fail detail) go to ``RBE_TB_REPORT`` (JSON).
Each case: a random layer (components.rbe.stimuli), placed in a TCDM image, programmed
through the HWPE registers exactly like firmware (ACQUIRE, job registers from
encode_job, TRIGGER), run to the end-of-job event; the outputs must equal
components.rbe.golden_layer bit for bit, the access sequence must equal
components.rbe.streamer_trace, and the cycles must equal job_cycles(job, params=PAPER).total
plus the grant stalls the TCDM imposed (PAPER: our SV RBE implements the paper-calibrated
schedule, CycleParams.paper(), not the default open-RTL one).
"""
from __future__ import annotations

import json
import os

import cocotb
import numpy as np
from cocotb.triggers import FallingEdge, RisingEdge

from components.rbe import (ACQUIRE_BUSY, REGMAP, CycleParams, RbeError, RbeRegisterFile,
                            encode_job, job_cycles, streamer_trace, validate)
from components.rbe.job import RbeJob
from components.rbe.layout import from_bytes, unpack_outputs
from components.rbe.stimuli import ByteMemory as ModelMemory, place_layer, random_layer
from cosim.rtl.adapters import (ByteMemory, HwpePeriphMaster, IrqMonitor, TcdmResponder,
                                reset, start_clock)
from cosim.rtl.adapters.hwpe import periph_signals
from cosim.rtl.adapters.tcdm import master_signals as tcdm_signals

TCDM_BASE = 0x1000_0000
TCDM_SIZE = 0x2_0000
PERIOD_NS = 2.5           # 400 MHz
PAPER = CycleParams.paper()   # the schedule our SV RBE implements
REG = {r.name: r.offset for r in REGMAP.control.values()}

DEFAULT_CASES = [
    dict(mode=0, h_out=3, w_out=3, k_in=32, k_out=32, w=2, i=4, o=4, seed=1),
    dict(mode=1, h_out=3, w_out=3, k_in=32, k_out=32, w=3, i=5, o=2, seed=2),
]




def backpressure_policy(seed: int, p_grant: float = 0.7):
    """Per-port random grants (seeded): a TCDM with bank conflicts."""
    rng = np.random.default_rng(seed)
    bits = (1 << np.arange(9)).astype(np.int64)

    def policy(_cycle: int) -> int:
        return int(bits[rng.random(9) < p_grant].sum())
    return policy


class Bench:
    """Clock, reset and the three adapters around rbe_top."""

    def __init__(self, dut, mem: ByteMemory, policy=None, trace=True):
        self.dut = dut
        start_clock(dut.clk_i, PERIOD_NS)
        self.cfg = HwpePeriphMaster(dut.clk_i, periph_signals(dut), name="rbe.cfg",
                                    timeout_cycles=100)
        self.tcdm = TcdmResponder(dut.clk_i, tcdm_signals(dut), mem, n_ports=9,
                                  contiguous=True, policy=policy, name="rbe.tcdm",
                                  trace=trace).start()
        self.evt = IrqMonitor(dut.evt_o, name="rbe.evt_o")

    async def reset(self):
        await reset(self.dut.clk_i, self.dut.rst_ni, 4)

    async def program(self, job: RbeJob) -> int:
        jid = await self.cfg.read(REG["ACQUIRE"])
        assert jid != ACQUIRE_BUSY, "ACQUIRE returned busy"
        for off, val in encode_job(job):
            await self.cfg.write(off, val)
        await self.cfg.write(REG["TRIGGER"], 0)
        return jid


def _report(entry: dict) -> None:
    path = os.environ.get("RBE_TB_REPORT")
    if not path:
        return
    data = json.load(open(path)) if os.path.exists(path) else []
    data.append(entry)
    with open(path, "w") as f:
        json.dump(data, f, indent=1)


@cocotb.test()
async def layers(dut):
    """RTL outputs == golden_layer, accesses == streamer_trace, cycles == job_cycles."""
    cases = json.loads(os.environ.get("RBE_TB_CASES", "null")) or DEFAULT_CASES
    model_mem = ModelMemory(TCDM_SIZE, TCDM_BASE)
    mem = ByteMemory(TCDM_SIZE, TCDM_BASE, data=model_mem.data)
    bp = any(c.get("backpressure") for c in cases)
    policy_state = {"policy": None}

    def policy(cycle):
        p = policy_state["policy"]
        return p(cycle) if p else 0x1FF
    bench = Bench(dut, mem, policy=policy if bp else None)
    await bench.reset()
    from cocotb.simtime import get_sim_time
    failures = []
    for n, c in enumerate(cases):
        rng = np.random.default_rng(c["seed"])
        layer = random_layer(rng, h_out=c["h_out"], w_out=c["w_out"], k_in=c["k_in"],
                             k_out=c["k_out"], w_bits=c["w"], i_bits=c["i"], o_bits=c["o"],
                             mode=c["mode"])
        model_mem.data[:] = 0
        job = place_layer(layer, model_mem, TCDM_BASE + 64 * (n % 4))
        assert validate(job, TCDM_BASE, TCDM_SIZE) == RbeError.OK
        policy_state["policy"] = backpressure_policy(c["seed"]) if c.get("backpressure") else None
        bench.tcdm.trace.clear()
        stalls0 = bench.tcdm.stall_cycles
        model = job_cycles(job, params=PAPER)
        await bench.program(job)
        if not dut.busy_o.value:
            await RisingEdge(dut.busy_o)
        t0 = get_sim_time("ps")
        await FallingEdge(dut.busy_o)
        t1 = get_sim_time("ps")
        await bench.evt.wait(dut.clk_i, 10) if bench.evt.count <= n else None
        cycles = round((t1 - t0) / (PERIOD_NS * 1000))
        stalls = bench.tcdm.stall_cycles - stalls0
        y0, y1 = job.y_extent()
        words = from_bytes(mem.read(y0, y1 - y0), (job.h_out, job.w_out, job.kout_tiles, job.o_bits))
        out = unpack_outputs(words)
        gold = layer.golden
        ok_data = np.array_equal(out, gold)
        tr = streamer_trace(job)
        exp = list(zip((tr.is_write == 0).astype(int).tolist(), tr.addr.tolist()))
        ok_trace = bench.tcdm.trace == exp
        ok_cycles = cycles == model.total + stalls
        entry = dict(case=c, cycles=cycles, model_cycles=model.total, stalls=stalls,
                     data_ok=bool(ok_data), trace_ok=bool(ok_trace), cycles_ok=bool(ok_cycles),
                     mismatches=int((out != gold).sum()), accesses=len(bench.tcdm.trace),
                     model_accesses=len(tr), tcdm_errors=len(mem.errors) + len(bench.tcdm.errors))
        _report(entry)
        if not (ok_data and ok_trace and ok_cycles) or entry["tcdm_errors"]:
            failures.append(entry)
    assert not failures, f"{len(failures)} case(s) failed: {failures}"


@cocotb.test()
async def registers(dut):
    """Random bus traffic: every read equals the model's RbeRegisterFile (incl. the
    validation error codes of rejected jobs, contexts, IDs, sticky bits, soft clear)."""
    mem = ByteMemory(TCDM_SIZE, TCDM_BASE)
    bench = Bench(dut, mem, trace=False)
    await bench.reset()
    model = RbeRegisterFile(TCDM_BASE, TCDM_SIZE)
    rng = np.random.default_rng(int(os.environ.get("RBE_TB_SEED", "7")))
    offsets = ([r.offset for r in REGMAP.control.values()] + [r.offset for r in REGMAP.job]
               + [0x18, 0x3C, 0x70, 0x42, 0x3FC])
    mismatches = []

    def job_value(off):
        # mostly plausible values so validation reaches the later checks (align, ranges)
        kind = rng.integers(0, 4)
        if off in (0x40, 0x44, 0x48, 0x4C):
            return int(TCDM_BASE + rng.integers(0, 0x30000) * (4 if kind else 1)) & 0xFFFFFFFF
        if off == 0x50:
            return int(rng.integers(0, 7)) << 16 | int(rng.integers(0, 7))
        if off == 0x54:
            return (int(rng.choice([0, 32, 64, 96, 33])) << 16) | int(rng.choice([0, 32, 64, 40]))
        if off in (0x58, 0x5C, 0x60, 0x64):
            return int(rng.integers(0, 600)) * (4 if kind else 1)
        if off == 0x68:
            return int(rng.integers(1, 10)) | int(rng.integers(1, 10)) << 8 | int(rng.integers(1, 10)) << 16
        if off == 0x6C:
            return int(rng.integers(0, 4)) | int(rng.integers(0, 2)) << 4 | int(rng.integers(0, 32)) << 8
        return int(rng.integers(0, 1 << 32))

    for step in range(int(os.environ.get("RBE_TB_REG_STEPS", "400"))):
        r = rng.random()
        if r < 0.45:
            off = int(rng.choice(offsets))
            hw = await bench.cfg.read(off)
            sw = model.read(off)
            if hw != sw:
                mismatches.append((step, "read", hex(off), hex(hw), hex(sw)))
        elif r < 0.9:
            off = int(rng.choice([r.offset for r in REGMAP.job])) if rng.random() < 0.7 \
                else int(rng.choice(offsets))
            val = job_value(off)
            be = 0xF if rng.random() < 0.8 else int(rng.integers(0, 16))
            if off == REG["SOFT_CLEAR"] and rng.random() < 0.7:
                continue  # keep soft clears rare
            await bench.cfg.write(off, val, be)
            model.write(off, val, be)
        else:
            await bench.cfg.write(REG["TRIGGER"], 0)
            model.write(REG["TRIGGER"], 0)
        # let the engine settle: rejected jobs finish after 2 setup cycles; valid ones run
        for _ in range(4):
            await RisingEdge(dut.clk_i)
        while dut.busy_o.value:
            await RisingEdge(dut.clk_i)
        while True:  # the model's wrapper: start and finish queued jobs when idle
            got = model.pop_job()
            if got is None:
                break
            jid, j = got
            model.job_done(jid)
    _report({"registers_mismatches": mismatches[:20], "steps": step + 1,
             "finished": model.finished})
    assert not mismatches, f"register mismatches (step, op, offset, rtl, model): {mismatches[:10]}"


@cocotb.test()
async def validation(dut):
    """Each validation check, violated alone: LAST_ERROR == the model's error code, the
    end-of-job event is raised, no memory is touched, FINISHED counts it."""
    import dataclasses
    mem = ByteMemory(TCDM_SIZE, TCDM_BASE)
    bench = Bench(dut, mem, trace=True)
    await bench.reset()
    base = RbeJob.dense(x_addr=TCDM_BASE, w_addr=TCDM_BASE + 0x4000, nq_addr=TCDM_BASE + 0x8000,
                        y_addr=TCDM_BASE + 0x9000, h_out=3, w_out=3, k_in=32, k_out=32,
                        w_bits=2, i_bits=2, o_bits=2)
    end = TCDM_BASE + TCDM_SIZE
    variants = [dict(w_bits=1), dict(w_bits=9), dict(i_bits=1), dict(o_bits=9), dict(k_in=48),
                dict(k_in=0), dict(k_out=4128), dict(h_out=0), dict(w_out=0), dict(mode=2),
                dict(mode=3), dict(x_addr=TCDM_BASE + 2), dict(y_pix_stride=6),
                dict(x_addr=TCDM_BASE - 4), dict(x_addr=end - 16), dict(w_addr=end - 64),
                dict(nq_addr=end - 100), dict(y_addr=end - 8), dict(y_row_stride=0x40000),
                dict(x_row_stride=0xFFFFFFFC), dict()]
    bad = []
    for n, v in enumerate(variants):
        job = dataclasses.replace(base, **v)
        exp = int(validate(job, TCDM_BASE, TCDM_SIZE))
        evts = bench.evt.count
        await bench.program(job)
        while bench.evt.count == evts:
            await RisingEdge(dut.clk_i)
        st = await bench.cfg.read(REG["STATUS"])
        fin = await bench.cfg.read(REG["FINISHED"])
        got = (st >> 8) & 0xFF
        inv = (st >> 18) & 1
        if got != exp or inv != (exp != 0) or fin != n + 1:
            bad.append((v, got, exp, inv, fin))
        await bench.cfg.write(REG["STATUS"], 0xF << 16)  # clear sticky bits
    accesses = len(bench.tcdm.trace)
    _report({"validation_cases": len(variants), "validation_bad": [str(b) for b in bad],
             "valid_job_accesses": accesses})
    assert not bad, f"(variant, rtl code, model code, ERR_JOB_INVALID, FINISHED): {bad}"
    # only the final (valid) job touched memory
    assert accesses == len(streamer_trace(base)), accesses


@cocotb.test()
async def windows(dut):
    """The job driven window by window through WindowDriver (the partition hook):
    register programming arrives as a time-stamped inbound event, the end-of-job event
    leaves in the reply of the window that contains it; results and cycles unchanged."""
    from cosim.rtl.adapters.driver import QueueChannel, WindowDriver
    c = dict(mode=0, h_out=3, w_out=4, k_in=64, k_out=32, w=3, i=6, o=4, seed=21)
    model_mem = ModelMemory(TCDM_SIZE, TCDM_BASE)
    mem = ByteMemory(TCDM_SIZE, TCDM_BASE, data=model_mem.data)
    bench = Bench(dut, mem, trace=False)
    await bench.reset()
    layer = random_layer(np.random.default_rng(c["seed"]), h_out=c["h_out"], w_out=c["w_out"],
                         k_in=c["k_in"], k_out=c["k_out"], w_bits=c["w"], i_bits=c["i"],
                         o_bits=c["o"], mode=c["mode"])
    job = place_layer(layer, model_mem, TCDM_BASE)
    from cosim.rtl.adapters import now_ps
    period = int(PERIOD_NS * 1000)
    t0 = (now_ps() // period + 10) * period
    window = 64 * period
    ops = [["r", REG["ACQUIRE"]]] + [["w", o, v] for o, v in encode_job(job)] + [["w", 0, 0]]
    grants = [{"until": t0 + window, "events": [[t0, "cfg", ops]]}]
    grants += [{"until": t0 + (k + 2) * window, "events": []} for k in range(400)]
    chan = QueueChannel(grants)

    async def cfg(payload):
        for op in payload:
            if op[0] == "r":
                await bench.cfg.read(op[1])
            else:
                await bench.cfg.write(op[1], op[2])
    drv = WindowDriver(chan, handlers={"cfg": cfg}, busy=lambda: dut.busy_o.value, name="rbe")
    bench.evt.callbacks.append(lambda t: drv.emit(t, "evt", 1))
    rises = []
    cocotb.start_soon(_edges(dut.busy_o, rises))

    # run windows until the job's event went out
    await drv.run(stop_when=lambda: bench.evt.count > 0)
    done_at = next((e[0] for r in chan.replies for e in r["events"] if e[1] == "evt"), None)
    assert done_at is not None, "no end-of-job event in any window"
    y0, y1 = job.y_extent()
    out = unpack_outputs(from_bytes(mem.read(y0, y1 - y0),
                                    (job.h_out, job.w_out, job.kout_tiles, job.o_bits)))
    assert np.array_equal(out, layer.golden)
    cycles = round((rises[1] - rises[0]) / period)
    ev_window = next(k for k, r in enumerate(chan.replies) if r["events"])
    nxt = [r["next"] for r in chan.replies]
    model = job_cycles(job, params=PAPER).total
    _report({"windows": len(chan.replies), "event_window": ev_window, "cycles": cycles,
             "model_cycles": model, "busy_next_reported": sum(x is not None for x in nxt)})
    assert cycles == model, (cycles, model)
    w_lo = chan.replies[ev_window - 1]["time"] if ev_window else 0
    assert w_lo <= done_at < chan.replies[ev_window]["time"]
    assert nxt[-1] is None, "idle partition must report no next event"


async def _edges(sig, out):
    from cosim.rtl.adapters import now_ps
    while True:
        await RisingEdge(sig)
        out.append(now_ps())
        await FallingEdge(sig)
        out.append(now_ps())
