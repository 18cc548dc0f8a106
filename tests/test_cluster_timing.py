"""The cluster timing model: it reproduces the marsellus.md figures it was calibrated on
(through the simulator, not only on paper), N-core speed-up with a visible barrier cost,
TCDM contention in word mode, and DVFS."""
from __future__ import annotations

import numpy as np
import pytest

from components.cluster import Cluster, EventUnitParams
from components.cluster.calibration import calibrate, calibration_table
from components.cluster.timing import BITS, ISAS, load_timing
from components.marsellus.facts import MEMORY_MAP
from components.tcdm import Tcdm, TcdmParams
from tlm import Clock, Simulator
from marsellus_regions import CLUSTER_ARGS, TCDM_ARGS  # noqa: E402

B = MEMORY_MAP["tcdm"].base
F_REF = 420e6            # the frequency the figures are converted at (docs/cluster.md)
TOL = 0.005              # stated tolerance: 0.5 %

# marsellus.md, "Software performance" (at 0.8 V), restated here independently of the data file
BASE_GOPS = 25.45
FACT_GOPS = {("xpulp", 8): BASE_GOPS, ("macload", 8): BASE_GOPS * 1.67,
             ("macload", 4): BASE_GOPS * 3.2, ("macload", 2): BASE_GOPS * 6.3}
FFT_FLOP_PER_CYCLE = 4.69


def build(mode="burst", eu_params=None, freq=F_REF):
    sim = Simulator(1)
    clk = Clock(sim, "cluster_clk", freq)
    cl = Cluster(sim, "cluster", clock=clk, eu_params=eu_params, **CLUSTER_ARGS)
    tcdm = Tcdm(cl, "tcdm", clk, TcdmParams(mode=mode), **TCDM_ARGS)
    cl.bind_tcdm(tcdm)
    return sim, clk, cl, tcdm


def run(sim, cl, name, cores, before=None, **args):
    out = {}

    async def main():
        if before:
            await before()
        out["run"] = await cl.run_kernel(name, cores, **args)

    sim.spawn(main(), "main")
    sim.run()
    return out["run"]


MM = dict(m=64, n=64, k=256, a=B, w=B + 0x8000, out=B + 0x10000)   # the calibration workload


def test_fitted_constants_are_up_to_date():
    tm = load_timing()
    fitted = calibrate(tm)
    for isa in ISAS:
        for b in BITS:
            assert fitted["matmul_macs_per_cycle"][isa][b] == pytest.approx(tm.rates[(isa, b)], rel=1e-5), \
                "stale: run `python -m components.cluster.calibration --write`"
    assert fitted["fft_butterfly_cycles_fp32"] == pytest.approx(tm.fft_c0, rel=1e-5)
    for row in calibration_table(tm):
        assert abs(row.error) < 1e-4, row


@pytest.mark.parametrize("isa,bits", sorted(FACT_GOPS))
def test_simulated_matmul_reproduces_the_marsellus_figures(isa, bits):
    sim, clk, cl, tcdm = build()
    r = run(sim, cl, "matmul", 16, bits=bits, isa=isa, **MM)
    gops = r.ops / r.cycles * F_REF / 1e9
    assert gops == pytest.approx(FACT_GOPS[(isa, bits)], rel=TOL)
    # the simulation (burst mode, no conflicts) is the analytical model
    assert abs(r.cycles - cl.estimate("matmul", 16, bits=bits, isa=isa, **MM)) <= 1


def test_derived_figures_keep_their_stated_ratios():
    """No fact for these: XpulpNN without MAC&LOAD = MAC&LOAD / 1.67 at every precision, plain
    Xpulp sub-byte = that / the instruction reduction (6x at 4 bit, 9x at 2 bit)."""
    g = {}
    for isa in ISAS:
        for bits in (4, 2):
            sim, clk, cl, tcdm = build()
            r = run(sim, cl, "matmul", 16, bits=bits, isa=isa, **MM)
            g[(isa, bits)] = r.ops / r.cycles * F_REF / 1e9
    for bits, red in ((4, 6.0), (2, 9.0)):
        assert g[("xpulpnn", bits)] == pytest.approx(g[("macload", bits)] / 1.67, rel=TOL)
        assert g[("xpulp", bits)] == pytest.approx(g[("xpulpnn", bits)] / red, rel=TOL)


def test_simulated_fft_reproduces_the_marsellus_figure():
    sim, clk, cl, tcdm = build()
    n = 2048
    args = dict(n=n, precision="fp32", src=B, dst=B + 0x8000, twiddles=B + 0x10000)
    r = run(sim, cl, "fft", 16, **args)
    assert r.ops == 5 * n * 11
    assert r.ops / r.cycles == pytest.approx(FFT_FLOP_PER_CYCLE, rel=TOL)
    assert abs(r.cycles - cl.estimate("fft", 16, **args)) <= 1
    # FP16 (packed SIMD) is faster, by less than its per-butterfly factor (overheads)
    sim, clk, cl, tcdm = build()
    r16 = run(sim, cl, "fft", 16, **{**args, "precision": "fp16"})
    assert 1.3 < r.cycles / r16.cycles < load_timing().ft["fp16_speedup"]


@pytest.mark.parametrize("name,args", [
    ("matmul", dict(MM, bits=8, isa="macload")),
    ("fft", dict(n=1024, precision="fp32", src=B, dst=B + 0x8000, twiddles=B + 0x10000)),
    ("conv2d", dict(h=18, w=18, cin=16, cout=16, pad=1, x=B, weights=B + 0x2000, scale=B + 0x4000,
                    bias=B + 0x4100, out=B + 0x5000)),
])
def test_more_cores_fewer_cycles_with_visible_overheads(name, args):
    cycles = {}
    for n in (1, 2, 4, 8, 16):
        sim, clk, cl, tcdm = build()
        cycles[n] = run(sim, cl, name, n, **args).cycles
    assert all(cycles[a] > cycles[b] for a, b in ((1, 2), (2, 4), (4, 8), (8, 16)))
    speedup = cycles[1] / cycles[16]
    assert 4 < speedup < 16          # sub-linear: fork, prologue, barriers, imbalance


def test_barrier_cost_is_visible_and_exact():
    """Each extra release cycle of the Event Unit costs one cycle per barrier of the kernel:
    1 (the final one) for a matmul, log2(n) for an n-point FFT (a barrier per stage)."""
    fft = dict(n=256, precision="fp32", src=B, dst=B + 0x8000, twiddles=B + 0x10000)
    base, slow = EventUnitParams(), EventUnitParams(release_cycles=12)
    for name, args, barriers in (("matmul", dict(MM, bits=8), 1), ("fft", fft, 8)):
        c = []
        for prm in (base, slow):
            sim, clk, cl, tcdm = build(eu_params=prm)
            c.append(run(sim, cl, name, 16, **args).cycles)
        assert c[1] - c[0] == 10 * barriers
    # and the whole job = the longest core's work + fork, prologue, final barrier, end of job
    tm = load_timing()
    sim, clk, cl, tcdm = build()
    r = run(sim, cl, "matmul", 16, **dict(MM, bits=8, isa="xpulp"))
    work = 2 * tm.matmul_chunk(2, 64, 256, 8, "xpulp")                  # 4 rows per core
    overhead = tm.dispatch_cycles + tm.setup_cycles + base.barrier_cycles + tm.eoj_cycles
    assert abs(r.cycles - (work + overhead)) <= 1


def test_tcdm_contention_is_visible_in_word_mode():
    n = 16 * 1024
    args = dict(n=n, m1=1, m2=1, a=B, b=B + 0x8000, out=B + 0x10000)
    res = {}
    for mode in ("burst", "word"):
        sim, clk, cl, tcdm = build(mode)
        r = run(sim, cl, "add_int8", 16, **args)
        stats = sim.stats.as_dict()
        res[mode] = (r.cycles, sum(stats[f"cluster.core{i}"]["stall_cycles"] for i in range(16)),
                     stats["cluster.tcdm"].get("conflict_cycles", 0))
    assert res["burst"][1] == 0 and res["burst"][2] == 0
    assert res["word"][2] > 0 and res["word"][1] > 0          # bank conflicts -> core stalls
    assert res["word"][0] > res["burst"][0]
    # a lone core meets no conflicts: word mode = burst mode
    single = []
    for mode in ("burst", "word"):
        sim, clk, cl, tcdm = build(mode)
        single.append(run(sim, cl, "add_int8", 1, **dict(args, n=2048)).cycles)
    assert abs(single[0] - single[1]) <= 1


def test_all_cores_reading_the_same_words_serialise_in_word_mode():
    """FC: every core streams the same input vector x at the same time: one bank serves one
    core per cycle, so word mode shows stalls the burst model does not."""
    k, n = 1024, 16
    args = dict(n_in=k, n_out=n, x=B, w=B + 0x1000, bias=B + 0x8000, out=B + 0x9000)
    c = {}
    for mode in ("burst", "word"):
        sim, clk, cl, tcdm = build(mode)
        r = run(sim, cl, "fc", 16, **args)
        c[mode] = (r.cycles, sim.stats.as_dict()["cluster.tcdm"].get("core3.conflicts", 0))
    assert c["word"][1] > 0 and c["word"][0] > c["burst"][0]


def test_frequency_scales_time_not_cycles():
    durations, cycles = [], []
    for f in (420e6, 210e6):
        sim, clk, cl, tcdm = build(freq=f)
        r = run(sim, cl, "matmul", 16, **dict(MM, bits=8))
        durations.append(r.duration)
        cycles.append(r.cycles)
    assert cycles[0] == cycles[1]
    assert durations[1] == pytest.approx(2 * durations[0], rel=1e-3)
    # a DVFS step in the middle of the run: the remaining cycles run at the new frequency
    sim, clk, cl, tcdm = build()

    async def slow_down():
        async def later():
            await sim.wait(durations[0] // 2)
            clk.set_frequency(210e6)
        sim.spawn(later(), "dvfs")

    r = run(sim, cl, "matmul", 16, before=slow_down, **dict(MM, bits=8))
    assert r.duration == pytest.approx(1.5 * durations[0], rel=0.01)
    assert abs(r.cycles - cycles[0]) <= 2


def test_core_activity_is_reported():
    sim, clk, cl, tcdm = build()
    seen = []
    cl.on_activity(lambda core, t0, t1, op, instr: seen.append((core.index, t1 - t0, op)))
    r = run(sim, cl, "matmul", 4, **dict(MM, bits=8))
    assert sum(op for _, _, op in seen) == r.ops
    st = sim.stats.as_dict()
    assert sum(st[f"cluster.core{i}"]["ops"] for i in range(4)) == r.ops
    assert st["cluster.core0"]["bytes_read"] > 0 and st["cluster.core0"]["instr"] > 0
    assert "cluster.core5" not in st or st["cluster.core5"]["chunks"] == 0   # idle cores
    assert np.isclose(st["cluster"]["kernel.matmul.cycles"], r.cycles)


def test_runs_are_deterministic_in_word_mode():
    """Same inputs -> identical cycles, statistics and memory, run after run (issue 7)."""
    def once():
        sim, clk, cl, tcdm = build("word")
        rng = np.random.default_rng(4)
        tcdm.load(B, rng.integers(0, 256, 0x10000, dtype=np.uint8).tobytes())
        out = {}

        async def main():
            out["a"] = await cl.run_kernel("fft", 16, n=256, precision="fp16", src=B, dst=B + 0x10000,
                                           twiddles=B + 0x8000, make_twiddles=True)
            out["b"] = await cl.run_kernel("add_int8", 7, n=3000, a=B, b=B + 0x4000, out=B + 0x14000)

        sim.spawn(main(), "main")
        sim.run()
        return out["a"].cycles, out["b"].cycles, sim.stats.as_dict(), tcdm.dump(B, 0x20000)

    assert once() == once()
